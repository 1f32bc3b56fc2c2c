"""``grader check``'s reports for other tools, each held to its published schema or its reader.

- Gradescope's ``results.json``: to ``grader/output/schemas/gradescope-results.schema.json``,
  written from Gradescope's specification (it publishes no schema), and to the
  grade formula of ``grader.grading.grade``;
- JUnit XML: read back with ``junitparser``, the reader CI test reporters use;
- the mutation testing report: to the schema of the npm package
  ``mutation-testing-report-schema`` 3.8.4, vendored under ``grader/output/schemas``
  with its licence, so no machine needs npm; and each mutant's location and
  replacement must rebuild the mutant from the reference exactly;
- the HTML page: rendered in headless Chromium (skipped only where none is
  installed), which must show the viewer's verdict on every mutant;
- the GitHub job summary: appended to ``$GITHUB_STEP_SUMMARY``.

The real command writes every format once, for the model answer; the other
example submissions are graded through the library, every sandboxed run
shared with the rest of the session (``ReusedRuns``).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
import junitparser
import pytest
from conftest import ReusedRuns, make_submission

import grader.cli
import grader.cli.handlers
from grader.commands.check import check
from grader.errors import EXIT_PASS, GraderError
from grader.grading.grade import grade
from grader.grading.jobs import Limits
from grader.inputs.catalog import load_chapter
from grader.inputs.patching import mutant_sources
from grader.output.files import ReportFiles, append_step_summary, with_mutant_titles, write_reports
from grader.output.gradescope import STAFF_ENTRY, gradescope_results
from grader.output.html import mutation_report_html, summary_header
from grader.output.junit import report_to_junit
from grader.output.mutation_report import change_between, mutation_report
from grader.output.summary import report_to_markdown
from grader.results.check import CheckReport, kills_needed
from grader.sandbox.protocol.status import MutantStatus

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
KIT = Path(__file__).resolve().parents[2]
SCHEMAS = Path(grader.__file__).resolve().parent / "output" / "schemas"
LIMITS = Limits(course_tests=120.0, student_tests=120.0)
"""The command line's default limits, so the library's runs and the command's are the same."""
EXAMPLES = (
    "weak",
    "misses_s11",
    "fails_on_reference",
    "syntax_error_in_radix",
    "buggy_radix",
    "missing_radix",
    "missing_test_file",
)
CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


