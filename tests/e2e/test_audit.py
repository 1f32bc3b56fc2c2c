"""``grader audit``: mutmut's generated mutants against the course tests or a student's tests.

The real audit of the reference takes minutes, so the runs here use
``fixtures/audit/kit``, a kit-shaped folder around a module of a few lines,
and one run on the real reference restricted to one function. The pure parts
(mutmut's exit codes, diffs to lines, the list of equivalents, the output
formats) are tested without running mutmut; the kit's own list of
equivalents is checked against the reference here too.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import grader.commands.audit
from grader import cli
from grader.commands.audit import equivalents_path, load_equivalents, mark_equivalents, run_audit
from grader.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, GraderError
from grader.grading.mutmut_driver import change_of, function_key, source_functions, status_of
from grader.inputs.catalog import Chapter, load_chapter
from grader.output.audit import audit_mutation_report, audit_to_dict
from grader.results.audit import AuditReport, EquivalentMutant, GeneratedMutant

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "audit"
KIT = Path(__file__).resolve().parents[2]
SCHEMA = KIT / "grader" / "output" / "schemas" / "mutation-testing-report-schema.json"

needs_mutmut = pytest.mark.skipif(
    importlib.util.find_spec("mutmut") is None,
    reason="mutmut is not installed (pip install 'ds07-grader[audit]')",
)


@pytest.fixture(scope="module")
def fixture_chapter() -> Chapter:
    return load_chapter(root=FIXTURE / "kit")


@pytest.fixture(scope="module")
def course_audit(fixture_chapter: Chapter) -> AuditReport:
    return run_audit(fixture_chapter)


def mutant(name: str, status: str = "survived", **fields: Any) -> GeneratedMutant:
    values: dict[str, Any] = {
        "id": f"radix.x_f__mutmut_{name}",
        "function": "f",
        "line": 3,
        "status": status,
        "exit_code": 0,
        "diff": "",
        "original": "return n * 2",
        "mutated": f"return n * {name}",
    }
    return GeneratedMutant(**{**values, **fields})


# ----------------------------------------------------------------------
# The pure parts.


def test_mutmut_exit_codes_map_to_statuses() -> None:
    assert [status_of(code) for code in (1, 3, 0, 33, 5, -24, 36, -9, None, 2)] == [
        "killed",
        "killed",
        "survived",
        "no tests",
        "no tests",
        "timeout",
        "timeout",
        "crashed",
        "error",
        "error",
    ]


def test_a_functions_diff_is_placed_on_its_module_line() -> None:
    source = (
        "class T:\n    # a comment\n\n    def f(self) -> int:\n        x = 1\n        return x\n"
    )
    functions = source_functions(source)
    assert functions["xǁTǁf"].qualname == "T.f" and functions["xǁTǁf"].def_line == 4
    diff = (
        "--- radix.py\n+++ radix.py\n@@ -2,4 +2,4 @@\n \n def f(self) -> int:\n"
        "-    x = 1\n+    x = 2\n     return x"
    )
    change = change_of(diff, source.splitlines(), def_line=4)
    assert (change.line, change.removed, change.added) == (5, ("    x = 1",), ("    x = 2",))
    assert function_key("radix.xǁTǁf__mutmut_12") == "xǁTǁf"
    assert function_key("radix.xǁTǁ__init____mutmut_3") == "xǁTǁ__init__"


def test_a_diff_without_its_def_line_is_placed_in_its_own_function() -> None:
    """mutmut shows three lines of context; the same lines in another function do not fool it."""
    body = "    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n"
    source = f"def f():\n{body}\n\ndef g():\n{body}"
    diff = (
        "--- radix.py\n+++ radix.py\n@@ -3,4 +3,4 @@\n"
        "     b = 2\n     c = 3\n-    d = 4\n+    d = 5\n     e = 5"
    )
    assert source_functions(source)["x_g"].def_line == 9
    assert change_of(diff, source.splitlines(), def_line=9).line == 13
    assert change_of(diff, source.splitlines(), def_line=1).line == 5


def test_listed_mutants_are_found_by_id_then_by_their_change() -> None:
    mutants = [mutant("3"), mutant("4", status="killed", mutated="return n / 2"), mutant("5")]
    listed = [
        EquivalentMutant("radix.x_f__mutmut_3", "f", "return n * 2", "return n * 3", "same"),
        EquivalentMutant("radix.x_f__mutmut_9", "f", "return n * 2", "return n * 5", "moved"),
        EquivalentMutant("radix.x_f__mutmut_4", "f", "return n * 2", "return n / 2", "wrong"),
        EquivalentMutant("radix.x_f__mutmut_1", "f", "return n * 2", "return 7", "gone"),
        EquivalentMutant("radix.x_g__mutmut_1", "g", "a", "b", "not audited this time"),
    ]
    marked, stale = mark_equivalents(mutants, listed, functions={"f"})
    assert [m.equivalent for m in marked] == ["same", None, "moved"]  # a kill counts
    assert [(s.id, s.problem) for s in stale] == [
        ("radix.x_f__mutmut_9", "is now radix.x_f__mutmut_5"),
        (
            "radix.x_f__mutmut_4",
            "the tests kill radix.x_f__mutmut_4 (killed): it is not equivalent",
        ),
        ("radix.x_f__mutmut_1", "matches no generated mutant"),
    ]


def test_the_kits_list_of_equivalents_matches_the_reference() -> None:
    """Every entry has a reason, names a function of the reference, and quotes its lines."""
    chapter = load_chapter()
    listed = load_equivalents(equivalents_path(chapter))
    source = chapter.reference.read_text(encoding="utf-8")
    functions = {f.qualname: f for f in source_functions(source).values()}
    lines = {line.strip() for line in source.splitlines()}
    assert listed.mutants, "the course audit lists no equivalent mutant"
    for function in listed.functions:
        assert function.name in functions and function.reason.strip()
    ids = [entry.id for entry in listed.mutants]
    assert len(set(ids)) == len(ids)
    for entry in listed.mutants:
        assert entry.reason.strip(), entry.id
        key = functions[entry.function].key
        assert entry.id.startswith(f"{chapter.reference.stem}.{key}__mutmut_"), entry.id
        assert all(line in lines for line in entry.original.split("\n")), entry.id
        assert entry.original != entry.mutated


def test_a_broken_list_of_equivalents_is_a_broken_kit(tmp_path: Path) -> None:
    path = tmp_path / "equivalent.toml"
    path.write_text('[[mutant]]\nid = "x"\n', encoding="utf-8")
    with pytest.raises(GraderError, match="the kit is broken"):
        load_equivalents(path)
    assert load_equivalents(tmp_path / "absent.toml").mutants == ()


def test_the_mutation_report_places_each_change_on_its_tokens() -> None:
    source = "def f(n):\n    return n == 2\n"
    report = AuditReport(
        "ds.07",
        "course",
        "course_tests/test_ds07.py",
        "reference/radix.py",
        source,
        "mutmut 3.8.1",
        (
            mutant("1", line=2, original="return n == 2", mutated="return n != 2"),
            mutant("2", "killed", line=2, original="return n == 2", mutated="return n == 3"),
            mutant("3", "no tests", line=2, original="return n == 2", mutated="return None"),
            mutant("4", line=2, original="return n == 2", mutated="return n", equivalent="why"),
        ),
        (),
        0,
        (),
        None,
        {},
    )
    data = audit_mutation_report(report)
    jsonschema.validate(data, json.loads(SCHEMA.read_text(encoding="utf-8")))
    entries = data["files"]["radix.py"]["mutants"]
    assert [(e["mutatorName"], e["replacement"], e["status"]) for e in entries] == [
        ("EqualityOperator", "!=", "Survived"),
        ("NumberLiteral", "3", "Killed"),
        ("NoneReplacement", "None", "NoCoverage"),
        ("Removal", "", "Ignored"),
    ]
    assert entries[0]["location"] == {
        "start": {"line": 2, "column": 14},
        "end": {"line": 2, "column": 16},
    }
    assert entries[3]["statusReason"] == "equivalent: why"
    assert report.kill_rate == round(1 / 3, 4) and [m.id[-1] for m in report.survivors] == [
        "1",
        "3",
    ]


# ----------------------------------------------------------------------
# Real mutmut runs on the small fixture kit, and one on the reference.


@needs_mutmut
def test_the_course_audit_of_the_fixture(course_audit: AuditReport) -> None:
    report = course_audit
    assert report.suite == "course" and report.tool.startswith("mutmut 3.")
    assert [f.name for f in report.excluded] == ["Counter._check"]
    assert not any(m.function == "Counter._check" for m in report.mutants)
    assert (len(report.mutants), report.not_run, len(report.counted)) == (18, 2, 17)
    assert (report.detected, report.kill_rate) == (14, 0.8235)
    assert [(m.id, m.line, m.status) for m in report.survivors] == [
        ("radix.x_clamp__mutmut_5", 30, "survived"),
        ("radix.x_unused__mutmut_1", 34, "no tests"),
        ("radix.x_unused__mutmut_2", 34, "no tests"),
    ]
    assert report.survivors[0].original == "return max(0, n)"
    assert report.survivors[0].mutated == "return max(1, n)"
    equivalent = [m for m in report.mutants if m.equivalent]
    assert [m.id for m in equivalent] == ["radix.xǁCounterǁ__init____mutmut_3"]
    assert [(s.id, s.problem.split(":")[0]) for s in report.stale] == [
        ("radix.x_double__mutmut_9", "is now radix.x_double__mutmut_2"),
        ("radix.x_double__mutmut_9", "the tests kill radix.x_double__mutmut_2 (killed)"),
        ("radix.x_clamp__mutmut_1", "matches no generated mutant"),
    ]
    assert not report.clean


@needs_mutmut
def test_the_audit_is_deterministic(fixture_chapter: Chapter, course_audit: AuditReport) -> None:
    again = run_audit(fixture_chapter, jobs=1)
    assert again == course_audit
    assert audit_to_dict(again) | {"timings": {}} == audit_to_dict(course_audit) | {"timings": {}}


@needs_mutmut
def test_a_students_tests_against_the_same_mutants(fixture_chapter: Chapter) -> None:
    report = run_audit(fixture_chapter, FIXTURE / "submission", grade=False)
    assert report.suite == "submission" and report.planted is None
    assert report.tests.endswith("submission/tests/test_ds07_radix.py")
    assert report.stale == ()  # the list is judged against the course tests only
    # The fixture's list applies as it stands: its wrong entry hides one "no tests" mutant here.
    assert (report.detected, len(report.counted)) == (4, 16)
    statuses = {m.function: m.status for m in report.survivors}
    assert statuses["double"] == "no tests" and statuses["Counter.is_zero"] == "no tests"


@needs_mutmut
def test_one_function_of_the_reference_against_the_model_answer() -> None:
    chapter = load_chapter()
    report = run_audit(chapter, KIT / "reference", functions=["is_empty"], grade=False)
    assert {m.function for m in report.mutants} == {"RadixTree.is_empty"}
    assert report.mutants and report.kill_rate == 1.0 and report.excluded == ()


@needs_mutmut
def test_tests_that_fail_on_the_reference_stop_the_audit(
    fixture_chapter: Chapter, tmp_path: Path
) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "radix.py").write_text("", encoding="utf-8")
    (tmp_path / "tests" / "test_ds07_radix.py").write_text(
        "from radix import double\n\ndef test_double():\n    assert double(2) == 5\n",
        encoding="utf-8",
    )
    with pytest.raises(GraderError, match="fail on the reference") as raised:
        run_audit(fixture_chapter, tmp_path, grade=False)
    assert raised.value.exit_code == EXIT_FAIL


def test_an_unknown_function_is_refused(fixture_chapter: Chapter) -> None:
    with pytest.raises(GraderError, match="no function nope"):
        run_audit(fixture_chapter, functions=["nope"])


def test_without_mutmut_the_audit_says_how_to_install_it(
    fixture_chapter: Chapter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hint installs the audit extra's pins from the kit's own metadata, which works from a
    wheel file too (no index to resolve ``ds07-grader[audit]`` from)."""
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(GraderError, match=r"pip install 'mutmut<4,>=3\.8'"):
        run_audit(fixture_chapter)


