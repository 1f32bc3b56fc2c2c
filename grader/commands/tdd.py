"""``tdd red`` and ``tdd green``: the student's tests against the stub (and the reference, to
tell a test that fails because the stub is wrong from one that fails anyway), then against
their code."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from grader.catalog import Chapter
from grader.dependencies import kit_sources, resolve
from grader.explain import failure_reason, missing_reason, swallowing_handler
from grader.jobs import student_tests_job, too_slow_a_call
from grader.results.kit import Stage, TddResult
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult, status_phrase
from grader.static_check import check_test_source, function_name
from grader.submission import read_submission
from grader.validation import run_problem

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
    submission has none)."""
    submission = read_submission(chapter, folder)
    if submission.tests is None:
        return TddResult(stage, {}, (submission.tests_problem or "no test file",))
    violations, names = check_test_source(submission.tests, chapter.module, chapter.interface)
    if violations:
        return TddResult(stage, {}, tuple(v.describe(chapter.student_tests) for v in violations))
    if stage == "red":
        return _red(chapter, submission.tests, names, time_limit)
    implementation = submission.implementation
    if implementation is None:
        return TddResult(stage, {}, (submission.implementation_problem or "no implementation",))
    dependencies = resolve(chapter, folder, implementation, ref_deps).sources
    job = student_tests_job(
        chapter,
        submission.tests,
        implementation,
        time_limit,
        dependencies=dependencies,
        own_tree=True,
    )
    with WorkerPool(workers=1) as pool:
        run = pool.run(job)
        slow = _slow_on_the_reference(chapter, job, run, pool)
    outcomes = {name: run.outcome(name) for name in run.test_names()}
    problems = _run_problems(chapter, run, time_limit)
    problems += _missing(chapter, submission.tests, names)
    problems += [
        f"{name} {status_phrase(status)} on your {chapter.implementation}: "
        + (
            too_slow_a_call(chapter.call_limit)
            if name in slow
            else failure_reason(run.detail(name), chapter.student_tests)
        )
        for name, status in outcomes.items()
        if status not in ("passed", "timeout", "not run")
    ]
    return TddResult(stage, outcomes, tuple(problems), run.durations(), time_limit)


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
    return {name for name in hung if again.hung(name) or again.outcome(name) == "timeout"}


def _red(chapter: Chapter, tests: str, names: Sequence[str], time_limit: float) -> TddResult:
    """Each required test fails on the stub, and for the right reason: it passes on the
    reference. A test that fails on both (the skeleton's ``pytest.fail`` placeholder, a wrong
    expectation) shows nothing about the stub, so red is not reached."""
    stub = chapter.stub.read_text(encoding="utf-8")
    reference = chapter.reference.read_text(encoding="utf-8")
    with WorkerPool(workers=2) as pool, ThreadPoolExecutor(2) as threads:
        on_stub_run = threads.submit(pool.run, student_tests_job(chapter, tests, stub, time_limit))
        on_reference_run = threads.submit(
            pool.run, student_tests_job(chapter, tests, reference, time_limit)
        )
        on_stub, on_reference = on_stub_run.result(), on_reference_run.result()
    outcomes = {name: on_stub.outcome(name) for name in on_stub.test_names()}
    problems = _run_problems(chapter, on_stub, time_limit) + _missing(chapter, tests, names)
    required = [test.name for test in chapter.required_tests]
    for name, status in outcomes.items():
        if function_name(name) in required and status == "passed":
            why = swallowing_handler(tests, name)
            problems.append(
                f"{name} passes on the stub: it must fail until the code exists"
                + (f"; {why}" if why else "")
            )
    if on_reference.status in ("collection_error", "timeout", "crashed"):
        problems.append(
            "on the reference: " + run_problem(on_reference, chapter.student_tests, time_limit)
        )
    for name in on_reference.test_names():
        status = on_reference.outcome(name)
        if status not in ("passed", "timeout", "not run"):
            reason = failure_reason(on_reference.detail(name), chapter.student_tests)
            problems.append(
                f"{name} fails for the wrong reason: it {status_phrase(status)} on the "
                f"reference too, so its failure on the stub shows nothing ({reason})"
            )
    return TddResult("red", outcomes, tuple(problems), on_reference.durations(), time_limit)


def _run_problems(chapter: Chapter, run: RunResult, time_limit: float) -> list[str]:
    """Why a run did not give every test an outcome, if it did not."""
    if run.status == "completed":
        return []
    return [run_problem(run, chapter.student_tests, time_limit)]


def _missing(chapter: Chapter, source: str, names: Sequence[str]) -> list[str]:
    """Required tests not defined, each with the likely reason: a test counts by its
    function's name, in a class or not."""
    defined = {function_name(name) for name in names}
    required = [test.name for test in chapter.required_tests]
    return [missing_reason(name, source, defined) for name in required if name not in defined]
