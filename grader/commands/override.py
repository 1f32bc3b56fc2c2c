"""``override``: a student's grade set by hand, kept by every later batch, merge and regrade.

The override is recorded in the class's ``overrides.json`` (``grader.course.overrides``:
who, when, why, and the grade the grader gave), then the class is drawn again
(``class_view``) so that the gradebook's ``override`` column, the class page,
``class.json``, the Canvas file (given a roster) and the student's note beside
their report all say it at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from grader.course.class_view import rebuild_class
from grader.course.overrides import set_override
from grader.course.roster import RosterEntry
from grader.grading.jobs import Limits
from grader.inputs.catalog import Chapter
from grader.results.batch import OverrideResult


def override_grade(
    chapter: Chapter,
    out: Path,
    student: str,
    grade: float,
    why: str,
    limits: Limits | None = None,
    roster: Sequence[RosterEntry] | None = None,
    canvas: Path | None = None,
    assignment: str | None = None,
) -> OverrideResult:
    """Set ``student``'s grade in the class in ``out`` to ``grade`` for ``why``, then draw the
    class again (see the module docstring)."""
    limits = limits or Limits()
    override = set_override(out, student, grade, why, chapter.grade_scale)
    view = rebuild_class(
        chapter,
        out,
        limits,
        roster=roster,
        canvas=canvas,
        assignment=assignment,
    )
    return OverrideResult(out, override, view)
