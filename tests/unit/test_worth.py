"""What each of a student's tests is worth: its kills, and the tests that add nothing.

``fixtures/worth/`` holds a test file made for it: the weak example's six
required tests, one test no mutant can fail, and a second wording of the
worked example's check.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from conftest import ReusedRuns, add_dependencies

import grader.cli
from grader.catalog import load_chapter
from grader.errors import EXIT_FAIL
from grader.output.check_json import SCHEMA_PATH
from grader.results.check import MutantResult, MutationResult, StudentTestWorth
from grader.worth import worth_of_tests

CHAPTER = load_chapter()
WORTH_TESTS = Path(__file__).resolve().parents[1] / "fixtures" / "worth" / CHAPTER.student_tests
SPLIT, AGAIN = "test_split_by_hand", "test_the_second_insert_hands_back_its_head"
REINSERT = "test_insert_hands_back_the_stored_part"
IDLE = ("test_locks_pin_ancestors", "test_parent_becomes_evictable", "test_a_new_tree_is_empty")


@pytest.mark.slow
def test_each_test_is_shown_with_its_kills(
    tmp_path: Path,
    reused_runs: ReusedRuns,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "submission"
    (folder / "tests").mkdir(parents=True)
    shutil.copyfile(CHAPTER.reference, folder / CHAPTER.implementation)
    add_dependencies(folder)
    shutil.copyfile(WORTH_TESTS, folder / CHAPTER.student_tests)
    reused_runs.install(monkeypatch)
    monkeypatch.setenv("COLUMNS", "250")
    report_file = tmp_path / "report.json"
    arguments = ["check", "--submission", str(folder), "--json", str(report_file)]
    assert grader.cli.main(arguments) == EXIT_FAIL
    report = json.loads(report_file.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert report["schema_version"] == 3
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


def test_a_test_is_covered_only_by_one_that_kills_everything_it_kills() -> None:
    mutants = (
        MutantResult("a", "", "killed", ("broad", "narrow")),
        MutantResult("b", "", "killed", ("broad", "other")),
        MutantResult("c", "", "timeout", ("other",)),  # the tests that failed before the limit
        MutantResult("d", "", "survived", ()),
        MutantResult("e", "", "error", ()),
    )
    worth = worth_of_tests(MutationResult(0.7, (), mutants), ["narrow", "broad", "other", "idle"])
    assert worth == (
        StudentTestWorth("narrow", ("a",), ("broad",)),
        StudentTestWorth("broad", ("a", "b"), ()),
        StudentTestWorth("other", ("b", "c"), ()),
        StudentTestWorth("idle", (), ()),
    )
