"""``batch``: grade many submission folders, one per student, into a gradebook.

The folders share one warm ``WorkerPool``, and ``jobs`` checks run at once so
that one check's serial stretches (the course tests, the validation runs)
overlap another's mutant runs and every core stays busy. Each student gets a
JSON report (``grader check --json``'s, written whole or not at all) and a row
of the gradebook CSV. A submission that is broken or hostile, or that the
grader cannot grade at all, becomes a ``fail`` row with its one-line problem:
nothing a student submits stops the batch.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from grader.catalog import Chapter
from grader.commands.check import CheckReport, Limits, Verdict, check, run_mutants
from grader.errors import GraderError, describe
from grader.grade import grade
from grader.locate import RefusedSubmission, locate
from grader.output.canvas import canvas_csv, roster_check_csv
from grader.output.check_json import report_to_json
from grader.output.class_report import class_data, class_html, class_json
from grader.output.files import write_atomically
from grader.output.similarity import SIMILARITY_PAGE, similarity_csv, similarity_html
from grader.patching import mutant_sources
from grader.roster import RosterEntry, RosterMatch, match_roster
from grader.sandbox.pool import WorkerPool
from grader.similarity import (
    COURSE_TESTS,
    KIT_FILES,
    MODEL_ANSWER,
    REFERENCE,
    ClassFile,
    Fingerprinter,
    Similarity,
    find_copies,
    text_score,
)
from grader.submission import read_submission

GRADEBOOK = "gradebook.csv"
REPORTS = "students"
BACKUPS = "backups"
SIMILARITY_CSV = "similarity.csv"
CLASS_JSON = "class.json"
CLASS_PAGE = "class.html"
ROSTER_CHECK = "roster-check.csv"
COLUMNS = (
    "student",
    "verdict",
    "grade",
    "course_tests_passed",
    "course_tests_total",
    "mutation_score",
    "killed",
    "mutants",
    "survivors",
    "problem",
    "report",
    "implementation_file",
    "tests_file",
    "flags",
)
"""The gradebook's columns, in order."""

BatchProgress = Callable[[str, int, int], None]
"""Called as ``progress(student, done, total)`` as each submission is graded."""


@dataclass(frozen=True)
class BatchRow:
    """One student's line of the gradebook."""

    student: str
    verdict: Verdict
    grade: float
    course_tests_passed: int
    course_tests_total: int
    mutation_score: float | None
    killed: int | None
    mutants: int | None
    survivors: tuple[str, ...]
    problem: str
    report: str
    implementation_file: str = ""
    """The files graded, relative to the student's folder (empty: none read)."""
    tests_file: str = ""
    flags: tuple[str, ...] = ()
    """``kind~other`` for each flagged similarity pair (``tests~bob``): for staff to look at."""


@dataclass(frozen=True)
class BatchResult:
    rows: tuple[BatchRow, ...]
    gradebook: Path
    reports: Path
    seconds: float
    kept: int = 0
    """Rows of the existing gradebook left as they were (students not graded this time)."""
    backup: Path | None = None
    """Where the replaced gradebook and reports were saved, if anything was replaced."""
    similarity: Similarity | None = None
    """The copies found among the students graded now (``None``: the catalog asks for none)."""
    similarity_seconds: float = 0.0
    roster: RosterMatch | None = None
    """Who the roster and the gradebook do not share (``None``: no roster given)."""
    canvas: Path | None = None

    @property
    def passed(self) -> int:
        return sum(row.verdict == "pass" for row in self.rows)


