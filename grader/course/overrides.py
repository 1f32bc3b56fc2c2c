"""Grades set by hand: ``grader override OUT STUDENT --grade G --why "..."``.

A graded class keeps them in ``overrides.json``, beside the gradebook, each
with who set it (the user who ran ``grader override``: under ``sudo``, the
user who ran sudo), when, why and the grade the grader had given. The file
is written only by ``grader override`` and by ``grader merge`` (which takes a
shard's overrides too, the later of two for one student), and read as data:
a file that does not parse, or an entry that is not a student's name, a
grade on the chapter's scale and a reason, is one line of error, never used
in part. A later batch or merge keeps every override: the class view
(``class_view``) draws the overridden grade in the gradebook's ``override``
column, the class page, ``class.json`` and the Canvas file, and writes each
student's note beside their report (``students/NAME.override.txt``), to hand
back with it. The ``grade`` column stays the grade the grader gave.
"""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from grader.course.gradebook import GRADEBOOK, checked_name, points, read_gradebook, text_cell
from grader.errors import GraderError
from grader.output.files import write_atomically
from grader.results.batch import Override

OVERRIDES = "overrides.json"
OVERRIDES_VERSION = 1
NOTE_SUFFIX = ".override.txt"
"""The suffix of a student's note of their overridden grade, beside their report."""


def invoking_user() -> str:
    """Who runs the grader: the user behind ``sudo`` if root was reached through it."""
    if os.geteuid() == 0 and os.environ.get("SUDO_USER"):
        return os.environ["SUDO_USER"]
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_overrides(out: Path, scale: float) -> dict[str, Override]:
    """The overrides of the class in ``out`` by student (none if it holds no file)."""
    path = out / OVERRIDES
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise GraderError(f"cannot read {path}: {error}; fix it or remove it") from error
    try:
        if data["schema_version"] != OVERRIDES_VERSION:
            raise ValueError(f"schema version {data['schema_version']!r}")
        found = [_entry(item, scale) for item in data["overrides"]]
    except (KeyError, TypeError, ValueError, GraderError) as error:
        raise GraderError(
            f"{path} is not a file of overrides this kit wrote ({error}); fix it or remove it"
        ) from error
    return {override.student: override for override in found}


def _entry(item: Mapping[str, Any], scale: float) -> Override:
    grade, graded = item["grade"], item.get("graded")
    for value in (grade, graded):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"{value!r} is not a grade")
    texts = [item[name] for name in ("student", "why", "by", "at")]
    if not all(isinstance(text, str) and text for text in texts):
        raise ValueError("student, why, by and at must be text")
    student, why, by, at = texts
    checked_name(student, OVERRIDES)
    graded_grade = None if graded is None else float(graded)
    return Override(student, checked_grade(float(grade), scale), why, by, at, graded_grade)


def checked_grade(grade: float, scale: float) -> float:
    """``grade`` if it is on the chapter's scale, else one line on what to give."""
    if not 0 <= grade <= scale:
        raise GraderError(f"grade {grade:g} is not on the scale: give one from 0 to {scale:g}")
    return grade


def overrides_json(overrides: Iterable[Override]) -> str:
    """The overrides as ``overrides.json`` holds them, sorted by student."""
    entries = [asdict(o) for o in sorted(overrides, key=lambda o: o.student)]
    data = {"schema_version": OVERRIDES_VERSION, "overrides": entries}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def merged_overrides(
    mine: Mapping[str, Override], theirs: Mapping[str, Override]
) -> dict[str, Override]:
    """``mine`` with every override of ``theirs`` that is new or set later."""
    merged = dict(mine)
    for student, override in theirs.items():
        if student not in merged or override.at > merged[student].at:
            merged[student] = override
    return merged


def student_note(chapter_id: str, override: Override) -> str:
    """What the student is told, beside their report: the grade of record and why."""
    graded = "" if override.graded is None else f" (the grader gave {override.graded:g})"
    return (
        f"{chapter_id}: your grade is {override.grade:g}{graded}, set by hand by "
        f"{override.by} at {override.at}.\nWhy: {override.why}\n"
    )


def set_override(out: Path, student: str, grade: float, why: str, scale: float) -> Override:
    """Record ``grade`` as ``student``'s grade in the class in ``out``, set now by the user
    running the grader, for ``why``; one line of error for a student the gradebook lacks."""
    rows = read_gradebook(out / GRADEBOOK)
    if not rows:
        raise GraderError(f"{out} holds no gradebook: pass the --out folder of a batch")
    cells = rows.get(text_cell(checked_name(student, "grader override")))
    if cells is None:
        raise GraderError(f"{student!r} is not in {out / GRADEBOOK}: give a student's name")
    if not why.strip():
        raise GraderError("--why is empty: say why the grade is set by hand")
    override = Override(
        student, checked_grade(grade, scale), " ".join(why.split()), invoking_user(), now(),
        points(cells),
    )  # fmt: skip
    overrides = read_overrides(out, scale) | {student: override}
    write_atomically(out / OVERRIDES, overrides_json(overrides.values()))
    return override


def take_overrides(out: Path, shards: Iterable[Path], scale: float) -> None:
    """Merge each shard's overrides into ``out``'s (``merged_overrides``)."""
    mine = read_overrides(out, scale)
    merged = mine
    for shard in shards:
        if shard.resolve() != out.resolve():
            merged = merged_overrides(merged, read_overrides(shard, scale))
    if merged != mine:
        write_atomically(out / OVERRIDES, overrides_json(merged.values()))
