"""The mutation phase started early beside the validation: stopped, it starts no more runs."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from grader.catalog import load_chapter
from grader.mutation import Stopped, run_mutants
from grader.sandbox.host.job import Job
from grader.sandbox.host.result import RunResult

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
        return RunResult("completed", (), "", "", 0.1)

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