def student_names(folders: Sequence[Path]) -> list[str]:
    """Each folder's name, the student's name in the gradebook; they must differ."""
    names = [folder.name or folder.resolve().name for folder in folders]
    seen: set[str] = set()
    for name, folder in zip(names, folders, strict=True):
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
) -> BatchResult:
    """Grade every folder; write ``out/students/NAME.json`` and ``out/gradebook.csv``.

    An existing gradebook in ``out`` is merged into, never replaced: a student
    graded now gets their new row in place of the old one, every other row
    stays, new students follow in the order given. Before anything in ``out``
    changes, the old gradebook and the old reports of the students regraded
    are copied under ``out/backups/STAMP/``. The gradebook is rewritten, whole
    or not at all, after each student, so an interrupted batch leaves every
    old row and every new one finished so far.

    Then the files of the students graded now are compared with each other's and the
    kit's (``out/similarity.csv``, ``out/similarity.html``, the gradebook's ``flags``),
    and their figures drawn (``out/class.json``, ``out/class.html``).

    With a ``roster``, every gradebook row is matched to a student id
    (``out/roster-check.csv`` lists who is on one side only) and ``canvas``, if
    given, gets Canvas's grade-import file for ``assignment`` (default: the chapter id).
    """
    started = time.monotonic()
    limits = limits or Limits()
    names = student_names(folders)
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
    gradebook = out / GRADEBOOK
    merged = read_gradebook(gradebook)
    order = [*merged, *(key for key in map(_text, names) if key not in merged)]
    backup = _back_up(out, names, bool(merged))
    rows: dict[str, BatchRow] = {}
    reports: dict[str, CheckReport | None] = {}
    copies = _CopyFinder(chapter, limits) if chapter.similarity is not None else None
    similarity, similarity_seconds = None, 0.0
    with (
        WorkerPool(minimum=limits.isolation) as pool,
        ThreadPoolExecutor(max(1, jobs)) as threads,
        ThreadPoolExecutor(1) as beside,
    ):
        futures = {
            threads.submit(_grade_one, chapter, folder, name, out, limits, pool): name
            for folder, name in zip(folders, names, strict=True)
        }
        folder_of = dict(zip(names, folders, strict=True))

        def record(future: Future[tuple[BatchRow, CheckReport | None]]) -> None:
            row, reports[futures[future]] = future.result()
            rows[futures[future]] = row
            merged[_text(row.student)] = row_cells(row)
            write_atomically(gradebook, _csv_text(merged[k] for k in order if k in merged))

        try:
            for done, future in enumerate(as_completed(futures), start=1):
                record(future)
                name = futures[future]
                if copies is not None:  # while the workers grade the others
                    copies.add(name, folder_of[name], reports[name], pool, beside)
                if progress is not None:
                    progress(name, done, len(futures))
            if copies is not None:
                compared = time.monotonic()
                similarity = copies.compare(names)
                similarity_seconds = round(time.monotonic() - compared, 3)
        except BaseException:  # Ctrl-C: stop the workers so the running checks end at once
            threads.shutdown(wait=False, cancel_futures=True)
            beside.shutdown(wait=False, cancel_futures=True)
            pool.close()
            for future, name in futures.items():  # keep every row finished, whatever the order
                finished = future.done() and not future.cancelled()
                if name not in rows and finished and future.exception() is None:
                    record(future)
            raise
    ordered = tuple(rows[name] for name in names)
    if similarity is not None:
        ordered = tuple(dataclasses.replace(r, flags=similarity.flags(r.student)) for r in ordered)
        merged.update((_text(row.student), row_cells(row)) for row in ordered)
        write_atomically(gradebook, _csv_text(merged[k] for k in order if k in merged))
        write_atomically(out / SIMILARITY_CSV, similarity_csv(similarity))
        write_atomically(out / SIMILARITY_PAGE, similarity_html(chapter.id, similarity))
    in_order = {name: reports[name] for name in names}
    figures = class_data(chapter, {row.student: row.grade for row in ordered}, in_order, similarity)
    write_atomically(out / CLASS_JSON, class_json(figures))
    write_atomically(out / CLASS_PAGE, class_html(figures))
    matched = None
    if roster is not None:
        students = [_untext(key) for key in order if key in merged]
        grades = {_untext(key): _points(cells) for key, cells in merged.items()}
        matched = match_roster(roster, students)
        write_atomically(out / ROSTER_CHECK, roster_check_csv(matched))
        if canvas is not None:
            title = assignment or chapter.id
            write_atomically(canvas, canvas_csv(title, chapter.grade_scale, matched, grades))
    kept = len(merged) - len(ordered)
    seconds = round(time.monotonic() - started, 3)
    return BatchResult(
        ordered,
        gradebook,
        out / REPORTS,
        seconds,
        kept=kept,
        backup=backup,
        similarity=similarity,
        similarity_seconds=similarity_seconds,
        roster=matched,
        canvas=canvas if roster is not None else None,
    )


