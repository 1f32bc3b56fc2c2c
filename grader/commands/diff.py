"""``diff``: the student's implementation beside the reference, once the course tests pass."""

from __future__ import annotations

import difflib
from pathlib import Path

from grader.catalog import Chapter
from grader.commands.check import course_tests_only
from grader.errors import EXIT_FAIL, GraderError
from grader.jobs import Limits
from grader.regrade import ResultCache
from grader.submission import read_submission


def diff_against_reference(
    chapter: Chapter,
    folder: Path,
    limits: Limits = Limits(),
    cache: ResultCache | None = None,
) -> str:
    """A unified diff from the student's ``radix.py`` to the reference: this chapter's file
    alone, never an earlier chapter's module beside it.

    Refuses (a ``GraderError`` with the fail exit code) until every course
    test passes on the student's code (run with the submission's own copy of
    each earlier chapter's module, or the kit's with ``limits.ref_deps``): the
    reference is the answer. The course tests' result is ``check``'s own,
    taken from ``cache`` when the last check graded the same ``radix.py``.
    """
    submission = read_submission(chapter, folder)
    if submission.implementation is None:
        raise GraderError(submission.implementation_problem or "no implementation", EXIT_FAIL)
    results = course_tests_only(chapter, folder, limits, cache).results
    failing = [name for name, status in results.items() if status != "passed"]
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
