"""The class roster: which student each submission folder belongs to, for an LMS's gradebook.

A roster is a CSV file with a header. It needs a ``submission`` column (the
folder's name, as in the gradebook) and an ``id`` column (the LMS's user id);
``name``, ``sis_user_id``, ``sis_login_id`` and ``section`` are optional.
Canvas's own gradebook export spells these ``Student``, ``ID``, ``SIS User
ID``, ``SIS Login ID`` and ``Section``, and is read as it is: add a
``submission`` column to it and it is a roster. Matching never drops anyone:
folders with no roster entry and roster entries with no folder are listed.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError

_ALIASES = {"student": "name"}
"""Canvas's header names that differ from the roster's own, once lowercased with ``_``."""


@dataclass(frozen=True)
class RosterEntry:
    submission: str
    id: str
    name: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""


@dataclass(frozen=True)
class RosterMatch:
    matched: tuple[tuple[str, RosterEntry], ...]
    """Each graded student (gradebook order) with their entry."""
    unknown: tuple[str, ...]
    """Graded students the roster does not name: not in the LMS file."""
    missing: tuple[RosterEntry, ...]
    """Roster entries with no graded folder: in the LMS file with no grade."""


def _column(header: str) -> str:
    key = "_".join(header.strip().lower().split())
    return _ALIASES.get(key, key)


def read_roster(path: Path) -> tuple[RosterEntry, ...]:
    """The roster's entries; a file that cannot be a roster is one line saying why."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise GraderError(f"cannot read the roster {path}: {error}") from error
    lines = list(csv.reader(io.StringIO(text)))
    if not lines:
        raise GraderError(f"the roster {path} is empty: it needs a header with submission and id")
    header = [_column(cell) for cell in lines[0]]
    for needed in ("submission", "id"):
        if needed not in header:
            raise GraderError(
                f"the roster {path} has no {needed!r} column (its header: {', '.join(lines[0])})"
            )
    fields = set(RosterEntry.__dataclass_fields__)
    entries: list[RosterEntry] = []
    for number, line in enumerate(lines[1:], start=2):
        cells = {key: value.strip() for key, value in zip(header, line, strict=False)}
        if not any(cells.values()) or cells.get("name") == "Points Possible":
            continue  # a blank line, or the points row of Canvas's export
        if not cells.get("submission") or not cells.get("id"):
            raise GraderError(f"the roster {path} line {number} has no submission or no id")
        entries.append(RosterEntry(**{k: v for k, v in cells.items() if k in fields}))
    _refuse_repeats(path, "submission", (entry.submission for entry in entries))
    _refuse_repeats(path, "id", (entry.id for entry in entries))
    return tuple(entries)


def _refuse_repeats(path: Path, column: str, values: Iterable[str]) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise GraderError(f"the roster {path} names {column} {value!r} twice: keep one")
        seen.add(value)


def match_roster(roster: Iterable[RosterEntry], students: Iterable[str]) -> RosterMatch:
    """Pair each graded student with their roster entry; list who is on one side only."""
    by_folder = {entry.submission: entry for entry in roster}
    graded = list(students)
    matched = tuple((name, by_folder[name]) for name in graded if name in by_folder)
    unknown = tuple(name for name in graded if name not in by_folder)
    missing = tuple(entry for folder, entry in by_folder.items() if folder not in set(graded))
    return RosterMatch(matched, unknown, missing)
