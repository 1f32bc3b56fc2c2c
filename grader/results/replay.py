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
    verdict: str = ""
    """The verdict of the report kept (empty: not known)."""
    grade: str = ""
    """The grade of the report kept, as its JSON writes it (empty: not known)."""
    seconds: float | None = None
    """How long grading again took (``None``: not measured)."""

    @property
    def identical(self) -> bool:
        """Nothing changed, and the grading ran."""
        return not self.changes and not self.problem

    def same(self, what: str) -> bool:
        """Whether nothing of ``what`` changed: ``verdict``, ``grade`` or ``kills``."""
        prefix = "mutant " if what == "kills" else what
        return not any(change.what.startswith(prefix) for change in self.changes)

    def now(self, what: str) -> str:
        """The ``verdict`` or ``grade`` graded now: the kept one unless it changed."""
        before = self.verdict if what == "verdict" else self.grade
        return next((c.after for c in self.changes if c.what == what), before)

    @property
    def moved(self) -> bool:
        """Whether the verdict, the grade or a kill changed, or grading again failed."""
        return bool(self.problem) or not all(
            self.same(what) for what in ("verdict", "grade", "kills")
        )

    @property
    def reason(self) -> str:
        """Why the row reads as it does, in one line: the problem, or what changed (up to
        three things by name) and which parts of the key moved."""
        if self.problem:
            return self.problem
        names = [change.what for change in self.changes]
        said = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        said = f"changed: {said}" if names else "the same"
        if self.key_changes:
            said += f" (the key's {', '.join(self.key_changes)} changed)"
        return said


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
