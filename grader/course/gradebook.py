"""The files of a graded class, and the gradebook's rows as cells.

A graded class is a folder (``--out``) that ``grader batch`` writes and
``grader merge``, ``grader replay`` and ``grader regrade`` read:

- ``gradebook.csv``: one row per student, ``COLUMNS`` in order;
- ``students/NAME.json``, ``.txt``, ``.html``: the student's report as JSON,
  as the terminal shows it, and as a small page;
- ``submissions/NAME/``: the files graded, at the places they were found, so
  that the class can be compared, replayed and regraded from this folder alone;
- ``conflicts/``: the copies of a row that disagreed with the one kept (merge);
- ``overrides.json``: grades set by hand (``grader.course.overrides``), and beside a
  student's report ``students/NAME.override.txt``, their note of it;
- ``class.*``, ``similarity.*``, ``roster-check.csv``: drawn over every row;
- ``backups/STAMP/``: what a later batch replaced.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from grader.errors import GraderError
from grader.grading.wording import PRACTICE_CLASS
from grader.output.files import copy_files, write_atomically
from grader.results.batch import BatchRow

GRADEBOOK = "gradebook.csv"
REPORTS = "students"
SUBMISSIONS = "submissions"
CONFLICTS = "conflicts"
BACKUPS = "backups"
SIMILARITY_CSV = "similarity.csv"
CLASS_JSON = "class.json"
CLASS_PAGE = "class.html"
ROSTER_CHECK = "roster-check.csv"
COLUMNS = (
    "student",
    "verdict",
    "grade",
    "course_tests_passed",
    "course_tests_total",
    "mutation_score",
    "killed",
    "mutants",
    "survivors",
    "problem",
    "report",
    "implementation_file",
    "tests_file",
    "flags",
    "graded_at",
    "key",
    "conflict",
    "override",
    "isolation",
)
"""The gradebook's columns, in order."""
UNSTABLE_COLUMNS = ("graded_at",)
"""Cells that differ between two gradings of the same inputs."""
DERIVED_COLUMNS = ("flags", "conflict", "override")
"""Cells drawn over the whole class (copy detection, a grade set by hand) or by a merge, not
by the student's run."""


def checked_name(name: str, where: str) -> str:
    """``name`` if it can name a student's files in a graded class, else one line on why:
    a name is a folder's own name, never a path (``..`` would name the class's parent)."""
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise GraderError(
            f"{where}: {name!r} cannot be a student's name: it would name a file outside the "
            "class; rename the folder"
        )
    return name


def row_cells(row: BatchRow) -> list[str]:
    """One row's cells as the gradebook writes them."""
    return [
        text_cell(row.student),
        row.verdict,
        f"{row.grade:g}",
        str(row.course_tests_passed),
        str(row.course_tests_total),
        "" if row.mutation_score is None else f"{row.mutation_score:.4f}",
        "" if row.killed is None else str(row.killed),
        "" if row.mutants is None else str(row.mutants),
        " ".join(row.survivors),
        text_cell(" ".join(row.problem.split())),
        text_cell(row.report),
        text_cell(row.implementation_file),
        text_cell(row.tests_file),
        text_cell(" ".join(row.flags)),
        row.graded_at,
        row.key,
        "",
        "",
        row.isolation,
    ]


def cell(cells: Sequence[str], column: str) -> str:
    return cells[COLUMNS.index(column)]


def with_cell(cells: Sequence[str], column: str, value: str) -> list[str]:
    changed = list(cells)
    changed[COLUMNS.index(column)] = value
    return changed


def read_gradebook(path: Path) -> dict[str, list[str]]:
    """The rows of an existing gradebook by student cell, in file order; none if it is absent.

    A gradebook of fewer columns (an older kit) gets empty cells for the new ones; the
    practice line above the header (``csv_text``) is skipped.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise GraderError(
            f"cannot read the gradebook {path}: {error}: choose another --out"
        ) from error
    lines = list(csv.reader(io.StringIO(text)))
    lines = lines[1:] if lines[:1] == [[PRACTICE_CLASS]] else lines
    if not lines or not lines[0] or lines[0][0] != COLUMNS[0]:
        raise GraderError(
            f"{path} is not a gradebook of this kit (its first column is not "
            f"{COLUMNS[0]!r}): choose another --out"
        )
    header = lines[0]
    rows: dict[str, list[str]] = {}
    for line in lines[1:]:
        if line:
            cells = dict(zip(header, line, strict=False))
            rows[line[0]] = [cells.get(column, "") for column in COLUMNS]
    return rows


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """The gradebook's text: where a row was graded at ``none``, a first line of one cell
    says the class is practice (``is_practice``), then the header and the rows."""
    rows = list(rows)
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    if is_practice(rows):
        writer.writerow([PRACTICE_CLASS])
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    return stream.getvalue()


def is_practice(rows: Iterable[Sequence[str]]) -> bool:
    """Whether any of the gradebook's ``rows`` was graded at level ``none``: practice."""
    return any(cell(cells, "isolation") == "none" for cells in rows)


def write_gradebook(path: Path, rows: Iterable[Sequence[str]]) -> None:
    """The gradebook, whole or not at all."""
    write_atomically(path, csv_text(rows))


def text_cell(value: str) -> str:
    """A text cell a spreadsheet will not run as a formula (a folder named ``=cmd()``)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def untext(value: str) -> str:
    """The name a gradebook cell holds (``text_cell`` undone)."""
    defused = value[:1] == "'" and value[1:2] in ("=", "+", "-", "@", "\t", "\r")
    return value[1:] if defused else value


def points(cells: Sequence[str]) -> float:
    """A gradebook row's grade (an older row with no grade counts 0)."""
    try:
        return float(cell(cells, "grade"))
    except ValueError:
        return 0.0


def report_files(out: Path, student: str) -> list[Path]:
    """The student's report in each of its forms."""
    suffixes = (".json", ".txt", ".html", ".staff-only.txt")
    return [out / REPORTS / f"{student}{suffix}" for suffix in suffixes]


def back_up(out: Path, names: Sequence[str], has_gradebook: bool) -> Path | None:
    """Copy the gradebook and the reports about to be replaced to ``out/backups/STAMP/``."""
    replaced = [path for name in names for path in report_files(out, name) if path.is_file()]
    if not has_gradebook and not replaced:
        return None
    base = out / BACKUPS / time.strftime("%Y%m%d-%H%M%S")
    folder, n = base, 1
    while folder.exists():
        folder, n = base.with_name(f"{base.name}-{n}"), n + 1
    kept = [out / GRADEBOOK, *replaced] if has_gradebook else replaced
    copy_files((path, folder / path.relative_to(out)) for path in kept)
    return folder
