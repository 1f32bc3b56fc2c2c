"""Phase 1 of a check: the course tests against the student's ``radix.py``, the verdict on
the code. Its runs are started beside the other phases' (``start_course_tests``) and
their merged result becomes the phase's (``finish_course_tests``), as the cache keeps it."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from grader.grading.jobs import Limits, course_test_jobs
from grader.grading.model_program import in_chapter_words
from grader.grading.tracebacks import for_students
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import Sources
from grader.inputs.submission import Submission
from grader.results.check import CourseTestsResult
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult, merged_runs
from grader.sandbox.levels import IsolationLevel
from grader.sandbox.protocol.status import RunStatus, TestStatus


@dataclass(frozen=True)
class CoursePhase:
    """Phase 1's result as the cache keeps it: what decides it is ``radix.py`` and the kit."""

    result: CourseTestsResult
    isolation: IsolationLevel
    seconds: float
    """The phase's wall time, from its start until its last run ended (waits included)."""


def start_course_tests(
    chapter: Chapter,
    submission: Submission,
    limits: Limits,
    pool: WorkerPool,
    threads: ThreadPoolExecutor,
    dependencies: Sources,
) -> list[Future[RunResult]]:
    if submission.implementation is None:
        return []
    jobs = course_test_jobs(chapter, submission.implementation, limits.course_tests, dependencies)
    # The shards hold the longest tests: they start first, and the rest fills in beside them.
    first = sorted(range(len(jobs)), key=lambda index: not jobs[index].only)
    started = {index: threads.submit(pool.run_confirmed, jobs[index]) for index in first}
    return [started[index] for index in range(len(jobs))]


def finish_course_tests(
    chapter: Chapter,
    submission: Submission,
    runs: list[Future[RunResult]],
    pool: WorkerPool,
    started: float,
) -> CoursePhase:
    """Phase 1 once its runs (``start_course_tests``) end: their merged result, timed from
    ``started``."""
    merged = merged_runs([run.result() for run in runs]) if runs else None
    course = _course_result(chapter, submission, merged)
    return CoursePhase(course, pool.isolation, time.monotonic() - started)


def _course_result(
    chapter: Chapter, submission: Submission, result: RunResult | None
) -> CourseTestsResult:
    names = [test.name for test in chapter.course_tests]
    if result is None:
        missing = submission.implementation_problem or "no implementation"
        return CourseTestsResult({name: TestStatus.ERROR for name in names}, {}, missing)
    problem: str | None = None
    if result.status == RunStatus.COLLECTION_ERROR:
        problem = f"{chapter.implementation} could not be imported: {result.message}"
        return CourseTestsResult({name: TestStatus.ERROR for name in names}, {}, problem)
    if result.status != RunStatus.COMPLETED:
        problem = f"the course tests did not finish: {result.message}"
    results = {name: result.outcome(name) for name in names}
    failures = {
        name: in_chapter_words(chapter, for_students(_first_failing_case(result, name)))
        for name in names
        if results[name] != TestStatus.PASSED
    }
    return CourseTestsResult(results, failures, problem, result.durations())


def _first_failing_case(run: RunResult, name: str) -> str:
    """The report of the first failing case of test ``name``, whole (a model-based test's
    shrunk program with it), and the names of the other cases that fail too."""
    failing = [
        o for o in run.outcomes if o.name.split("[", 1)[0] == name and o.status != TestStatus.PASSED
    ]
    first = next((o for o in failing if o.detail), None)
    if first is None:
        return run.detail(name)
    others = [o.name for o in failing if o is not first]
    also = f"\n\n({', '.join(others)} fails too: fix this case first)" if others else ""
    return first.detail + also
