"""A report graded again: what changed for one student, and for a class."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Change:
    """One thing that differs between the report kept and the grading now."""

    what: str
    """``verdict``, ``grade``, ``course test NAME``, ``mutant ID``, or another report key."""
    before: str
    """Its value in the report kept."""
    after: str
    """Its value now."""


@dataclass(frozen=True)
class Replay:
    """One student's report graded again and compared with the one kept."""

    student: str
    """The student's name."""
    changes: tuple[Change, ...]
    """What differs."""
    key_changes: tuple[str, ...]
    """The parts of the key that differ (``chapter``, ``code``, ``isolation``...)."""
    problem: str = ""
    """Why the student could not be graded again (nothing else is then said)."""

    @property
    def identical(self) -> bool:
        """Nothing changed, and the grading ran."""
        return not self.changes and not self.problem

    def same(self, what: str) -> bool:
        """Whether nothing of ``what`` changed: ``verdict``, ``grade`` or ``kills``."""
        prefix = "mutant " if what == "kills" else what
        return not any(change.what.startswith(prefix) for change in self.changes)


@dataclass(frozen=True)
class Regrade:
    """A class graded again from its folder."""

    out: Path
    """The class folder."""
    students: tuple[Replay, ...]
    """Each student graded again."""
    skipped: tuple[tuple[str, str], ...]
    """Students not graded again, each with why (no report: refused before grading)."""
    seconds: float
    """How long the regrade took."""

    @property
    def changed(self) -> tuple[Replay, ...]:
        """The students whose grading differs."""
        return tuple(s for s in self.students if not s.identical)
