"""``merge``: the graded shards of a class into one graded class, as often as it takes.

The union is by student. A student only one side has is taken as it is. Two
rows of one student are compared by their key (``grader.inputs.provenance``): with
the same key they must agree, report and gradebook cells alike, timings and
the class-wide cells aside; if they do not, the row in ``out`` stays, the
other copy is kept under ``conflicts/`` and the row's ``conflict`` cell names
it, so nothing is chosen silently. With different keys the row graded later
wins (on the same second, it is a conflict too). Merging a shard again, or a
shard already merged, changes nothing: ``merge(merge(a, b), b) == merge(a, b)``.
A grade set by hand (``grader.course.overrides``) in ``out`` or a shard is kept (the
later of two for one student). Then the class view is drawn over the merged
class (``class_view``).

A shard is data to check, not an authority (docs/security.md): a row whose
report's provenance does not give the very key the row is filed under, whose
runs got a weaker isolation than the class requires (``--isolation``), or
that claims a grade with no report behind it, is refused with its reason,
and the merge exits 1.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.course.class_view import rebuild_class
from grader.course.gradebook import (
    COLUMNS,
    CONFLICTS,
    DERIVED_COLUMNS,
    GRADEBOOK,
    SUBMISSIONS,
    UNSTABLE_COLUMNS,
    back_up,
    cell,
    checked_name,
    points,
    read_gradebook,
    report_files,
    untext,
    with_cell,
    write_gradebook,
)
from grader.course.overrides import read_overrides, take_overrides
from grader.course.roster import RosterEntry
from grader.errors import GraderError, describe
from grader.grading.jobs import Limits
from grader.inputs.catalog import Chapter
from grader.inputs.provenance import key_from_dict, text_digest
from grader.inputs.submission import SubmissionProblem, read_text_inside
from grader.output.check_json import stable_part
from grader.output.files import copy_files, remove_folder, replace_folder, write_atomically
from grader.results.batch import Conflict, MergeResult, Step
from grader.sandbox.levels import LEVELS, IsolationLevel, level_at_least
from grader.sandbox.protocol.status import Verdict


def merge_outputs(
    chapter: Chapter,
    out: Path,
    shards: Sequence[Path],
    limits: Limits | None = None,
    roster: Sequence[RosterEntry] | None = None,
    canvas: Path | None = None,
    assignment: str | None = None,
    progress: Callable[[Step], None] | None = None,
) -> MergeResult:
    """Merge each graded folder of ``shards`` into ``out`` (see the module docstring);
    ``progress`` hears of each shard's row as it is taken."""
    limits = limits or Limits()
    rows = read_gradebook(out / GRADEBOOK)
    before = dict(rows)
    tally = _Tally(rows)
    books = _gradebooks(out, shards, chapter.grade_scale)
    said = _teller(progress, sum(len(theirs) for _, theirs in books))
    for shard, theirs in books:
        tally.take_shard(out, shard, theirs, limits.isolation, said)
    added, replaced, conflicts, unchanged = (
        tally.added,
        tally.replaced,
        tally.conflicts,
        tally.unchanged,
    )
    new = sorted((key for key in rows if key not in before), key=untext)
    rows = {key: rows[key] for key in [*before, *new]}  # new students by name, as a manifest
    backup = None
    if replaced:
        backup = back_up(out, replaced, bool(before))
    for shard, student in tally.pending:
        _copy_student(shard, out, student)
    if rows != before or not (out / GRADEBOOK).is_file():
        write_gradebook(out / GRADEBOOK, rows.values())
    take_overrides(out, [shard for shard, _ in books], chapter.grade_scale)
    view = rebuild_class(
        chapter,
        out,
        limits,
        roster=roster,
        canvas=canvas,
        assignment=assignment,
    )
    return MergeResult(
        out,
        tuple(added),
        tuple(replaced),
        unchanged,
        tuple(conflicts),
        len(rows),
        view,
        backup,
        tuple(tally.refused),
    )


def _unmet(shard: Path, cells: Sequence[str], minimum: IsolationLevel) -> str | None:
    """Why a shard's row does not meet the class's requirement, or ``None`` if it does: its
    report's provenance must give the row's key, at ``minimum`` isolation or more; a row
    without a report may only be a fail with no points."""
    relative = untext(cell(cells, "report"))
    if not relative:
        if cell(cells, "verdict") == Verdict.FAIL and points(cells) == 0.0:
            return None
        return "its row claims a grade with no report behind it"
    try:
        data = json.loads(read_text_inside(shard, shard / relative))
        key = key_from_dict(data["provenance"])
    except (SubmissionProblem, ValueError, KeyError, TypeError) as error:
        return f"its report {relative} cannot be read as this kit's: {describe(error)}"
    if key.digest != untext(cell(cells, "key")):
        return f"its report's provenance gives the key {key.digest}, not the row's"
    if key.isolation not in LEVELS or not level_at_least(key.isolation, minimum):
        return (
            f"graded at isolation {key.isolation!r}, and the class requires {minimum!r} or "
            "more: grade it again where runs get that level"
        )
    return None


def _teller(
    progress: Callable[[Step], None] | None, total: int
) -> Callable[[Path, str, str], None]:
    """What hands each shard's row taken, ``(shard, key, outcome)``, to ``progress``."""
    done = itertools.count(1)

    def said(shard: Path, key: str, outcome: str) -> None:
        if progress is not None:
            progress(Step(next(done), total, untext(key), f"{outcome} ({shard})"))

    return said


