"""``grader check`` end to end on the example submissions of ``fixtures/submissions``.

Each example is graded for real once per session through the library API
(``grader.commands.check.check``), all of them side by side; then each is graded
again through the command line, in-process, with every sandboxed run replayed
from the first grading (see ``ReusedRuns``): the command line must ask for
exactly the runs the library made, and turn them into the same report, the
same exit status and the expected lines. Every JSON report is held to the
published schema.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import EXAMPLES, SUBMISSIONS, ReusedRuns, make_submission

from grader.cli import main
from grader.commands.check import check
from grader.errors import EXIT_FAIL, EXIT_PASS
from grader.grading.jobs import Limits
from grader.grading.witness import for_context
from grader.grading.wording import grade_phrase
from grader.inputs.catalog import load_chapter
from grader.output.check_json import SCHEMA_PATH, report_to_dict
from grader.results.check import CheckReport

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

TIME_LIMIT = 120.0
HANG_LIMIT = 3.0
"""The ``hangs`` example's tests get this long on the reference, so the suite stays fast."""

CHAPTER = load_chapter()
COURSE_TESTS = [test.name for test in CHAPTER.course_tests]
REQUIRED_TESTS = [test.name for test in CHAPTER.required_tests]
MUTANTS = [mutant.id for mutant in CHAPTER.mutants]
MODEL_BASED = "test_model_based_against_a_naive_map"


@dataclass(frozen=True)
class Expected:
    """What the grader must say about one example.

    ``killed`` is the set of mutants the example's tests kill (every other
    mutant survives), or ``None`` when no mutation score may be measured.
    ``problems`` are how the test file's problems begin, one each, in order
    (so no problem is said twice); ``lines`` are lines the terminal report
    must hold verbatim.
    """

    verdict: str
    course_passed: int | None
    valid: bool
    killed: frozenset[str] | None
    problems: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    course_problem: str | None = None
    killed_by: dict[str, tuple[str, ...]] = field(default_factory=dict)


ALL = frozenset(MUTANTS)
COURSE_OK = f"Course tests on your radix.py: {len(COURSE_TESTS)}/{len(COURSE_TESTS)} passed"
COURSE_NONE = f"Course tests on your radix.py: 0/{len(COURSE_TESTS)} passed"
VALID = "Your tests (tests/test_ds07_radix.py): valid"
NOT_VALID = "Your tests (tests/test_ds07_radix.py): not valid"
UNMEASURED = "Mutation score: not measured until your tests are valid"
FULL_SCORE = "Mutation score 1.00 (18/18), threshold 0.70; required: s11 killed"
FAIL_INVALID = "FAIL: your tests are not valid"

EXPECTED: dict[str, Expected] = {
    "strong": Expected(
        "pass",
        11,
        True,
        ALL,
        lines=(
            COURSE_OK,
            VALID,
            FULL_SCORE,
            "PASS, grade 100 of 100: the course tests pass and your tests catch the planted bugs",
        ),
    ),
    "weak": Expected(
        "fail",
        11,
        True,
        frozenset({"s02", "s05", "m03"}),
        killed_by={
            "s02": ("test_match_splits_inside_an_edge",),
            # the first of the two tests that fail on it: its run stops there
            "s05": ("test_split_by_hand",),
            "m03": ("test_oldest_leaf_goes_first",),
        },
        lines=(
            COURSE_OK,
            VALID,
            "Mutation score 0.17 (3/18), threshold 0.70; required: s11 survived",
            "FAIL, grade 61.54 of 100: mutation score 0.17 below 0.70; "
            "required mutant s11 survived",
        ),
    ),
    "misses_s11": Expected(
        "fail",
        11,
        True,
        ALL - {"s11"},
        lines=(
            COURSE_OK,
            VALID,
            "What your tests miss (each survivor's planted bug):",
            "  s11 (required): a locked leaf stays on the eviction list",
            "Mutation score 0.94 (17/18), threshold 0.70; required: s11 survived",
            "FAIL: required mutant s11 survived",
        ),
    ),
    "fails_on_reference": Expected(
        "fail",
        11,
        False,
        None,
        problems=(
            "test_split_by_hand fails on the reference (a correct tree), so the test is wrong: "
            "AssertionError: assert ['x', 'y'] == ['a', 'b']",
        ),
        lines=(COURSE_OK, NOT_VALID, UNMEASURED, FAIL_INVALID),
    ),
    "passes_on_stub": Expected(
        "fail",
        11,
        False,
        None,
        problems=("test_locks_pin_ancestors passes on the stub, so it checks nothing yet",),
        lines=(COURSE_OK, NOT_VALID, UNMEASURED, FAIL_INVALID),
    ),
    "syntax_error_in_tests": Expected(
        "fail",
        11,
        False,
        None,
        problems=("tests/test_ds07_radix.py line 19: syntax error: expected ':'",),
        lines=(COURSE_OK, NOT_VALID, UNMEASURED, FAIL_INVALID),
    ),
    "syntax_error_in_radix": Expected(
        "fail",
        0,
        True,
        ALL,
        course_problem="radix.py could not be imported: SyntaxError: expected ':' "
        "(radix.py, line 14)",
        lines=(
            COURSE_NONE,
            "✗ radix.py could not be imported: SyntaxError: expected ':' (radix.py, line 14)",
            VALID,
            FULL_SCORE,
            "FAIL: course tests failing",
        ),
    ),
    "hangs": Expected(
        "fail",
        11,
        False,
        None,
        problems=(
            "on the reference: too slow: stopped after 3 s while running "
            "test_parent_becomes_evictable (the time limit of that run; confirmed: it timed out "
            "again, run alone)",
        ),
        lines=(COURSE_OK, NOT_VALID, UNMEASURED, FAIL_INVALID),
    ),
    "missing_test_file": Expected(
        "fail",
        11,
        False,
        None,
        problems=("tests/test_ds07_radix.py is missing from",),
        missing=tuple(REQUIRED_TESTS),
        lines=(COURSE_OK, NOT_VALID, UNMEASURED, FAIL_INVALID),
    ),
    "missing_radix": Expected(
        "fail",
        0,
        True,
        ALL,
        course_problem="radix.py is missing from",
        lines=(COURSE_NONE, VALID, FULL_SCORE, "FAIL: course tests failing"),
    ),
    "buggy_radix": Expected(
        "fail",
        None,
        True,
        ALL,
        lines=(VALID, FULL_SCORE, "FAIL: course tests failing"),
    ),
    # The common mistakes ``grader mine`` finds in a class (tests/e2e/test_mine.py): each a
    # tree that fails a course test under the model answer's tests, which stay valid.
    **{
        name: Expected(
            "fail", None, True, ALL, lines=(VALID, FULL_SCORE, "FAIL: course tests failing")
        )
        for name in ("lru_split", "lru_split_again", "children_unsorted")
    },
}


