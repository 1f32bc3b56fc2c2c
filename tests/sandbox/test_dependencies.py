"""The chapter's dependency (ds.05's map): the student's own copy, the kit's, or none.

A submission may hold the student's ``robin_hood.py`` beside ``radix.py``;
it runs in the implementation's process with the tree. ``--ref-deps`` runs
the tree with the kit's map instead; a tree that imports the map in a
submission without one stops with one line. Every run of a student's tests
(reference, mutants) uses the kit's map, whatever the submission holds.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

import grader.cli
from grader.cli.autograder import run_autograder
from grader.commands.check import check
from grader.errors import EXIT_FAIL
from grader.grading.jobs import Limits, course_tests_job, limits_from_settings
from grader.inputs.catalog import load_chapter
from grader.inputs.dependencies import (
    DependencyProblem,
    DependencyUse,
    imports,
    kit_sources,
    resolve,
)
from grader.inputs.submission import start_submission
from grader.output.check_json import SCHEMA_PATH, report_to_dict
from grader.results.check import CheckReport
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult
from grader.static.checker import check_test_source

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
(NEED,) = CHAPTER.needs
REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")
KIT_MAP = NEED.reference.read_text(encoding="utf-8")
MISSING = "radix.py needs robin_hood.py (ds.05): add yours, or pass --ref-deps"
COURSE_NAMES = [test.name for test in CHAPTER.course_tests]
WEAK_TESTS = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "weak"

OWN_CORRECT_MAP = KIT_MAP.replace("FIRST_CAPACITY = 8", "FIRST_CAPACITY = 2").replace(
    "MAX_LOAD = 0.875", "MAX_LOAD = 0.5"
)
"""A student's map that differs from the kit's (smaller, emptier tables: more resizes) and is
just as correct."""
WRONG_DISPLACEMENT = KIT_MAP.replace(
    "if self._dist[slot] < dist:  # the resident is closer to home: it gives way",
    "if self._dist[slot] > dist:  # the resident is closer to home: it gives way",
)
"""A student's map whose insert displaces the poorer entry instead of the richer one: lookups,
which stop at the first entry closer to home than the probe, then miss keys it holds."""


def submission(tmp_path: Path, robin_hood: str | None, radix: str = REFERENCE) -> Path:
    folder = tmp_path / "submission"
    (folder / "tests").mkdir(parents=True)
    (folder / CHAPTER.implementation).write_text(radix, encoding="utf-8")
    shutil.copyfile(WEAK_TESTS / CHAPTER.student_tests, folder / CHAPTER.student_tests)
    if robin_hood is not None:
        (folder / NEED.implementation).write_text(robin_hood, encoding="utf-8")
    return folder


def test_the_catalog_names_what_the_chapter_needs() -> None:
    assert (NEED.id, NEED.module, NEED.interface) == ("ds.05", "robin_hood", ("RobinHoodMap",))
    assert NEED.implementation == "robin_hood.py"
    assert NEED.reference == CHAPTER.reference.with_name("robin_hood.py")
    assert "from robin_hood import RobinHoodMap" in REFERENCE
    assert OWN_CORRECT_MAP != KIT_MAP and WRONG_DISPLACEMENT != KIT_MAP


# ----------------------------------------------------------------------
# Which map a run gets (no process runs)


def test_the_submissions_own_map_is_taken(tmp_path: Path) -> None:
    folder = submission(tmp_path, OWN_CORRECT_MAP)
    resolved = resolve(CHAPTER, folder, REFERENCE, ref_deps=False)
    assert resolved.sources == (("robin_hood", OWN_CORRECT_MAP),)
    assert resolved.uses == (DependencyUse("ds.05", "robin_hood", "submission", "robin_hood.py"),)


def test_ref_deps_takes_the_kits_map_even_beside_the_students(tmp_path: Path) -> None:
    folder = submission(tmp_path, WRONG_DISPLACEMENT)
    resolved = resolve(CHAPTER, folder, REFERENCE, ref_deps=True)
    assert resolved.sources == (("robin_hood", KIT_MAP),) == kit_sources(CHAPTER)
    assert resolved.uses == (DependencyUse("ds.05", "robin_hood", "kit", None),)


def test_a_replay_grades_with_the_map_the_report_was_graded_with() -> None:
    """A report graded with ``--ref-deps`` records it, so ``grader replay`` takes the kit's
    map again instead of stopping for the student's missing one."""
    for ref_deps in (True, False):
        settings = json.loads(json.dumps(Limits(ref_deps=ref_deps).settings()))
        assert limits_from_settings(settings, "none").ref_deps is ref_deps


