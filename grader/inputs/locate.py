"""Finding a submission's two files where a student or a platform put them.

``grader check`` expects ``radix.py`` and ``tests/test_ds07_radix.py`` at
fixed places in the submission folder. A Gradescope upload of two files lays
them side by side, and a student's repository may keep them one folder down;
``locate`` finds each file that is not at its place by its name, searching a
few levels down without following links, and returns a chapter whose paths
name the files found. Nothing is copied or moved, so every rule on reading a
submission (no links out of the folder, size, encoding) still applies, and
every message names the student's own path.

Two rules keep the grade on the student's own work:

- the kit's own folders are never searched: ``reference/`` (the model
  answer), ``student/`` (the stub), ``course_tests/``, ``mutants/``,
  ``wheats/`` anywhere, and inside a folder that holds ``chapter/catalog.toml``
  (a copy of the kit) every folder the kit ships;
- when more than one file of that name remains, nothing is guessed:
  ``AmbiguousSubmission`` lists them all, and the student keeps one; when the
  only ones lie in the kit's folders (work done in a clone's ``student/``),
  ``OnlyKitFiles`` says so, rather than calling the file missing.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path, PurePosixPath

from grader.errors import EXIT_FAIL, GraderError
from grader.inputs.catalog import CHAPTERS, Chapter

MAX_DEPTH = 3
"""How many folders below the submission folder a file may lie."""
MAX_ENTRIES = 5000
"""How many entries the search looks at before it gives up (a hostile tree)."""
SKIPPED = frozenset({"__pycache__", "node_modules", "venv", "site-packages"})
"""Folders never searched, besides hidden ones (``.git``, ``.venv``)."""
KIT_CONTENT = frozenset({"reference", "student", "course_tests", "mutants", "wheats"})
"""The kit's content folders: the model answer, the stub, the course tests, the patches.
A file in one of them is the kit's, never the student's, wherever it lies."""
KIT_MACHINERY = frozenset(
    {"tests", "benchmarks", "tools", "grader", "deploy", "ci", "autograder", "chapter"}
)
"""The other folders a copy of the kit holds (its own suite, fixtures and hostile cases
included); skipped only inside a folder that holds the kit's catalog."""
KIT_MARKERS = frozenset(PurePosixPath(path) for path in CHAPTERS.values())
"""A folder holding one of these (``chapter/catalog.toml``) is a copy of the kit."""


class RefusedSubmission(GraderError):
    """The files to grade cannot be told apart from others: the student's to fix, a fail."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message, exit_code=EXIT_FAIL)
        self.candidates = tuple(candidates)


class AmbiguousSubmission(RefusedSubmission):
    """More than one file could be the one to grade; the student must keep one."""

    def __init__(self, name: str, candidates: list[str]) -> None:
        super().__init__(
            f"found {len(candidates)} files named {name} ({_listed(candidates)}) and cannot "
            "tell which one is your work: keep only that one in the submission (or rename "
            "the others)",
            candidates,
        )


class OnlyKitFiles(RefusedSubmission):
    """The only files of that name lie in the kit's own folders, which are never graded."""

    def __init__(self, name: str, candidates: list[str]) -> None:
        super().__init__(
            f"{name} is only in the kit's own folders ({_listed(candidates)}), which are never "
            f"graded: put your {name} in a folder of your own (submission/, or the top of the "
            "submission)",
            candidates,
        )


def _listed(paths: list[str], at_most: int = 5) -> str:
    shown = ", ".join(paths[:at_most])
    return shown if len(paths) <= at_most else f"{shown} and {len(paths) - at_most} more"


def locate(chapter: Chapter, folder: Path) -> Chapter:
    """``chapter`` with ``implementation`` and ``student_tests`` naming the files in ``folder``.

    A file at its expected place (even a broken one: reading it will say what
    is wrong) stays there; otherwise the one regular file of that name outside
    the kit's folders is taken; with none, the expected place stays, and
    reading reports it missing (or, with the only ones in the kit's folders,
    ``OnlyKitFiles``); with several, ``AmbiguousSubmission``.
    """
    if not folder.is_dir():
        return chapter
    implementation = _located(folder, chapter.implementation)
    student_tests = _located(folder, chapter.student_tests)
    return dataclasses.replace(chapter, implementation=implementation, student_tests=student_tests)


def _located(folder: Path, expected: str) -> str:
    """``expected`` if anything lies there, else the path of the one file found by its name."""
    path = folder / expected
    if path.exists() or path.is_symlink():
        return expected
    name = PurePosixPath(expected).name
    found = find_candidates(folder, name)
    if len(found) > 1:
        raise AmbiguousSubmission(name, found)
    if found:
        return found[0]
    in_the_kit = find_candidates(folder, name, kit_folders=True)
    if in_the_kit:
        raise OnlyKitFiles(name, in_the_kit)
    return expected


def is_kit_copy(folder: Path) -> bool:
    """Whether ``folder`` holds the kit's catalog, so is (a copy of) the kit itself."""
    return any((folder / marker).is_file() for marker in KIT_MARKERS)


def find_candidates(folder: Path, name: str, kit_folders: bool = False) -> list[str]:
    """Relative paths of the regular files called ``name`` outside the kit's folders (or, with
    ``kit_folders``, inside them too), in order.

    No link is followed, hidden folders are skipped, and the search stops
    ``MAX_DEPTH`` folders down or after ``MAX_ENTRIES`` entries.
    """
    matches: list[str] = []
    seen = 0
    for here, folders, files in os.walk(folder, followlinks=False):
        relative = Path(here).relative_to(folder)
        depth = len(relative.parts)
        kit = is_kit_copy(Path(here))
        folders[:] = sorted(
            f
            for f in folders
            if not f.startswith(".")
            and f not in SKIPPED
            and (kit_folders or (f not in KIT_CONTENT and not (kit and f in KIT_MACHINERY)))
            and depth < MAX_DEPTH
        )
        seen += len(folders) + len(files)
        if name in files:
            path = Path(here) / name
            if path.is_file() and not path.is_symlink():
                matches.append((relative / name).as_posix())
        if seen > MAX_ENTRIES:
            break
    return sorted(matches)
