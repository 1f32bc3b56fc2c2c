"""Reports in the formats other tools read, one module per format.

- ``gradescope``: Gradescope's ``results.json``, scored by ``points``;
- ``junit``: JUnit XML, which every CI shows natively;
- ``mutation_report``: the mutation testing report format (schemaVersion 2)
  of Stryker and others, and ``html``: that report in its viewer, one page;
- ``summary``: the Markdown of a GitHub Actions job summary;
- ``classroom``: the result GitHub Classroom's autograding reporter reads.

``wording`` holds the sentences they share. Each format is a pure function of
the chapter and the ``CheckReport``; ``write_reports`` writes the ones asked for.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.catalog import Chapter
from grader.commands.check import CheckReport
from grader.output.classroom import classroom_encoded
from grader.output.gradescope import gradescope_json
from grader.output.html import mutation_report_html, summary_header
from grader.output.junit import report_to_junit
from grader.output.mutation_report import mutation_report, mutation_report_json

TitleChoice = Literal["catalog", "show", "hide"]


@dataclass(frozen=True)
class ReportFiles:
    """Where to write each format; ``None`` skips it."""

    gradescope: Path | None = None
    junit: Path | None = None
    mutation_report: Path | None = None
    html: Path | None = None
    classroom: Path | None = None


def with_mutant_titles(chapter: Chapter, choice: TitleChoice) -> Chapter:
    """``chapter`` with mutant titles shown or hidden, or as its catalog says."""
    if choice == "catalog":
        return chapter
    return dataclasses.replace(chapter, show_mutant_titles=choice == "show")


def write_reports(chapter: Chapter, report: CheckReport, files: ReportFiles) -> None:
    """Write each format ``files`` names, each file whole or not at all."""
    if files.gradescope is not None:
        write_atomically(files.gradescope, gradescope_json(chapter, report))
    if files.junit is not None:
        write_atomically(files.junit, report_to_junit(chapter, report))
    if files.classroom is not None:
        write_atomically(files.classroom, classroom_encoded(chapter, report))
    if files.mutation_report is None and files.html is None:
        return
    data = mutation_report(chapter, report)  # one report for both: it patches every mutant
    if files.mutation_report is not None:
        write_atomically(files.mutation_report, mutation_report_json(data))
    if files.html is not None:
        header = summary_header(chapter, report)
        page = mutation_report_html(data, f"{chapter.id} mutation report", header)
        write_atomically(files.html, page)


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