@dataclasses.dataclass(frozen=True)
class Written:
    """What the real command wrote for the model answer."""

    code: int
    report: CheckReport
    files: dict[str, Path]
    summary: str


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, reused_runs: ReusedRuns) -> Written:
    """``grader check`` with every format asked for, on GitHub Actions (a summary file set)."""
    root = tmp_path_factory.mktemp("exports")
    folder = make_submission(root, "strong")
    files = {
        option: root / "out" / name
        for option, name in {
            "--gradescope": "results.json",
            "--junit": "junit.xml",
            "--mutation-report": "mutation.json",
            "--html": "mutation.html",
        }.items()
    }
    summary = root / "summary.md"
    summary.write_text("an earlier step's summary\n", encoding="utf-8")
    reports: list[CheckReport] = []
    real_check = (
        check  # what grader.cli.handlers imported from grader.commands.check, patched below
    )

    def recording_check(*args: Any, **kwargs: Any) -> CheckReport:
        reports.append(real_check(*args, **kwargs))
        return reports[-1]

    arguments = ["check", "--submission", str(folder)]
    for option, path in files.items():
        arguments += [option, str(path)]
    with pytest.MonkeyPatch.context() as monkeypatch:
        reused_runs.install(monkeypatch)
        monkeypatch.setattr(grader.cli.handlers, "check", recording_check)
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        code = grader.cli.main(arguments)
    return Written(code, reports[0], files, summary.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def examples(
    tmp_path_factory: pytest.TempPathFactory, reused_runs: ReusedRuns
) -> dict[str, CheckReport]:
    root = tmp_path_factory.mktemp("export-examples")
    with pytest.MonkeyPatch.context() as monkeypatch:
        reused_runs.install(monkeypatch)
        return {name: check(CHAPTER, make_submission(root, name), LIMITS) for name in EXAMPLES}


def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return schema


def all_reports(written: Written, examples: dict[str, CheckReport]) -> dict[str, CheckReport]:
    return {"strong": written.report, **examples}


# ----------------------------------------------------------------------
# The real command


def test_check_writes_every_format_it_is_asked_for(written: Written) -> None:
    assert written.code == EXIT_PASS
    assert written.report.verdict == "pass"
    for path in written.files.values():
        assert path.is_file() and path.stat().st_size > 0, path
    assert written.summary.startswith("an earlier step's summary\n## ✅ ds.07: PASS\n")


def test_check_help_names_the_new_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert grader.cli.main(["check", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in ("--gradescope", "--junit", "--mutation-report", "--html", "--mutant-titles"):
        assert option in shown


# ----------------------------------------------------------------------
# Gradescope


def test_gradescope_results_follow_the_specification(
    written: Written, examples: dict[str, CheckReport]
) -> None:
    validator = jsonschema.Draft202012Validator(load_schema("gradescope-results.schema.json"))
    validator.check_schema(validator.schema)
    validator.validate(json.loads(written.files["--gradescope"].read_text(encoding="utf-8")))
    for report in examples.values():
        validator.validate(gradescope_results(CHAPTER, report))


def test_gradescope_lists_each_course_test_and_each_mutant(written: Written) -> None:
    results = json.loads(written.files["--gradescope"].read_text(encoding="utf-8"))
    assert results["score"] == CHAPTER.grade_scale == 100
    names = [test["name"] for test in results["tests"]]
    course = [n for n in names if n.startswith("Course test ")]
    mutants = [n for n in names if n.startswith("Planted mutant ")]
    assert course == [f"Course test {t.name}" for t in CHAPTER.course_tests]
    assert mutants == [f"Planted mutant {m.id}: {m.title}" for m in CHAPTER.mutants]
    graded = [test for test in results["tests"] if test["name"] != STAFF_ENTRY]
    assert all(test["status"] == "passed" for test in graded)
    assert cents(test.get("score", 0) for test in results["tests"]) == cents([results["score"]])
    # the example's tests are the model answer itself; a student's own check compares no
    # copies (the autograder's does, in an entry hidden from students: test_trust_hand_back)
    assert [test for test in results["tests"] if test["name"] == STAFF_ENTRY] == []
    assert "model-answer" not in json.dumps(results)
    assert isinstance(results["execution_time"], int) and results["execution_time"] >= 0


def cents(points: Iterable[float]) -> int:
    return sum(round(p * 100) for p in points)


def test_gradescope_points_add_up_exactly(
    written: Written, examples: dict[str, CheckReport]
) -> None:
    """Scores and maxima sum to the score and the scale to the cent: 11 course tests share
    50 points as six of 4.55 and five of 4.54 (4.55 each would make 100.05)."""
    for name, report in all_reports(written, examples).items():
        results = gradescope_results(CHAPTER, report)
        tests = results["tests"]
        assert cents(t.get("score", 0) for t in tests) == cents([results["score"]]), name
        assert cents(t.get("max_score", 0) for t in tests) == cents([CHAPTER.grade_scale]), name
        assert results["score"] == grade(CHAPTER, report).points, name
    worth = [t["max_score"] for t in tests if t["name"].startswith("Course test ")]
    assert sorted(worth) == [4.54] * 5 + [4.55] * 6


def test_gradescope_visibility_comes_from_the_catalog(
    examples: dict[str, CheckReport], tmp_path: Path
) -> None:
    """The catalog's [gradescope] table sets the whole result's visibility, each kind of
    entry's, and single entries'; a value Gradescope does not know is a broken kit."""
    catalog = (KIT / "chapter" / "catalog.toml").read_text(encoding="utf-8")
    settings = """[gradescope]
visibility = "after_published"
course_tests = "visible"
student_tests = "after_due_date"
mutation_score = "visible"
mutants = "hidden"

[gradescope.tests]
s11 = "after_due_date"
test_locks_pin_the_path = "hidden"
"""
    start = catalog.index("[gradescope]")
    end = catalog.index("[[", start)
    (tmp_path / "chapter").mkdir()
    (tmp_path / "chapter" / "catalog.toml").write_text(
        catalog[:start] + settings + "\n" + catalog[end:], encoding="utf-8"
    )
    chapter = load_chapter(root=tmp_path)
    results = gradescope_results(chapter, examples["weak"])
    shown = {t["name"].split(":")[0]: t["visibility"] for t in results["tests"]}
    assert results["visibility"] == "after_published"
    assert shown["Course test test_hand_example_split_and_match"] == "visible"
    assert shown["Course test test_locks_pin_the_path"] == "hidden"
    assert shown[f"Your tests ({chapter.student_tests}) are valid"] == "after_due_date"
    assert shown["Planted mutant s11"] == "after_due_date"
    assert shown["Planted mutant s01"] == "hidden"
    jsonschema.validate(results, load_schema("gradescope-results.schema.json"))
    (tmp_path / "chapter" / "catalog.toml").write_text(
        catalog.replace('mutants = "visible"', 'mutants = "later"', 1), encoding="utf-8"
    )
    with pytest.raises(GraderError, match="use one of visible, after_due_date"):
        load_chapter(root=tmp_path)


def test_gradescope_says_a_missing_file_once_and_nothing_local(
    examples: dict[str, CheckReport],
) -> None:
    """No path of the grading machine, no advice that needs the kit (``grader start``), and
    a missing radix.py said once, in the overall output, not in each course test."""
    for name in ("missing_radix", "missing_test_file"):
        report = examples[name]
        text = json.dumps(gradescope_results(CHAPTER, report))
        assert report.submission not in text and "grader start" not in text, name
        assert text.count("is missing from your submission") == 1, name


def test_a_survivor_says_what_it_means(examples: dict[str, CheckReport]) -> None:
    results = gradescope_results(CHAPTER, examples["weak"])
    s11 = next(t for t in results["tests"] if t["name"].startswith("Planted mutant s11"))
    assert s11["status"] == "failed"
    assert (
        "every one of your tests passed on a copy of radix.py with this bug planted"
        in (s11["output"])
    )
    assert "The planted bug: a locked leaf stays on the eviction list." in s11["output"]
    assert "This mutant is required" in s11["output"]
    s02 = next(t for t in results["tests"] if t["name"].startswith("Planted mutant s02"))
    assert (s02["status"], s02["output"]) == (
        "passed",
        "Killed by test_match_splits_inside_an_edge.",
    )


def test_the_grade_combines_course_tests_and_mutation_score(
    written: Written, examples: dict[str, CheckReport]
) -> None:
    assert kills_needed(CHAPTER.threshold, len(CHAPTER.mutants)) == 13
    half = CHAPTER.grade_scale * CHAPTER.course_tests_weight
    assert grade(CHAPTER, written.report).points == 100
    # weak: every course test, 3 kills of the 13 needed, s11 survived
    assert grade(CHAPTER, examples["weak"]).points == round(half + half * 3 / 13, 2)
    # misses_s11: 17 kills, but the required mutant survived: one kill short of full
    assert grade(CHAPTER, examples["misses_s11"]).points == round(half + half * 12 / 13, 2)
    # tests that are not valid earn no mutation points
    assert grade(CHAPTER, examples["fails_on_reference"]).points == half
    # radix.py does not import: no course test passes, the tests still earn theirs
    assert grade(CHAPTER, examples["syntax_error_in_radix"]).points == half
    buggy = examples["buggy_radix"]
    passed = buggy.course_tests.passed
    assert 0 < passed < buggy.course_tests.total
    assert grade(CHAPTER, buggy).points == pytest.approx(half * passed / 11 + half, abs=0.01)


def test_full_marks_exactly_when_the_verdict_is_pass(
    written: Written, examples: dict[str, CheckReport]
) -> None:
    for name, report in all_reports(written, examples).items():
        full = grade(CHAPTER, report).points == CHAPTER.grade_scale
        assert full == (report.verdict == "pass"), name


# ----------------------------------------------------------------------
# Mutant titles: the catalog's choice, or the option's


def test_hidden_titles_appear_in_no_report(examples: dict[str, CheckReport]) -> None:
    report = examples["weak"]
    hidden = with_mutant_titles(CHAPTER, "hide")
    assert with_mutant_titles(CHAPTER, "catalog") is CHAPTER and CHAPTER.show_mutant_titles
    texts = [
        json.dumps(gradescope_results(hidden, report)),
        report_to_junit(hidden, report),
        json.dumps(mutation_report(hidden, report)),
        report_to_markdown(hidden, report),
    ]
    for mutant in CHAPTER.mutants:
        for text in texts:
            assert mutant.title not in text
    shown = with_mutant_titles(hidden, "show")
    assert CHAPTER.mutant("s11").title in report_to_markdown(shown, report)


def test_the_option_hides_titles_on_the_command_line(
    tmp_path: Path, reused_runs: ReusedRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    reused_runs.install(monkeypatch)
    folder = make_submission(tmp_path, "misses_s11")
    out = tmp_path / "results.json"
    report = tmp_path / "report.json"
    arguments = [
        "check",
        "--submission",
        str(folder),
        "--gradescope",
        str(out),
        "--json",
        str(report),
    ]
    assert grader.cli.main([*arguments, "--mutant-titles", "hide"]) == 1
    for written in (out, report):
        assert CHAPTER.mutant("s11").title not in written.read_text(encoding="utf-8")
    assert grader.cli.main(arguments) == 1
    for written in (out, report):
        assert CHAPTER.mutant("s11").title in written.read_text(encoding="utf-8")


# ----------------------------------------------------------------------
# JUnit XML


def test_junit_reads_back_with_a_ci_reader(written: Written) -> None:
    xml = junitparser.JUnitXml.fromfile(str(written.files["--junit"]))
    suites = list(xml)
    assert [len(list(suite)) for suite in suites] == [11, 1, 18]
    cases = [case for suite in suites for case in suite]
    assert all(case.is_passed for case in cases)
    assert [case.name for case in suites[0]] == [test.name for test in CHAPTER.course_tests]
    assert xml.tests == 30 and xml.failures == xml.errors == xml.skipped == 0


def test_junit_marks_survivors_errors_and_unrun_mutants(examples: dict[str, CheckReport]) -> None:
    weak = junitparser.JUnitXml.fromstring(report_to_junit(CHAPTER, examples["weak"]).encode())
    mutants = list(list(weak)[2])
    survived = {case.name.split(":")[0] for case in mutants if not case.is_passed}
    assert survived == {m.id for m in CHAPTER.mutants} - {"s02", "s05", "m03"}
    failure = next(case for case in mutants if case.name.startswith("s11")).result[0]
    assert isinstance(failure, junitparser.Failure) and failure.message == "survived"
    assert weak.failures == 15

    invalid = report_to_junit(CHAPTER, examples["fails_on_reference"])
    suites = list(junitparser.JUnitXml.fromstring(invalid.encode()))
    assert not next(iter(suites[1])).is_passed
    assert all(isinstance(case.result[0], junitparser.Skipped) for case in suites[2])

    broken = report_to_junit(CHAPTER, examples["syntax_error_in_radix"])
    course = list(next(iter(junitparser.JUnitXml.fromstring(broken.encode()))))
    assert all(isinstance(case.result[0], junitparser.Error) for case in course)
    assert "could not be imported" in course[0].result[0].message


def test_junit_escapes_what_xml_cannot_hold(examples: dict[str, CheckReport]) -> None:
    report = examples["buggy_radix"]
    course = report.course_tests
    name = next(n for n, status in course.results.items() if status == "failed")
    failures = {**course.failures, name: "E  assert '\x1b[31m' == '\x00'"}
    noisy = dataclasses.replace(report, course_tests=dataclasses.replace(course, failures=failures))
    text = report_to_junit(CHAPTER, noisy)
    ET.fromstring(text.encode())  # well-formed
    assert "\\x1b[31m" in text and "\\x00" in text


def errored_on_s11(report: CheckReport) -> CheckReport:
    """``report`` as ``check`` makes it when the run on s11 ends early (see tests/hostile):
    s11 an error, not a kill, and the tests not valid."""
    assert report.mutation is not None
    message = (
        "on mutant s11 the test process ended early (exit status 0) while running "
        "test_x: a run that does not report every test is an error, not a kill"
    )
    mutants = tuple(
        dataclasses.replace(m, status=MutantStatus.ERROR, killed_by=(), message=message)
        if m.id == "s11"
        else m
        for m in report.mutation.mutants
    )
    student = dataclasses.replace(report.student_tests, valid=False, problems=(message,))
    mutation = dataclasses.replace(report.mutation, mutants=mutants)
    return dataclasses.replace(report, student_tests=student, mutation=mutation)


def test_a_mutant_run_that_errors_counts_in_no_format(written: Written) -> None:
    """Not a kill, not a survivor: every format says so, and the tests earn no mutation points."""
    report = errored_on_s11(written.report)
    assert report.verdict == "fail"
    assert grade(CHAPTER, report).mutation_points == 0

    results = gradescope_results(CHAPTER, report)
    jsonschema.validate(results, load_schema("gradescope-results.schema.json"))
    s11 = next(t for t in results["tests"] if t["name"].startswith("Planted mutant s11"))
    assert s11["status"] == "failed"
    assert s11["output"].startswith("Not counted: on mutant s11 the test process ended early")

    suites = list(junitparser.JUnitXml.fromstring(report_to_junit(CHAPTER, report).encode()))
    case = next(c for c in suites[2] if c.name.startswith("s11"))
    assert isinstance(case.result[0], junitparser.Error)

    data = mutation_report(CHAPTER, report)
    jsonschema.Draft7Validator(load_schema("mutation-testing-report-schema.json")).validate(data)
    statuses = {m["id"]: m["status"] for m in data["files"]["radix.py"]["mutants"]}
    assert statuses["s11"] == "RuntimeError" and statuses["s02"] == "Killed"

    assert "| required mutants | s11 **error** |" in report_to_markdown(CHAPTER, report)


# ----------------------------------------------------------------------
# The mutation testing report and its page


def test_mutation_report_follows_the_published_schema(
    written: Written, examples: dict[str, CheckReport]
) -> None:
    schema = load_schema("mutation-testing-report-schema.json")
    validator = jsonschema.Draft7Validator(schema)
    data = json.loads(written.files["--mutation-report"].read_text(encoding="utf-8"))
    validator.validate(data)
    for report in examples.values():
        validator.validate(mutation_report(CHAPTER, report))
    assert data["schemaVersion"] == "2"
    assert data["thresholds"] == {"high": 70, "low": 70}
    file = data["files"]["radix.py"]
    assert file["source"] == CHAPTER.reference.read_text(encoding="utf-8")
    assert [m["id"] for m in file["mutants"]] == [m.id for m in CHAPTER.mutants]
    assert {m["status"] for m in file["mutants"]} == {"Killed"}
    tests = {t["id"] for t in data["testFiles"]["tests/test_ds07_radix.py"]["tests"]}
    for mutant in file["mutants"]:
        assert mutant["killedBy"] and set(mutant["killedBy"]) <= tests


def test_each_location_and_replacement_rebuild_the_mutant(written: Written) -> None:
    data = json.loads(written.files["--mutation-report"].read_text(encoding="utf-8"))
    file = data["files"]["radix.py"]
    lines = file["source"].splitlines(keepends=True)
    sources = mutant_sources(CHAPTER)
    for mutant in file["mutants"]:
        start, end = mutant["location"]["start"], mutant["location"]["end"]
        assert start["column"] == end["column"] == 1
        assert start["line"] < end["line"] <= len(lines) + 1, mutant["id"]
        rebuilt = [*lines[: start["line"] - 1], mutant["replacement"], *lines[end["line"] - 1 :]]
        assert "".join(rebuilt) == sources[mutant["id"]], mutant["id"]


def test_change_between_covers_insertions_and_deletions() -> None:
    inserted = change_between("a\nb\n", "a\nx\nb\n")
    assert (inserted.start_line, inserted.end_line, inserted.replacement) == (2, 2, "x\n")
    deleted = change_between("a\nx\nb\n", "a\nb\n")
    assert (deleted.start_line, deleted.end_line, deleted.replacement) == (2, 3, "")


def test_mutation_report_statuses(examples: dict[str, CheckReport]) -> None:
    weak = mutation_report(CHAPTER, examples["weak"])["files"]["radix.py"]["mutants"]
    statuses = {m["id"]: m["status"] for m in weak}
    assert statuses["s02"] == "Killed" and statuses["s11"] == "Survived"
    unrun = mutation_report(CHAPTER, examples["fails_on_reference"])["files"]["radix.py"]
    assert {m["status"] for m in unrun["mutants"]} == {"Ignored"}


def embedded_report(page: str) -> Any:
    match = re.search(r"\.report = (\{.*\});\n</script>", page)
    assert match is not None
    return json.loads(match.group(1))


def test_html_embeds_the_report_safely(written: Written) -> None:
    page = written.files["--html"].read_text(encoding="utf-8")
    data = json.loads(written.files["--mutation-report"].read_text(encoding="utf-8"))
    assert embedded_report(page) == data
    assert page.count("</script>") == 3  # the viewer's, the report's, the Killed filter's
    hostile = {"files": {"x.py": {"source": "</script><script>alert(1)</script>"}}}
    assert "alert" in str(embedded_report(mutation_report_html(hostile, "t")))
    assert mutation_report_html(hostile, "t").count("</script>") == 3


def test_html_header_escapes_what_a_student_wrote(examples: dict[str, CheckReport]) -> None:
    """A problem quoting the student's text (here a test name) cannot add markup to the page."""
    report = examples["fails_on_reference"]
    student = dataclasses.replace(
        report.student_tests, problems=("test_<script>alert(1)</script> fails",)
    )
    header = summary_header(CHAPTER, dataclasses.replace(report, student_tests=student))
    assert "<script>" not in header and "test_&lt;script&gt;" in header


PROBE = """<script>
function shownText(node) {
  let text = "";
  const walk = (n) => {
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const child of n.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) text += child.textContent + " ";
      else walk(child);
    }
  };
  walk(node);
  return text.replace(/\\s+/g, " ");
}
function killedFilter(node) {
  const box = node.shadowRoot && node.shadowRoot.querySelector("#filter-Killed");
  if (box) return box.checked ? "ticked" : "unticked";
  for (const child of [...(node.shadowRoot ? node.shadowRoot.children : []), ...node.children]) {
    const found = killedFilter(child);
    if (found) return found;
  }
  return "";
}
setTimeout(() => {
  const probe = document.createElement("pre");
  probe.id = "probe";
  const app = document.querySelector("mutation-test-report-app");
  probe.textContent = shownText(document.querySelector("#grade-summary") || document.body) +
    " | " + shownText(app) + " | killed filter: " + killedFilter(app);
  document.body.appendChild(probe);
}, 3000);
</script>
"""
"""Appended to a copy of the page: after the viewer has drawn, copy the text of the summary and
of the viewer's shadow DOM (which ``--dump-dom`` leaves out), and the state of its "Killed"
filter, into the page, where ``--dump-dom`` shows it."""


def shown_in_chromium(page: str, tmp_path: Path) -> str:
    """The text a browser shows of ``page`` (see ``PROBE``); skips where no Chromium is."""
    browser = next((found for name in CHROMIUMS if (found := shutil.which(name))), None)
    if browser is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    command += ["--virtual-time-budget=15000", "--dump-dom", f"{probed.as_uri()}#mutant/radix.py"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    match = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert match is not None, done.stderr[-2000:]
    return match.group(1)


def test_html_renders_in_headless_chromium(written: Written, tmp_path: Path) -> None:
    shown = shown_in_chromium(written.files["--html"].read_text(encoding="utf-8"), tmp_path)
    assert "radix.py" in shown and "ds.07 mutation report" in shown
    assert "100.00" in shown  # the mutation score the viewer computed
    assert re.search(r"Killed \( ?18 ?\)", shown), shown[:2000]
    assert "class RadixTree" in shown  # the reference source, drawn with its mutants
    assert shown.startswith(" ds.07: PASS, grade 100 of 100 ")


def test_html_opens_on_the_verdict_and_shows_kills(
    examples: dict[str, CheckReport], tmp_path: Path
) -> None:
    """The page of a failing submission: verdict, grade, threshold, the required mutant and
    the course tests above the viewer, and the killed mutants listed beside the survivors."""
    page = tmp_path / "weak.html"
    write_reports(CHAPTER, examples["weak"], ReportFiles(html=page))
    shown = shown_in_chromium(page.read_text(encoding="utf-8"), tmp_path)
    summary, _, rest = shown.partition(" | ")
    assert summary.startswith(" ds.07: FAIL, grade 61.54 of 100 Why: mutation score 0.17 below")
    assert "Course tests on your radix.py: 11/11 passed." in summary
    assert "the threshold 0.70 asks for 13 kills. Required, whatever the score: s11 survived" in (
        summary
    )
    assert rest.endswith("killed filter: ticked"), rest[-500:]
    assert re.search(r"Killed \( ?3 ?\)", rest) and re.search(r"Survived \( ?15 ?\)", rest)


def test_html_of_invalid_tests_says_why_instead_of_ignored(
    examples: dict[str, CheckReport],
) -> None:
    page = summary_header(CHAPTER, examples["fails_on_reference"])
    assert "not valid" in page and "test_split_by_hand fails on the reference" in page
    assert "not measured. To pass, your tests must kill at least 70% of the 18" in page


# ----------------------------------------------------------------------
# The GitHub job summary


def test_summary_shows_verdict_score_and_survivors(examples: dict[str, CheckReport]) -> None:
    text = report_to_markdown(CHAPTER, examples["weak"])
    assert text.startswith("## ❌ ds.07: FAIL (mutation score 0.17 below 0.70; required mutant")
    assert "| mutation score | 0.17 (3/18 killed), threshold 0.70 |" in text
    assert "| required mutants | s11 **survived** |" in text
    table = text.partition("| mutant | the planted bug |")[2]
    survivors = re.findall(r"^\| ([sm]\d\d)(?: \(\*\*required[^|]*)? \| (.*) \|$", table, re.M)
    expected = [m for m in CHAPTER.mutants if m.id not in ("s02", "s05", "m03")]
    assert survivors == [(m.id, m.title) for m in expected]
    assert "| s11 (**required**: no pass while it survives) |" in text
    assert text.count("every one of your tests passed on it") == 1  # the advice, said once
    invalid = report_to_markdown(CHAPTER, examples["fails_on_reference"])
    assert "### Problems with your tests" in invalid and "Surviving" not in invalid


def test_summary_is_written_only_on_github_actions(
    examples: dict[str, CheckReport], tmp_path: Path
) -> None:
    assert append_step_summary(CHAPTER, examples["weak"], {}) is None
    target = tmp_path / "summary.md"
    environ = {"GITHUB_STEP_SUMMARY": str(target)}
    assert append_step_summary(CHAPTER, examples["weak"], environ) == target
    append_step_summary(CHAPTER, examples["weak"], environ)
    assert target.read_text(encoding="utf-8").count("## ❌ ds.07") == 2
