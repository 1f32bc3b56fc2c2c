"""What ``grader audit`` finds: mutmut's generated mutants of the reference, and what the
tests did to each.

The kill rate counts the counted mutants (those not set aside as equivalent) that the
audit's kill rule detects (``grader.sandbox.protocol.status.AUDIT_DETECTED``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from grader.results.check import MutationResult
from grader.sandbox.protocol.status import AUDIT_DETECTED, AuditStatus

Suite = Literal["course", "submission"]
"""Whose tests the audit ran: the course tests, or a submission's test file."""


@dataclass(frozen=True)
class EquivalentFunction:
    """A function whose every mutant is set aside (not run): test support, not behaviour."""

    name: str
    """The function's name in the reference (``Class.method`` for a method)."""
    reason: str
    """Why its mutants cannot matter, in the maintainer's words."""


@dataclass(frozen=True)
class EquivalentMutant:
    """A generated mutant that cannot change behaviour, found again by id or by its change."""

    id: str
    """mutmut's id of the mutant when the entry was written."""
    function: str
    """The function it mutates."""
    original: str
    """The line as the reference has it."""
    mutated: str
    """The line as the mutant has it."""
    reason: str
    """Why the change cannot be seen from outside."""


@dataclass(frozen=True)
class Equivalents:
    """The chapter's ``equivalent.toml``: what the audit sets aside."""

    functions: tuple[EquivalentFunction, ...] = ()
    """Functions whose mutants are not run."""
    mutants: tuple[EquivalentMutant, ...] = ()
    """Single mutants run but not counted."""


@dataclass(frozen=True)
class GeneratedMutant:
    """One mutmut mutant of the reference: where it is, what it changes, what the tests did."""

    id: str
    """mutmut's id."""
    function: str
    """The function it mutates."""
    line: int
    """The line of the change in the reference."""
    status: AuditStatus
    """What the tests did to it."""
    exit_code: int | None
    """mutmut's exit code for the run (``None``: not reported)."""
    diff: str
    """The change, as a unified diff."""
    original: str
    """The changed line as the reference has it."""
    mutated: str
    """The changed line as the mutant has it."""
    equivalent: str | None = None
    """Why it is set aside as equivalent; ``None``: it counts."""
    seconds: float = field(default=0.0, compare=False)
    """How long its run took."""

    @property
    def detected(self) -> bool:
        """Whether the audit's kill rule counts it as detected."""
        return self.status in AUDIT_DETECTED


@dataclass(frozen=True)
class StaleEntry:
    """An ``equivalent.toml`` entry that needs an edit, and why."""

    id: str
    """The entry's mutant id."""
    function: str
    """The entry's function."""
    problem: str
    """What no longer matches (the mutant moved, or is gone)."""


@dataclass(frozen=True)
class AuditReport:
    """What the audit found. ``mutants`` are those run; ``not_run`` more belong to ``excluded``."""

    chapter: str
    """The chapter's id."""
    suite: Suite
    """Whose tests ran."""
    tests: str
    """The test file run, as named in the report."""
    reference: str
    """The mutated file as shown (its text is ``source``)."""
    source: str = field(repr=False)
    """The reference's text, that every diff applies to."""
    tool: str
    """The mutation tool and its version."""
    mutants: tuple[GeneratedMutant, ...]
    """Every mutant run."""
    excluded: tuple[EquivalentFunction, ...]
    """The functions set aside."""
    not_run: int
    """How many mutants of those functions were not run."""
    stale: tuple[StaleEntry, ...]
    """Entries of ``equivalent.toml`` that need an edit."""
    planted: MutationResult | None
    """For a submission, its tests against the planted mutants, beside; ``None`` for the
    course tests."""
    timings: dict[str, float] = field(compare=False)
    """Seconds per phase of the audit."""

    @property
    def counted(self) -> tuple[GeneratedMutant, ...]:
        """The mutants not set aside as equivalent."""
        return tuple(m for m in self.mutants if m.equivalent is None)

    @property
    def detected(self) -> int:
        """How many counted mutants were detected."""
        return sum(m.detected for m in self.counted)

    @property
    def kill_rate(self) -> float:
        """The share of counted mutants detected, to four places."""
        return round(self.detected / len(self.counted), 4) if self.counted else 0.0

    @property
    def survivors(self) -> tuple[GeneratedMutant, ...]:
        """The mutants that need attention: counted and not detected."""
        return tuple(m for m in self.counted if not m.detected)

    def count(self, status: AuditStatus) -> int:
        """How many counted mutants have ``status``."""
        return sum(m.status == status for m in self.counted)

    @property
    def clean(self) -> bool:
        """Nothing needs attention: every counted mutant detected, every list entry current."""
        return not self.survivors and not self.stale
