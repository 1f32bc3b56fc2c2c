"""``batch``: grade many submission folders, one per student, into a gradebook.

The folders share one warm ``WorkerPool``, and ``jobs`` checks run at once so
that one check's serial stretches (the course tests, the validation runs)
overlap another's mutant runs and every core stays busy. Each student gets a
report (``grader check --json``'s, written whole or not at all, beside it the
same as text and as a small page), a copy of the files graded, and a row of
the gradebook CSV keyed by what decided it (``grader.inputs.provenance``). A
submission that is broken or hostile, or that the grader cannot grade at
all, becomes a ``fail`` row with its one-line problem: nothing a student
submits stops the batch. The class view is then drawn again over the whole
gradebook (``grader.course.class_view``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from grader.commands.check import check
from grader.commands.manifest import graded_files
from grader.commands.resume import KEPT, kept_row
from grader.course.class_view import CopyFinder, rebuild_class
from grader.course.gradebook import (
    COLUMNS,
    GRADEBOOK,
    REPORTS,
    SUBMISSIONS,
    back_up,
    checked_name,
    csv_text,
    read_gradebook,
    row_cells,
    text_cell,
    write_gradebook,
)
from grader.course.overrides import read_overrides
from grader.course.roster import RosterEntry
from grader.course.similarity import KIT_FILES
from grader.errors import GraderError, describe
from grader.grading.grade import grade
from grader.grading.jobs import Limits
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import DependencyProblem
from grader.inputs.locate import RefusedSubmission, locate
from grader.inputs.provenance import result_key
from grader.inputs.submission import SubmissionProblem, read_text_inside
from grader.output.files import TextReport, replace_folder, write_student_report
from grader.results.batch import BatchResult, BatchRow, ClassView, Step
from grader.results.check import CheckReport
from grader.sandbox.confine.folders import open_to_runs
from grader.sandbox.host.pool import WorkerPool, require_isolation
from grader.sandbox.protocol.status import Verdict

__all__ = ["COLUMNS", "grade_batch", "gradebook_csv", "row_of"]

BatchProgress = Callable[[Step], None]
"""Called with each student done, graded or kept, as it is done: a log's line."""


def student_names(folders: Sequence[Path]) -> list[str]:
    """Each folder's name, the student's name in the gradebook; they must differ."""
    names = [folder.name or folder.resolve().name for folder in folders]
    seen: set[str] = set()
    for name, folder in zip(names, folders, strict=True):
        checked_name(name, str(folder))
        if name in seen:
            raise GraderError(f"two submission folders are named {name!r} ({folder}): rename one")
        seen.add(name)
    return names


def grade_batch(
    chapter: Chapter,
    folders: Sequence[Path],
    out: Path,
    limits: Limits | None = None,
    jobs: int = 2,
    progress: BatchProgress | None = None,
    roster: Sequence[RosterEntry] | None = None,
    canvas: Path | None = None,
    assignment: str | None = None,
    names: Sequence[str] | None = None,
    text_report: TextReport | None = None,
    resume: bool = True,
) -> BatchResult:
    """Grade every folder into ``out`` (the layout in ``grader.course.gradebook``).

    With ``resume``, a student whose row in ``out`` was graded from the files and kit it
    would be graded from now, at this run's isolation or a stronger one, keeps that row
    and is not graded again (``grader.commands.resume``): a stopped batch run again
    grades only the rest.

    ``names`` are the students' names (default: each folder's name). An
    existing gradebook in ``out`` is merged into, never replaced: a student
    graded now gets their new row in place of the old one, every other row
    stays, new students follow in the order given. Before anything in ``out``
    changes, the old gradebook and the old reports of the students regraded
    are copied under ``out/backups/STAMP/``. The gradebook is rewritten, whole
    or not at all, after each student, so an interrupted batch leaves every
    old row and every new one finished so far.

    Then the whole class in ``out``, earlier rows included, is compared and
    drawn (``class_view.rebuild_class``): copies, figures, and with a
    ``roster`` the roster check and, if ``canvas`` is given, Canvas's
    grade-import file for ``assignment`` (default: the chapter id).
    """
    started = time.monotonic()
    limits = limits or Limits()
    names = list(names) if names is not None else student_names(folders)
    _check_class(chapter, names)
    read_overrides(out, chapter.grade_scale)  # one that does not hold up stops us before grading
    gradebook = out / GRADEBOOK
    merged = read_gradebook(gradebook)
    order = [*merged, *(key for key in map(text_cell, names) if key not in merged)]
    kept = _kept_rows(chapter, folders, names, out, merged, limits) if resume else {}
    steps = _Steps(len(names), progress)
    for row in kept.values():
        steps(row, None, KEPT)
    backup = back_up(out, [name for name in names if name not in kept], bool(merged))

    def draw(pool: WorkerPool, copies: CopyFinder | None) -> ClassView:
        return rebuild_class(chapter, out, limits, lambda: pool, copies, roster, canvas, assignment)

    submissions = [
        (folder, name) for folder, name in zip(folders, names, strict=True) if name not in kept
    ]
    rows, view = _grade_all(
        chapter, submissions, out, limits, jobs, steps, text_report, (merged, order), draw
    )
    rows |= kept
    return _result(out, [rows[name] for name in names], view, backup, started, tuple(kept))


