"""What each of a student's tests is worth: its kills, and the tests that add nothing.

``fixtures/worth/`` holds a test file made for it: the weak example's six
required tests, one test no mutant can fail, and a second wording of the
worked example's check.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import ReusedRuns, add_dependencies

import grader.cli
from grader.errors import EXIT_FAIL
from grader.grading.worth import worth_of_tests
from grader.inputs.catalog import load_chapter
from grader.output.check_json import SCHEMA_PATH
from grader.results.check import MutantResult, MutationResult, StudentTestWorth
from grader.sandbox.protocol.status import MutantStatus

CHAPTER = load_chapter()
WORTH_TESTS = Path(__file__).resolve().parents[1] / "fixtures" / "worth" / CHAPTER.student_tests
SPLIT, AGAIN = "test_split_by_hand", "test_the_second_insert_hands_back_its_head"
REINSERT = "test_insert_hands_back_the_stored_part"
IDLE = ("test_locks_pin_ancestors", "test_parent_becomes_evictable", "test_a_new_tree_is_empty")


def _check(folder: Path, report_file: Path, *options: str) -> dict[str, Any]:
    """``grader check`` of ``folder`` with ``options``: its JSON report, checked on its schema."""
    arguments = ["check", "--submission", str(folder), "--json", str(report_file), *options]
    assert grader.cli.main(arguments) == EXIT_FAIL
    report: dict[str, Any] = json.loads(report_file.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert report["schema_version"] == 5
    return report


@pytest.mark.slow
def test_each_test_is_shown_with_its_kills(
    tmp_path: Path,
    reused_runs: ReusedRuns,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With ``--every-kill`` each test shows all it kills; by default, the kills it made first,
    with the same statuses, and each mutant's killer the first of its full run's killers."""
    folder = tmp_path / "submission"
    (folder / "tests").mkdir(parents=True)
    shutil.copyfile(CHAPTER.reference, folder / CHAPTER.implementation)
    add_dependencies(folder)
    shutil.copyfile(WORTH_TESTS, folder / CHAPTER.student_tests)
    reused_runs.install(monkeypatch)
    monkeypatch.setenv("COLUMNS", "250")
    report = _check(folder, tmp_path / "every.json", "--every-kill")
    assert report["mutation"]["worth"] == {
        SPLIT: {"kills": ["s05"], "covered_by": [REINSERT, AGAIN]},
        "test_match_splits_inside_an_edge": {"kills": ["s02"], "covered_by": []},
        REINSERT: {"kills": ["s05"], "covered_by": [SPLIT, AGAIN]},
        "test_oldest_leaf_goes_first": {"kills": ["m03"], "covered_by": []},
        **{name: {"kills": [], "covered_by": []} for name in IDLE[:2]},
        IDLE[2]: {"kills": [], "covered_by": []},
        AGAIN: {"kills": ["s05"], "covered_by": [SPLIT, REINSERT]},
    }
    # the same facts the mutant table gives, read per test
    for mutant_id, mutant in report["mutation"]["mutants"].items():
        killers = {n for n, w in report["mutation"]["worth"].items() if mutant_id in w["kills"]}
        assert killers == set(mutant["killed_by"]), mutant_id
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert f"Tests that kill no mutant: {', '.join(IDLE)}" in lines
    assert f"Tests whose every kill another test also makes: {SPLIT}, {REINSERT}, {AGAIN}" in lines

    first = _check(folder, tmp_path / "first.json")
    assert first["provenance"]["run_settings"]["every_kill"] is False
    assert first["mutation"]["worth"] == {
        SPLIT: {"kills": ["s05"], "covered_by": []},
        "test_match_splits_inside_an_edge": {"kills": ["s02"], "covered_by": []},
        "test_oldest_leaf_goes_first": {"kills": ["m03"], "covered_by": []},
        **{name: {"kills": [], "covered_by": []} for name in (REINSERT, *IDLE, AGAIN)},
    }
    order = list(first["mutation"]["worth"])
    for mutant_id, mutant in first["mutation"]["mutants"].items():
        full = report["mutation"]["mutants"][mutant_id]
        assert mutant["status"] == full["status"], mutant_id
        expected = sorted(full["killed_by"], key=order.index)[:1]
        assert mutant["killed_by"] == expected, mutant_id
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    adds_none = ", ".join((REINSERT, *IDLE, AGAIN))
    assert f"Tests that add no kill to the tests before them: {adds_none}" in lines
    assert "grader check --every-kill runs every test on every mutant" in out
    assert "Tests whose every kill" not in out


def test_a_test_is_covered_only_by_one_that_kills_everything_it_kills() -> None:
    mutants = (
        MutantResult("a", "", MutantStatus.KILLED, ("broad", "narrow")),
        MutantResult("b", "", MutantStatus.KILLED, ("broad", "other")),
        MutantResult(
            "c", "", MutantStatus.TIMEOUT, ("other",)
        ),  # the tests that failed before the limit
        MutantResult("d", "", MutantStatus.SURVIVED, ()),
        MutantResult("e", "", MutantStatus.ERROR, ()),
    )
    worth = worth_of_tests(MutationResult(0.7, (), mutants), ["narrow", "broad", "other", "idle"])
    assert worth == (
        StudentTestWorth("narrow", ("a",), ("broad",)),
        StudentTestWorth("broad", ("a", "b"), ()),
        StudentTestWorth("other", ("b", "c"), ()),
        StudentTestWorth("idle", (), ()),
    )
