"""A class's results: a gradebook row, a batch, a merge of shards, a manifest, the class view."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.course.roster import RosterMatch
from grader.course.similarity import Similarity
from grader.sandbox.protocol.status import Verdict


@dataclass(frozen=True)
class BatchRow:
    """One student's line of the gradebook."""

    student: str
    """The student's name (their folder's)."""
    verdict: Verdict
    """The check's verdict."""
    grade: float
    """The points earned (``grader.grading.grade``)."""
    course_tests_passed: int
    """How many course tests passed."""
    course_tests_total: int
    """How many course tests there are."""
    mutation_score: float | None
    """The share of mutants killed; ``None``: no mutant ran."""
    killed: int | None
    """How many mutants were killed; ``None``: no mutant ran."""
    mutants: int | None
    """How many mutants ran; ``None``: none did."""
    survivors: tuple[str, ...]
    """The ids of the mutants that survived."""
    problem: str
    """Why the submission could not be graded or failed, in one line (empty: none)."""
    report: str
    """The student's JSON report, relative to the class folder."""
    implementation_file: str = ""
    """The files graded, relative to the student's folder (empty: none read)."""
    tests_file: str = ""
    """The test file graded, relative to the student's folder (empty: none read)."""
    flags: tuple[str, ...] = ()
    """``kind~other`` for each flagged similarity pair (``tests~bob``): for staff to look at."""
    graded_at: str = ""
    """When the check ran (UTC, ISO 8601)."""
    key: str = ""
    """The digest of what decided the row (``grader.inputs.provenance.ResultKey.digest``)."""
    isolation: str = ""
    """The isolation level of the row's runs (empty: a gradebook of an older kit); at
    ``none`` the row is practice, and the class's exports say so first."""


@dataclass(frozen=True)
class Override:
    """A student's grade set by hand (``grader override``, ``grader.course.overrides``)."""

    student: str
    """The student's name."""
    grade: float
    """The grade of record."""
    why: str
    """Why it was set by hand, in one line."""
    by: str
    """Who set it: the user who ran ``grader override``."""
    at: str
    """When (UTC, ISO 8601)."""
    graded: float | None = None
    """The grade the grader had given when the override was set (``None``: not known)."""

    def describe(self) -> str:
        """The override in one line, as the gradebook's ``override`` cell and the pages say it."""
        return f"{self.grade:g}, set by {self.by} at {self.at}: {self.why}"


@dataclass(frozen=True)
class ClassView:
    """What is drawn over the whole class after a batch or a merge."""

    similarity: Similarity | None
    """The copies found in the whole class (``None``: the catalog asks for none)."""
    similarity_seconds: float
    """How long the comparison took."""
    roster: RosterMatch | None
    """Who the roster and the gradebook do not share (``None``: no roster given)."""
    canvas: Path | None
    """The Canvas gradebook file written (``None``: no roster given)."""
    overrides: tuple[Override, ...] = ()
    """The grades set by hand, each in the class's figures in place of the grader's."""


@dataclass(frozen=True)
class BatchResult:
    """What ``grader batch`` graded and wrote."""

    rows: tuple[BatchRow, ...]
    """The rows of the students graded this time."""
    gradebook: Path
    """The gradebook file."""
    reports: Path
    """The folder of the students' reports."""
    seconds: float
    """How long the batch took."""
    kept: int = 0
    """Rows of the existing gradebook left as they were (students not graded this time)."""
    backup: Path | None = None
    """Where the replaced gradebook and reports were saved, if anything was replaced."""
    similarity: Similarity | None = None
    """The copies found in the whole class (``None``: the catalog asks for none)."""
    similarity_seconds: float = 0.0
    """How long the comparison took."""
    roster: RosterMatch | None = None
    """Who the roster and the gradebook do not share (``None``: no roster given)."""
    canvas: Path | None = None
    """The Canvas gradebook file written (``None``: no roster given)."""
    students: int = 0
    """Rows of the gradebook after the batch: the class the class view covers."""
    resumed: tuple[str, ...] = ()
    """Students of ``rows`` whose earlier row was kept, not graded again (resume)."""
    overrides: tuple[Override, ...] = ()
    """The grades set by hand in the class, kept in place of the grader's."""

    @property
    def passed(self) -> int:
        """How many of the students graded this time passed."""
        return sum(row.verdict == Verdict.PASS for row in self.rows)


@dataclass(frozen=True)
class Conflict:
    """A student graded in two shards with results that disagree."""

    student: str
    """The student's name."""
    copy: str
    """Where the disagreeing copy is kept, relative to ``out``."""
    differs: tuple[str, ...]
    """What differs: report keys and gradebook columns."""


@dataclass(frozen=True)
class MergeResult:
    """What ``grader merge`` did to the class folder."""

    out: Path
    """The class folder merged into."""
    added: tuple[str, ...]
    """Students new to the gradebook."""
    replaced: tuple[str, ...]
    """Students whose row a shard replaced."""
    unchanged: int
    """Rows that were already as the shards have them."""
    conflicts: tuple[Conflict, ...]
    """Students whose copies disagree."""
    students: int
    """Rows of the gradebook after the merge."""
    view: ClassView
    """The class drawn again over every row."""
    backup: Path | None
    """Where what the merge replaced was saved (``None``: nothing replaced)."""
    refused: tuple[tuple[str, str], ...] = ()
    """Rows of a shard left out, each with why: a key its report does not bear out, or runs
    at a weaker isolation than the class requires."""


@dataclass(frozen=True)
class Entry:
    """One submission of the class."""

    student: str
    """The student's name."""
    folder: Path
    """The submission's folder."""
    digest: str
    """A digest of the files that decide its grade."""
    seconds: float
    """How long its grading is expected to take (only ratios matter)."""


@dataclass(frozen=True)
class Manifest:
    """The class as ``grader manifest`` lists it, for sharding a batch."""

    chapter: str
    """The chapter's id."""
    entries: tuple[Entry, ...]
    """Every submission, in the order shards are cut from."""


@dataclass(frozen=True)
class Step:
    """One student done by a long command (batch, merge, regrade, manifest): a log's line."""

    done: int
    """How many are done, this one included."""
    total: int
    """How many there are."""
    student: str
    """The student's name."""
    outcome: str
    """What came of it, in a few words (``pass, 87.5 points``; ``kept: ...``)."""
    seconds: float | None = None
    """How long it took; ``None``: nothing was run for it (a row kept or merged)."""


@dataclass(frozen=True)
class OverrideResult:
    """What ``grader override`` recorded, and the class drawn again with it."""

    out: Path
    """The graded class."""
    override: Override
    """The grade set by hand."""
    view: ClassView
    """The class drawn again."""
