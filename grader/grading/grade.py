"""The grade in points: how the course tests and the mutation score combine.

On a scale of ``chapter.grade_scale`` points (100 unless the catalog says
otherwise), split by ``chapter.course_tests_weight``:

- the course tests earn their share test by test: each is worth an equal part,
  in whole cents, the cents left over going to the first tests in the catalog
  (``course_test_cents``), so the tests' points add up to the share exactly;
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

from grader.inputs.catalog import Chapter
from grader.results.check import CheckReport, MutationResult
from grader.sandbox.protocol.status import TestStatus


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
        return (_cents(self.course_points) + _cents(self.mutation_points)) / 100


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
    """The points ``report`` earns on ``chapter``'s scale, each part a whole number of cents,
    so the parts (and each course test's points) add up to the total exactly."""
    course_max = _cents(chapter.grade_scale * chapter.course_tests_weight)
    mutation_max = _cents(chapter.grade_scale) - course_max
    worth = course_test_cents(chapter)
    course = sum(
        worth.get(name, 0)
        for name, s in report.course_tests.results.items()
        if s == TestStatus.PASSED
    )
    mutation = _cents(mutation_max * mutation_credit(_trusted(report)) / 100)
    return Grade(
        scale=chapter.grade_scale,
        course_points=course / 100,
        course_max=course_max / 100,
        mutation_points=mutation / 100,
        mutation_max=mutation_max / 100,
    )


def _cents(points: float) -> int:
    return round(points * 100)


def _trusted(report: CheckReport) -> MutationResult | None:
    """The mutation result, when the tests that produced it are valid; their kills count only then.

    A run that errors on a mutant leaves the result in the report (to show which) but
    makes the tests invalid.
    """
    return report.mutation if report.student_tests.valid else None


def course_test_cents(chapter: Chapter) -> dict[str, int]:
    """What each course test is worth, in cents: the course share split by largest remainder.

    Every test gets the share divided by the count, rounded down to a cent; the cents left
    over go one each to the first tests in the catalog's order. 50 points over 11 tests: six
    tests of 4.55 and five of 4.54, summing to 50.00 exactly (4.55 each would make 50.05).
    """
    names = [test.name for test in chapter.course_tests]
    if not names:
        return {}
    base, left_over = divmod(_cents(chapter.grade_scale * chapter.course_tests_weight), len(names))
    return {name: base + (1 if at < left_over else 0) for at, name in enumerate(names)}


def course_test_points(chapter: Chapter) -> dict[str, float]:
    """What each course test is worth, in points (see ``course_test_cents``)."""
    return {name: cents / 100 for name, cents in course_test_cents(chapter).items()}