class _CopyFinder:
    """The class's files as they are graded, fingerprinted at once (the workers are busy with
    the others); the model answer's mutant run starts the first time a test file comes near
    it, beside the grading."""

    def __init__(self, chapter: Chapter, limits: Limits) -> None:
        assert chapter.similarity is not None
        self.chapter, self.limits = chapter, limits
        given = [chapter.stub.read_text("utf-8"), chapter.stub_tests.read_text("utf-8")]
        self.fingerprints = Fingerprinter(given, chapter.similarity)
        self.model_answer = chapter.model_tests.read_text(encoding="utf-8")
        self.files: dict[str, list[ClassFile]] = {}
        self.model_run: Future[dict[str, tuple[str, ...]]] | None = None

    def add(
        self,
        name: str,
        folder: Path,
        report: CheckReport | None,
        pool: WorkerPool,
        beside: ThreadPoolExecutor,
    ) -> None:
        chapter = self.chapter
        try:
            located = locate(chapter, folder)
        except RefusedSubmission:  # graded as a fail already; nothing to compare
            return
        submission = read_submission(located, folder)
        files = self.files[name] = []
        if submission.implementation is not None:
            files.append(ClassFile(name, "implementation", submission.implementation))
        if submission.tests is not None:
            mutation = report.mutation if report is not None else None
            killed_by = {m.id: m.killed_by for m in mutation.mutants} if mutation else None
            files.append(ClassFile(name, "tests", submission.tests, killed_by))
            model = self.fingerprints(self.model_answer)
            score = text_score(
                self.fingerprints(submission.tests), model, self.fingerprints.settings
            )
            if self.model_run is None and score >= self.fingerprints.settings.floor:
                self.model_run = beside.submit(_model_answer_kills, chapter, self.limits, pool)

    def compare(self, names: Sequence[str]) -> Similarity:
        """Every student's files against each other's and the kit's (``grader.similarity``)."""
        files = [file for name in names for file in self.files.get(name, ())]
        reference = self.chapter.reference.read_text("utf-8")
        files.append(ClassFile(REFERENCE, "implementation", reference))
        files.append(ClassFile(MODEL_ANSWER, "tests", self.model_answer))
        course_tests = self.chapter.course_test_file.read_text("utf-8")
        files.append(ClassFile(COURSE_TESTS, "tests", course_tests))
        run = self.model_run
        return find_copies(
            files,
            self.fingerprints,
            len(self.chapter.wheats),
            lambda: None if run is None else run.result(),
        )


def _model_answer_kills(
    chapter: Chapter, limits: Limits, pool: WorkerPool
) -> dict[str, tuple[str, ...]]:
    """Each planted mutant's killers among the model answer's tests."""
    model_answer = chapter.model_tests.read_text(encoding="utf-8")
    with ThreadPoolExecutor(pool.workers + 1) as threads:
        mutation = run_mutants(
            chapter, model_answer, mutant_sources(chapter), limits.student_tests, pool, threads
        )
    return {m.id: m.killed_by for m in mutation.mutants}


