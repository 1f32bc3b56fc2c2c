"""The mutation phase started early beside the validation: stopped, it starts no more runs."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest

from grader.grading.mutation import Stopped, run_mutants
from grader.inputs.catalog import load_chapter
from grader.inputs.patching import mutant_sources
from grader.sandbox.host.job import Job
from grader.sandbox.host.result import RunResult
from grader.sandbox.host.result import TestOutcome as Outcome
from grader.sandbox.protocol.status import RunStatus, TestStatus

CHAPTER = load_chapter()


class CountingPool:
    """Stands in for the worker pool: every run passes, the first one stops the phase."""

    def __init__(self, stop: threading.Event | None) -> None:
        self.runs = 0
        self.stop = stop

    def run(self, job: Job) -> RunResult:
        self.runs += 1
        if self.stop is not None:
            self.stop.set()
        return RunResult(RunStatus.COMPLETED, (), "", "", 0.1)

    def confirm(self, job: Job, result: RunResult) -> RunResult:
        return result


def phase(pool: Any, stop: threading.Event | None) -> Any:
    with ThreadPoolExecutor(1) as threads:
        return run_mutants(CHAPTER, "def test_x():\n    pass\n", {}, 5.0, pool, threads, stop=stop)


def test_a_stopped_phase_starts_no_more_runs_and_has_no_result() -> None:
    stop = threading.Event()
    pool = CountingPool(stop)
    with pytest.raises(Stopped):
        phase(pool, stop)
    assert pool.runs == 1


def test_a_phase_never_stopped_runs_every_mutant_and_the_reference_twice() -> None:
    pool = CountingPool(None)
    result = phase(pool, None)
    assert pool.runs == len(CHAPTER.mutants) + 2
    assert [m.id for m in result.mutants] == [m.id for m in CHAPTER.mutants]


class RecordingPool:
    """Stands in for the worker pool: keeps every job; a run on a mutant stops at a failure."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.lock = threading.Lock()

    def run(self, job: Job) -> RunResult:
        with self.lock:
            self.jobs.append(job)
        if job.implementation == REFERENCE:
            return RunResult(
                RunStatus.COMPLETED, (Outcome("test_x", TestStatus.PASSED),), "", "", 0.1
            )
        outcomes = (
            Outcome("test_x", TestStatus.FAILED, "E   boom"),
            Outcome("test_y", TestStatus.NOT_RUN),
        )
        return RunResult(
            RunStatus.STOPPED, outcomes, "stopped at its first failing test, test_x", "", 0.1
        )

    def confirm(self, job: Job, result: RunResult) -> RunResult:
        return result


REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")


@pytest.mark.parametrize("every_kill", [False, True])
def test_every_run_of_the_phase_stops_at_a_failure_unless_every_kill(every_kill: bool) -> None:
    """The mutants' runs and the reference's among them are one job but for the source, and
    each asks the worker to stop at its first failure unless ``every_kill``; a run stopped
    there is a kill by the test that failed."""
    pool: Any = RecordingPool()
    sources = mutant_sources(CHAPTER)
    with ThreadPoolExecutor(2) as threads:
        result = run_mutants(
            CHAPTER, "def test_x():\n    pass\n", sources, 5.0, pool, threads, every_kill=every_kill
        )
    assert {job.stop_at_failure for job in pool.jobs} == {not every_kill}
    assert len({replace(job, implementation="") for job in pool.jobs}) == 1
    assert sum(job.implementation == REFERENCE for job in pool.jobs) == 2
    assert {(m.status, m.killed_by) for m in result.mutants} == {("killed", ("test_x",))}
    assert result.reference_problems == ()
