"""What the kit's own commands made: a Gradescope bundle, a release, a ``tdd`` stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from grader.sandbox.protocol.status import TestStatus

Edition = Literal["student", "staff"]
"""Which edition of the kit a release is."""
Stage = Literal["red", "green"]
"""A ``tdd`` stage: the tests fail on the stub (red), then pass on the student's code (green)."""


@dataclass(frozen=True)
class Bundle:
    """The Gradescope autograder zip ``grader bundle`` built."""

    path: Path
    """The zip file."""
    files: tuple[str, ...]
    """Every file in it."""
    constraints: tuple[str, ...]
    """The pinned dependencies it installs."""


@dataclass(frozen=True)
class Release:
    """An edition's wheel ``grader release`` built."""

    edition: Edition
    """Which edition."""
    wheel: Path
    """The wheel file."""
    constraints: Path
    """The pinned dependencies beside it."""
    left_out: tuple[str, ...]
    """Kit files (paths from its root) the edition does not carry."""
    contents: tuple[str, ...] = ()
    """Every entry of the wheel, as read back from it."""


@dataclass(frozen=True)
class TddResult:
    """Each test's outcome in one stage, and whether the stage is reached."""

    stage: Stage
    """The stage run."""
    outcomes: dict[str, TestStatus]
    """Each test's outcome, by name."""
    problems: tuple[str, ...]
    """Why the stage is not reached, one sentence each."""
    durations: dict[str, float] = field(default_factory=dict, compare=False)
    """Seconds per test on the reference (red) or on the student's code (green)."""
    time_limit: float = 0.0
    """The CPU seconds each run could take."""

    @property
    def ok(self) -> bool:
        """The stage is reached."""
        return not self.problems


@dataclass(frozen=True)
class MethodDiff:
    """One function or method that differs between the student's file and the reference."""

    name: str
    """``RadixTree.insert``, or a top-level function's name."""
    removed: int
    """Lines of the student's version the reference does not have."""
    added: int
    """Lines of the reference's version the student's does not have."""
    where: Literal["both", "yours", "reference"]
    """In both files (and different), only in the student's (their own helper), or only in
    the reference."""


@dataclass(frozen=True)
class DiffResult:
    """``grader diff``: what differs, method by method, then the unified diff itself."""

    methods: tuple[MethodDiff, ...]
    """Each function or method that differs, in the student's file's order, then the
    reference's own."""
    diff: str
    """The unified diff from the student's file to the reference; empty when they agree."""
