"""``diff``: the student's implementation beside the reference, once the course tests pass."""

from __future__ import annotations

import difflib
from pathlib import Path

from grader.catalog import Chapter
from grader.dependencies import resolve
from grader.errors import EXIT_FAIL, GraderError
from grader.jobs import course_tests_job
from grader.sandbox.host.pool import WorkerPool
from grader.submission import read_submission


def diff_against_reference(
    chapter: Chapter, folder: Path, time_limit: float = 120.0, ref_deps: bool = False
) -> str:
    """A unified diff from the student's ``radix.py`` to the reference: this chapter's file
    alone, never an earlier chapter's module beside it.

    Refuses (a ``GraderError`` with the fail exit code) until every course
    test passes on the student's code (run with the submission's own copy of
    each earlier chapter's module, or the kit's with ``ref_deps``): the
    reference is the answer.
    """
    submission = read_submission(chapter, folder)
    if submission.implementation is None:
        raise GraderError(submission.implementation_problem or "no implementation", EXIT_FAIL)
    dependencies = resolve(chapter, folder, submission.implementation, ref_deps).sources
    job = course_tests_job(chapter, submission.implementation, time_limit, dependencies)
    with WorkerPool(workers=1) as pool:
        run = pool.run(job)
    names = [test.name for test in chapter.course_tests]
    failing = [name for name in names if run.outcome(name) != "passed"]
    if failing:
        raise GraderError(
            f"the diff is shown once every course test passes; still failing: {', '.join(failing)} "
            "(run `grader check` for details)",
            EXIT_FAIL,
        )
    reference = chapter.reference.read_text(encoding="utf-8")
    return "".join(
        difflib.unified_diff(
            submission.implementation.splitlines(keepends=True),
            reference.splitlines(keepends=True),
            fromfile=f"yours/{chapter.implementation}",
            tofile=f"reference/{chapter.implementation}",
        )
    )