def test_a_tree_that_imports_no_map_needs_none(tmp_path: Path) -> None:
    stub = CHAPTER.stub.read_text(encoding="utf-8")
    resolved = resolve(CHAPTER, submission(tmp_path, None, stub), stub, ref_deps=False)
    assert resolved.sources == ()
    assert resolved.uses == (DependencyUse("ds.05", "robin_hood", "none", None),)


def test_a_tree_that_imports_a_map_it_lacks_stops_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(DependencyProblem) as stopped:
        resolve(CHAPTER, submission(tmp_path, None), REFERENCE, ref_deps=False)
    assert stopped.value.message == MISSING
    assert stopped.value.exit_code == EXIT_FAIL


def test_the_map_is_read_by_the_rules_of_every_submitted_file(tmp_path: Path) -> None:
    """No link out of the submission, as for radix.py."""
    folder = submission(tmp_path, None)
    outside = tmp_path / "elsewhere.py"
    outside.write_text(KIT_MAP, encoding="utf-8")
    (folder / NEED.implementation).symlink_to(outside)
    with pytest.raises(DependencyProblem, match=r"^robin_hood\.py links to a file outside"):
        resolve(CHAPTER, folder, REFERENCE, ref_deps=False)


def test_the_map_beside_a_located_radix_is_taken(tmp_path: Path) -> None:
    """Where the grader finds radix.py one folder down (a repository), the map is beside it."""
    root = tmp_path / "repository"
    (root / "work").mkdir(parents=True)
    (root / "work" / NEED.implementation).write_text(OWN_CORRECT_MAP, encoding="utf-8")
    located = dataclasses.replace(CHAPTER, implementation="work/radix.py")
    resolved = resolve(located, root, REFERENCE, ref_deps=False)
    assert resolved.uses[0].file == "work/robin_hood.py"
    elsewhere = dataclasses.replace(CHAPTER, implementation="other/radix.py")
    with pytest.raises(DependencyProblem, match=r"^radix\.py needs robin_hood\.py"):
        resolve(elsewhere, root, REFERENCE, ref_deps=False)


@pytest.mark.parametrize(
    ("source", "imported"),
    [
        ("from robin_hood import RobinHoodMap\n", True),
        ("import robin_hood\n", True),
        ("import robin_hood as rh\n", True),
        ("def f():\n    from robin_hood import RobinHoodMap\n", True),
        ("import robin_hood.inner\n", True),
        ("# uses robin_hood\nx = 'robin_hood'\n", False),
        ("from . import robin_hood\n", False),
        ("import robin_hoodie\n", False),
        ("def broken(:\n    import robin_hood\n", False),
    ],
)
def test_an_import_of_the_map_is_read_off_the_syntax_tree(source: str, imported: bool) -> None:
    assert imports(source, "robin_hood") is imported


def test_a_test_file_may_not_import_the_map() -> None:
    """The map belongs to the implementation's process; a test reaches only the tree."""
    violations, _ = check_test_source(
        "import robin_hood\n\ndef test_x():\n    assert robin_hood\n", "radix", CHAPTER.interface
    )
    assert [v.line for v in violations] == [1], violations
    assert violations[0].rule.startswith("import of 'robin_hood' is not allowed (allowed: ")


# ----------------------------------------------------------------------
# The commands: start, check, tdd, diff, the autograder


