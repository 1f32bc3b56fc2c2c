"""Survivor witnesses: each holds on the kit's implementations, and each tier shows its part.

The witnesses (``mutants/witnesses.json``) are replayed in this process on the
reference, every wheat and their mutant: these are the kit's own trusted
files, never a student's. The tier tests grade nothing: a report in which
every mutant but one survived is drawn in every format at each tier, and each
format must show what the tier allows and nothing more.
"""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
from conftest import ReusedRuns, make_submission
from rich.console import Console

import grader.cli
from grader.course.gradescope_history import read_metadata, submission_tier
from grader.errors import GraderError
from grader.grading.witness import TIERS, Budget, at_tier, for_context, lower, read_witnesses
from grader.inputs.catalog import load_chapter
from grader.inputs.patching import mutant_sources
from grader.output.check_json import SCHEMA_PATH, report_to_dict
from grader.output.gradescope import gradescope_results
from grader.output.html import summary_header
from grader.output.junit import report_to_junit
from grader.output.mutation_report import mutation_report
from grader.output.terminal import render_catalog, render_check
from grader.results.check import (
    CheckReport,
    CourseTestsResult,
    MutantResult,
    MutationResult,
    StudentTestsResult,
)
from grader.sandbox.protocol.status import MutantStatus, TestStatus

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

KIT = Path(__file__).resolve().parents[2]
CHAPTER = load_chapter()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gradescope_metadata"


def refresh_witnesses() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_witnesses", KIT / "tools" / "refresh_witnesses.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = refresh_witnesses()
assert CHAPTER.witnesses is not None
WITNESSES = read_witnesses(CHAPTER.witnesses.path)


# ----------------------------------------------------------------------
# Every witness holds


def test_every_planted_mutant_has_a_witness() -> None:
    """A mutant without a witness is a kit error (or an equivalent mutant, never planted)."""
    assert list(WITNESSES) == [m.id for m in CHAPTER.mutants]


@pytest.mark.parametrize("mutant", [m.id for m in CHAPTER.mutants])
def test_the_witness_replays(mutant: str) -> None:
    """On the reference and every wheat, the stored reference results; on the mutant, the
    stored mutant results, first different at the call the witness names (its last)."""
    witness = WITNESSES[mutant]
    sources = mutant_sources(CHAPTER)
    correct = TOOL.correct_sources(CHAPTER)
    expected = [call.reference for call in witness.calls]
    assert len(correct) == 1 + len(CHAPTER.wheats)
    for source in correct:
        assert TOOL.replay(TOOL.load_module(CHAPTER, source), witness.granule, witness.calls) == (
            expected
        )
    got = TOOL.replay(TOOL.load_module(CHAPTER, sources[mutant]), witness.granule, witness.calls)
    assert got[: witness.differs_at] == expected[: witness.differs_at]
    assert got[witness.differs_at] != expected[witness.differs_at]
    assert witness.differs_at == len(witness.calls) - 1
    assert TOOL.problems(CHAPTER, witness, sources) == []


@pytest.mark.parametrize("mutant", [m.id for m in CHAPTER.mutants])
def test_the_witness_test_kills_its_mutant(mutant: str) -> None:
    """The test shown at ``full`` passes on the reference and every wheat, fails on the
    mutant."""
    test = WITNESSES[mutant].test
    name = f"test_what_{mutant}_breaks"

    def passes(source: str) -> bool:
        """Whether the test passes with ``source`` as the module it imports."""
        body = test.replace(f"from {CHAPTER.module} import", "from _witnessed import")
        sys.modules["_witnessed"] = TOOL.load_module(CHAPTER, source)
        namespace: dict[str, Any] = {}
        try:
            exec(compile(body, name, "exec"), namespace)
            namespace[name]()
        except (Exception, pytest.fail.Exception):  # a failed check, or the mutant's crash
            return False
        finally:
            del sys.modules["_witnessed"]
        return True

    for source in TOOL.correct_sources(CHAPTER):
        assert passes(source)
    assert not passes(mutant_sources(CHAPTER)[mutant])


def test_a_witness_that_no_longer_holds_is_named(tmp_path: Path) -> None:
    """The tool's check names a witness whose stored results the mutant no longer gives."""
    witness = WITNESSES["s11"]
    other = WITNESSES["s01"]
    swapped = type(witness)("s11", other.granule, other.calls, other.differs_at)
    found = TOOL.problems(CHAPTER, swapped, mutant_sources(CHAPTER))
    assert found and all(line.startswith("s11:") for line in found)


# ----------------------------------------------------------------------
# What each tier shows