# ----------------------------------------------------------------------
# The command line.


@needs_mutmut
def test_the_command_writes_json_and_a_valid_mutation_report(
    course_audit: AuditReport,
    fixture_chapter: Chapter,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake_audit(chapter: Chapter, submission: Path | None, **options: Any) -> AuditReport:
        calls.append((submission, options["functions"], options["jobs"]))
        return course_audit

    monkeypatch.setattr(cli, "load_chapter", lambda chapter_id: fixture_chapter)
    monkeypatch.setattr(grader.commands.audit, "run_audit", fake_audit)
    out, mutation = tmp_path / "audit.json", tmp_path / "mutation.json"
    argv = ["audit", "--course", "--json", str(out), "--mutation-report", str(mutation)]
    assert cli.main([*argv, "--function", "clamp", "--jobs", "1"]) == EXIT_FAIL
    assert calls == [(None, ["clamp"], 1)]
    shown = capsys.readouterr().out
    assert "Kill rate 82.4% (14/17 counted)" in shown
    assert "radix.x_clamp__mutmut_5  line 30  survived" in shown
    assert "-    return max(0, n)" in shown
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["schema_version"] == 1 and data["kill_rate"] == 0.8235
    assert data["counts"]["no_tests"] == 2 and len(data["survivors"]) == 3
    assert (data["counts"]["generated"], data["counts"]["not_run"]) == (20, 2)
    report = json.loads(mutation.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert len(report["files"]["radix.py"]["mutants"]) == 18


@needs_mutmut
def test_a_submission_audit_is_information_and_never_fails(
    course_audit: AuditReport,
    fixture_chapter: Chapter,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = AuditReport(**{**course_audit.__dict__, "suite": "submission"})
    monkeypatch.setattr(cli, "load_chapter", lambda chapter_id: fixture_chapter)
    monkeypatch.setattr(grader.commands.audit, "run_audit", lambda *args, **options: report)
    assert cli.main(["audit", "--submission", "somewhere"]) == EXIT_PASS
    shown = capsys.readouterr().out
    assert "return max(0, n)  ->  return max(1, n)" in shown and "@@" not in shown


def test_the_command_needs_course_or_submission(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["audit"]) == EXIT_USAGE
    assert "one of the arguments --course --submission is required" in capsys.readouterr().err
