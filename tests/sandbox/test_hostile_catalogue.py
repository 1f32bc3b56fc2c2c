"""Every submission of the hostile catalogue (``tests/hostile/catalogue.toml``) gets the verdict
and message it must, at the machine's level, at forced levels, and with the static check off.
"""

from __future__ import annotations

import ast
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hostile_harness import (
    CASES,
    CHAPTER,
    HOSTILE,
    KIT,
    LIMITS,
    assert_expected,
    at_level,
    check_seconds,
    lay_out,
    snapshot,
    stray_processes,
)
from markdown_it import MarkdownIt

from grader.commands.check import check
from grader.grading.wording import practice_note
from grader.inputs.catalog import Chapter
from grader.output.summary import report_to_markdown
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.levels import IsolationLevel
from grader.static.checker import check_test_source

pytest_plugins = ["hostile_harness"]
pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)


def test_the_catalogue_holds_every_case_folder_once() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))
    folders = sorted(p.name for p in HOSTILE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert sorted(names) == folders


def test_every_run_time_proof_named_in_the_catalogue_exists() -> None:
    """Each ``runtime_test`` the catalogue names is a test of one of the hostile suites."""
    suites = Path(__file__).parent.glob("test_*.py")
    defined = {
        node.name
        for suite in suites
        for node in ast.parse(suite.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    for case in CASES:
        if "runtime_test" in case:
            assert case["runtime_test"] in defined, case["name"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["name"])
def test_hostile_submission_gets_its_verdict_and_message(
    case: dict[str, Any], chapter: Chapter, pool: WorkerPool, reachable_tmp_path: Path
) -> None:
    """As the catalogue says; the submission and the machine are left as they were."""
    folder = lay_out(case, reachable_tmp_path)
    before = snapshot(folder)
    limits = replace(LIMITS, course_tests=case.get("course_time_limit", LIMITS.course_tests))
    started = time.monotonic()
    report = check(chapter, folder, limits, pool=pool, compare_copies=True)  # as staff grade
    assert time.monotonic() - started < check_seconds(case, limits)
    assert_expected(report, at_level(case, pool.isolation))
    assert live_markdown(report_to_markdown(CHAPTER, report)) == []
    assert snapshot(folder) == before
    assert stray_processes() == []


def live_markdown(markdown: str) -> list[str]:
    """The links and images GitHub would render in ``markdown`` (the kit's summary has none)."""
    parser = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "linkify"])
    found = []
    for token in parser.parse(markdown):
        for child in token.children or []:
            if child.type in ("link_open", "image", "html_inline"):
                found.append(f"{child.type}: {child.attrs or child.content}")
    return found


LEVEL_CASES = [(case, level) for case in CASES for level in case.get("levels", ())]


@pytest.mark.parametrize(
    ("case", "level"), LEVEL_CASES, ids=[f"{case['name']}-{level}" for case, level in LEVEL_CASES]
)
def test_hostile_submission_at_a_forced_level(
    case: dict[str, Any], level: IsolationLevel, chapter: Chapter, reachable_tmp_path: Path
) -> None:
    """A case about a weaker level than this machine's, graded at that level too (as far as
    the machine reaches it): the same verdict, and nothing of it left; at ``none`` the
    report's first line says it is practice."""
    folder = lay_out(case, reachable_tmp_path)
    with WorkerPool(workers=2, at_most=level) as workers:
        report = check(chapter, folder, LIMITS, pool=workers, compare_copies=True)
        assert_expected(report, at_level(case, workers.isolation))
    practice = f"> **{practice_note(report)}.**"
    first = report_to_markdown(CHAPTER, report).splitlines()
    assert (practice in first[:3]) == (workers.isolation == "none"), first[:3]
    assert stray_processes() == []


RUNTIME_CASES = [case for case in CASES if "runtime" in case]


@pytest.mark.parametrize("case", RUNTIME_CASES, ids=lambda case: case["name"])
@pytest.mark.usefixtures("without_static_check")
def test_run_time_layers_hold_without_the_static_check(
    case: dict[str, Any], tiny_chapter: Chapter, pool: WorkerPool, reachable_tmp_path: Path
) -> None:
    """With layer 1 off the hostile code runs, and still earns no kill."""
    folder = lay_out(case, reachable_tmp_path)
    report = check(tiny_chapter, folder, LIMITS, pool=pool)
    assert_expected(report, at_level(case["runtime"], pool.isolation))
    assert report.mutation is None or report.mutation.killed == 0
    assert stray_processes() == []


def test_the_kits_own_test_files_pass_the_static_check() -> None:
    """No false alarm on the model answer, the stub's skeleton or the example submissions."""
    files = [CHAPTER.model_tests, CHAPTER.stub_tests]
    files += sorted((KIT / "tests" / "fixtures" / "submissions").rglob("test_*.py"))
    for path in files:
        if "syntax_error" not in str(path):
            source = path.read_text(encoding="utf-8")
            violations, _ = check_test_source(source, CHAPTER.module, CHAPTER.interface)
            assert violations == [], (path, violations)