def all_but_one_survive() -> CheckReport:
    """A report of valid tests that kill s02 alone."""
    course = CourseTestsResult({t.name: TestStatus.PASSED for t in CHAPTER.course_tests}, {}, None)
    tests = tuple(t.name for t in CHAPTER.required_tests)
    student = StudentTestsResult(True, (), (), tests, 1.0)
    mutants = tuple(
        MutantResult(m.id, m.title, MutantStatus.KILLED, (tests[1],))
        if m.id == "s02"
        else MutantResult(m.id, m.title, MutantStatus.SURVIVED, ())
        for m in CHAPTER.mutants
    )
    mutation = MutationResult(CHAPTER.threshold, CHAPTER.required, mutants)
    timings = {"course_tests": 1.0, "validation": 1.0, "mutation": 1.0, "total": 3.0}
    return CheckReport(CHAPTER.id, "submission", course, student, mutation, timings)


def at(tier: str, report: CheckReport) -> tuple[Any, CheckReport]:
    """The chapter at ``tier``, and the report as a check at that tier makes it (titles kept
    only where the tier shows them, as ``grader.commands.check`` does)."""
    chapter = at_tier(CHAPTER, tier)
    assert report.mutation is not None
    mutants = tuple(
        MutantResult(m.id, m.title if chapter.show_mutant_titles else "", m.status, m.killed_by)
        for m in report.mutation.mutants
    )
    mutation = MutationResult(report.mutation.threshold, report.mutation.required, mutants)
    return chapter, dataclasses.replace(report, mutation=mutation)


def every_text(chapter: Any, report: CheckReport) -> dict[str, str]:
    """The report in each format a student reads, as text."""
    console = Console(file=io.StringIO(), width=200, color_system=None)
    render_check(console, chapter, report)
    assert isinstance(console.file, io.StringIO)
    return {
        "terminal": console.file.getvalue(),
        "json": json.dumps(report_to_dict(report, chapter)),
        "gradescope": json.dumps(gradescope_results(chapter, report)),
        "mutation report": json.dumps(mutation_report(chapter, report)),
        "html": summary_header(chapter, report),
        "junit": report_to_junit(chapter, report),
    }


def shown_parts(mutant: str) -> dict[str, list[str]]:
    """Text that only each tier (and those above it) may show of ``mutant``."""
    witness = WITNESSES[mutant]
    planted = CHAPTER.mutant(mutant)
    differing = witness.calls[witness.differs_at]
    return {
        "title": [planted.title],
        "symptom": [planted.symptom],
        "calls": [call.code for call in witness.calls],
        "full": ["correct tree:", f"def test_what_{mutant}_breaks"]
        + (["this mutant: raises"] if "raises" in differing.mutant else []),
    }


def in_text(snippet: str, text: str) -> bool:
    """``snippet`` in ``text`` as written, or as JSON or HTML escapes it."""
    return any(form in text for form in (snippet, json.dumps(snippet)[1:-1], html.escape(snippet)))


@pytest.mark.parametrize("tier", TIERS)
def test_each_format_shows_what_the_tier_allows_and_no_more(tier: str) -> None:
    chapter, report = at(tier, all_but_one_survive())
    texts = every_text(chapter, report)
    survivor = "s13"
    for part, snippets in shown_parts(survivor).items():
        allowed = TIERS.index(tier) >= TIERS.index(part)
        for name, text in texts.items():
            if name == "json" and part in ("calls", "full"):
                continue  # the JSON report's witness is data: the next test reads it
            for snippet in snippets:
                assert in_text(snippet, text) == allowed, (tier, part, name, snippet)


@pytest.mark.parametrize("tier", TIERS)
def test_the_json_witness_follows_the_tier(tier: str) -> None:
    """``mutation.mutants[ID].witness``: absent below ``calls``, no results below ``full``,
    and never on a killed mutant; every report is held to the schema."""
    chapter, report = at(tier, all_but_one_survive())
    data = report_to_dict(report, chapter)
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    mutants = data["mutation"]["mutants"]
    assert "witness" not in mutants["s02"]
    for mutant, entry in mutants.items():
        if mutant == "s02":
            continue
        assert (entry["symptom"] != "") == (TIERS.index(tier) >= TIERS.index("symptom"))
        if TIERS.index(tier) < TIERS.index("calls"):
            assert "witness" not in entry
            continue
        witness = WITNESSES[mutant]
        shown = entry["witness"]
        assert shown["granule"] == witness.granule
        assert shown["differs_at"] == witness.differs_at
        keys = {"method", "args"} | ({"reference", "mutant"} if tier == "full" else set())
        assert all(set(call) == keys for call in shown["calls"])
        assert [c["method"] for c in shown["calls"]] == [c.method for c in witness.calls]
        json.dumps(shown["calls"])  # plain JSON arguments


def test_a_killed_mutant_shows_no_witness_anywhere() -> None:
    chapter, report = at("full", all_but_one_survive())
    for name, text in every_text(chapter, report).items():
        assert "test_what_s02_breaks" not in text, name
        assert "test_what_s13_breaks" in text or name == "json", name


