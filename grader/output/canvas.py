"""Canvas's grade-import CSV, and the list of who the roster and the class do not share.

Canvas imports a gradebook CSV whose first five columns are ``Student``,
``ID``, ``SIS User ID``, ``SIS Login ID`` and ``Section`` (it finds each
student by ``ID`` or the SIS columns) followed by one column per assignment,
named as in Canvas (``Radix tree (12345)`` updates the assignment of that id;
a new name makes a new assignment); a ``Points Possible`` row may follow the
header. Roster students with no submission are written with an empty score,
which Canvas leaves unchanged, and listed, as are submissions the roster
does not name: nobody is dropped without a word.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

from grader.course.roster import RosterMatch

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CHECK_COLUMNS = ("problem", "submission", "id", "name")
NO_ENTRY = "submission not in the roster: not in the Canvas file"
NO_SUBMISSION = "no submission: in the Canvas file with no score"
PRACTICE_COLUMN = " (practice, not a grade of record: graded at isolation none)"
"""What a practice class's Canvas column adds to the assignment's name."""


def _cell(value: str) -> str:
    """A text cell a spreadsheet will not run as a formula."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def canvas_csv(
    assignment: str,
    points: float,
    match: RosterMatch,
    grades: Mapping[str, float],
    practice: bool = False,
) -> str:
    """The import file: every roster student, graded ones with their grade. Where the class
    is practice (a row graded at level ``none``) the assignment's column says so
    (``PRACTICE_COLUMN``): Canvas then makes an assignment of that name, and the one of
    record (``Radix tree (12345)``, the id last) is never touched."""
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow([*CANVAS_COLUMNS, f"{assignment}{PRACTICE_COLUMN if practice else ''}"])
    writer.writerow(["Points Possible", "", "", "", "", f"{points:g}"])
    scored = [(entry, f"{grades[name]:g}") for name, entry in match.matched]
    for entry, score in [*scored, *((entry, "") for entry in match.missing)]:
        writer.writerow(
            [
                _cell(entry.name),
                _cell(entry.id),
                _cell(entry.sis_user_id),
                _cell(entry.sis_login_id),
                _cell(entry.section),
                score,
            ]
        )
    return stream.getvalue()


def roster_check_csv(match: RosterMatch) -> str:
    """Who is on one side only: each submission the roster does not name, each roster
    student with no submission."""
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CHECK_COLUMNS)
    for name in match.unknown:
        writer.writerow([NO_ENTRY, _cell(name), "", ""])
    for entry in match.missing:
        writer.writerow(
            [NO_SUBMISSION, _cell(entry.submission), _cell(entry.id), _cell(entry.name)]
        )
    return stream.getvalue()