def test_start_never_writes_a_dependency(tmp_path: Path) -> None:
    folder = tmp_path / "submission"
    folder.mkdir()
    mine = folder / NEED.implementation
    mine.write_text("# my ds.05 map\n", encoding="utf-8")
    for force in (False, True):
        result = start_submission(CHAPTER, folder, force=force)
        assert NEED.implementation not in (*result.created, *result.kept, *result.saved)
    assert mine.read_text(encoding="utf-8") == "# my ds.05 map\n"
    kept = sorted(p.name for p in folder.iterdir() if not p.name.endswith(".bak"))
    assert kept == sorted([NEED.implementation, CHAPTER.implementation, "tests"])
    empty = tmp_path / "empty"
    start_submission(CHAPTER, empty)
    assert not (empty / NEED.implementation).exists()


@pytest.mark.parametrize("command", [["check"], ["tdd", "green"], ["diff"]])
def test_each_command_without_the_map_stops_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    folder = submission(tmp_path, None)
    assert grader.cli.main([*command, "--submission", str(folder)]) == EXIT_FAIL
    captured = capsys.readouterr()
    assert captured.err == f"grader: {MISSING}\n"
    assert captured.out == ""


def test_the_autograder_says_what_is_missing(tmp_path: Path) -> None:
    root = tmp_path / "autograder"
    shutil.copytree(submission(tmp_path, None), root / "submission")
    assert run_autograder(root, CHAPTER)
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0.0
    assert results["output"] == (
        "Not graded: radix.py needs robin_hood.py (ds.05): add yours, then submit again."
    )


# ----------------------------------------------------------------------
# Runs: the map in the implementation's process, caught through the tree


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2) as workers:
        yield workers


def course_run(pool: WorkerPool, folder: Path, ref_deps: bool = False) -> RunResult:
    dependencies = resolve(CHAPTER, folder, REFERENCE, ref_deps).sources
    return pool.run(course_tests_job(CHAPTER, REFERENCE, 120, dependencies))


@pytest.mark.kit
def test_a_tree_on_its_own_correct_map_passes(pool: WorkerPool, tmp_path: Path) -> None:
    run = course_run(pool, submission(tmp_path, OWN_CORRECT_MAP))
    assert run.status == "completed", run.message
    assert {name: run.outcome(name) for name in COURSE_NAMES} == dict.fromkeys(
        COURSE_NAMES, "passed"
    )


@pytest.mark.kit
def test_a_wrong_displacement_is_caught_through_the_tree(pool: WorkerPool, tmp_path: Path) -> None:
    """The reference tree on a student's broken map: the course tests see children go missing."""
    run = course_run(pool, submission(tmp_path, WRONG_DISPLACEMENT))
    assert run.status == "completed", run.message
    failing = run.failing()
    assert "test_model_based_against_a_naive_map" in failing, failing


@pytest.mark.kit
def test_no_map_with_ref_deps_passes_and_the_report_says_so(tmp_path: Path) -> None:
    """A whole check (cut to one mutant and no wheat) of the reference tree in a submission
    without a map: with --ref-deps every course test passes, and the JSON report records the
    kit's map; the report is held to its schema."""
    chapter = dataclasses.replace(CHAPTER, mutants=CHAPTER.mutants[:1], wheats=())
    folder = submission(tmp_path, None)
    report: CheckReport = check(chapter, folder, Limits(ref_deps=True))
    assert report.course_tests.passed == report.course_tests.total == len(COURSE_NAMES)
    assert report.dependencies == (DependencyUse("ds.05", "robin_hood", "kit", None),)
    data = report_to_dict(report, chapter)
    assert data["dependencies"] == {"ds.05": {"module": "robin_hood", "used": "kit", "file": None}}
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)


# ----------------------------------------------------------------------
# What students read


@pytest.mark.parametrize("command", ["tests", "chapter"])
def test_tests_and_chapter_name_the_dependency(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert grader.cli.main([command]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    for named in (NEED.id, NEED.title, NEED.implementation, *NEED.interface, "--ref-deps"):
        assert named in shown, named
    if command == "tests":
        assert f"uses: {NEED.uses}" in shown and f"operations: {NEED.operations}" in shown
