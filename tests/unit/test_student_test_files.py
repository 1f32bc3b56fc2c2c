"""How the grader reads and runs an honest student's test file, whatever its style.

The static check is the layer that explains the rules; it must not turn away
honest work. These tests run student-style files through the sandbox as
``check`` does and hold the grader to accepting them.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from grader.commands.check import check
from grader.grading.jobs import Limits
from grader.inputs.catalog import Chapter, load_chapter
from grader.inputs.dependencies import kit_sources
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import MALFORMED, interpret
from grader.static.checker import check_test_source, function_name

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")
HONEST = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "honest").glob("*.py"))
"""Honest test files, one style each, written for the kit (not derived from the model answer)."""
WITH_A_NOTE = {"hypothesis_given": "suppress_health_check (line 57)"}
"""The honest files that set a hypothesis setting the grader overrides, and where."""


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2) as workers:
        yield workers


@pytest.fixture(scope="module")
def two_mutants() -> Chapter:
    """The kit's chapter with two of its mutants: validation in full, a short mutation phase."""
    return replace(CHAPTER, mutants=tuple(m for m in CHAPTER.mutants if m.id in ("s11", "m01")))


def test_the_catalogue_of_honest_styles_has_at_least_twelve() -> None:
    assert len(HONEST) >= 12


@pytest.mark.parametrize("path", HONEST, ids=lambda path: path.stem)
def test_every_honest_style_is_valid(
    path: Path, two_mutants: Chapter, pool: WorkerPool, tmp_path: Path
) -> None:
    """``check`` validates the file as it would a student's: rules, the reference thrice,
    every wheat, the stub; the folder holds no radix.py, so the course tests are not run."""
    folder = tmp_path / "submission"
    (folder / "tests").mkdir(parents=True)
    shutil.copyfile(path, folder / CHAPTER.student_tests)
    report = check(two_mutants, folder, Limits(), pool=pool)
    student = report.student_tests
    assert student.valid, student.problems
    assert (student.problems, student.missing) == ((), ())
    required = {test.name for test in CHAPTER.required_tests}
    assert required <= {function_name(test) for test in student.tests}
    assert report.mutation is not None and report.mutation.errors == ()
    where = WITH_A_NOTE.get(path.stem)
    if where is None:
        assert student.notes == ()
    else:
        assert len(student.notes) == 1 and where in student.notes[0]


def test_the_graders_hypothesis_settings_hold_whatever_a_file_sets(pool: WorkerPool) -> None:
    """A settings object made in a test keeps the grader's derandomize, database, deadline
    and health checks: the static check refuses the first two, the run overrides the rest."""
    source = textwrap.dedent(
        """
        from hypothesis import HealthCheck, settings

        def test_forced() -> None:
            chosen = settings(deadline=5, derandomize=False, print_blob=True,
                              suppress_health_check=[], max_examples=7)
            assert chosen.deadline is None and chosen.derandomize and chosen.database is None
            assert not chosen.print_blob
            assert set(chosen.suppress_health_check) == set(HealthCheck)
            assert chosen.max_examples == 7
        """
    )
    result = pool.run(
        Job(
            REFERENCE,
            "test_settings.py",
            source,
            60.0,
            CHAPTER.module,
            dependencies=kit_sources(CHAPTER),
        )
    )
    assert result.all_passed, result.output


def test_unittest_test_cases_run_under_the_graders_pytest_options(pool: WorkerPool) -> None:
    """``unittest.TestCase`` tests and hypothesis's ``Machine.TestCase`` pass on the reference.

    pytest's unittest runner reads an option of its ``debugging`` plugin; with that plugin
    left out every such test errored, blamed on the student.
    """
    source = textwrap.dedent(
        """
        import unittest
        from hypothesis import strategies as st
        from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
        from radix import RadixTree

        class TestEmptyTree(unittest.TestCase):
            def test_empty(self) -> None:
                self.assertTrue(RadixTree(1).is_empty())

        class Inserts(RuleBasedStateMachine):
            def __init__(self) -> None:
                super().__init__()
                self.tree = RadixTree(1)
                self.values = 0

            @rule(key=st.lists(st.integers(0, 3), min_size=1, max_size=4))
            def insert(self, key: list[int]) -> None:
                self.tree.insert(key, list(key))

            @invariant()
            def not_empty_once_filled(self) -> None:
                assert self.tree.is_empty() == (self.tree.node_count() == 0)

        TestInserts = Inserts.TestCase
        """
    )
    result = pool.run(
        Job(
            REFERENCE,
            "test_styles.py",
            source,
            60.0,
            CHAPTER.module,
            dependencies=kit_sources(CHAPTER),
        )
    )
    assert result.status == "completed", result.output
    assert {o.name: o.status for o in result.outcomes} == {
        "TestEmptyTree::test_empty": "passed",
        "TestInserts::runTest": "passed",
    }


