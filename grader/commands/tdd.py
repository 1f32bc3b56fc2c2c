"""``tdd red`` and ``tdd green``: the student's tests against the stub, then against their code."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.catalog import Chapter
from grader.commands.check import student_tests_job
from grader.sandbox.pool import TestStatus, WorkerPool, status_phrase
from grader.static_check import check_test_source
from grader.submission import read_submission

Stage = Literal["red", "green"]


@dataclass(frozen=True)
class TddResult:
    """Each test's outcome in one stage, and whether the stage is reached."""

    stage: Stage
    outcomes: dict[str, TestStatus]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def run_tdd(chapter: Chapter, folder: Path, stage: Stage, time_limit: float = 60.0) -> TddResult:
    """Red: each required test fails on the stub. Green: every test passes on the student code."""
    submission = read_submission(chapter, folder)
    if submission.tests is None:
        return TddResult(stage, {}, (submission.tests_problem or "no test file",))
    violations, names = check_test_source(submission.tests, chapter.module, chapter.interface)
    if violations:
        return TddResult(stage, {}, tuple(v.describe(chapter.student_tests) for v in violations))
    if stage == "red":
        implementation: str | None = chapter.stub.read_text(encoding="utf-8")
    else:
        implementation = submission.implementation
    if implementation is None:
        return TddResult(stage, {}, (submission.implementation_problem or "no implementation",))
    with WorkerPool(workers=1) as pool:
        run = pool.run(student_tests_job(chapter, submission.tests, implementation, time_limit))
    outcomes = {name: run.outcome(name) for name in run.test_names()}
    problems: list[str] = []
    if run.status == "collection_error":
        problems.append(f"{chapter.student_tests} could not be collected: {run.message}")
    elif run.status != "completed":
        problems.append(f"the run {run.message}")
    required = [test.name for test in chapter.required_tests]
    problems += [f"{name} is missing: write it" for name in required if name not in names]
    if stage == "red":
        problems += [
            f"{name} passes on the stub: it must fail until the code exists"
            for name in required
            if outcomes.get(name) == "passed"
        ]
    else:
        problems += [
            f"{name} {status_phrase(status)} on your {chapter.implementation}"
            for name, status in outcomes.items()
            if status != "passed"
        ]
    return TddResult(stage, outcomes, tuple(problems))