def _kept_rows(
    chapter: Chapter,
    folders: Sequence[Path],
    names: Sequence[str],
    out: Path,
    merged: dict[str, list[str]],
    limits: Limits,
) -> dict[str, BatchRow]:
    """The rows of ``out`` that need no grading again (``grader.commands.resume``)."""
    level = require_isolation(limits.isolation)
    kept = {}
    for folder, name in zip(folders, names, strict=True):
        cells = merged.get(text_cell(name))
        try:
            row = kept_row(chapter, folder, name, out, cells, limits, level, row_of)
        except Exception:  # whatever the folder holds, it is graded again, never a stop
            row = None
        if row is not None:
            kept[name] = row
    return kept


class _Steps:
    """Counts the students done and hands each to ``progress`` as a ``Step``."""

    def __init__(self, total: int, progress: BatchProgress | None) -> None:
        self.total, self.done, self.progress = total, 0, progress
        self.lock = threading.Lock()

    def __call__(self, row: BatchRow, seconds: float | None, outcome: str = "") -> None:
        with self.lock:
            self.done += 1
            if self.progress is not None:
                said = outcome or f"{row.verdict}, {row.grade:g} points"
                self.progress(Step(self.done, self.total, row.student, said, seconds))


def _result(
    out: Path,
    rows: Sequence[BatchRow],
    view: ClassView,
    backup: Path | None,
    started: float,
    resumed: tuple[str, ...] = (),
) -> BatchResult:
    """The batch's result: the rows graded (flagged as the class view found), and the class."""
    gradebook = out / GRADEBOOK
    flagged = read_gradebook(gradebook)
    ordered = tuple(rows)
    if view.similarity is not None:
        ordered = tuple(replace(row, flags=view.similarity.flags(row.student)) for row in ordered)
    seconds = round(time.monotonic() - started, 3)
    return BatchResult(
        ordered,
        gradebook,
        out / REPORTS,
        seconds,
        kept=len(flagged) - len(ordered),
        backup=backup,
        similarity=view.similarity,
        similarity_seconds=view.similarity_seconds,
        roster=view.roster,
        canvas=view.canvas,
        students=len(flagged),
        resumed=resumed,
        overrides=view.overrides,
    )


def _check_class(chapter: Chapter, names: Sequence[str]) -> None:
    """Raise ``GraderError`` for a class this kit cannot grade: a name no gradebook can hold,
    a student edition with no model answer, a folder named as the kit's own file."""
    for name in names:
        checked_name(name, "a student of the class")
    if chapter.similarity is not None and not chapter.model_tests.is_file():
        raise GraderError(
            f"this kit has no model answer ({chapter.model_tests.name}): it is the student "
            "edition; grade a class with the staff edition (the kit's repository)"
        )
    taken = sorted(KIT_FILES & set(names)) if chapter.similarity else []
    if taken:
        raise GraderError(
            f"a submission folder is named {taken[0]!r}, the name similarity.csv gives the "
            "kit's own file: rename the folder"
        )


