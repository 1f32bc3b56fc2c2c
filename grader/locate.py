"""Finding a submission's two files where a student or a platform put them.

``grader check`` expects ``radix.py`` and ``tests/test_ds07_radix.py`` at
fixed places in the submission folder. A Gradescope upload of two files lays
them side by side, and a student's repository may keep them one folder down;
``locate`` finds each file that is not at its place by its name, searching a
few levels down without following links, and returns a chapter whose paths
name the files found. Nothing is copied or moved, so every rule on reading a
submission (no links out of the folder, size, encoding) still applies, and
every message names the student's own path.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path, PurePosixPath

from grader.catalog import Chapter

MAX_DEPTH = 3
"""How many folders below the submission folder a file may lie."""
MAX_ENTRIES = 5000
"""How many entries the search looks at before it gives up (a hostile tree)."""
SKIPPED = frozenset({"__pycache__", "node_modules", "venv", "site-packages"})
"""Folders never searched, besides hidden ones (``.git``, ``.venv``)."""


def locate(chapter: Chapter, folder: Path) -> Chapter:
    """``chapter`` with ``implementation`` and ``student_tests`` naming the files in ``folder``.

    A file at its expected place (even a broken one: reading it will say what
    is wrong) stays there; otherwise the shallowest regular file of that name
    is taken, the first in path order among equals; with none, the expected
    place stays, and reading reports it missing.
    """
    if not folder.is_dir():
        return chapter
    implementation = _located(folder, chapter.implementation)
    student_tests = _located(folder, chapter.student_tests)
    return dataclasses.replace(chapter, implementation=implementation, student_tests=student_tests)


def _located(folder: Path, expected: str) -> str:
    """``expected`` if anything lies there, else the path of the file found by its name."""
    path = folder / expected
    if path.exists() or path.is_symlink():
        return expected
    return _find(folder, PurePosixPath(expected).name) or expected


def _find(folder: Path, name: str) -> str | None:
    """The relative path of the shallowest regular file called ``name`` (no links followed)."""
    matches: list[tuple[int, str]] = []
    seen = 0
    for here, folders, files in os.walk(folder, followlinks=False):
        relative = Path(here).relative_to(folder)
        depth = len(relative.parts)
        folders[:] = sorted(
            f for f in folders if not f.startswith(".") and f not in SKIPPED and depth < MAX_DEPTH
        )
        seen += len(folders) + len(files)
        if name in files:
            path = Path(here) / name
            if path.is_file() and not path.is_symlink():
                matches.append((depth, (relative / name).as_posix()))
        if seen > MAX_ENTRIES:
            break
    return min(matches)[1] if matches else None
