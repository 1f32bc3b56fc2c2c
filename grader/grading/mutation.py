"""Phase 3 of a check: the student's tests against every planted mutant.

The reference runs again at places among the mutants, under the same job and limits,
so a file that passes only when it is not watched is caught; a mutant's status comes
from its run through the one table in ``grader.sandbox.protocol.status``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace

from grader.grading.jobs import PHASES, Progress, student_tests_job
from grader.grading.robustness import rerun_kills
from grader.grading.validation import problems_on_correct
from grader.inputs.catalog import Chapter, Mutant
from grader.inputs.provenance import text_digest
from grader.results.check import MutantResult, MutationResult
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult
from grader.sandbox.protocol.status import MutantStatus, RunStatus, mutant_status


class Stopped(Exception):
    """The mutation phase was stopped before it ended: it has no result."""


REFERENCE_AMONG_MUTANTS = 2
"""How often the reference runs again among the mutant runs, under the mutants' limits."""


def run_mutants(
    chapter: Chapter,
    tests: str,
    sources: dict[str, str],
    limit: float,
    pool: WorkerPool,
    threads: ThreadPoolExecutor,
    progress: Progress | None = None,
    ceiling: float | None = None,
    stop: threading.Event | None = None,
    every_kill: bool = False,
    seeds: tuple[int, ...] = (),
) -> MutationResult:
    """Phase 3: the test file ``tests`` against every planted mutant, ``limit`` seconds of CPU
    time each, every run seeing the limits ``ceiling``; and the reference again, at places
    among them (``reference_places``), under the same conditions: what fails on any of
    those is in ``reference_problems``, and makes the file not valid.

    Each run ends at its first failing test, which kills the mutant, unless ``every_kill``:
    then every test runs, and each mutant names every test that kills it.

    With further ``seeds`` (``grader.grading.robustness``), each kill by a test that draws
    examples is rerun with each, once the file shows no problem here.

    Once ``stop`` is set (the file proved not valid meanwhile) no more runs start, and the
    phase raises ``Stopped``."""
    jobs = _mutant_jobs(chapter, tests, sources, limit, ceiling, every_kill)
    order = list(jobs)
    stop = stop or threading.Event()

    def run(job: Job) -> RunResult | None:
        return None if stop.is_set() else pool.run(job)

    futures = {name: threads.submit(run, job) for name, job in jobs.items()}
    for done, _ in enumerate(as_completed(futures.values()), start=1):
        if progress is not None and not stop.is_set():
            progress(PHASES["mutants"], done, len(futures))
    if stop.is_set():
        raise Stopped
    # A timeout is a kill (or, on the reference, a file not valid) only once confirmed alone.
    runs = {name: pool.confirm(jobs[name], _ran(futures[name].result())) for name in order}
    results = tuple(
        replace(
            _mutant_result(m, runs[m.id], chapter.show_mutant_titles),
            durations=runs[m.id].durations(),
        )
        for m in chapter.mutants
    )
    unique = _reference_problems(chapter, runs, sources, limit)
    mutation = MutationResult(chapter.threshold, chapter.required, results, unique)
    if not seeds or unique or mutation.errors:
        return mutation
    if progress is not None:
        progress(PHASES["robustness"], 0, 0)
    settings = (limit, ceiling, not every_kill)
    robustness = rerun_kills(chapter, tests, sources, runs, seeds, settings, pool, threads, stop)
    if robustness is None:
        raise Stopped
    return replace(mutation, robustness=robustness)


def _reference_problems(
    chapter: Chapter, runs: dict[str, RunResult], sources: dict[str, str], limit: float
) -> tuple[str, ...]:
    """What the file did wrong on the reference's runs among the mutants', each said once."""
    problems: list[str] = []
    for name, run in runs.items():
        if name not in sources:
            what = "the reference (a correct tree), run again among the mutants"
            problems += problems_on_correct(run, what, chapter.student_tests, limit)
    return tuple(dict.fromkeys(problems))


def _mutant_jobs(
    chapter: Chapter,
    tests: str,
    sources: dict[str, str],
    limit: float,
    ceiling: float | None,
    every_kill: bool,
) -> dict[str, Job]:
    """The phase's runs in order: one per mutant, and the reference's among them."""
    reference = chapter.reference.read_text(encoding="utf-8")
    order = [mutant.id for mutant in chapter.mutants]
    for place in reference_places(tests, len(order)):
        order.insert(place, f"reference {len(order)}")
    return {
        name: student_tests_job(
            chapter,
            tests,
            sources.get(name, reference),
            limit,
            ceiling=ceiling,
            stop_at_failure=not every_kill,
        )
        for name in order
    }


def _ran(result: RunResult | None) -> RunResult:
    assert result is not None, "a run is skipped only once the phase is stopped"
    return result


def reference_places(tests: str, mutants: int) -> list[int]:
    """Where among ``mutants`` runs the reference runs again: places drawn from a digest of the
    test file, so the same file gets them every time, yet nothing in a run tells which it is
    (every run of the file looks alike, and no run sees another)."""
    digest = bytes.fromhex(text_digest(tests))
    return sorted(digest[i] % (mutants + 1) for i in range(REFERENCE_AMONG_MUTANTS))


def _mutant_result(mutant: Mutant, run: RunResult, show_title: bool) -> MutantResult:
    """The mutant's status (``protocol.status.mutant_status``), the tests that failed on it,
    and what an error or a timeout was; its title only where the chapter shows titles."""
    title = mutant.title if show_title else ""
    killers = tuple(run.failing())
    status = mutant_status(run.status, bool(killers))
    if status == MutantStatus.ERROR:
        what = (
            run.message if run.status == RunStatus.CRASHED else f"collection failed: {run.message}"
        )
        message = (
            f"on mutant {mutant.id} {what}: a run that does not report every test "
            "is an error, not a kill"
        )
        return MutantResult(mutant.id, title, status, (), message)
    if status == MutantStatus.TIMEOUT:
        return MutantResult(
            mutant.id, title, status, killers, f"timeout (confirmed): {run.message}"
        )
    return MutantResult(mutant.id, title, status, killers)
