"""``tdd red`` and ``tdd green``: the student's tests against the stub (and the reference, to
tell a test that fails because the stub is wrong from one that fails anyway), then against
their code; both under ``check``'s validity checks (``grader.grading.validation``)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from grader.grading.explain import failure_reason
from grader.grading.jobs import Limits, student_tests_job, too_slow_a_call
from grader.grading.validation import REFERENCE, run_problem, validate
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import kit_sources, resolve
from grader.inputs.submission import read_submission
from grader.results.kit import Stage, TddResult
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult, status_phrase
from grader.sandbox.protocol.status import RunStatus, TestStatus

TIME_LIMIT = 60.0
"""Seconds each run of the student's tests may take in ``tdd``."""


def run_tdd(
    chapter: Chapter,
    folder: Path,
    stage: Stage,
    time_limit: float = TIME_LIMIT,
    ref_deps: bool = False,
) -> TddResult:
    """Red: each required test fails on the stub and passes on the reference. Green: every
    test passes on the student's code, with the submission's own copy of each earlier
    chapter's module it needs (the kit's with ``ref_deps``; ``DependencyProblem`` when the
    submission has none).

    Both stages first hold the file to ``check``'s own validity checks (``validate``: the
    rules, the reference twice, every correct variant, the stub), so neither stage accepts
    a file that ``check`` refuses."""
    submission = read_submission(chapter, folder)
    if submission.tests is None:
        return TddResult(stage, {}, (submission.tests_problem or "no test file",))
    implementation = submission.implementation
    if stage == "green" and implementation is None:
        return TddResult(stage, {}, (submission.implementation_problem or "no implementation",))
    dependencies = (
        resolve(chapter, folder, implementation, ref_deps).sources if stage == "green" else ()
    )
    limits = Limits(student_tests=time_limit)
    seen: dict[str, RunResult] = {}
    with WorkerPool(workers=2) as pool, ThreadPoolExecutor(pool.workers + 2) as threads:
        on_yours = None
        if stage == "green" and implementation is not None:
            job = student_tests_job(
                chapter,
                submission.tests,
                implementation,
                time_limit,
                dependencies=dependencies,
                own_tree=True,
            )
            on_yours = threads.submit(pool.run, job)
        student = validate(chapter, submission, limits, pool, threads, seen=seen)
        run = on_yours.result() if on_yours is not None else seen.get("stub")
        slow = _slow_on_the_reference(chapter, job, run, pool) if on_yours and run else set()
    problems = [*student.problems, *student.missing_reasons]
    if run is None:  # the file was not run (it is not Python the check can read)
        return TddResult(stage, {}, tuple(problems))
    outcomes = {name: run.outcome(name) for name in run.test_names()}
    if stage == "red":
        reference = seen.get("reference", run)
        problems = [_wrong_reason(problem, outcomes) for problem in problems]
        return TddResult(stage, outcomes, tuple(problems), reference.durations(), time_limit)
    problems += _green_problems(chapter, run, slow, time_limit)
    return TddResult(stage, outcomes, tuple(problems), run.durations(), time_limit)


def _green_problems(
    chapter: Chapter, run: RunResult, slow: set[str], time_limit: float
) -> list[str]:
    """Why the run on the student's own tree is not green: the run's end, each test that did
    not pass (a call too slow on the reference as well said as such)."""
    return _run_problems(chapter, run, time_limit) + [
        f"{name} {status_phrase(status)} on your {chapter.implementation}: "
        + (
            too_slow_a_call(chapter.call_limit)
            if name in slow
            else failure_reason(run.detail(name), chapter.student_tests)
        )
        for name in run.test_names()
        if (status := run.outcome(name))
        not in (TestStatus.PASSED, TestStatus.TIMEOUT, TestStatus.NOT_RUN)
    ]


def _slow_on_the_reference(
    chapter: Chapter, job: Job, run: RunResult, pool: WorkerPool
) -> set[str]:
    """The tests whose call of the student's tree passed its bound and whose call of the
    reference does too: the test asks too much, not the tree hung. Only those tests run
    again, on the reference, under the same bound: a hang costs a second, not a rerun of all."""
    hung = [name for name in run.test_names() if run.hung(name)]
    if not hung:
        return set()
    reference = chapter.reference.read_text(encoding="utf-8")
    again = pool.run(
        replace(job, implementation=reference, dependencies=kit_sources(chapter), only=(*hung,))
    )
    return {name for name in hung if again.hung(name) or again.outcome(name) == TestStatus.TIMEOUT}


def _run_problems(chapter: Chapter, run: RunResult, time_limit: float) -> list[str]:
    """Why a run did not give every test an outcome, if it did not."""
    if run.status == RunStatus.COMPLETED:
        return []
    return [run_problem(run, chapter.student_tests, time_limit)]


_WRONG_ON_REFERENCE = re.compile(
    rf"^(?P<name>\S+) (?P<verb>.+?) on {re.escape(REFERENCE)}, so the test is wrong: (?P<why>.*)$",
    re.DOTALL,
)


def _wrong_reason(problem: str, on_stub: dict[str, TestStatus]) -> str:
    """In red, a test that fails on the stub and on the reference too is said as red sees it:
    it fails for the wrong reason, so its failure on the stub shows nothing."""
    wrong = _WRONG_ON_REFERENCE.match(problem)
    if wrong is None or on_stub.get(wrong["name"]) in (None, TestStatus.PASSED):
        return problem
    return (
        f"{wrong['name']} fails for the wrong reason: it {wrong['verb']} on the reference too, "
        f"so its failure on the stub shows nothing ({wrong['why']})"
    )
