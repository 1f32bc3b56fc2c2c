"""Which rows of a graded class a batch may keep instead of grading them again (resume).

A batch stopped part way (a killed shard, Ctrl-C) has written every row it
finished. Run again into the same ``--out``, it keeps a student's row only if
it can show that grading now would read the very inputs that row was graded
from: the row's key (``grader.inputs.provenance``) must be the key of the student's
files as they are now, of the kit installed now and of this run's settings,
at the isolation this run gets or a stronger one. The gradebook and the
report are data to check, never trusted: the row must be the one its report
gives, the report's own key the row's, and the copy of the files kept under
``submissions/NAME/`` the files graded. Anything else (no key, an unreadable
report, a cell that disagrees) is graded again. ``--no-resume`` grades all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from grader.commands.check import graded_inputs
from grader.commands.manifest import graded_files
from grader.course.class_view import load_report, stored_files
from grader.course.gradebook import COLUMNS, DERIVED_COLUMNS, REPORTS, cell, row_cells, text_cell
from grader.grading.jobs import Limits
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import DependencyProblem, resolve
from grader.inputs.locate import RefusedSubmission, locate
from grader.inputs.provenance import result_key
from grader.inputs.submission import read_submission
from grader.results.batch import BatchRow
from grader.results.check import CheckReport
from grader.sandbox.levels import LEVELS, IsolationLevel, level_at_least
from grader.sandbox.protocol.status import Verdict

RowOf = Callable[[Chapter, str, CheckReport, str], BatchRow]
"""How a report becomes its gradebook row (``grader.commands.batch.row_of``)."""
KEPT = "kept: graded before from the same files and kit (--no-resume grades it again)"
"""What a log says of a row kept."""


def kept_row(
    chapter: Chapter,
    folder: Path,
    name: str,
    out: Path,
    cells: Sequence[str] | None,
    limits: Limits,
    level: IsolationLevel,
    row_of: RowOf,
) -> BatchRow | None:
    """The row of ``name`` in ``out`` (its ``cells``) if it may be kept (module docstring),
    else ``None``: grade the student again."""
    if cells is None or len(cells) != len(COLUMNS) or not cell(cells, "key"):
        return None
    stored = cell(cells, "key")
    settings = limits.settings()
    levels = [each for each in LEVELS if level_at_least(each, level)]

    def digests(files: dict[str, str | None], of: Chapter = chapter) -> set[str]:
        return {result_key(of, files, settings, each).digest for each in levels}

    try:
        located = locate(chapter, folder)
    except RefusedSubmission as refused:
        return _failed(
            chapter, name, cells, refused.message, digests(graded_files(chapter, folder))
        )
    submission = read_submission(located, folder)
    try:
        resolved = resolve(located, folder, submission.implementation, limits.ref_deps)
    except DependencyProblem as missing:
        return _failed(
            chapter, name, cells, missing.message, digests(graded_files(chapter, folder))
        )
    if stored not in digests(graded_inputs(located, submission, resolved), located):
        return None
    path = f"{REPORTS}/{name}.json"
    if cell(cells, "report") != text_cell(path):  # never read a report from elsewhere
        return None
    report = load_report(out, cells)
    if report is None or report.key is None or report.key.digest != stored:
        return None
    if not all((out / REPORTS / f"{name}{form}").is_file() for form in (".json", ".html")):
        return None
    if stored_files(out, cells) != (submission.implementation, submission.tests):
        return None
    row = row_of(chapter, name, report, path)
    return row if _same(row, cells) else None


def _failed(
    chapter: Chapter, name: str, cells: Sequence[str], problem: str, digests: set[str]
) -> BatchRow | None:
    """The row of a submission that fails before any run (refused, a module missing), as
    batch writes it, if ``cells`` are that row under one of ``digests``."""
    if cell(cells, "key") not in digests:
        return None
    row = BatchRow(
        name, Verdict.FAIL, 0.0, 0, len(chapter.course_tests), None, None, None, (), problem, "",
        graded_at=cell(cells, "graded_at"), key=cell(cells, "key"),
        isolation=cell(cells, "isolation"),  # the key holds the level: the digests' own
    )  # fmt: skip
    return row if _same(row, cells) else None


def _same(row: BatchRow, cells: Sequence[str]) -> bool:
    """Whether ``cells`` are ``row``'s, the cells drawn over the class aside."""
    mine = row_cells(row)
    return all(
        cell(mine, column) == cell(cells, column)
        for column in COLUMNS
        if column not in DERIVED_COLUMNS
    )
