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
import io
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from grader.catalog import Chapter
from grader.commands.check import CheckReport, Limits, Verdict, check
from grader.errors import GraderError, describe
from grader.grade import grade
from grader.locate import AmbiguousSubmission, locate
from grader.output.check_json import report_to_json
from grader.output.files import write_atomically
from grader.sandbox.pool import WorkerPool

GRADEBOOK = "gradebook.csv"
REPORTS = "students"
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


@dataclass(frozen=True)
class BatchResult:
    rows: tuple[BatchRow, ...]
    gradebook: Path
    reports: Path
    seconds: float

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
) -> BatchResult:
    """Grade every folder; write ``out/students/NAME.json`` and ``out/gradebook.csv``."""
    started = time.monotonic()
    limits = limits or Limits()
    names = student_names(folders)
    rows: dict[str, BatchRow] = {}
    with WorkerPool() as pool, ThreadPoolExecutor(max(1, jobs)) as threads:
        futures = {
            threads.submit(_grade_one, chapter, folder, name, out, limits, pool): name
            for folder, name in zip(folders, names, strict=True)
        }
        try:
            for done, future in enumerate(as_completed(futures), start=1):
                rows[futures[future]] = future.result()
                if progress is not None:
                    progress(futures[future], done, len(futures))
        except BaseException:  # Ctrl-C: stop the workers so the running checks end at once
            threads.shutdown(wait=False, cancel_futures=True)
            pool.close()
            raise
    ordered = tuple(rows[name] for name in names)
    gradebook = out / GRADEBOOK
    write_atomically(gradebook, gradebook_csv(ordered))
    return BatchResult(ordered, gradebook, out / REPORTS, round(time.monotonic() - started, 3))


def _grade_one(
    chapter: Chapter, folder: Path, name: str, out: Path, limits: Limits, pool: WorkerPool
) -> BatchRow:
    """One student's row; every failure, the kit's included, becomes the row's problem."""
    try:
        located = locate(chapter, folder)
    except AmbiguousSubmission as refused:  # the student's to fix, not the grader's failure
        total = len(chapter.course_tests)
        return BatchRow(name, "fail", 0.0, 0, total, None, None, None, (), refused.message, "")
    try:
        report = check(located, folder, limits, pool=pool)
        path = out / REPORTS / f"{name}.json"
        write_atomically(path, report_to_json(report, chapter))
        return row_of(chapter, name, report, path.relative_to(out).as_posix())
    except Exception as error:  # one submission must never stop the batch
        message = describe(error)
        return BatchRow(name, "fail", 0.0, 0, 0, None, None, None, (), f"not graded: {message}", "")


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
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(
            [
                _text(row.student),
                row.verdict,
                f"{row.grade:g}",
                row.course_tests_passed,
                row.course_tests_total,
                "" if row.mutation_score is None else f"{row.mutation_score:.4f}",
                "" if row.killed is None else row.killed,
                "" if row.mutants is None else row.mutants,
                " ".join(row.survivors),
                _text(" ".join(row.problem.split())),
                _text(row.report),
                _text(row.implementation_file),
                _text(row.tests_file),
            ]
        )
    return stream.getvalue()


def _text(value: str) -> str:
    """A text cell a spreadsheet will not run as a formula (a folder named ``=cmd()``)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