def limits_for(name: str) -> Limits:
    """The limits both interfaces grade ``name`` with (the CLI's defaults for the rest)."""
    return Limits(
        course_tests=TIME_LIMIT, student_tests=HANG_LIMIT if name == "hangs" else TIME_LIMIT
    )


def cli_arguments(name: str, folder: Path, report: Path) -> list[str]:
    """The command line that asks for ``limits_for(name)``."""
    arguments = ["check", "--submission", str(folder), "--json", str(report)]
    arguments += ["--time-limit", str(TIME_LIMIT)]
    if name == "hangs":
        arguments += ["--tests-time-limit", str(HANG_LIMIT)]
    return arguments


@dataclass(frozen=True)
class Graded:
    folder: Path
    report: CheckReport


@pytest.fixture(scope="session")
def graded(tmp_path_factory: pytest.TempPathFactory, reused_runs: ReusedRuns) -> dict[str, Graded]:
    """Every example graded once through the API, two at a time, the slowest first."""
    root = tmp_path_factory.mktemp("examples")
    folders = {name: make_submission(root, name) for name in EXAMPLES}
    slowest = ["buggy_radix", "hangs"]
    order = [*slowest, *(name for name in EXAMPLES if name not in slowest)]
    with pytest.MonkeyPatch.context() as monkeypatch:
        reused_runs.install(monkeypatch)
        with ThreadPoolExecutor(2) as pool:
            futures = {
                name: pool.submit(check, CHAPTER, folders[name], limits_for(name)) for name in order
            }
            return {name: Graded(folders[name], futures[name].result()) for name in EXAMPLES}


@pytest.fixture(scope="session")
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def without_timings(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in ("timings", "graded_at")}


def test_every_example_has_an_expectation() -> None:
    """``EXPECTED`` covers exactly the examples the fixtures define."""
    assert set(EXPECTED) == set(EXAMPLES)


@pytest.mark.parametrize("name", EXPECTED)
def test_api_report(name: str, graded: dict[str, Graded]) -> None:
    """``check`` gives each example its verdict, course results, validity and mutant statuses."""
    expected = EXPECTED[name]
    report = graded[name].report
    course, student, mutation = report.course_tests, report.student_tests, report.mutation

    assert report.verdict == expected.verdict
    assert report.chapter == CHAPTER.id
    assert list(course.results) == COURSE_TESTS
    if expected.course_passed is not None:
        assert course.passed == expected.course_passed
    if expected.course_problem is None:
        assert course.problem is None
        failing = {test for test, status in course.results.items() if status != "passed"}
        assert set(course.failures) == failing
        assert all(course.failures.values())
    else:
        assert course.problem is not None and course.problem.startswith(expected.course_problem)
        assert "\n" not in course.problem
        assert set(course.results.values()) == {"error"}

    assert student.valid is expected.valid
    assert student.missing == expected.missing
    assert len(student.problems) == len(expected.problems), student.problems
    for problem, start in zip(student.problems, expected.problems, strict=True):
        assert problem.startswith(start), problem
    for problem in student.problems:
        assert "\n" not in problem and "Traceback" not in problem

    if expected.killed is None:
        assert mutation is None
        return
    assert mutation is not None
    assert [m.id for m in mutation.mutants] == MUTANTS
    statuses = {m.id: m.status for m in mutation.mutants}
    assert statuses == {m: "killed" if m in expected.killed else "survived" for m in MUTANTS}
    assert mutation.killed == len(expected.killed)
    assert mutation.score == round(len(expected.killed) / len(MUTANTS), 4)
    assert mutation.missed_required == (() if "s11" in expected.killed else ("s11",))
    for mutant in mutation.mutants:
        assert bool(mutant.killed_by) is (mutant.status == "killed")
        assert set(mutant.killed_by) <= set(student.tests)
        assert len(mutant.killed_by) <= 1  # each run stops at its first failing test
        if mutant.id in expected.killed_by:
            assert mutant.killed_by == expected.killed_by[mutant.id]


