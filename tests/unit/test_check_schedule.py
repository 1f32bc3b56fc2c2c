"""When ``check`` starts the other-seed worker: once a core is free of phase 1, not before."""

from __future__ import annotations

from concurrent.futures import Future

from grader.commands.check import _warm_other_seed
from grader.errors import GraderError
from grader.sandbox.host.job import OTHER_HASH_SEED
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult
from grader.sandbox.protocol.status import RunStatus


class CountingPool:
    """Stands in for a ``WorkerPool``: counts the workers asked to warm, by seed."""

    def __init__(self, stopped: bool = False) -> None:
        self.warmed: list[int] = []
        self.stopped = stopped

    def warm(self, seed: int) -> None:
        if self.stopped:
            raise GraderError("grading was stopped before it finished")
        self.warmed.append(seed)


def course_runs(count: int) -> list[Future[RunResult]]:
    return [Future() for _ in range(count)]


def test_the_other_seed_worker_warms_when_the_first_course_run_ends() -> None:
    pool = CountingPool()
    runs = course_runs(3)
    _warm_other_seed(pool, runs)  # type: ignore[arg-type]
    assert pool.warmed == []
    runs[1].set_result(RunResult(RunStatus.COMPLETED, (), "", "", 1.0))
    assert pool.warmed == [OTHER_HASH_SEED]


def test_without_course_runs_it_warms_at_once() -> None:
    pool = CountingPool()
    _warm_other_seed(pool, [])  # type: ignore[arg-type]
    assert pool.warmed == [OTHER_HASH_SEED]


def test_a_pool_closed_meanwhile_is_no_error() -> None:
    pool = CountingPool(stopped=True)
    runs = course_runs(1)
    _warm_other_seed(pool, runs)  # type: ignore[arg-type]
    runs[0].set_exception(GraderError("grading was stopped before it finished"))
    assert pool.warmed == []


def test_warming_an_existing_worker_starts_no_other() -> None:
    """``WorkerPool.warm`` starts a worker for a seed only where it has none."""
    with WorkerPool(workers=1, other_seed=True) as pool:
        before = len(pool._all)
        pool.warm(OTHER_HASH_SEED)
        assert len(pool._all) == before == 2
    with WorkerPool(workers=1, other_seed=False) as pool:
        pool.warm(OTHER_HASH_SEED)
        pool.warm(OTHER_HASH_SEED)
        assert [worker.hash_seed for worker in pool._all] == [0, OTHER_HASH_SEED]
