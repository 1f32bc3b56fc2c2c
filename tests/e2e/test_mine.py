"""``grader mine``: a graded class's own bugs against every valid test file, known answers.

The class: alice hands in the reference and the model answer; bob, carol and
dan the same mistake (a split leaves the lower leaf off the LRU list; dan's
copy differs in a comment), erin a tree whose ``children()`` is not sorted,
fay one whose ``child_count`` counts one too many. Half of them carry the
model answer's tests (strong: every planted mutant), half the ``weak`` file.
The model answer catches the split and ``child_count`` bugs but not erin's,
which the planted mutants do not stand for: it must rank first, the only
candidate; the three copies must read as one group.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import SUBMISSIONS, ReusedRuns, make_submission

import grader.cli
from grader.course.mined_witness import witness_from_detail
from grader.errors import EXIT_PASS
from grader.inputs.catalog import load_chapter
from grader.output.mining import MINING_SCHEMA

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
CLASS = {  # student: (the example their radix.py comes from, their test file)
    "alice": ("strong", "model"),
    "bob": ("lru_split", "model"),
    "carol": ("lru_split", "weak"),
    "dan": ("lru_split_again", "weak"),
    "erin": ("children_unsorted", "model"),
    "fay": ("buggy_radix", "weak"),
}
IDS = {name: f"student-0{i}" for i, name in enumerate(sorted(CLASS), start=1)}
MODEL, WEAK = ("alice", "bob", "erin"), ("carol", "dan", "fay")
CAUGHT = {  # each real bug: the test files that catch it (the model answer's, or none)
    "bob": MODEL,
    "carol": MODEL,
    "dan": MODEL,
    "erin": (),
    "fay": MODEL,
}


def lay_out(root: Path) -> list[Path]:
    folders = []
    for name, (example, tests) in CLASS.items():
        folder = make_submission(root, example).rename(root / name)
        if tests == "weak":
            weak = SUBMISSIONS / "weak" / CHAPTER.student_tests
            shutil.copyfile(weak, folder / CHAPTER.student_tests)
        folders.append(folder)
    return folders


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory, reused_runs: ReusedRuns) -> dict[str, Any]:
    """The class graded by batch, then mined twice (the second takes every run again)."""
    root = tmp_path_factory.mktemp("mine")
    (root / "class").mkdir()
    folders = lay_out(root / "class")
    out = root / "out"
    with pytest.MonkeyPatch.context() as monkeypatch:
        reused_runs.install(monkeypatch)
        batch = ["batch", *map(str, folders), "--out", str(out), "--first-kills"]
        assert grader.cli.main(batch) in (EXIT_PASS, 1)
        first = grader.cli.main(["mine", str(out)])
        data = json.loads((out / "mining.json").read_text(encoding="utf-8"))
        again = grader.cli.main(["mine", str(out), "--names"])
        named = json.loads((out / "mining.json").read_text(encoding="utf-8"))
    return {"codes": (first, again), "data": data, "named": named, "out": out}


def test_the_matrix_is_the_known_one(mined: dict[str, Any]) -> None:
    data = mined["data"]
    assert mined["codes"] == (EXIT_PASS, EXIT_PASS)
    jsonschema.validate(data, json.loads(MINING_SCHEMA.read_text(encoding="utf-8")))
    assert [f["student"] for f in data["test_files"]] == [IDS[n] for n in sorted(CLASS)]
    strong = {f["student"] for f in data["test_files"] if f["strong"]}
    assert strong == {IDS[n] for n in MODEL}
    assert [b["student"] for b in data["bugs"]] == [IDS[n] for n in sorted(CAUGHT)]
    for cell in data["matrix"]:
        bug = next(n for n, i in IDS.items() if i == cell["bug"])
        tests = next(n for n, i in IDS.items() if i == cell["tests"])
        assert cell["status"] == ("caught" if tests in CAUGHT[bug] else "missed"), cell
    assert len(data["matrix"]) == len(CAUGHT) * len(CLASS)
    for bug in data["bugs"]:
        name = next(n for n, i in IDS.items() if i == bug["student"])
        assert bug["caught_by"] == [IDS[n] for n in CAUGHT[name]]
        assert bug["share"] == len(CAUGHT[name]) / len(CLASS)
        assert bug["failed"] and bug["witness"] is not None, bug


def test_copies_of_one_mistake_read_as_one_group_ranked(mined: dict[str, Any]) -> None:
    groups = mined["data"]["groups"]
    assert [g["students"] for g in groups] == [
        [IDS["erin"]],
        [IDS["bob"], IDS["carol"], IDS["dan"]],
        [IDS["fay"]],
    ]
    assert [g["candidate"] for g in groups] == [True, False, False]
    assert [g["strong_share"] for g in groups] == [0.0, 1.0, 1.0]
    assert "fails test_" in groups[0]["line"] and "caught by 0 of 3 strong" in groups[0]["line"]
    erin = groups[0]["witness"]
    assert erin["calls"][-1]["method"] == "children", erin  # the unsorted read tells it apart
    assert erin["calls"][-1]["reference"] != erin["calls"][-1]["mutant"]
    split = groups[1]["witness"]["calls"][-1]
    assert split["method"] == "lru_order" and split["reference"] != split["mutant"], split


def test_a_second_mine_takes_every_run_again_and_names_on_request(mined: dict[str, Any]) -> None:
    named = mined["named"]
    assert named["runs"]["made"] == 0
    assert named["runs"]["reused"] == len(CAUGHT) * len(CLASS) + len(CAUGHT)
    assert named["named"] and named["groups"][0]["students"] == ["erin"]
    assert not mined["data"]["named"]
    assert not any(name in json.dumps(mined["data"]) for name in CLASS)


def test_files_changed_after_grading_are_left_out(mined: dict[str, Any]) -> None:
    """A kept copy that is not what was graded is never mined (every input has a writer)."""
    out = mined["out"]
    radix = out / "submissions" / "erin" / CHAPTER.implementation
    before = radix.read_text(encoding="utf-8")
    try:
        radix.write_text(before + "\n# edited\n", encoding="utf-8")
        assert grader.cli.main(["mine", str(out), "--names"]) == EXIT_PASS
        data = json.loads((out / "mining.json").read_text(encoding="utf-8"))
    finally:
        radix.write_text(before, encoding="utf-8")
    assert data["runs"]["made"] == 0
    assert [entry["student"] for entry in data["left_out"]] == ["erin"]
    assert "not the ones graded" in data["left_out"][0]["why"]
    assert all(bug["student"] != "erin" for bug in data["bugs"])


def test_the_page_escapes_what_a_student_tree_returns(mined: dict[str, Any]) -> None:
    page = (mined["out"] / "mining.html").read_text(encoding="utf-8")
    assert "<script" not in page and "the class's own bugs" in page
    forged = '{"granule": 1, "calls": [{"method": "os.system", "args": []}]}'
    assert witness_from_detail("mined-witness: " + forged)[0] is None
    assert witness_from_detail("E   some hang")[1] == "the search stopped: E   some hang"
