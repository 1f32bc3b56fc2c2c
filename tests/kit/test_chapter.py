"""The chapter in the kit: it ships, agrees with the catalog and the reference, and reads whole.

``grader chapter`` is all a student needs besides ``grader tests``, so its
facts are checked where they can be: the catalog blocks against the catalog,
the worked example against the reference, every file it (or the kit) names
against the kit's files.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import io
import re
import shlex
import shutil
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rich.console import Console

from grader import cli
from grader.cli import main, options
from grader.commands.tdd import TIME_LIMIT as TDD_TIME_LIMIT
from grader.errors import EXIT_PASS, EXIT_USAGE
from grader.grading.wording import limits_sentence
from grader.inputs.catalog import load_chapter
from grader.inputs.chapter_text import (
    BLOCK,
    BLOCKS,
    read_chapter_text,
    stale_blocks,
    without_markers,
)
from grader.output.terminal import render_catalog

KIT = Path(__file__).resolve().parents[2]
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
    catalog = tmp_path / "chapter" / "catalog.toml"
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
CITING = [
    "README.md",
    "CHANGELOG.md",
    "docs/*.md",
    "student/radix.py",
    "student/tests/test_ds07_radix.py",
    "chapter/*.md",
]
CITING += ["grader/**/*.py", "course_tests/*.py", "reference/radix.py", "chapter/catalog.toml"]
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
    """``grader chapter`` is how a student reads it: the kit's file is never theirs to open."""
    stub = CHAPTER.stub.read_text(encoding="utf-8")
    assert "grader chapter" in stub and f"chapter/{CHAPTER.text.name}" not in stub


def commands_in_order(text: str) -> list[str]:
    """The workflow's commands in the order ``text`` first names them."""
    commands = [step.command for step in CHAPTER.workflow if step.command]
    found = sorted((text.find(command), command) for command in commands)
    return [command for at, command in found if at >= 0]


def catalog_text() -> str:
    out = io.StringIO()
    render_catalog(Console(file=out, width=80), CHAPTER)
    return out.getvalue()


def catalog_order(named: list[str]) -> list[str]:
    return [step.command for step in CHAPTER.workflow if step.command in named]


@pytest.mark.parametrize("where", ["stub", "skeleton", "chapter", "grader tests"])
def test_every_text_says_the_workflow_in_the_catalogs_order(where: str) -> None:
    """The chapter, the stub and the skeleton name the steps in one order, the catalog's
    (``grader start`` prints its next steps from the catalog itself); ``tdd green`` comes
    before ``check`` everywhere."""
    text = {  # the passage of each that states the way through
        "stub": CHAPTER.stub.read_text(encoding="utf-8").partition("Commands, in order:")[2],
        "skeleton": CHAPTER.stub_tests.read_text(encoding="utf-8").partition("# Workflow:")[2],
        "chapter": without_markers(TEXT).partition("## How to work")[2].partition("## 1.")[0],
        "grader tests": " ".join(catalog_text().split()).partition("In order:")[2],
    }[where]
    named = commands_in_order(text)
    assert {"grader tdd red", "grader tdd green", "grader check"} <= set(named), named
    assert named == catalog_order(named)


def test_a_text_out_of_order_is_caught() -> None:
    wrong = "run `grader check`, then `grader tdd green`, after `grader tdd red`"
    assert commands_in_order(wrong) != catalog_order(commands_in_order(wrong))


def test_extra_tests_are_said_to_be_allowed_and_counted_everywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    said = "every one of them counts for kills"
    assert said in " ".join(CHAPTER.stub_tests.read_text(encoding="utf-8").replace("#", "").split())
    assert said in " ".join(without_markers(TEXT).split())
    assert main(["tests"]) == EXIT_PASS
    assert said in " ".join(capsys.readouterr().out.split())
    assert main(["start", "--submission", str(tmp_path / "s")]) == EXIT_PASS
    assert "every one counts for kills" in " ".join(capsys.readouterr().out.split())


def test_the_skeleton_asks_no_pin_the_catalog_does_not_name() -> None:
    """A required test's docstring in the skeleton and its entry in the catalog (the chapter
    and ``grader tests`` show it) agree on whether it pins the granule."""
    skeleton = ast.parse(CHAPTER.stub_tests.read_text(encoding="utf-8"))
    docstrings = {
        node.name: ast.get_docstring(node) or ""
        for node in skeleton.body
        if isinstance(node, ast.FunctionDef)
    }
    for test in CHAPTER.required_tests:
        assert ("granule 2" in docstrings[test.name]) == ("granule 2" in test.checks), test.name


def test_without_markers_keeps_every_block() -> None:
    plain = without_markers(TEXT)
    assert "<!--" not in plain
    for test in CHAPTER.course_tests:
        assert f"`{test.name}` ({test.kind})" in plain


