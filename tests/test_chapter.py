"""The chapter in the kit: it ships, agrees with the catalog and the reference, and reads whole.

``grader chapter`` is all a student needs besides ``grader tests``, so its
facts are checked where they can be: the catalog blocks against the catalog,
the worked example against the reference, every file it (or the kit) names
against the kit's files.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from grader.catalog import load_chapter
from grader.chapter_text import BLOCK, BLOCKS, read_chapter_text, stale_blocks, without_markers

KIT = Path(__file__).resolve().parents[1]
CHAPTER = load_chapter()
TEXT = read_chapter_text(CHAPTER)


def refresh_tool() -> ModuleType:
    tool_path = KIT / "tools" / "refresh_chapter.py"
    spec = importlib.util.spec_from_file_location("refresh_chapter", tool_path)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def load_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chapter_reference_radix", CHAPTER.reference)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_chapter_ships_in_the_wheel() -> None:
    """``chapter/`` is force-included beside the other content folders, where kit_root
    finds it in an installed wheel."""
    pyproject = tomllib.loads((KIT / "pyproject.toml").read_text(encoding="utf-8"))
    included = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert included["chapter"] == "grader/kit/chapter"
    assert included["mutants"] == "grader/kit/mutants"
    assert CHAPTER.text == KIT / "chapter" / CHAPTER.text.name
    assert CHAPTER.text.is_file()


def test_every_catalog_block_is_there_once_and_up_to_date() -> None:
    names = [match["name"] for match in BLOCK.finditer(TEXT)]
    assert sorted(names) == sorted(BLOCKS)
    assert stale_blocks(CHAPTER, TEXT) == []


def test_a_stale_block_is_found_and_refreshed(tmp_path: Path) -> None:
    """The refresh tool rewrites a block that no longer matches the catalog, and only it."""
    for folder in ("mutants", "chapter", "reference", "student", "course_tests", "wheats"):
        shutil.copytree(KIT / folder, tmp_path / folder)
    catalog = tmp_path / "mutants" / "catalog.toml"
    catalog.write_text(
        catalog.read_text(encoding="utf-8").replace("threshold = 0.70", "threshold = 0.80"),
        encoding="utf-8",
    )
    copy = load_chapter(root=tmp_path)
    assert stale_blocks(copy, read_chapter_text(copy)) == ["at-a-glance", "your-tests"]
    tool = refresh_tool()
    assert tool.main(["--check", "--kit", str(tmp_path)]) == 1
    assert tool.main(["--kit", str(tmp_path)]) == 0
    refreshed = read_chapter_text(copy)
    assert stale_blocks(copy, refreshed) == []
    assert "at least 80%" in refreshed and "at least 70%" not in refreshed
    outside = [BLOCK.sub("", text) for text in (TEXT, refreshed)]
    assert outside[0] == outside[1], "the prose around the blocks changed"


def test_the_kits_chapter_blocks_need_no_refresh() -> None:
    assert refresh_tool().main(["--check"]) == 0


STEP = re.compile(
    r"^\d+\. `(?P<call>(?:insert|match_prefix)\(.*?\))` returns `(?P<result>.*?)`", re.M
)


def test_the_worked_example_is_what_the_reference_does() -> None:
    """Section 3 at granule 1, call by call: every stated return value is the reference's."""
    section = TEXT.split("## 3. The worked example", 1)[1].split("**Granule 2.**", 1)[0]
    steps = [(m["call"], ast.literal_eval(m["result"])) for m in STEP.finditer(section)]
    assert len(steps) == 6
    tree = load_reference().RadixTree(1)
    for call, stated in steps:
        name, arguments = call.split("(", 1)
        result: Any = getattr(tree, name)(*ast.literal_eval(f"({arguments[:-1]},)"))
        assert result == stated, call
    assert (len(tree), tree.node_count()) == (5, 4)


def test_the_granule_2_example_is_what_the_reference_does() -> None:
    tree = load_reference().RadixTree(2)
    tree.insert([1, 2, 3, 4], [10, 11])
    matched, path = tree.match_prefix([1, 2, 3, 9])
    assert matched == 2 and tree.values(path[-1]) == (10,)
    assert tree.match_prefix([1]) == (0, [])
    granule_2 = TEXT.split("**Granule 2.**", 1)[1].split("\n## ", 1)[0]
    for fact in ("`1 2 3 4`", "`10, 11`", "2 tokens match", "`(0, [])`"):
        assert fact in granule_2


def test_the_chapter_states_the_unlock_rule_the_course_tests_enforce() -> None:
    """The kit's decision: unlock refuses a node with no lock of its own, a node pinned only
    by a descendant's lock included, and the chapter says why."""
    rules = " ".join(TEXT.split("### 4.3 The rules", 1)[1].split("### 4.4", 1)[0].split())
    assert "raises `RuntimeError` when `node` holds no lock of its own" in rules
    assert "when its count comes only from locks on nodes below it" in rules
    assert "releasing a lock that someone else holds" in rules


def test_the_chapter_names_every_method_and_rule_of_the_interface() -> None:
    interface = TEXT.split("## 4. The interface in Python", 1)[1].split("### 4.5", 1)[0]
    for name in ("granule", "__len__", "is_empty", "node_count", "key", "values", "parent"):
        assert f"def {name}(" in interface
    for name in ("children", "child_count", "lock_count", "lru_order", "match_prefix"):
        assert f"def {name}(" in interface
    for name in ("insert", "lock", "unlock", "evict", "__init__"):
        assert f"def {name}(" in interface
    for fact in ("`ValueError`", "`KeyError`", "`RuntimeError`", "`(ROOT, [])`", "`evict(0, f)`"):
        assert fact in interface
    assert "`lock(ROOT)` and\n  `unlock(ROOT)` do nothing" in interface


# Text files of the kit a student or a maintainer reads, and the paths they may cite.
CITING = ["README.md", "student/radix.py", "student/tests/test_ds07_radix.py", "chapter/*.md"]
CITING += ["grader/**/*.py", "course_tests/*.py", "reference/radix.py", "mutants/catalog.toml"]
CITED = re.compile(r"\b((?:spec|chapter)/[\w./-]+\.(?:md|txt))")


@pytest.mark.parametrize(
    "path",
    sorted({p for pattern in CITING for p in KIT.glob(pattern)}),
    ids=lambda p: str(p.relative_to(KIT)),
)
def test_every_cited_page_exists_in_the_kit(path: Path) -> None:
    for cited in CITED.findall(path.read_text(encoding="utf-8")):
        assert (KIT / cited).is_file(), f"{path.relative_to(KIT)} cites {cited}, not in the kit"


def test_the_stub_sends_the_student_to_the_chapter() -> None:
    stub = CHAPTER.stub.read_text(encoding="utf-8")
    assert "grader chapter" in stub and f"chapter/{CHAPTER.text.name}" in stub


def test_without_markers_keeps_every_block() -> None:
    plain = without_markers(TEXT)
    assert "<!--" not in plain
    for test in CHAPTER.course_tests:
        assert f"`{test.name}` ({test.kind})" in plain
