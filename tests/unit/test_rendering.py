"""Every table and message of ``tdd`` and ``check`` at 60, 80 and 120 columns, piped and on
a terminal: no rich markup reaches the screen raw, and no test name is broken.

Test names are what a student searches their file for, so a name cut in two
(``test_match_splits_insid`` / ``e_an_edge``) or a ``[yellow]…[/]`` left in the
text is a message that cannot be followed.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest
from rich.console import Console

from grader.inputs.catalog import load_chapter
from grader.output.check_json import report_to_dict
from grader.output.gradescope import gradescope_results
from grader.output.html import summary_header
from grader.output.junit import report_to_junit
from grader.output.summary import report_to_markdown
from grader.output.terminal import render_catalog, render_check, render_tdd
from grader.results.check import (
    CheckReport,
    CourseTestsResult,
    MutantResult,
    MutationResult,
    StudentTestsResult,
)
from grader.results.kit import TddResult
from grader.sandbox.protocol.status import MutantStatus, TestStatus

CHAPTER = load_chapter()
LONG = "TestSplitsAndMatchesInsideEdges::test_match_splits_inside_an_edge_and_keeps_the_old_id"
NAMES = (
    "test_split_by_hand",
    "test_match_splits_inside_an_edge",
    "test_an_unlocked_leaf_rejoins_by_its_stamp",
    "test_a_split_below_a_lock_keeps_it_pinned",
    LONG,
    "test_kills_nothing_at_all",
)
MARKUP = re.compile(
    r"\[/\]|\[/?(?:bold|dim|italic|underline|red|green|yellow|white|blue|magenta|cyan)\b[^\]]*\]"
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
WIDTHS = (60, 80, 120)
FAILURE = """tests/test_ds07.py:372: in test_lru_order_follows_last_use
    assert evict(tree, 1) == (3, ["c1", "c2", "c3"])
E   AssertionError: assert (0, []) == (3, ['c1', 'c2', 'c3'])
E   Failing test case: <state machine>
E   state = TreeAgainstNaiveMapAtGranule1()
E   state.evict(n=1)
"""


def a_report(valid: bool = True) -> CheckReport:
    course_names = [t.name for t in CHAPTER.course_tests]
    course = CourseTestsResult(
        {
            n: TestStatus.FAILED if at < 2 else TestStatus.PASSED
            for at, n in enumerate(course_names)
        },
        {n: FAILURE for n in course_names[:2]},
        None,
        {n: 0.5 for n in course_names},
    )
    student = StudentTestsResult(
        valid,
        () if valid else (f"{LONG} fails on the reference, a correct implementation: x",),
        ("test_parent_becomes_evictable",),
        NAMES,
        1.0,
        ("a [bold]note[/] with brackets in it",),
        ("test_parent_becomes_evictable is missing; did you mean test_parent_becomes_evictible?",),
        (f"{LONG} fails on your radix.py: AssertionError: assert [1] == []",),
        {"reference": {name: 2.5 for name in NAMES}},
    )
    mutants = tuple(
        MutantResult(
            m.id,
            m.title,
            MutantStatus.SURVIVED if at % 4 == 3 else MutantStatus.KILLED,
            () if at % 4 == 3 else NAMES[: 1 + at % 5],
        )
        for at, m in enumerate(CHAPTER.mutants)
    )
    mutation = MutationResult(CHAPTER.threshold, CHAPTER.required, mutants)
    return CheckReport(CHAPTER.id, "submission", course, student, mutation, {})


def drawn(width: int, terminal: bool, draw: object) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=terminal, color_system="standard")
    assert callable(draw)
    draw(console)
    return ANSI.sub("", out.getvalue())


DRAWINGS = {
    "check": lambda console: render_check(console, CHAPTER, a_report()),
    "check, tests not valid": lambda console: render_check(console, CHAPTER, a_report(False)),
    "tdd red": lambda console: render_tdd(
        console,
        CHAPTER,
        TddResult(
            "red",
            {name: TestStatus.FAILED for name in NAMES},
            (f"{LONG} passes on the stub: it must fail until the code exists",),
            {name: 3.0 for name in NAMES},
        ),
    ),
    "tdd green": lambda console: render_tdd(
        console,
        CHAPTER,
        TddResult("green", {name: TestStatus.PASSED for name in NAMES}, (), {LONG: 0.2}),
    ),
    "tests": lambda console: render_catalog(console, CHAPTER),
}


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("what", list(DRAWINGS))
def test_no_markup_and_no_broken_name(what: str, width: int, terminal: bool) -> None:
    text = drawn(width, terminal, DRAWINGS[what])
    assert not MARKUP.search(text.replace("a [bold]note[/] with", "")), MARKUP.search(text)
    words = {word.strip(":") for word in re.findall(r"[\w:]+", text)}
    names = NAMES if what.startswith(("check", "tdd")) else [t.name for t in CHAPTER.course_tests]
    for name in names:
        assert name in words, f"{name} is broken or absent at {width} columns"
    if what.startswith("check"):
        for mutant in CHAPTER.mutants:
            assert mutant.id in words


def test_the_note_keeps_a_students_brackets_as_text() -> None:
    """Text from a submission is never read as markup: its brackets are shown as they are."""
    assert "a [bold]note[/] with brackets in it" in drawn(120, True, DRAWINGS["check"])


def test_the_grade_and_the_time_are_explained_in_the_check() -> None:
    text = " ".join(drawn(80, False, DRAWINGS["check"]).split())
    assert "Where the points came from: course tests" in text
    assert "check runs them" in text and "is slow: 2.5 s" in text
    assert "Your tests pass on the reference but not on your radix.py" in text
    assert "did you mean test_parent_becomes_evictible?" in text
    assert "It checks" in text  # the rule a failing course test holds code to


def first_lines(report: CheckReport) -> dict[str, str]:
    """The first line a reader meets in every format of ``report`` (JUnit: after the XML
    declaration; JSON: the ``practice`` key)."""
    report_json = report_to_dict(report, CHAPTER)
    header = summary_header(CHAPTER, report).splitlines()
    return {
        "terminal": drawn(
            200, False, lambda console: render_check(console, CHAPTER, report)
        ).splitlines()[0],
        "json": f"practice: {report_json['practice']}",
        "gradescope": gradescope_results(CHAPTER, report)["output"].splitlines()[0],
        "junit": report_to_junit(CHAPTER, report).splitlines()[1],
        "html": header[1],
        "summary": report_to_markdown(CHAPTER, report).splitlines()[0],
    }


def test_a_check_at_none_says_it_is_practice_first_in_every_format() -> None:
    """Issue 33: a check whose runs had no isolation is practice, and every format opens on
    it; a check at another level never says so."""
    practice = first_lines(replace(a_report(), isolation="none"))
    assert practice.pop("json") == "practice: True"
    for name, line in practice.items():
        assert "Practice check, not a grade of record" in line, (name, line)
    for level in ("uid", "namespaces"):
        graded = first_lines(replace(a_report(), isolation=level))
        assert graded.pop("json") == "practice: False"
        for name, line in graded.items():
            assert "Practice" not in line and "practice" not in line, (name, line)
