"""The one writer of report files: every file the kit writes about a result is written here.

Formats are pure functions of a result (one module each):

- ``check_json``: the check's JSON report; ``audit``: the audit's;
- ``gradescope``: Gradescope's ``results.json``, scored by ``points``;
- ``junit``: JUnit XML, which every CI shows natively;
- ``mutation_report``: the mutation testing report format (schemaVersion 2)
  of Stryker and others, and ``html``: that report in its viewer, one page;
- ``summary``: the Markdown of a GitHub Actions job summary;
- ``classroom``: the result GitHub Classroom's autograding reporter reads.

``write_reports`` takes a result and the files asked for (``ReportFiles``) and
writes each, whole or not at all (``write_atomically``); the command line and the
Gradescope entry point call it. A graded class's folder (``grader.course.gradebook``) is
written through the functions below it: a student's report, the copy of the
files graded, copies between folders, and text already drawn (the gradebook's
CSV, the class pages, a refusal's ``results.json``). No other module opens a
file for writing, replaces or copies one (``tests/test_layout.py`` holds it to
that, naming the few that write what is no report).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from grader.grading.witness import hand_back
from grader.inputs.catalog import Chapter
from grader.output.audit import audit_mutation_report_json, audit_to_json
from grader.output.check_json import report_to_json
from grader.output.classroom import classroom_encoded
from grader.output.gradescope import gradescope_json
from grader.output.html import mutation_report_html, student_page, summary_header
from grader.output.junit import report_to_junit
from grader.output.mutation_report import mutation_report, mutation_report_json
from grader.output.summary import SUMMARY_VARIABLE, report_to_markdown
from grader.results.audit import AuditReport
from grader.results.check import CheckReport

TitleChoice = Literal["catalog", "show", "hide"]
TextReport = Callable[[Chapter, CheckReport], str]
"""The report as the terminal shows it, as plain text (drawn by the entry point)."""


@dataclass(frozen=True)
class ReportFiles:
    """Where to write each form of a result; ``None`` (or ``False``) skips it."""

    gradescope: Path | None = None
    """Gradescope's ``results.json`` (a check)."""
    junit: Path | None = None
    """JUnit XML (a check)."""
    mutation_report: Path | None = None
    """The mutation testing report (a check or an audit)."""
    html: Path | None = None
    """The mutation report as a page (a check)."""
    classroom: Path | None = None
    """GitHub Classroom's encoded result (a check)."""
    json: Path | None = None
    """The JSON report (a check or an audit)."""
    step_summary: bool = False
    """Append the Markdown summary to ``$GITHUB_STEP_SUMMARY`` when it is set (a check)."""
    gradescope_extra: Mapping[str, Any] | None = None
    """Extra data for Gradescope's file (the witness tier shown, from the entry point)."""


def with_mutant_titles(chapter: Chapter, choice: TitleChoice) -> Chapter:
    """``chapter`` with mutant titles shown or hidden, or as its catalog says."""
    if choice == "catalog":
        return chapter
    return dataclasses.replace(chapter, show_mutant_titles=choice == "show")


def write_reports(chapter: Chapter, result: CheckReport | AuditReport, files: ReportFiles) -> None:
    """Write each file ``files`` names for ``result``, each whole or not at all."""
    if isinstance(result, AuditReport):
        if files.json is not None:
            write_atomically(files.json, audit_to_json(result))
        if files.mutation_report is not None:
            write_atomically(files.mutation_report, audit_mutation_report_json(result))
        return
    if files.json is not None:
        write_atomically(files.json, report_to_json(result, chapter))
    if files.gradescope is not None:
        extra = dict(files.gradescope_extra) if files.gradescope_extra is not None else None
        write_atomically(files.gradescope, gradescope_json(chapter, result, extra))
    if files.junit is not None:
        write_atomically(files.junit, report_to_junit(chapter, result))
    if files.classroom is not None:
        write_atomically(files.classroom, classroom_encoded(chapter, result))
    if files.mutation_report is not None or files.html is not None:
        _write_mutation_reports(chapter, result, files.mutation_report, files.html)
    if files.step_summary:
        append_step_summary(chapter, result)


def _write_mutation_reports(
    chapter: Chapter, report: CheckReport, data_file: Path | None, page: Path | None
) -> None:
    data = mutation_report(chapter, report)  # one report for both: it patches every mutant
    if data_file is not None:
        write_atomically(data_file, mutation_report_json(data))
    if page is not None:
        header = summary_header(chapter, report)
        html = mutation_report_html(data, f"{chapter.id} mutation report", header)
        write_atomically(page, html)


def append_step_summary(
    chapter: Chapter, report: CheckReport, environ: Mapping[str, str] = os.environ
) -> Path | None:
    """Append the summary to ``$GITHUB_STEP_SUMMARY`` when it is set (on GitHub Actions).

    Appending, not replacing, is the convention: other steps' summaries stay.
    Returns the file written, or ``None`` off GitHub Actions.
    """
    target = environ.get(SUMMARY_VARIABLE)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(report_to_markdown(chapter, report))
    return path


STAFF_ONLY_TEXT = ".staff-only.txt"
"""The suffix of a graded student's report at the staff's tier: not to hand back."""


def write_student_report(
    chapter: Chapter, report: CheckReport, path: Path, text_report: TextReport | None
) -> None:
    """A student's report in a graded class: ``path`` (JSON, the staff's record) and beside it,
    to hand back, ``.html`` and, given ``text_report``, ``.txt`` (as the terminal shows it) at
    the tier students are given (``witness.hand_back``); the text at the staff's tier goes to
    ``NAME.staff-only.txt``."""
    student = hand_back(chapter)
    write_atomically(path, report_to_json(report, chapter))
    write_atomically(path.with_suffix(".html"), student_page(student, report))
    if text_report is not None:
        write_atomically(path.with_suffix(".txt"), text_report(student, report))
        write_atomically(path.with_suffix(STAFF_ONLY_TEXT), text_report(chapter, report))


def replace_folder(folder: Path, texts: Mapping[str, str]) -> None:
    """``folder`` made anew holding ``texts`` (relative path to text): an earlier copy is
    replaced whole, so nothing of it is left beside the new files."""
    remove_folder(folder)
    folder.mkdir(parents=True)
    for relative, text in texts.items():
        write_atomically(folder / relative, text)


def remove_folder(folder: Path) -> None:
    """``folder`` and everything in it gone, if it is there."""
    if folder.is_dir():
        shutil.rmtree(folder)


def copy_files(pairs: Iterable[tuple[Path, Path]]) -> None:
    """Copy each ``source`` text file to its ``target``; a missing source removes the target."""
    for source, target in pairs:
        if source.is_file():
            write_atomically(target, source.read_text(encoding="utf-8"))
        elif target.is_file():
            target.unlink()


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so no reader sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".partial"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
