"""What each of a student's tests is worth: the mutants it kills, and who makes it redundant.

Information for the student (the report's "your tests" table); it changes no grade.
"""

from __future__ import annotations

from collections.abc import Sequence

from grader.results.check import MutationResult, StudentTestWorth


def worth_of_tests(mutation: MutationResult, tests: Sequence[str]) -> tuple[StudentTestWorth, ...]:
    """Each test's kills, for ``tests`` (the file's tests, in its order) and any other test
    that killed a mutant; a timeout counts for the tests that failed before it."""
    kills: dict[str, list[str]] = {name: [] for name in tests}
    for mutant in mutation.mutants:
        if mutant.detected:
            for name in mutant.killed_by:
                kills.setdefault(name, []).append(mutant.id)
    sets = {name: set(ids) for name, ids in kills.items()}
    return tuple(
        StudentTestWorth(
            name,
            tuple(ids),
            tuple(
                other
                for other, theirs in sets.items()
                if ids and other != name and sets[name] <= theirs
            ),
        )
        for name, ids in kills.items()
    )