# ----------------------------------------------------------------------
# `grader chapter`, `grader tests` and `grader start` read whole at any width.

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def grader_output(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    columns: int,
    *arguments: str,
    terminal: bool = False,
) -> list[str]:
    """``grader ARGUMENTS`` at ``columns`` columns, on a terminal or piped: its lines."""
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    if terminal:
        monkeypatch.setenv("TTY_COMPATIBLE", "1")
    else:
        monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    assert main(list(arguments)) == EXIT_PASS
    out, err = capsys.readouterr()
    assert err == ""
    return [ANSI.sub("", line).rstrip() for line in out.splitlines()]


def words(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def whole_on_a_line(name: str, lines: list[str]) -> bool:
    return any(re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", line) for line in lines)


def test_chapter_on_a_terminal_is_drawn_and_loses_no_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = grader_output(capsys, monkeypatch, 60, "chapter", terminal=True)
    assert all(len(line) <= 60 for line in lines)
    assert not any(line.startswith(("#", "<!--")) for line in lines), "not drawn"
    names = [t.name for t in CHAPTER.course_tests] + [t.name for t in CHAPTER.required_tests]
    for name in names:
        assert whole_on_a_line(name, lines), name
    text = words(lines)
    for mutant in CHAPTER.mutants:
        assert f"{mutant.id}" in text and " ".join(mutant.title.split()) in text, mutant.id


def test_chapter_piped_is_the_markdown_itself(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = grader_output(capsys, monkeypatch, 60, "chapter", "ds.07")
    assert lines == [line.rstrip() for line in without_markers(TEXT).splitlines()]


@pytest.mark.parametrize("columns", [60, 30, 200])
def test_tests_shows_every_entry_in_full_at_any_width(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """Each course test with its kind, what it checks and why; each required test; each
    mutant with its title, symptom and the course tests that catch it. Names are whole on
    a line; the sentences are all there, however they wrap."""
    lines = grader_output(capsys, monkeypatch, columns, "tests")
    text = words(lines)
    for test in CHAPTER.course_tests:
        assert any(test.name in line and f"({test.kind})" in line for line in lines), test.name
        assert f"checks: {test.checks}" in text and f"why: {test.why}" in text
    for required in CHAPTER.required_tests:
        assert whole_on_a_line(required.name, lines)
        assert f"pins: {required.checks}" in text
    for mutant in CHAPTER.mutants:
        assert any(line.startswith(mutant.id) for line in lines), mutant.id
        assert mutant.title in text and f"symptom: {mutant.symptom}" in text
        for name in mutant.caught_by:
            assert any(line.endswith(f"caught by: {name}") for line in lines), (mutant.id, name)
    if columns < 200:
        wrapped = [line for line in lines if len(line) > columns]
        assert all(line.lstrip().startswith(("test_", "caught by: ")) for line in wrapped)


def test_tests_shows_no_mutant_title_where_the_course_hides_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hidden = dataclasses.replace(CHAPTER, show_mutant_titles=False)
    monkeypatch.setattr(cli, "load_chapter", lambda chapter_id: hidden)
    text = words(grader_output(capsys, monkeypatch, 80, "tests"))
    for mutant in CHAPTER.mutants:
        assert mutant.id in text
        assert mutant.title not in text and mutant.symptom not in text


def test_start_lists_its_next_steps_whole_at_60_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "a rather long folder name for my submission"
    lines = grader_output(capsys, monkeypatch, 60, "start", "--submission", str(folder))
    steps = lines[lines.index("Next steps:") + 1 :]
    commands = [line.split(". ", 1)[1] for line in steps if re.match(r"  \d\. ", line)]
    quoted = shlex.quote(str(folder))
    assert commands == [
        "grader chapter",
        "grader tests",
        f"edit {shlex.quote(str(folder / CHAPTER.student_tests))}",
        f"grader tdd red --submission {quoted}",
        f"edit {shlex.quote(str(folder / CHAPTER.implementation))}",
        f"grader tdd green --submission {quoted}",
        f"grader check --submission {quoted}",
        f"grader diff --submission {quoted}",
    ]


def test_a_missing_chapter_is_a_broken_kit_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gone = dataclasses.replace(CHAPTER, text=tmp_path / "no-such-chapter.md")
    monkeypatch.setattr(cli, "load_chapter", lambda chapter_id: gone)
    assert main(["chapter"]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("grader: the kit is broken: cannot read ") and err.count("\n") == 1


def test_the_chapter_states_every_default_limit() -> None:
    """The limits ``grader check --help`` states, and tdd's, are the chapter's words too."""
    text = " ".join(without_markers(TEXT).split())
    assert f"Default {limits_sentence(options.default_limits())}." in text
    assert f"gives each run of your tests {TDD_TIME_LIMIT:g} s" in text