def _gradebooks(
    out: Path, shards: Sequence[Path], scale: float
) -> list[tuple[Path, dict[str, list[str]]]]:
    """Each shard (but ``out`` itself) with its gradebook's rows; ``GraderError`` before
    anything changes for a folder whose overrides do not hold up."""
    read_overrides(out, scale)
    books = []
    for shard in shards:
        if shard.resolve() == out.resolve():
            continue
        theirs = read_gradebook(shard / GRADEBOOK)
        if not theirs and not (shard / GRADEBOOK).is_file():
            raise GraderError(f"{shard} holds no {GRADEBOOK}: pass the --out folder of a batch")
        read_overrides(shard, scale)
        books.append((shard, theirs))
    return books


class _Tally:
    """The merge so far: the rows as they stand, and what each shard's row did to them."""

    def __init__(self, rows: dict[str, list[str]]) -> None:
        self.rows = rows
        self.added: list[str] = []
        self.replaced: list[str] = []
        self.conflicts: list[Conflict] = []
        self.unchanged = 0
        self.pending: list[tuple[Path, str]] = []
        """The students whose reports and files are to be copied from a shard."""
        self.refused: list[tuple[str, str]] = []
        """The rows left out, each with why (``_unmet``)."""

    def take_shard(
        self,
        out: Path,
        shard: Path,
        theirs: dict[str, list[str]],
        minimum: IsolationLevel,
        said: Callable[[Path, str, str], None],
    ) -> None:
        """Every row ``theirs`` of ``shard`` that meets the class's requirement (``_unmet``);
        ``said`` hears what came of each."""
        for key, cells in theirs.items():
            why = _unmet(shard, cells, minimum)
            if why is not None:
                self.refused.append((checked_name(untext(key), str(shard / GRADEBOOK)), why))
                said(shard, key, f"left out: {why}")
            else:
                said(shard, key, self.take(out, shard, key, cells))

    def take(self, out: Path, shard: Path, key: str, cells: list[str]) -> str:
        """One row of ``shard``: new, newer, the same, or a conflict kept beside; what was
        done, in a few words."""
        rows = self.rows
        student = checked_name(untext(key), str(shard / GRADEBOOK))
        if key not in rows:
            rows[key] = with_cell(cells, "conflict", "")
            self.added.append(student)
            self.pending.append((shard, student))
            return "added"
        mine = rows[key]
        same_key = cell(mine, "key") == cell(cells, "key")
        if same_key or cell(mine, "graded_at") == cell(cells, "graded_at"):
            differs = _differences(out, mine, shard, cells)
            if not differs and same_key:
                self.unchanged += 1
                return "unchanged"
            found = _keep_conflict(out, shard, cells, differs or ("key",))
            self.conflicts.append(found)
            rows[key] = with_cell(mine, "conflict", _conflict_cell(mine, found.copy))
            return f"conflict: the copies disagree, the other is kept as {found.copy}"
        if cell(cells, "graded_at") > cell(mine, "graded_at"):
            rows[key] = with_cell(cells, "conflict", "")
            self.replaced.append(student)
            self.pending.append((shard, student))
            return "replaced: graded later"
        self.unchanged += 1
        return "unchanged: the row kept was graded later"


def _report_data(folder: Path, cells: Sequence[str]) -> dict[str, Any] | None:
    relative = untext(cell(cells, "report"))
    if not relative:
        return None
    try:
        data: dict[str, Any] = json.loads((folder / relative).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stable_part(data)


def _differences(
    out: Path, mine: Sequence[str], shard: Path, theirs: Sequence[str]
) -> tuple[str, ...]:
    """What two rows of one student disagree on: gradebook columns (but the unstable and the
    class-wide ones), then the keys of their reports."""
    skipped = {*UNSTABLE_COLUMNS, *DERIVED_COLUMNS}
    columns = [
        column
        for column in COLUMNS
        if column not in skipped and cell(mine, column) != cell(theirs, column)
    ]
    a, b = _report_data(out, mine) or {}, _report_data(shard, theirs) or {}
    keys = [f"report {key}" for key in dict.fromkeys([*a, *b]) if a.get(key) != b.get(key)]
    return tuple(columns + keys)


def _keep_conflict(
    out: Path, shard: Path, cells: Sequence[str], differs: Sequence[str]
) -> Conflict:
    """Keep the disagreeing copy (its row and report) under ``conflicts/``, named by its
    content, so that keeping it again changes nothing."""
    student = untext(cell(cells, "student"))
    report = _report_data(shard, cells)
    content = {
        "row": {c: cell(cells, c) for c in COLUMNS if c not in DERIVED_COLUMNS},
        "report": report,
    }
    text = json.dumps(content, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    digest = text_digest(text)[:12]
    relative = f"{CONFLICTS}/{student}-{digest}.json"
    if not (out / relative).is_file():
        write_atomically(out / relative, text)
    return Conflict(student, relative, tuple(differs))


def _conflict_cell(cells: Sequence[str], copy: str) -> str:
    """The conflict cell naming every disagreeing copy kept, each once, in order."""
    kept = cell(cells, "conflict").split()
    return " ".join(sorted({*kept, copy}))


def _copy_student(shard: Path, out: Path, student: str) -> None:
    """The student's reports and graded files from ``shard`` into ``out``, in place of any."""
    copy_files(zip(report_files(shard, student), report_files(out, student), strict=True))
    copy, kept = shard / SUBMISSIONS / student, out / SUBMISSIONS / student
    if copy.is_dir():
        texts = {
            path.relative_to(copy).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(copy.rglob("*"))
            if path.is_file() and not path.is_symlink()
        }
        replace_folder(kept, texts)
    else:
        remove_folder(kept)
