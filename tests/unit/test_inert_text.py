"""Text from a run is inert in every output: it never becomes a link, an image or markup.

A failure message, an import error and a parametrized test's id are the
student's own text. Each output format is rendered for a report full of
hostile text and read back the way its reader reads it: the job summary with
a CommonMark parser (markdown-it-py, with GitHub's tables and bare-URL links),
JUnit with an XML parser, the HTML page with an HTML parser, Gradescope's
results as JSON. Each must hold the text, and no link, image or element the
kit did not write.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from grader.inputs.catalog import load_chapter
from grader.output.gradescope import gradescope_results
from grader.output.html import mutation_report_html, summary_header
from grader.output.junit import report_to_junit
from grader.output.mutation_report import mutation_report
from grader.output.summary import report_to_markdown
from grader.results.check import (
    CheckReport,
    CourseTestsResult,
    MutantResult,
    MutationResult,
    StudentTestsResult,
)
from grader.sandbox.protocol.status import MutantStatus, TestStatus

CHAPTER = load_chapter()
HOSTILE = (
    "![pixel](https://tracker.example/p.gif) [**PASS, grade 100 of 100**](https://evil.example/)"
    " <img src=https://tracker.example/i.png> <a href='https://evil.example/'>x</a>"
    " https://bare.example/ www.bare.example <https://auto.example/> ``` ` *em* | cell"
)
"""A tracking pixel, a fake pass link, raw HTML, bare and angle-bracket URLs, backticks,
emphasis and a table pipe."""
BENIGN = "assert 1 == 2"


def report(text: str) -> CheckReport:
    """A failing report whose every run-produced field holds ``text``."""
    names = [test.name for test in CHAPTER.course_tests]
    course = CourseTestsResult(
        {name: TestStatus.FAILED for name in names}, {name: text for name in names}, text
    )
    student = StudentTestsResult(False, (text,), (), (f"test_x[{text}]",), 0.0)
    mutants = tuple(
        MutantResult(m.id, m.title, MutantStatus.KILLED, (f"test_x[{text}]",), text)
        for m in CHAPTER.mutants
    )
    mutation = MutationResult(CHAPTER.threshold, CHAPTER.required, mutants)
    return CheckReport(CHAPTER.id, "submission", course, student, mutation, {})


def tokens(markdown: str) -> Iterator[Token]:
    """Every token GitHub-flavoured CommonMark makes of ``markdown``, inline ones included."""
    parser = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "linkify"])
    for token in parser.parse(markdown):
        yield token
        yield from token.children or []


def test_the_job_summary_renders_no_link_image_or_html_of_the_run() -> None:
    hostile = list(tokens(report_to_markdown(CHAPTER, report(HOSTILE))))
    benign = list(tokens(report_to_markdown(CHAPTER, report(BENIGN))))
    live = {"link_open", "image", "html_inline", "html_block", "strong_open", "em_open"}

    def kinds(found: list[Token]) -> Counter[str]:
        return Counter(t.type for t in found if t.type in live)

    assert kinds(hostile) == kinds(benign)
    assert not any(t.type in ("link_open", "image") for t in hostile)
    shown = [t.content for t in hostile if t.type == "code_inline"]
    assert any(HOSTILE in content for content in shown), shown


def test_a_code_span_holds_any_backticks() -> None:
    for text in ("`", "a `b` c", "``` x", "x ``"):
        inline = [
            t for t in tokens(report_to_markdown(CHAPTER, report(text))) if t.type == "code_inline"
        ]
        assert any(t.content == text for t in inline), (text, [t.content for t in inline])


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.urls += [v or "" for k, v in attrs if k in ("href", "src")]


def html_page(text: str) -> str:
    data = report(text)
    return mutation_report_html(mutation_report(CHAPTER, data), "t", summary_header(CHAPTER, data))


def test_the_html_page_gets_no_element_from_the_run() -> None:
    hostile, benign = Elements(), Elements()
    hostile.feed(html_page(HOSTILE))
    benign.feed(html_page(BENIGN))
    assert hostile.tags == benign.tags
    assert not any("example" in url for url in hostile.urls)


def elements(xml: str) -> Counter[str]:
    return Counter(element.tag for element in ET.fromstring(xml).iter())


def test_junit_gets_no_element_from_the_run_and_keeps_the_text() -> None:
    hostile = report_to_junit(CHAPTER, report(HOSTILE))
    assert elements(hostile) == elements(report_to_junit(CHAPTER, report(BENIGN)))
    texts = [e.text or "" for e in ET.fromstring(hostile).iter()]
    texts += [v for e in ET.fromstring(hostile).iter() for v in e.attrib.values()]
    assert any(HOSTILE in text for text in texts)


def outputs(results: Any) -> Iterator[tuple[str | None, str]]:
    yield results.get("output_format"), results.get("output", "")
    for test in results.get("tests", []):
        yield test.get("output_format"), test.get("output", "")


@pytest.mark.parametrize("text", [HOSTILE])
def test_gradescope_shows_the_run_as_plain_text(text: str) -> None:
    """Gradescope renders ``output`` as Markdown or HTML only when told: never here."""
    results = json.loads(json.dumps(gradescope_results(CHAPTER, report(text))))
    shown = list(outputs(results))
    assert all(kind in (None, "text") for kind, _ in shown), shown
    assert results.get("test_output_format") in (None, "text")
    assert any(HOSTILE in output for _, output in shown)