@pytest.mark.parametrize("name", EXPECTED)
def test_cli_report(
    name: str,
    graded: dict[str, Graded],
    reused_runs: ReusedRuns,
    schema: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``grader check`` exits 0 on a pass and 1 on a fail, prints the key lines and writes
    the API's report as JSON that follows the schema, asking for no run the API did not make."""
    expected = EXPECTED[name]
    monkeypatch.setenv("COLUMNS", "300")
    reused_runs.install(monkeypatch)
    made_before = reused_runs.made
    json_path = tmp_path / "report.json"

    code = main(cli_arguments(name, graded[name].folder, json_path))
    out, err = capsys.readouterr()

    assert code == (EXIT_PASS if expected.verdict == "pass" else EXIT_FAIL)
    assert err == ""
    lines = [line.rstrip() for line in out.splitlines()]
    report = graded[name].report
    for line in expected.lines:
        verdict, colon, rest = line.partition(":")
        if verdict in ("PASS", "FAIL") and colon:  # the grade stands beside the verdict
            line = f"{verdict}, {grade_phrase(CHAPTER, report)}:{rest}"
        assert line in lines, f"{line!r} not in the output:\n{out}"
    assert "Traceback" not in out
    for problem in report.student_tests.problems:
        assert f"✗ {problem}" in lines
    for test, status in report.course_tests.results.items():
        assert (f"  {test}: {status}" in lines) is (status != "passed")
    if report.course_tests.failures.get(MODEL_BASED):
        # the shrunk steps, as the interface calls the state machine's rules make
        assert re.search(r"tree\.\w+\(", out), "the shrunk steps are not shown"
        assert not re.search(r"state\.\w+\(", out), "a rule's own name is shown"

    data = json.loads(json_path.read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    local = for_context(CHAPTER, "local")  # the command shows survivors at this machine's tier
    assert without_timings(data) == without_timings(report_to_dict(report, local))
    assert reused_runs.made == made_before, "the CLI ran a job the API did not"


def test_strong_is_the_model_answer(graded: dict[str, Graded]) -> None:
    """The ``strong`` example is the kit's own model answer, byte for byte."""
    folder = graded["strong"].folder
    assert (folder / "radix.py").read_bytes() == CHAPTER.reference.read_bytes()
    assert (folder / CHAPTER.student_tests).read_bytes() == CHAPTER.model_tests.read_bytes()


def test_buggy_radix_reports_the_failures(graded: dict[str, Graded]) -> None:
    """One bug in radix.py: some course tests fail and each failure's pytest text is reported;
    the model-based test's failure includes hypothesis's shrunk program of steps, as the
    interface calls they make."""
    course = graded["buggy_radix"].report.course_tests
    assert 0 < course.passed < course.total
    assert course.problem is None
    assert course.results[MODEL_BASED] == "failed"
    for name, detail in course.failures.items():
        assert course.results[name] == "failed"
        assert f"in {name}" in detail and "\nE " in detail, detail
    steps = re.findall(r"^E?\s*tree\.\w+\(.*\)$", course.failures[MODEL_BASED], re.MULTILINE)
    assert steps, course.failures[MODEL_BASED]


def test_hangs_finishes_within_its_limits(graded: dict[str, Graded]) -> None:
    """A test that never ends is stopped at its time limit, not left to a wall clock a loaded
    machine stretches: the run that hangs ends as a timeout at the tests' limit, confirmed by
    one run alone, the file is refused for it, and no mutant runs after it."""
    report = graded["hangs"].report
    hung = [p for p in report.student_tests.problems if "test_parent_becomes_evictable" in p]
    assert len(hung) == 1, report.student_tests.problems
    stopped = (
        f"too slow: stopped after {HANG_LIMIT:g} s while running test_parent_becomes_evictable"
    )
    assert stopped in hung[0] and "confirmed: it timed out again, run alone" in hung[0], hung
    assert not report.student_tests.valid and report.mutation is None


def test_examples_store_no_copy_of_the_reference() -> None:
    """Fixtures hold only files that differ from the model answer."""
    reference = CHAPTER.reference.read_bytes()
    model_tests = CHAPTER.model_tests.read_bytes()
    stored = [path for path in SUBMISSIONS.rglob("*") if path.is_file()]
    assert stored
    for path in stored:
        assert path.read_bytes() not in (reference, model_tests), path
