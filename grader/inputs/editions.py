"""What each audience may hold of the kit: an allow-list, cut witnesses, and the read-back check.

An edition or a bundle is an input a student can read (docs/security.md), so
it is chosen by an allow-list, never by leaving out what a list names: each
chapter's ``[release] student`` patterns say which of the kit's files the
student edition and the Gradescope bundle's ``kit/`` carry, ``staff_only``
which ones only staff may ever hold. The witnesses file is cut to the tier
the catalog gives students before the due date (``grader.grading.witness``): no
killing test, no result of a call, unless staff ask for an after-due
edition. After the build, ``prove_contents`` reads every file of the built
artefact back and stops on anything off the list, any staff-only file under
another name, and any witness beyond its tier.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError
from grader.grading.witness import (
    beyond_tier,
    cut_to_tier,
    read_witnesses,
    students_tier,
    witnesses_from,
    witnesses_json,
)
from grader.inputs.catalog import CHAPTERS, load_chapter


@dataclass(frozen=True)
class Audience:
    """What one audience may hold of the kit at ``root``."""

    allowed: tuple[str, ...]
    """Patterns (from the kit's root) of the files it may hold."""
    staff_only: tuple[str, ...]
    """Patterns of the files it may never hold, whatever ``allowed`` says."""
    witnesses: Mapping[str, str]
    """Each witnesses file (from the kit's root) and the tier it is cut to."""


def matches(relative: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def students(root: Path, after_due: bool = False) -> Audience:
    """Students, before the due date (or after it, where staff ask): every chapter's
    ``[release] student`` list, its ``staff_only`` list, its witnesses at the students' tier."""
    allowed: list[str] = []
    staff_only: list[str] = []
    witnesses: dict[str, str] = {}
    for chapter_id in sorted(CHAPTERS):
        chapter = load_chapter(chapter_id, root)
        allowed += chapter.student_files
        staff_only += chapter.staff_only
        if chapter.witnesses is not None:
            tier = chapter.witnesses.tier("after_due") if after_due else None
            relative = chapter.witnesses.path.relative_to(root).as_posix()
            witnesses[relative] = tier or students_tier(chapter.witnesses)
    if not allowed:
        raise GraderError(
            "the kit is broken: no chapter's catalog has a [release] student list, so nothing "
            "may go to students"
        )
    return Audience(tuple(allowed), tuple(staff_only), witnesses)


def student_files(root: Path, files: Iterable[Path], audience: Audience) -> dict[str, bytes]:
    """The bytes of each of ``files`` (under ``root``) that ``audience`` may hold, by path from
    the root, the witnesses cut to their tier."""
    kept = {}
    for path in files:
        relative = path.relative_to(root).as_posix()
        if matches(relative, audience.staff_only) or not matches(relative, audience.allowed):
            continue
        data = path.read_bytes()
        tier = audience.witnesses.get(relative)
        if tier is not None:
            data = witnesses_json(cut_to_tier(read_witnesses(path), tier)).encode()
        kept[relative] = data
    return kept


def staff_material(root: Path, files: Iterable[Path], audience: Audience) -> dict[str, bytes]:
    """What only staff may hold of ``files``: the staff-only files and each witnesses file
    whole, where the students' cut differs from it."""
    found = {}
    for path in files:
        relative = path.relative_to(root).as_posix()
        if matches(relative, audience.staff_only):
            found[relative] = path.read_bytes()
        elif relative is not None and relative in audience.witnesses:
            whole = read_witnesses(path)
            if cut_to_tier(whole, audience.witnesses[relative]) != whole:
                found[relative] = path.read_bytes()
    return found


def prove_contents(
    artefact: str,
    entries: Iterable[tuple[str, str | None, bytes]],
    audience: Audience,
    secrets: Iterable[bytes],
) -> None:
    """Stop unless every entry of the built ``artefact`` is one ``audience`` may hold.

    Each entry is (its name in the artefact, its path from the kit's root or ``None`` for the
    build's own metadata, its bytes). An entry fails when its path is off the allow-list or
    staff-only, when its bytes are a staff-only file's (``secrets``) under any name, or when
    it is a witnesses file holding more than its tier.
    """
    hidden = set(secrets)
    for name, relative, data in entries:
        problem = None
        if data in hidden:
            problem = "holds a staff-only file's content"
        elif relative is not None and matches(relative, audience.staff_only):
            problem = "is staff-only"
        elif relative is not None and not matches(relative, audience.allowed):
            problem = "is on no allow-list of the catalog's [release] section"
        elif relative is not None and relative in audience.witnesses:
            problem = _witnesses_problem(data, audience.witnesses[relative])
        if problem is not None:
            raise GraderError(
                f"the kit is broken: {artefact} would hold {name}, which {problem}; nothing "
                "was written"
            )


def _witnesses_problem(data: bytes, tier: str) -> str | None:
    try:
        more = beyond_tier(witnesses_from(json.loads(data)), tier)
    except (ValueError, KeyError, TypeError, AttributeError):
        return "cannot be read as a witnesses file"
    if more:
        return f"shows more of {', '.join(more)} than the students' tier {tier!r}"
    return None
