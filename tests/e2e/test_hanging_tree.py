"""A student's ``radix.py`` that never returns from ``evict`` (issue 35, items 1 and 2), graded
by the commands a student runs: ``check`` and ``tdd green``.

The hang is found by the call bound (``Chapter.call_limit``), not by a run's time limit:
the course tests end with every run completed, each failing test says in one line which
call did not return and the line of the loop it was stuck in, with the student's frame,
and nothing of hypothesis's machinery; the student's own tests on that tree blame the
tree, not the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import add_dependencies

from grader.inputs.catalog import load_chapter

pytestmark = pytest.mark.slow  # a whole check and a tdd, each a real sandboxed grading

CHAPTER = load_chapter()
LOOP = "        while freed < n and self._next[ROOT] != ROOT:\n"
HANGS = (
    "        while freed < n:\n            if self._next[ROOT] == ROOT:\n                continue\n"
)
INTERNALS = ("hypothesis", "Flaky", "Inconsistent data", "ImplementationError", "grader/")


@pytest.fixture(scope="module")
def hanging_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A submission of the model answer's tests and the reference whose ``evict`` loops for
    ever once no leaf is left; the line of that loop."""
    folder = tmp_path_factory.mktemp("hanging") / "submission"
    (folder / "tests").mkdir(parents=True)
    reference = CHAPTER.reference.read_text(encoding="utf-8")
    assert reference.count(LOOP) == 1
    source = reference.replace(LOOP, HANGS)
    (folder / CHAPTER.implementation).write_text(source, encoding="utf-8")
    (folder / CHAPTER.student_tests).write_text(
        CHAPTER.model_tests.read_text(encoding="utf-8"), encoding="utf-8"
    )
    add_dependencies(folder, CHAPTER)
    return folder, source.splitlines().index(HANGS.splitlines()[0]) + 1


def grader(*arguments: str) -> subprocess.CompletedProcess[str]:
    """``grader ARGUMENTS`` as a student runs it: a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_check_locates_the_hang_in_every_course_test_it_stops(
    hanging_tree: tuple[Path, int], tmp_path: Path
) -> None:
    folder, line = hanging_tree
    report = tmp_path / "report.json"
    done = grader("check", "--submission", str(folder), "--time-limit", "20", "--json", str(report))
    assert done.returncode == 1, done.stderr
    course = json.loads(report.read_text(encoding="utf-8"))["course_tests"]
    assert course["problem"] is None  # every run finished: none was stopped by its time limit
    assert course["results"]["test_lru_order_follows_last_use"] == "failed"
    located = f"your radix.py did not return from `evict` (line {line}): stopped after"
    frame = f"radix.py:{line}: in evict\n    while freed < n:\n"
    for name, failure in course["failures"].items():
        assert frame + f"E   {located}" in failure, (name, failure)
        assert not [word for word in INTERNALS if word in failure], (name, failure)
    assert "test_model_based_against_a_naive_map" in course["failures"]
    on_yours = json.loads(report.read_text(encoding="utf-8"))["student_tests"]["on_yours"]
    assert on_yours and all(located in reason for reason in on_yours)
    assert not [word for word in INTERNALS[:3] if word in done.stdout]


def test_tdd_green_blames_the_tree_not_the_test(hanging_tree: tuple[Path, int]) -> None:
    folder, line = hanging_tree
    done = grader("tdd", "green", "--submission", str(folder))
    assert done.returncode == 1, done.stderr
    located = f"your radix.py did not return from `evict` (line {line})"
    assert "test_locks_pin_ancestors fails on your radix.py: " + located in " ".join(
        done.stdout.split()
    )
    assert "too slow" not in done.stdout and "make the test do less" not in done.stdout