def test_the_option_lowers_the_tier_and_never_raises_it() -> None:
    assert CHAPTER.witnesses is not None
    local = CHAPTER.witnesses.tier("local")
    assert local == "calls" and CHAPTER.witnesses.tier("autograder") == "symptom"
    assert for_context(CHAPTER, "local").witness_tier == "calls"
    assert for_context(CHAPTER, "local", "full").witness_tier == "calls"
    assert for_context(CHAPTER, "local", "title").witness_tier == "title"
    hidden = for_context(CHAPTER, "local", "none")
    assert hidden.witness_tier == "none" and not hidden.show_mutant_titles
    assert [lower("symptom", t) for t in TIERS] == [
        "none",
        "title",
        "symptom",
        "symptom",
        "symptom",
    ]


def test_the_catalog_listing_says_each_tier() -> None:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    render_catalog(console, for_context(CHAPTER, "local"))
    assert isinstance(console.file, io.StringIO)
    text = " ".join(console.file.getvalue().split())
    assert "calls from grader check here, symptom on Gradescope before the due date" in text
    assert CHAPTER.mutant("s13").symptom in text
    quiet = Console(file=io.StringIO(), width=100, color_system=None)
    render_catalog(quiet, for_context(CHAPTER, "local", "title"))
    assert isinstance(quiet.file, io.StringIO)
    assert CHAPTER.mutant("s13").symptom not in " ".join(quiet.file.getvalue().split())


# ----------------------------------------------------------------------
# Gradescope's budget, from submission_metadata.json

BUDGET = Budget(per_day=3, tier="calls", then="title")


def budgeted() -> Any:
    assert CHAPTER.witnesses is not None
    return dataclasses.replace(CHAPTER.witnesses, budget=BUDGET)


@pytest.mark.parametrize(
    ("fixture", "tier", "spends"),
    [
        ("first_of_the_day", "calls", True),
        ("fourth_of_the_day", "title", False),
        ("invalid_and_refused_spend_nothing", "calls", True),
        ("three_yesterday", "calls", True),
        ("after_the_due_date", "full", False),
        ("before_the_late_due_date", "calls", True),
        ("the_day_in_the_course_offset", "title", False),
    ],
)
def test_the_gradescope_budget_follows_the_history(fixture: str, tier: str, spends: bool) -> None:
    metadata = read_metadata(FIXTURES / f"{fixture}.json")
    assert metadata is not None
    shown = submission_tier(budgeted(), metadata)
    assert (shown.tier, shown.budgeted) == (tier, spends)
    assert shown.extra_data(valid=True)["witness_budget_spent"] is spends
    assert shown.extra_data(valid=False)["witness_budget_spent"] is False


def test_without_a_budget_or_metadata_the_autograder_tier_holds(tmp_path: Path) -> None:
    metadata = read_metadata(FIXTURES / "fourth_of_the_day.json")
    assert submission_tier(CHAPTER.witnesses, metadata).tier == "symptom"
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    for missing in (read_metadata(tmp_path / "none.json"), read_metadata(tmp_path / "broken.json")):
        assert missing is None
        assert submission_tier(budgeted(), missing).tier == "symptom"
    assert submission_tier(budgeted(), {"created_at": "yesterday"}).tier == "symptom"


def test_the_command_line_option_lowers_and_never_raises(
    tmp_path: Path,
    reused_runs: ReusedRuns,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``grader check --witness``: ``title`` drops s11's witness and symptom from the JSON
    report; ``full`` is above the catalog's ``calls`` here, so it says so and shows calls."""
    reused_runs.install(monkeypatch)
    folder = make_submission(tmp_path, "misses_s11")
    out = tmp_path / "report.json"
    arguments = ["check", "--submission", str(folder), "--json", str(out)]

    def s11(*option: str) -> dict[str, Any]:
        assert grader.cli.main([*arguments, *option]) == 1
        entry: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))["mutation"]["mutants"][
            "s11"
        ]
        return entry

    lowered = s11("--witness", "title")
    assert "witness" not in lowered and lowered["symptom"] == ""
    assert lowered["title"] == CHAPTER.mutant("s11").title
    capsys.readouterr()
    raised = s11("--witness", "full")
    said = capsys.readouterr().out
    assert "--witness full shows more than the catalog allows here" in said
    assert all(set(call) == {"method", "args"} for call in raised["witness"]["calls"])
    assert raised == s11()


def test_a_tier_the_kit_does_not_know_is_a_broken_kit(tmp_path: Path) -> None:
    (tmp_path / "chapter").mkdir()
    catalog = (KIT / "chapter" / "catalog.toml").read_text(encoding="utf-8")
    broken = catalog.replace('local = "calls"', 'local = "everything"', 1)
    assert broken != catalog
    (tmp_path / "chapter" / "catalog.toml").write_text(broken, encoding="utf-8")
    with pytest.raises(GraderError, match="unknown witness tier 'everything'"):
        load_chapter(root=tmp_path)
