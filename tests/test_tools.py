"""The maintainers' tool that re-makes the patches after the reference changes."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from grader.catalog import load_chapter
from grader.errors import GraderError
from grader.patching import mutant_sources

KIT = Path(__file__).resolve().parents[1]


def refresh_patches() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_patches", KIT / "tools" / "refresh_patches.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_kits_patches_are_up_to_date() -> None:
    """Every patch is already in the form the tool writes: ``--check`` finds nothing stale."""
    assert refresh_patches().main(["--check"]) == 0


def test_patches_follow_the_reference_when_its_lines_move(tmp_path: Path) -> None:
    """A comment added at the top of the reference breaks every exact patch; the tool
    re-makes them, and each mutant is then the old mutant with the same comment added."""
    for folder in ("reference", "mutants", "wheats", "student", "course_tests"):
        shutil.copytree(KIT / folder, tmp_path / folder)
    before = mutant_sources(load_chapter(root=tmp_path))
    reference = tmp_path / "reference" / "radix.py"
    moved = "# a maintainer's note\n" + reference.read_text(encoding="utf-8")
    reference.write_text(moved, encoding="utf-8")
    with pytest.raises(GraderError):
        mutant_sources(load_chapter(root=tmp_path))

    tool = refresh_patches()
    assert tool.main(["--check", "--kit", str(tmp_path)]) == 1
    assert tool.main(["--kit", str(tmp_path)]) == 0
    after = mutant_sources(load_chapter(root=tmp_path))
    assert after == {name: "# a maintainer's note\n" + source for name, source in before.items()}
    assert tool.main(["--check", "--kit", str(tmp_path)]) == 0
