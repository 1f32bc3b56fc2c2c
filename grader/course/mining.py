"""The class's own bugs as mutants: every valid test file of a graded class on every real bug.

A graded class (``grader batch``'s ``--out``) holds real bugs: each student's
``radix.py`` that fails at least one course test. Every valid test file of
the class runs against every one of them (all pairs), in the sandbox batch
uses, each run built as a mutant's run is (``student_tests_job``, stopped at
its first failure, a timeout confirmed alone) but with the call bound of a
student's own tree; and the kit's witness search runs on each real bug
(``grader.course.mined_witness``). ``grader.course.mined_bugs`` then groups
and ranks what came back.

What is read is checked first. A row of the gradebook is mined only if its
report's key is the row's and the digest of the copy of the files kept under
``submissions/NAME/`` is the key's submission part: the files are the ones
graded (a kit changed since is no reason to refuse them: every run is made
again here, by the kit installed now). Each run's result is kept in
the grader's result cache (``grader.grading.result_cache``): signed with the
grader user's own secret, keyed by the kit, both files, the limit and the
isolation the runs get, so a rerun (a stopped mine, a shard's, a mine after
more students were graded) takes every finished run again and nothing a
student could have written. Nothing here changes a grade.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.course.class_view import load_report, stored_files, stored_modules
from grader.course.gradebook import GRADEBOOK, cell, read_gradebook, untext
from grader.course.mined_witness import probe_job, witness_from_run
from grader.errors import GraderError
from grader.grading.jobs import Limits, mutant_limit, student_tests_job
from grader.grading.result_cache import ResultCache, content_key, kit_fingerprint
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import Sources
from grader.inputs.provenance import submission_digest
from grader.results.check import CheckReport
from grader.results.mining import CellStatus, MinedWitness
from grader.sandbox.confine import folders
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.protocol.status import MutantStatus, TestStatus, is_kill, mutant_status


@dataclass(frozen=True)
class Student:
    """What the class folder holds of one student, checked (``read_class``)."""

    name: str
    report: CheckReport
    implementation: str | None
    tests: str | None
    dependencies: Sources
    """Each module the student's tree ran with, as it was graded."""

    @property
    def failed(self) -> tuple[str, ...]:
        """The course tests the student's tree fails."""
        results = self.report.course_tests.results
        return tuple(name for name, status in results.items() if status != TestStatus.PASSED)


@dataclass(frozen=True)
class StoredCell:
    """A test file's run on a real bug, as the result cache keeps it."""

    status: str
    by: str
    isolation: str


@dataclass(frozen=True)
class StoredWitness:
    """A witness search's outcome, as the result cache keeps it (``granule`` 0: none)."""

    granule: int
    calls: tuple[dict[str, Any], ...]
    why: str
    isolation: str


Matrix = dict[tuple[str, str], tuple[CellStatus, str]]
"""Each cell by (test file's owner, bug's owner): its status and first failing test."""
Witnesses = dict[str, tuple[MinedWitness | None, str]]
"""Each bug's witness (or ``None`` and why), by its owner."""
Progress = Callable[[str, str], None]
"""Called with a student's name and what was done for them, as each is done."""


def read_class(chapter: Chapter, out: Path) -> tuple[list[Student], list[tuple[str, str]]]:
    """Every student of the class in ``out`` whose row, report and kept files hold up, and
    the others with why (module docstring)."""
    rows = read_gradebook(out / GRADEBOOK)
    if not rows:
        raise GraderError(f"{out} holds no {GRADEBOOK}: pass the --out folder of a batch")
    students, left_out = [], []
    for key, cells in rows.items():
        name = untext(key)
        student, why = _checked_student(chapter, out, name, cells)
        if student is not None:
            students.append(student)
        elif why:
            left_out.append((name, why))
    return students, left_out


def _checked_student(
    chapter: Chapter, out: Path, name: str, cells: Sequence[str]
) -> tuple[Student | None, str]:
    """The student of a gradebook row if its report and kept files are the ones graded;
    else ``None`` and why (empty: a row with nothing to mine, a fail before any run)."""
    report = load_report(out, cells)
    if report is None or report.key is None:
        return None, ""
    if report.key.digest != cell(cells, "key"):
        return None, "its report is not the one its gradebook row was graded from"
    implementation, tests = stored_files(out, cells)
    modules = stored_modules(out, name, report)
    kit = {need.module: need.reference.read_text(encoding="utf-8") for need in chapter.needs}
    sources = []
    for use in report.dependencies:
        text = modules.get(use.file or "") if use.used == "submission" else kit.get(use.module)
        if text is None:
            return None, f"the copy of {use.file or use.module} it was graded with is gone"
        sources.append((use.module, text))
    graded: dict[str, str | None] = {
        "implementation": untext(cell(cells, "implementation_file")) or chapter.implementation,
        "implementation_text": implementation,
        "tests": untext(cell(cells, "tests_file")) or chapter.student_tests,
        "tests_text": tests,
    }
    graded |= {f"dependency {module}": text for module, text in sources}
    if submission_digest(graded) != report.key.submission:
        return None, "its files under submissions/ are not the ones graded: grade it again"
    return Student(name, report, implementation, tests, tuple(sources)), ""


