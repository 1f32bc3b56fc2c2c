"""How long a student's tests take, said in terms of what a check costs.

A check runs the student's test file many times (three times on the reference, once
on each correct variant, the stub, the student's own code, and each planted
mutant), so a test that takes six seconds costs minutes. These functions turn
the per-test seconds a run measured into the figures every report states.
"""

from __future__ import annotations

from collections.abc import Mapping

from grader.inputs.catalog import Chapter

RUNS_BESIDE_THE_MUTANTS = 5
"""The runs of a check's validation that are not a correct variant's: the reference three
times (``validation.RERUNS``), the stub, and the student's own code."""


def runs_per_check(chapter: Chapter) -> int:
    """How many times ``check`` runs the student's tests: 23 for 2 wheats and 18 mutants."""
    return RUNS_BESIDE_THE_MUTANTS + len(chapter.wheats) + len(chapter.mutants)


def slowest(durations: Mapping[str, float], count: int = 3) -> list[tuple[str, float]]:
    """The ``count`` slowest tests, slowest first (ties in the run's order)."""
    ranked = sorted(durations.items(), key=lambda item: -item[1])
    return ranked[:count]


def slow_tests(chapter: Chapter, durations: Mapping[str, float]) -> list[tuple[str, float]]:
    """The tests slower than the catalog's ``slow_test_seconds``, slowest first."""
    return [(n, s) for n, s in slowest(durations, len(durations)) if s > chapter.slow_test_seconds]


def duration(seconds: float) -> str:
    """``0.04 s``, ``6.1 s``, ``about 2 min``: a length of time as a person says it."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 90:
        return f"{seconds:.1f} s"
    return f"about {round(seconds / 60)} min"


def cost_sentence(chapter: Chapter, durations: Mapping[str, float]) -> str:
    """``your tests took 6.3 s on the reference (slowest: test_x 6.1 s); check runs them 22
    times: about 2 min of test time in all``; empty when nothing was measured."""
    if not durations:
        return ""
    total = sum(durations.values())
    runs = runs_per_check(chapter)
    top = ", ".join(f"{name} {duration(s)}" for name, s in slowest(durations) if s > 0)
    named = f" (slowest: {top})" if top else ""
    return (
        f"your tests took {duration(total)} on the reference{named}; check runs them "
        f"{runs} times: {duration(total * runs)} of test time in all"
    )
