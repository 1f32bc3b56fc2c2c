"""``grader mine``'s result: the class's own bugs as mutants, and which test files catch them.

Never part of a grade: staff read it before the next term, to find real bugs
the planted mutants do not stand for (``grader.course.mining``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

CellStatus = Literal["caught", "missed", "error"]
"""One test file on one real bug: a test failed or the run timed out (``caught``, the kill
rule of ``grader.sandbox.protocol.status``), every test passed (``missed``), or the run did not
report every test (``error``, neither)."""


@dataclass(frozen=True)
class MinedWitness:
    """The shortest program of public calls found that tells a student's tree from the
    reference (``grader.grading.witness_search``, run confined)."""

    granule: int
    """The granule of the tree the calls run on."""
    calls: tuple[dict[str, Any], ...]
    """Each call: ``method``, ``args``, ``reference`` and ``mutant`` (what the student's tree
    gave: the student's data, shown, never trusted), ``code``; the last is where they differ."""


@dataclass(frozen=True)
class Cell:
    """One test file run against one real bug."""

    tests: str
    """The test file's owner, as the result shows students (an id, or the name)."""
    bug: str
    """The real bug's owner, likewise."""
    status: CellStatus
    """Whether the file catches the bug."""
    by: str = ""
    """The first test that failed on it, or what went wrong (``error``)."""


@dataclass(frozen=True)
class TestFile:
    """A valid test file of the class, one column of the matrix."""

    student: str
    """Its owner, as the result shows students."""
    mutation_score: float
    """Its share of the planted mutants killed (the batch's report)."""
    strong: bool
    """Whether it reaches the chapter's mutation threshold: a file the planted mutants call
    strong."""


@dataclass(frozen=True)
class RealBug:
    """A student's implementation that fails at least one course test."""

    student: str
    """Its owner, as the result shows students."""
    failed: tuple[str, ...]
    """The course tests it fails, in the catalog's order."""
    caught_by: tuple[str, ...]
    """The test files that catch it."""
    share: float
    """The share of the class's valid test files that catch it."""
    witness: MinedWitness | None
    """The shortest program found that tells it from the reference (``None``: none found)."""
    why_no_witness: str
    """Why there is no witness (empty when there is one)."""
    signature: str
    """What groups it: the course tests failed and the witness's shape."""


@dataclass(frozen=True)
class BugGroup:
    """Real bugs of one failure signature: a mistake, however many made it."""

    rank: int
    """Its place on the page, from 1: the bugs the strong test files catch least first."""
    signature: str
    """The course tests failed and the witness's shape."""
    students: tuple[str, ...]
    """The owners of its bugs."""
    failed: tuple[str, ...]
    """The course tests its bugs fail."""
    share: float
    """The share of the valid test files that catch every bug of the group."""
    strong_share: float
    """The same share among the strong test files (1.0 where there are none)."""
    witness: MinedWitness | None
    """The shortest witness of its bugs."""
    candidate: bool
    """Whether it is a candidate for next term's mutants: strong test files catch it rarely
    (``strong_share`` below the catalog's ``[mining] rare_share``)."""
    line: str
    """The group described in one line."""


@dataclass(frozen=True)
class MiningResult:
    """Which of the class's test files catch which of its real bugs."""

    chapter: str
    """The chapter's id."""
    out: Path
    """The graded class mined."""
    test_files: tuple[TestFile, ...]
    """The matrix's columns."""
    bugs: tuple[RealBug, ...]
    """The matrix's rows."""
    cells: tuple[Cell, ...]
    """Every test file on every real bug."""
    groups: tuple[BugGroup, ...]
    """The bugs by signature, ranked."""
    left_out: tuple[tuple[str, str], ...]
    """Students whose files could not be mined, each with why (their row or files do not
    hold up)."""
    ran: int
    """Runs made this time (cells and witness searches)."""
    reused: int
    """Stored results taken again (signed, of the same inputs)."""
    isolation: str
    """The isolation every run got."""
    named: bool
    """Whether students are named (``--names``); otherwise anonymous ids."""
    shard: str = ""
    """``K/N`` when only a shard's runs were made (then the matrix is not drawn)."""