def real_bugs(students: Sequence[Student]) -> tuple[list[Student], list[tuple[str, str]]]:
    """The students whose own tree fails a course test: the real bugs. A tree that did not
    import, did not finish, or is the stub untouched is no bug to mine (with why)."""
    bugs, left_out = [], []
    for student in students:
        course = student.report.course_tests
        if not student.failed or student.implementation is None:
            continue
        if course.problem is not None:
            left_out.append((student.name, f"its radix.py is no bug to mine: {course.problem}"))
        elif student.report.files.get("implementation") in student.report.unmodified:
            left_out.append((student.name, "its radix.py is the stub, untouched"))
        else:
            bugs.append(student)
    return bugs, left_out


def valid_test_files(students: Sequence[Student]) -> list[Student]:
    """The students whose test file was valid and ran on the planted mutants."""
    return [
        s
        for s in students
        if s.tests is not None and s.report.student_tests.valid and s.report.mutation is not None
    ]


def keep_the_class_from_runs(out: Path, pool: WorkerPool) -> None:
    """At ``uid`` a run is kept from the class's files by permissions alone: ``GraderError``
    when other users can enter ``out`` (where every student's files are kept)."""
    if pool.isolation == "uid" and folders.open_to_runs([out]):
        raise GraderError(
            f"runs here are kept apart by their users alone (isolation 'uid'), and other users "
            f"can enter {out}: a student's run could read a classmate's files; close it "
            "(chmod 700), or mine with namespaces (CAP_SYS_ADMIN); nothing was run"
        )


class Runs:
    """The sandboxed runs of a mine, each taken from the result cache where it was made
    before, else made on ``pool`` and stored."""

    def __init__(
        self, chapter: Chapter, limits: Limits, pool: WorkerPool, cache: ResultCache
    ) -> None:
        self.chapter, self.limits, self.pool, self.cache = chapter, limits, pool, cache
        self.kit = kit_fingerprint(chapter)
        self.ran = 0
        self.reused = 0

    def cell(self, tests: Student, bug: Student) -> tuple[CellStatus, str]:
        """Whether ``tests``' file catches ``bug``'s tree, and its first failing test."""
        assert tests.tests is not None and bug.implementation is not None
        limits = self.limits
        limit = mutant_limit(limits, tests.report.student_tests.reference_seconds)
        parts = (tests.tests, bug.implementation, repr(bug.dependencies), limit)
        key = content_key(self.kit, "mining cell", *parts, self.pool.isolation)
        stored = self.cache.get(key, StoredCell, self.pool.isolation)
        if stored is None:
            job = student_tests_job(
                self.chapter, tests.tests, bug.implementation, limit,
                dependencies=bug.dependencies, ceiling=limits.student_tests,
                stop_at_failure=True, own_tree=True,
            )  # fmt: skip
            run = self.pool.confirm(job, self.pool.run(job))
            failing = run.failing()
            status = mutant_status(run.status, bool(failing))
            said = (
                "caught"
                if is_kill(status)
                else "missed"
                if status == MutantStatus.SURVIVED
                else "error"
            )
            by = failing[0] if failing else run.message if said != "missed" else ""
            stored = StoredCell(said, by[:200], self.pool.isolation)
            self.cache.put(key, stored, self.pool.isolation)
            self.ran += 1
        else:
            self.reused += 1
        status_: CellStatus = "caught" if stored.status == "caught" else (
            "missed" if stored.status == "missed" else "error"
        )  # fmt: skip
        return status_, stored.by

    def witness(self, bug: Student) -> tuple[MinedWitness | None, str]:
        """The shortest program found that tells ``bug``'s tree from the reference."""
        assert bug.implementation is not None
        limit = self.limits.student_tests
        parts = (bug.implementation, repr(bug.dependencies), limit)
        key = content_key(self.kit, "mining witness", *parts, self.pool.isolation)
        stored = self.cache.get(key, StoredWitness, self.pool.isolation)
        if stored is None:
            job = probe_job(self.chapter, bug.implementation, bug.dependencies, limit)
            run = self.pool.run(job)
            found, why = witness_from_run(run)
            granule, calls = (found.granule, found.calls) if found else (0, ())
            stored = StoredWitness(granule, calls, why, self.pool.isolation)
            self.cache.put(key, stored, self.pool.isolation)
            self.ran += 1
        else:
            self.reused += 1
        if not stored.granule:
            return None, stored.why
        return MinedWitness(stored.granule, tuple(stored.calls)), ""


def run_all(
    runs: Runs,
    bugs: Sequence[Student],
    files: Sequence[Student],
    jobs: int,
    progress: Progress | None = None,
) -> tuple[Matrix, Witnesses]:
    """Every file of ``files`` on every bug of ``bugs``, and each bug's witness, ``jobs`` runs
    at once: the matrix by (test file's owner, bug's owner), the witnesses by bug's owner."""
    with ThreadPoolExecutor(max(1, jobs)) as threads:
        witnesses = {bug.name: threads.submit(runs.witness, bug) for bug in bugs}
        cells = {
            (tests.name, bug.name): threads.submit(runs.cell, tests, bug)
            for bug in bugs
            for tests in files
        }
        for bug in bugs:
            for tests in files:
                cells[(tests.name, bug.name)].result()
            witnesses[bug.name].result()
            if progress is not None:
                progress(bug.name, f"{len(files)} test files and the witness search")
    return (
        {pair: future.result() for pair, future in cells.items()},
        {name: future.result() for name, future in witnesses.items()},
    )
