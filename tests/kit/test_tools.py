"""The maintainers' tools: the patches after the reference changes, the command reference,
the witnesses after its behaviour changes."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from grader.errors import GraderError
from grader.grading.witness import read_witnesses
from grader.inputs.catalog import load_chapter
from grader.inputs.patching import mutant_sources

KIT = Path(__file__).resolve().parents[2]


def load_tool(name: str) -> ModuleType:
    """``tools/NAME.py`` as a module."""
    spec = importlib.util.spec_from_file_location(name, KIT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def refresh_patches() -> ModuleType:
    return load_tool("refresh_patches")


def test_the_kits_patches_are_up_to_date() -> None:
    """Every patch is already in the form the tool writes: ``--check`` finds nothing stale."""
    assert refresh_patches().main(["--check"]) == 0


def test_patches_follow_the_reference_when_its_lines_move(tmp_path: Path) -> None:
    """A comment added at the top of the reference breaks every exact patch; the tool
    re-makes them, and each mutant is then the old mutant with the same comment added."""
    for folder in ("reference", "mutants", "wheats", "student", "course_tests", "chapter"):
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


def test_the_command_reference_is_the_parsers_own_help() -> None:
    """``docs/reference.md`` holds every command's current ``--help``, and nothing stale."""
    run = subprocess.run(
        [sys.executable, str(KIT / "tools" / "refresh_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (run.returncode, run.stdout) == (0, "reference.md: up to date\n")


def test_the_command_reference_catches_a_changed_option(tmp_path: Path) -> None:
    """A help block that differs from the parser is redrawn; a missing command gets a block."""
    tool = load_tool("refresh_docs")
    page = (KIT / "docs" / "reference.md").read_text(encoding="utf-8")
    stale = page.replace("[--submission DIR]", "[--folder DIR]", 1)
    texts = tool.help_texts()
    assert stale != page and tool.refreshed(stale, texts) == page
    without_diff = page[: page.index("## `grader diff`")]
    assert "<!-- help: grader diff -->" in tool.refreshed(without_diff, texts)


def refresh_witnesses() -> ModuleType:
    return load_tool("refresh_witnesses")


def kit_copy(root: Path) -> Path:
    """The kit's content folders copied under ``root``, for a tool to change."""
    for folder in ("reference", "mutants", "wheats", "student", "course_tests", "chapter"):
        shutil.copytree(KIT / folder, root / folder)
    return root


def test_the_kits_witnesses_hold() -> None:
    """``--check`` replays every stored witness on the reference, the wheats and the mutant."""
    lines: list[str] = []
    assert refresh_witnesses().main(["--check"], report=lines.append) == 0
    assert lines == ["18 of 18 hold"]


def test_witnesses_survive_an_edit_that_moves_lines(tmp_path: Path) -> None:
    """Witnesses are calls and results, not lines: after the reference's lines move and the
    patches are re-made, every witness still holds."""
    kit = kit_copy(tmp_path)
    reference = kit / "reference" / "radix.py"
    reference.write_text("# a note\n" + reference.read_text(encoding="utf-8"), encoding="utf-8")
    assert refresh_patches().main(["--kit", str(kit)]) == 0
    assert refresh_witnesses().main(["--check", "--kit", str(kit)], report=lambda _: None) == 0


def test_a_stale_witness_fails_the_check(tmp_path: Path) -> None:
    kit = kit_copy(tmp_path)
    stored = kit / "mutants" / "witnesses.json"
    data = json.loads(stored.read_text(encoding="utf-8"))
    data["witnesses"]["s11"]["calls"][0]["reference"] = {"raises": "KeyError"}
    stored.write_text(json.dumps(data), encoding="utf-8")
    lines: list[str] = []
    assert refresh_witnesses().main(["--check", "--kit", str(kit)], report=lines.append) == 1
    assert lines[0].startswith("s11: the reference gives other results")
    assert lines[-1] == "17 of 18 hold"


@pytest.mark.slow
def test_the_search_makes_the_stored_witness_again(tmp_path: Path) -> None:
    """Derandomized: searching again for one mutant writes the witness the kit holds."""
    kit = kit_copy(tmp_path)
    stored = read_witnesses(KIT / "mutants" / "witnesses.json")
    (kit / "mutants" / "witnesses.json").unlink()
    lines: list[str] = []
    assert (
        refresh_witnesses().main(["--kit", str(kit), "--mutant", "m01"], report=lines.append) == 0
    )
    assert read_witnesses(kit / "mutants" / "witnesses.json") == {"m01": stored["m01"]}
