"""Applying a mutant's or a wheat's unified diff to the reference source, in memory."""

from __future__ import annotations

from pathlib import Path

import whatthepatch

from grader.errors import GraderError
from grader.inputs.catalog import Chapter


def mutant_sources(chapter: Chapter) -> dict[str, str]:
    """Each mutant's full source, patched in memory from the reference."""
    reference = chapter.reference.read_text(encoding="utf-8")
    return {mutant.id: apply_patch(reference, mutant.patch) for mutant in chapter.mutants}


def apply_patch(source: str, patch_path: Path) -> str:
    """Return ``source`` with the single-file patch at ``patch_path`` applied.

    The patch must apply exactly (context lines included); anything else is a
    broken kit, reported as a ``GraderError``. Nothing is written to disk.
    """
    try:
        diffs = list(whatthepatch.parse_patch(patch_path.read_text(encoding="utf-8")))
    except OSError as error:
        raise GraderError(
            f"the kit is broken: cannot read {patch_path}: {error.strerror}"
        ) from error
    if len(diffs) != 1:
        raise GraderError(f"the kit is broken: {patch_path.name} must change exactly one file")
    try:
        lines = whatthepatch.apply_diff(diffs[0], source)
    except whatthepatch.exceptions.WhatThePatchException as error:
        raise GraderError(
            f"the kit is broken: {patch_path.name} does not apply to the reference: {error}"
        ) from error
    patched = "\n".join(lines)
    return patched + "\n" if source.endswith("\n") else patched
