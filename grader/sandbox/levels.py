"""The isolation levels a run of student code can get: their names, order and choices.

The vocabulary alone, with no process code (no ``ctypes``, no ``/proc``): results, reports
and the command line name levels through it. What each level gives, and how a machine's
level is measured, is ``grader.sandbox.confine``'s (its package docstring and ``probe``).
"""

from __future__ import annotations

from typing import Literal

IsolationLevel = Literal["none", "uid", "namespaces"]
LEVELS: tuple[IsolationLevel, ...] = ("none", "uid", "namespaces")
"""Weakest first: a level stops everything the ones before it stop."""

ISOLATION_CHOICES: dict[str, IsolationLevel] = {
    "best": "none",
    "required": "uid",
    "namespaces": "namespaces",
}
"""The values of ``--isolation``, each naming the least level the runs must get: ``best``
takes what the machine gives (as root, never less than ``uid``: ``host.pool.require_isolation``);
``required`` means student code never runs as the grader's user."""


def parse_level(text: str) -> IsolationLevel:
    """The level named ``text``; ``ValueError`` for any other name."""
    for level in LEVELS:
        if level == text:
            return level
    raise ValueError(f"unknown isolation level {text!r}: one of {', '.join(LEVELS)}")


def level_at_least(level: IsolationLevel, minimum: IsolationLevel) -> bool:
    """Whether ``level`` stops everything ``minimum`` stops."""
    return LEVELS.index(level) >= LEVELS.index(minimum)