def test_events_that_are_not_the_recorders_are_dropped_and_the_run_is_crashed() -> None:
    """Lines a run writes to its outcome pipe that are JSON but no event forge nothing: the
    run is crashed, with one line saying why, even where the recorder's own events around
    them say every test passed."""
    garbled: list[object] = [1, [], None, "finished", {"event": 7}, {"event": "outcome", "name": 5}]
    garbled += [{"event": "collected", "names": [1]}, {"event": "outcome", "name": "t"}]
    garbled += [{"event": "outcome", "name": "test_x", "status": "won", "detail": ""}]
    record = {"events": garbled, "seconds": 0.1, "output": "", "timed_out": False}
    assert interpret({**record, "exit_code": 0}).status == "crashed"
    fine = [
        {"event": "collected", "names": ["test_x"]},
        *garbled,
        {"event": "outcome", "name": "test_x", "status": "passed", "detail": ""},
        {"event": "finished", "exitstatus": 0},
    ]
    result = interpret({**record, "events": fine, "exit_code": 0})
    assert result.status == "crashed" and result.message == MALFORMED
    assert result.outcome("test_x") == "not run"
    clean = [event for event in fine if event not in garbled]
    assert interpret({**record, "events": clean, "exit_code": 0}).all_passed
    assert interpret({**record, "events": 12, "exit_code": 0}).outcomes == ()


def test_the_module_under_test_is_the_chapters(pool: WorkerPool) -> None:
    """Nothing in the grader names ``radix``: a chapter whose module is ``heap`` gets its
    implementation as ``heap.py``, its own public names allowed, and ``radix`` refused."""
    source = "from heap import SIZE\n\n\ndef test_size() -> None:\n    assert SIZE == 3\n"
    violations, tests = check_test_source(source, "heap", frozenset({"SIZE"}))
    assert (violations, tests) == ([], ["test_size"])
    refused, _ = check_test_source("import radix\nfrom heap import LIMIT\n", "heap", frozenset())
    assert [v.line for v in refused] == [1, 2]
    assert refused[0].rule.startswith("import of 'radix' is not allowed")
    assert refused[1].rule.startswith("heap.LIMIT is not part of the interface")
    result = pool.run(Job("SIZE = 3\n", "test_heap.py", source, 60.0, "heap"))
    assert result.status == "completed", result.output
    assert [(o.name, o.status) for o in result.outcomes] == [("test_size", "passed")]


STOPPED_EVENTS: list[object] = [
    {"event": "collected", "names": ["test_a", "test_b", "test_c"]},
    {"event": "start", "name": "test_a"},
    {"event": "outcome", "name": "test_a", "status": "passed", "detail": ""},
    {"event": "start", "name": "test_b"},
    {"event": "outcome", "name": "test_b", "status": "failed", "detail": "E   assert 1 == 2"},
]


def test_a_run_stopped_at_its_first_failure_names_that_test_alone() -> None:
    """The worker ended the run after ``test_b`` failed: the tests after it did not run, and
    are no failures; the same events without the worker's word are a crash."""
    record = {"events": STOPPED_EVENTS, "seconds": 0.1, "output": "", "timed_out": False}
    stopped = interpret({**record, "stopped": True, "exit_code": -9})
    assert stopped.status == "stopped"
    assert stopped.message == "stopped at its first failing test, test_b"
    assert [(o.name, o.status) for o in stopped.outcomes] == [
        ("test_a", "passed"),
        ("test_b", "failed"),
        ("test_c", "not run"),
    ]
    assert stopped.failing() == ["test_b"]
    assert not stopped.all_passed
    assert "test_c" not in stopped.durations()
    assert interpret({**record, "stopped": False, "exit_code": -9}).status == "crashed"


def test_a_second_outcome_for_one_test_crashes_the_run() -> None:
    """A test that forges its own failure before the recorder reports it passed: neither
    outcome stands (a run stopped at the forged one would count it, one that went on would
    not), so the run is crashed, whether or not it stopped."""
    passed = {"event": "outcome", "name": "test_b", "status": "passed", "detail": ""}
    events = [*STOPPED_EVENTS, passed, {"event": "finished", "exitstatus": 0}]
    record = {"events": events, "seconds": 0.1, "output": "", "timed_out": False}
    result = interpret({**record, "exit_code": 0})
    assert result.status == "crashed"
    assert result.message == "the test process reported the outcome of test_b twice"