def read_gradebook(path: Path) -> dict[str, list[str]]:
    """The rows of an existing gradebook by student cell, in file order; none if it is absent.

    A gradebook of fewer columns (an older kit) gets empty cells for the new ones.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise GraderError(
            f"cannot read the gradebook {path}: {error}: choose another --out"
        ) from error
    lines = list(csv.reader(io.StringIO(text)))
    if not lines or not lines[0] or lines[0][0] != COLUMNS[0]:
        raise GraderError(
            f"{path} is not a gradebook of this kit (its first column is not "
            f"{COLUMNS[0]!r}): choose another --out"
        )
    header = lines[0]
    rows: dict[str, list[str]] = {}
    for line in lines[1:]:
        if line:
            cells = dict(zip(header, line, strict=False))
            rows[line[0]] = [cells.get(column, "") for column in COLUMNS]
    return rows


def _back_up(out: Path, names: Sequence[str], has_gradebook: bool) -> Path | None:
    """Copy the gradebook and the reports about to be replaced to ``out/backups/STAMP/``."""
    replaced = [out / REPORTS / f"{name}.json" for name in names]
    replaced = [path for path in replaced if path.is_file()]
    if not has_gradebook and not replaced:
        return None
    base = out / BACKUPS / time.strftime("%Y%m%d-%H%M%S")
    folder, n = base, 1
    while folder.exists():
        folder, n = base.with_name(f"{base.name}-{n}"), n + 1
    for path in [out / GRADEBOOK, *replaced] if has_gradebook else replaced:
        write_atomically(folder / path.relative_to(out), path.read_text(encoding="utf-8"))
    return folder


def _grade_one(
    chapter: Chapter, folder: Path, name: str, out: Path, limits: Limits, pool: WorkerPool
) -> tuple[BatchRow, CheckReport | None]:
    """One student's row and report; every failure, the kit's included, becomes the row's
    problem (and no report)."""
    try:
        located = locate(chapter, folder)
    except RefusedSubmission as refused:  # the student's to fix, not the grader's failure
        total = len(chapter.course_tests)
        row = BatchRow(name, "fail", 0.0, 0, total, None, None, None, (), refused.message, "")
        return row, None
    try:
        report = check(located, folder, limits, pool=pool)
        path = out / REPORTS / f"{name}.json"
        write_atomically(path, report_to_json(report, chapter))
        return row_of(chapter, name, report, path.relative_to(out).as_posix()), report
    except Exception as error:  # one submission must never stop the batch
        problem = f"not graded: {describe(error)}"
        return BatchRow(name, "fail", 0.0, 0, 0, None, None, None, (), problem, ""), None


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
    )


def problem_of(report: CheckReport) -> str:
    """The one line that says why a report fails: the most basic problem first."""
    if report.verdict == "pass":
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
    return _csv_text(row_cells(row) for row in rows)


def row_cells(row: BatchRow) -> list[str]:
    """One row's cells as the gradebook writes them."""
    return [
        _text(row.student),
        row.verdict,
        f"{row.grade:g}",
        str(row.course_tests_passed),
        str(row.course_tests_total),
        "" if row.mutation_score is None else f"{row.mutation_score:.4f}",
        "" if row.killed is None else str(row.killed),
        "" if row.mutants is None else str(row.mutants),
        " ".join(row.survivors),
        _text(" ".join(row.problem.split())),
        _text(row.report),
        _text(row.implementation_file),
        _text(row.tests_file),
        _text(" ".join(row.flags)),
    ]


def _csv_text(rows: Iterable[list[str]]) -> str:
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    return stream.getvalue()


def _text(value: str) -> str:
    """A text cell a spreadsheet will not run as a formula (a folder named ``=cmd()``)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _untext(cell: str) -> str:
    """The name a gradebook cell holds (``_text`` undone)."""
    defused = cell[:1] == "'" and cell[1:2] in ("=", "+", "-", "@", "\t", "\r")
    return cell[1:] if defused else cell


def _points(cells: Sequence[str]) -> float:
    """A gradebook row's grade (an older row with no grade counts 0)."""
    try:
        return float(cells[COLUMNS.index("grade")])
    except ValueError:
        return 0.0
