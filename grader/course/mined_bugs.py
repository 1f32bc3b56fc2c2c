"""The mined matrix as staff read it: real bugs grouped by failure signature, and ranked.

A hundred copies of one mistake fail the same course tests and are told from
the reference by a program of the same shape: they share a signature and read
as one group. The groups are ranked for the release gate: first the ones the
strong test files (those that reach the chapter's threshold on the planted
mutants) catch least, since a bug that tests strong on the planted mutants
miss is one those mutants do not stand for; a group that fewer than the
catalog's ``[mining] rare_share`` of them catch is a candidate mutant.
Students are named only when staff ask (``named``), else by anonymous ids
given in the order of their names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from grader.course.mined_witness import shape
from grader.course.mining import Matrix, Student, Witnesses
from grader.inputs.catalog import Chapter
from grader.results.mining import (
    BugGroup,
    Cell,
    MinedWitness,
    MiningResult,
    RealBug,
    TestFile,
)


def shown_names(names: Sequence[str], named: bool) -> dict[str, str]:
    """How the result shows each student: their name, or ``student-NN`` in name order."""
    ordered = sorted(set(names))
    width = max(2, len(str(len(ordered))))
    return {
        name: name if named else f"student-{index:0{width}d}"
        for index, name in enumerate(ordered, start=1)
    }


def mined_result(
    chapter: Chapter,
    out: Path,
    class_: tuple[Sequence[Student], Sequence[Student], Sequence[Student]],
    found: tuple[Matrix, Witnesses],
    left_out: Sequence[tuple[str, str]],
    counts: tuple[int, int, str, bool],
) -> MiningResult:
    """The result of a mine: ``class_`` is (every student, the bugs, the valid test files),
    ``found`` the matrix and witnesses, ``counts`` (runs made, taken again, isolation, named)."""
    students, bugs, files = class_
    matrix, witnesses = found
    ran, reused, isolation, named = counts
    shown = shown_names([s.name for s in students] + [name for name, _ in left_out], named)
    columns = tuple(
        TestFile(
            shown[s.name],
            s.report.mutation.score if s.report.mutation else 0.0,
            s.report.mutation is not None and s.report.mutation.score >= chapter.threshold,
        )
        for s in sorted(files, key=lambda s: shown[s.name])
    )
    cells = tuple(
        Cell(shown[tests.name], shown[bug.name], *matrix[(tests.name, bug.name)])
        for bug in bugs
        for tests in files
    )
    rows = tuple(
        sorted(
            (_real_bug(bug, shown, cells, len(files), witnesses[bug.name]) for bug in bugs),
            key=lambda bug: bug.student,
        )
    )
    groups = rank_groups(chapter, rows, columns, cells)
    gone = tuple(sorted((shown[name], why) for name, why in left_out))
    return MiningResult(
        chapter.id, out, columns, rows, cells, groups, gone, ran, reused, isolation, named
    )


def _real_bug(
    bug: Student,
    shown: Mapping[str, str],
    cells: Sequence[Cell],
    files: int,
    witness: tuple[MinedWitness | None, str],
) -> RealBug:
    mine = shown[bug.name]
    caught = tuple(c.tests for c in cells if c.bug == mine and c.status == "caught")
    found, why = witness
    signature = f"fails {', '.join(bug.failed)} | {shape(found)}"
    share = len(caught) / files if files else 0.0
    return RealBug(mine, bug.failed, caught, round(share, 4), found, why, signature)


def rank_groups(
    chapter: Chapter,
    bugs: Sequence[RealBug],
    files: Sequence[TestFile],
    cells: Sequence[Cell],
) -> tuple[BugGroup, ...]:
    """The bugs grouped by signature, ranked: the least caught by strong test files first,
    then the least caught by any, then the most common, then by signature."""
    by_signature: dict[str, list[RealBug]] = {}
    for bug in bugs:
        by_signature.setdefault(bug.signature, []).append(bug)
    strong = [f.student for f in files if f.strong]
    unranked = []
    for signature, members in by_signature.items():
        owners = {bug.student for bug in members}
        catches = {
            f.student
            for f in files
            if all(c.status == "caught" for c in cells if c.tests == f.student and c.bug in owners)
        }
        share = len(catches) / len(files) if files else 0.0
        strong_share = len([s for s in strong if s in catches]) / len(strong) if strong else 1.0
        witnesses = [bug.witness for bug in members if bug.witness is not None]
        witness = min(witnesses, key=lambda w: (len(w.calls), w.granule), default=None)
        unranked.append((round(strong_share, 4), round(share, 4), signature, members, witness))
    unranked.sort(key=lambda g: (g[0], g[1], -len(g[3]), g[2]))
    groups = []
    for rank, (strong_share, share, signature, members, witness) in enumerate(unranked, 1):
        candidate = bool(strong) and strong_share < chapter.rare_share
        students = tuple(sorted(bug.student for bug in members))
        line = describe(members[0].failed, witness, len(students), strong_share, len(strong))
        failed = members[0].failed
        group = (rank, signature, students, failed, share, strong_share, witness, candidate, line)
        groups.append(BugGroup(*group))
    return tuple(groups)


def describe(
    failed: Sequence[str],
    witness: MinedWitness | None,
    students: int,
    strong_share: float,
    strong: int,
) -> str:
    """A group in one line: how many made it, what it fails, the program that shows it, and
    how many strong test files catch it."""
    made = f"{students} student{'s' if students != 1 else ''}"
    caught = round(strong_share * strong)
    said = f"caught by {caught} of {strong} strong test files" if strong else "no strong files"
    return f"{made}; fails {', '.join(failed)}; {program_line(witness)}; {said}"


def program_line(witness: MinedWitness | None) -> str:
    """The witness as one sentence: the calls, then what differs at the last."""
    if witness is None:
        return "no short program tells it from the reference"
    *before, last = witness.calls
    steps = "; ".join(call["code"] for call in before)
    lead = f"RadixTree({witness.granule}); " + (f"{steps}; " if steps else "")
    differs = f"{_result(last['mutant'])}, the reference {_result(last['reference'])}"
    return f"{lead}{last['code']} {differs}"


def _result(result: Mapping[str, object]) -> str:
    if "raises" in result:
        return f"raises {result['raises']}"
    said = repr(result.get("returns"))  # a student's tree's data: cut, never read further
    return f"gives {said if len(said) <= 80 else said[:77] + '...'}"