def _grade_all(
    chapter: Chapter,
    submissions: Sequence[tuple[Path, str]],
    out: Path,
    limits: Limits,
    jobs: int,
    progress: Callable[[BatchRow, float | None], None],
    text_report: TextReport | None,
    gradebook_rows: tuple[dict[str, list[str]], list[str]],
    draw: Callable[[WorkerPool, CopyFinder | None], ClassView],
) -> tuple[dict[str, BatchRow], ClassView]:
    """Grade each (folder, name) of ``submissions`` on one warm pool, ``jobs`` at a time,
    rewriting the gradebook (``gradebook_rows``: its rows, and their order) after each; then
    draw the class. On Ctrl-C, every row finished is kept before the workers stop."""
    merged, order = gradebook_rows
    gradebook = out / GRADEBOOK
    rows: dict[str, BatchRow] = {}
    copies = CopyFinder(chapter, limits) if chapter.similarity is not None else None
    with (
        WorkerPool(minimum=limits.isolation) as pool,
        ThreadPoolExecutor(max(1, jobs)) as threads,
        ThreadPoolExecutor(1) as beside,
    ):
        if pool.isolation == "uid":
            _keep_the_class_from_runs([out, *(folder for folder, _ in submissions)])
        futures = {
            threads.submit(_grade_one, chapter, folder, name, out, limits, pool, text_report): name
            for folder, name in submissions
        }

        def record(future: Future[tuple[BatchRow, CheckReport | None, Kept]]) -> None:
            row, report, kept = future.result()
            rows[futures[future]] = row
            merged[text_cell(row.student)] = row_cells(row)
            write_gradebook(gradebook, (merged[k] for k in order if k in merged))
            if copies is not None:  # while the workers grade the others
                copies.add(row.student, *kept, report, (pool, beside))
            progress(row, report.timings.get("total") if report is not None else None)

        try:
            for future in as_completed(futures):
                record(future)
            view = draw(pool, copies)
        except BaseException:  # Ctrl-C: stop the workers so the running checks end at once
            threads.shutdown(wait=False, cancel_futures=True)
            beside.shutdown(wait=False, cancel_futures=True)
            pool.close()
            for future, name in futures.items():  # keep every row finished, whatever the order
                finished = future.done() and not future.cancelled()
                if name not in rows and finished and future.exception() is None:
                    record(future)
            raise
    return rows, view


Kept = tuple[str | None, str | None]
"""The texts of a student's two files as graded (``None``: not read)."""


