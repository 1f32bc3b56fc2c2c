"""Behaviour fingerprints: what a test file's tests kill, names dropped.

A valid test file has a behavioural fingerprint no renaming hides: for each
of its tests, the vector of outcomes over every planted mutant (killed or
not) and every wheat (passed: validity requires it), names dropped. Tests
that kill nothing are left out (every weak file has them). The behaviour
score of two files is the share of those vectors they have in common,
counted with repeats, over the larger file's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

Behaviour = Counter[tuple[bool, ...]]
"""A test file's behavioural fingerprint: the outcome vectors of its tests, names dropped."""


def behaviour(killed_by: Mapping[str, Sequence[str]], wheats: int) -> Behaviour:
    """Each test's vector: killed or not for each mutant (in ``killed_by``'s order), then
    ``wheats`` passes. Only tests that kill something have one: the rest say nothing."""
    vectors: Behaviour = Counter()
    killers = [set(names) for names in killed_by.values()]
    for test in dict.fromkeys(name for names in killed_by.values() for name in names):
        vectors[tuple(test in names for names in killers) + (False,) * wheats] += 1
    return vectors


def behaviour_score(a: Behaviour | None, b: Behaviour | None) -> float | None:
    """The share of outcome vectors the two files have in common; ``None`` when either file has
    no behavioural fingerprint (not valid, or no test kills anything)."""
    if not a or not b:
        return None
    shared = sum((a & b).values())
    return round(shared / max(a.total(), b.total()), 4)
