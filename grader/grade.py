"""The grade in points: how the course tests and the mutation score combine.

On a scale of ``chapter.grade_scale`` points (100 unless the catalog says
otherwise), split by ``chapter.course_tests_weight``:

- the course tests earn their share in proportion to the tests that pass;
- the student's tests earn the rest by killing mutants: each kill is worth
  ``1 / needed`` of the share, where ``needed`` is the number of kills the
  threshold asks for (13 of 18 at 0.70), so reaching the threshold earns the
  whole share and kills beyond it earn nothing more;
- while a required mutant survives, the mutation share stops one kill short of
  whole, so it can never look like a pass;
- tests that are not valid earn no mutation points: their kills cannot be trusted.

A submission therefore earns the full grade exactly when its verdict is pass,
and a failing one keeps partial credit for what it got right.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.catalog import Chapter
from grader.commands.check import CheckReport, MutationResult


@dataclass(frozen=True)
class Grade:
    """The points a report earns, per part, on the chapter's scale."""

    scale: float
    course_points: float
    course_max: float
    mutation_points: float
    mutation_max: float

    @property
    def points(self) -> float:
        return round(self.course_points + self.mutation_points, 2)


def mutation_credit(mutation: MutationResult | None) -> float:
    """The fraction of the mutation share earned, from 0 to 1 (see the module docstring)."""
    if mutation is None:
        return 0.0
    needed = mutation.needed
    cap = needed - 1 if mutation.missed_required else needed
    if needed == 0:
        return 0.0 if mutation.missed_required else 1.0
    return max(0, min(mutation.killed, cap)) / needed


def grade(chapter: Chapter, report: CheckReport) -> Grade:
    """The points ``report`` earns on ``chapter``'s scale."""
    course_max = chapter.grade_scale * chapter.course_tests_weight
    mutation_max = chapter.grade_scale - course_max
    course = report.course_tests
    course_fraction = course.passed / course.total if course.total else 0.0
    return Grade(
        scale=chapter.grade_scale,
        course_points=round(course_max * course_fraction, 2),
        course_max=round(course_max, 2),
        mutation_points=round(mutation_max * mutation_credit(_trusted(report)), 2),
        mutation_max=round(mutation_max, 2),
    )


def _trusted(report: CheckReport) -> MutationResult | None:
    """The mutation result, when the tests that produced it are valid; their kills count only then.

    A run that errors on a mutant leaves the result in the report (to show which) but
    makes the tests invalid.
    """
    return report.mutation if report.student_tests.valid else None


def course_test_points(chapter: Chapter) -> float:
    """What one course test is worth."""
    count = len(chapter.course_tests)
    return round(chapter.grade_scale * chapter.course_tests_weight / count, 2) if count else 0.0