def _grade_one(
    chapter: Chapter,
    folder: Path,
    name: str,
    out: Path,
    limits: Limits,
    pool: WorkerPool,
    text_report: TextReport | None = None,
) -> tuple[BatchRow, CheckReport | None, Kept]:
    """One student's row, report and graded files; every failure, the kit's included,
    becomes the row's problem (and no report)."""
    settings = limits.settings()
    try:
        located = locate(chapter, folder)
    except RefusedSubmission as refused:  # the student's to fix, not the grader's failure
        total = len(chapter.course_tests)
        key = result_key(chapter, graded_files(chapter, folder), settings, pool.isolation)
        row = BatchRow(
            name, Verdict.FAIL, 0.0, 0, total, None, None, None, (), refused.message, "",
            graded_at=_now(), key=key.digest, isolation=pool.isolation,
        )  # fmt: skip
        return row, None, (None, None)
    try:
        report = check(located, folder, limits, pool=pool, compare_copies=True)
        path = out / REPORTS / f"{name}.json"
        kept = _keep_files(out / SUBMISSIONS / name, report, folder)
        write_student_report(chapter, report, path, text_report)
        return row_of(chapter, name, report, path.relative_to(out).as_posix()), report, kept
    except DependencyProblem as missing:  # nothing to run the student's code with: a fail
        total = len(chapter.course_tests)
        key = result_key(chapter, graded_files(chapter, folder), settings, pool.isolation)
        row = BatchRow(
            name, Verdict.FAIL, 0.0, 0, total, None, None, None, (), missing.message, "",
            graded_at=_now(), key=key.digest, isolation=pool.isolation,
        )  # fmt: skip
        return row, None, (None, None)
    except Exception as error:  # one submission must never stop the batch
        problem = f"not graded: {describe(error)}"
        key = result_key(chapter, {"not graded": problem}, settings, pool.isolation)
        row = BatchRow(
            name, Verdict.FAIL, 0.0, 0, 0, None, None, None, (), problem, "",
            graded_at=_now(), key=key.digest, isolation=pool.isolation,
        )  # fmt: skip
        return row, None, (None, None)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _keep_the_class_from_runs(folders: list[Path]) -> None:
    """At ``uid`` runs are kept from files by permissions alone: the class's submissions and
    the out folder (every report, every kept copy) must be closed to other users, or a
    student's run could read a classmate's code. ``GraderError`` if one is open."""
    opened = sorted(set(map(str, open_to_runs(folders))))
    if opened:
        raise GraderError(
            f"runs here are kept apart by their users alone (isolation 'uid'), and other users "
            f"can enter {', '.join(opened)}: a student's run could read a classmate's files; "
            f"close them (chmod 700 each, or a folder above it), or grade with namespaces "
            "(CAP_SYS_ADMIN); nothing was graded"
        )


def _keep_files(copy: Path, report: CheckReport, folder: Path) -> Kept:
    """Copy the files ``report`` graded from ``folder`` to ``copy``, at the same places (the
    student's own copy of each needed module too), so that the class can be compared,
    replayed and regraded from ``out`` alone (an earlier copy is replaced whole: a file left
    from it could make two candidates)."""
    kept: dict[str, str] = {}
    texts: list[str | None] = []
    for label in ("implementation", "tests"):
        relative = report.files.get(label)
        text = None
        if relative is not None:
            try:
                text = read_text_inside(folder, folder / relative)
            except SubmissionProblem:
                text = None
        if text is not None and relative is not None:
            kept[relative] = text
        texts.append(text)
    for use in report.dependencies:  # the student's own copy of a needed module, for a replay
        if use.used == "submission" and use.file is not None:
            with contextlib.suppress(SubmissionProblem):
                kept[use.file] = read_text_inside(folder, folder / use.file)
    replace_folder(copy, kept)
    return texts[0], texts[1]


def row_of(chapter: Chapter, name: str, report: CheckReport, path: str) -> BatchRow:
    mutation = report.mutation
    return BatchRow(
        student=name,
        verdict=report.verdict,
        grade=grade(chapter, report).points,
        course_tests_passed=report.course_tests.passed,
        course_tests_total=report.course_tests.total,
        mutation_score=mutation.score if mutation else None,
        killed=mutation.killed if mutation else None,
        mutants=mutation.total if mutation else None,
        survivors=tuple(m.id for m in mutation.survivors) if mutation else (),
        problem=problem_of(report),
        report=path,
        implementation_file=report.files.get("implementation") or "",
        tests_file=report.files.get("tests") or "",
        graded_at=report.graded_at,
        key=report.key.digest if report.key is not None else "",
        isolation=report.isolation,
    )


def problem_of(report: CheckReport) -> str:
    """The one line that says why a report fails: the most basic problem first."""
    if report.verdict == Verdict.PASS:
        return ""
    student = report.student_tests
    if report.course_tests.problem:
        return report.course_tests.problem
    if not student.valid:
        if student.problems:
            return student.problems[0]
        return f"missing required test {', '.join(student.missing)}"
    return "; ".join(report.fail_reasons())


def gradebook_csv(rows: Sequence[BatchRow]) -> str:
    """The gradebook as CSV text, one row per student, in ``COLUMNS`` order."""
    return csv_text(row_cells(row) for row in rows)
