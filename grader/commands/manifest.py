"""A class as a list, and the fixed slice of it one machine grades (``--manifest``, ``--shard``).

A manifest lists every submission of a class, sorted by student: the folder,
the digest of the files that would be graded (``grader.inputs.provenance``'s
``submission``, so it is the key's own part) and the seconds its grading is
expected to take (from an earlier run's reports, else a default). Shard ``K``
of ``N`` (``K`` from 0, as ``JOB_COMPLETION_INDEX`` and a matrix index count)
is a fixed function of the manifest: the submissions are dealt longest first
to the shard with the least expected time so far, so shards end together and
a rerun of shard ``K`` grades exactly the same students.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.course.gradebook import checked_name
from grader.errors import GraderError
from grader.inputs.catalog import Chapter
from grader.inputs.locate import RefusedSubmission, locate
from grader.inputs.provenance import REFUSED, submission_digest
from grader.inputs.submission import read_submission
from grader.results.batch import Entry, Manifest, Step

MANIFEST_VERSION = 1
DEFAULT_SECONDS = 60.0
"""The expected time of a submission no earlier run measured (only ratios matter)."""
REFUSED_SECONDS = 1.0
"""A submission refused before grading costs next to nothing."""


def graded_files(chapter: Chapter, folder: Path) -> dict[str, str | None]:
    """What grading ``folder`` would read, as ``grader.inputs.provenance.submission_digest``
    takes it: where each file was found and its text, or why the submission is refused."""
    try:
        located = locate(chapter, folder)
    except RefusedSubmission as refused:
        return {REFUSED: refused.message}
    submission = read_submission(located, folder)
    return {
        "implementation": located.implementation,
        "implementation_text": submission.implementation,
        "tests": located.student_tests,
        "tests_text": submission.tests,
    }


def build_manifest(
    chapter: Chapter,
    folders: Sequence[Path],
    names: Sequence[str],
    expected: dict[str, float] | None = None,
    progress: Callable[[Step], None] | None = None,
) -> Manifest:
    """The manifest of ``folders`` (each student's name in ``names``), sorted by student;
    ``expected`` gives the seconds an earlier run measured, by student; ``progress`` hears
    of each folder as it is read."""
    entries = []
    for done, (folder, name) in enumerate(zip(folders, names, strict=True), start=1):
        started = time.monotonic()
        files = graded_files(chapter, folder)
        default = REFUSED_SECONDS if REFUSED in files else DEFAULT_SECONDS
        seconds = (expected or {}).get(name, default)
        entries.append(Entry(name, folder, submission_digest(files), round(seconds, 3)))
        if progress is not None:
            said = "refused: nothing to grade" if REFUSED in files else "hashed"
            progress(Step(done, len(folders), name, said, time.monotonic() - started))
    return Manifest(chapter.id, tuple(sorted(entries, key=lambda e: e.student)))


def shard(manifest: Manifest, index: int, count: int) -> tuple[Entry, ...]:
    """Shard ``index`` of ``count`` (from 0): longest first, each to the least loaded shard
    (the lowest index on a tie), returned in manifest order."""
    if not 0 <= index < count:
        raise GraderError(f"shard {index}/{count}: the index must be from 0 to {count - 1}")
    loads = [0.0] * count
    mine: set[str] = set()
    for entry in sorted(manifest.entries, key=lambda e: (-e.seconds, e.student)):
        least = min(range(count), key=lambda i: (loads[i], i))
        loads[least] += entry.seconds
        if least == index:
            mine.add(entry.student)
    return tuple(entry for entry in manifest.entries if entry.student in mine)


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` as two numbers; one line on what is wrong otherwise."""
    index, _, count = text.partition("/")
    try:
        k, n = int(index), int(count)
    except ValueError:
        k, n = -1, 0
    if n < 1 or not 0 <= k < n:
        raise GraderError(
            f"--shard {text!r}: write K/N with N at least 1 and K from 0 to N-1 "
            "(K counts from 0, as JOB_COMPLETION_INDEX does)"
        )
    return k, n


def manifest_json(manifest: Manifest, where: Path) -> str:
    """The manifest as JSON; folders relative to ``where`` (the manifest's folder) if inside."""
    base = where.resolve()

    def place(folder: Path) -> str:
        return Path(os.path.relpath(folder.resolve(), base)).as_posix()

    data = {
        "schema_version": MANIFEST_VERSION,
        "chapter": manifest.chapter,
        "submissions": [
            {
                "student": entry.student,
                "folder": place(entry.folder),
                "hash": entry.digest,
                "seconds": entry.seconds,
            }
            for entry in manifest.entries
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def read_manifest(path: Path, chapter: Chapter) -> Manifest:
    """A manifest written by ``grader manifest``; folders are read relative to its folder."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        entries = tuple(
            Entry(
                str(item["student"]),
                path.parent / str(item["folder"]),
                str(item["hash"]),
                float(item["seconds"]),
            )
            for item in data["submissions"]
        )
        version, chapter_id = data["schema_version"], str(data["chapter"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise GraderError(f"cannot read the manifest {path}: {error!r}") from error
    if version != MANIFEST_VERSION or chapter_id != chapter.id:
        raise GraderError(
            f"{path} is a manifest of version {version} for {chapter_id}: this kit reads "
            f"version {MANIFEST_VERSION} for {chapter.id}; write it again with grader manifest"
        )
    students = [checked_name(entry.student, str(path)) for entry in entries]
    if students != sorted(set(students)):
        raise GraderError(f"{path}: its students must be sorted and named once each")
    return Manifest(chapter_id, entries)


def stale_entries(chapter: Chapter, entries: Sequence[Entry]) -> list[str]:
    """The students whose folder no longer holds the files the manifest hashed."""
    return [
        entry.student
        for entry in entries
        if submission_digest(graded_files(chapter, entry.folder)) != entry.digest
    ]
