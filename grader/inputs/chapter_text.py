"""The chapter's text as the kit ships it: Markdown whose tables come from the catalog.

The prose lives in ``chapter/<file>.md`` (the catalog's ``text``). Its parts
that restate catalog data (the counts and the threshold, the course tests,
the tests students write, the pitfalls) sit between markers::

    <!-- catalog: course-tests -->
    ...made from chapter/catalog.toml...
    <!-- end catalog -->

so that the file reads whole on its own, while the catalog stays the one
source of those facts: ``tools/refresh_chapter.py`` rewrites the blocks from
the catalog, and the kit's tests fail while any block differs from it.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from grader.errors import GraderError
from grader.inputs.catalog import EXTRA_TESTS, Chapter, step_line

BLOCK = re.compile(
    r"(?P<open><!-- catalog: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(?P<close><!-- end catalog -->)",
    re.DOTALL,
)


def _at_a_glance(chapter: Chapter) -> str:
    required = ", ".join(f"{m.id} ({m.title})" for m in chapter.mutants if m.id in chapter.required)
    return (
        f"- **You build:** `{chapter.implementation}`, one module with `RadixTree`, `NodeId`"
        " and `ROOT`\n"
        "  (start from the stub that `grader start` copies into your submission folder).\n"
        f"- **Your code is judged by** {len(chapter.course_tests)} course tests.\n"
        f"- **Your tests are judged by** {len(chapter.mutants)} planted bugs (mutants): write"
        f" the {len(chapter.required_tests)}\n"
        f"  required tests in `{chapter.student_tests}`; they must catch at least"
        f" {chapter.threshold:.0%}\n"
        f"  of the mutants, and always {required}.\n"
    ) + "".join(
        textwrap.fill(
            f"**It needs** {need.id}, {need.title}: {need.uses}. Keep your own "
            f"`{need.implementation}` beside `{chapter.implementation}` (`grader start` never "
            "writes it), or build this chapter on the kit's with `--ref-deps`.",
            width=78,
            initial_indent="- ",
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
        + "\n"
        for need in chapter.needs
    )


def _course_tests(chapter: Chapter) -> str:
    return "".join(
        f"- `{test.name}` ({test.kind})\n"
        f"  - Checks: {_sentence(test.checks)}\n"
        f"  - Why: {_sentence(test.why)}\n"
        for test in chapter.course_tests
    )


def _your_tests(chapter: Chapter) -> str:
    listed = "".join(f"- `{test.name}`: {test.checks}\n" for test in chapter.required_tests)
    required = ", ".join(chapter.required)
    return (
        f"{listed}\nYour tests are graded by mutation: they must catch at least"
        f" {chapter.threshold:.0%} of the {len(chapter.mutants)} planted mutants, and always"
        f" {required}. {EXTRA_TESTS[0].upper()}{EXTRA_TESTS[1:]}.\n"
    )


def _workflow(chapter: Chapter) -> str:
    lines = [(step_line(chapter, step), step.what) for step in chapter.workflow]
    width = max((len(line) for line, _ in lines), default=0)
    body = "".join(f"{line:<{width}}  # {what}\n" for line, what in lines)
    return f"```sh\n{body}```\n"


def _pitfalls(chapter: Chapter) -> str:
    return "".join(
        f"- **{mutant.id}**{' (required)' if mutant.id in chapter.required else ''}:"
        f" {mutant.title}\n"
        f"  - Symptom: {_sentence(mutant.symptom)}\n"
        f"  - Caught by: {', '.join(f'`{name}`' for name in mutant.caught_by)}\n"
        for mutant in chapter.mutants
    )


def _sentence(text: str) -> str:
    return text if text.endswith(".") else f"{text}."


BLOCKS: dict[str, Callable[[Chapter], str]] = {
    "at-a-glance": _at_a_glance,
    "course-tests": _course_tests,
    "your-tests": _your_tests,
    "pitfalls": _pitfalls,
    "workflow": _workflow,
}
"""Each block the chapter may hold, made from the catalog."""


def read_chapter_text(chapter: Chapter) -> str:
    """The chapter's Markdown as shipped; a missing file is a broken kit."""
    try:
        return chapter.text.read_text(encoding="utf-8")
    except OSError as error:
        raise GraderError(f"the kit is broken: cannot read {chapter.text}: {error}") from error


def with_catalog_blocks(chapter: Chapter, text: str) -> str:
    """``text`` with every catalog block made afresh from the catalog."""

    def fresh(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise GraderError(f"the kit is broken: {chapter.text} names no block {name!r}")
        return f"{match['open']}{BLOCKS[name](chapter)}{match['close']}"

    return BLOCK.sub(fresh, text)


def stale_blocks(chapter: Chapter, text: str) -> list[str]:
    """The names of the blocks in ``text`` that differ from what the catalog makes."""
    return [
        match["name"]
        for match in BLOCK.finditer(text)
        if match["name"] not in BLOCKS or match["body"] != BLOCKS[match["name"]](chapter)
    ]


def without_markers(text: str) -> str:
    """``text`` without the block markers, for a reader (the blocks stay)."""
    return BLOCK.sub(lambda match: match["body"], text)
