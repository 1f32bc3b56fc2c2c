"""The class drawn over every row of a gradebook: copies, figures, and the LMS's file.

``grader batch`` (after every batch, a one-student regrade included) and
``grader merge`` both end here, so ``class.html``, ``class.json``,
``similarity.csv`` and ``.html``, the gradebook's ``flags`` and the Canvas
file always cover the whole class in ``out``, never only the students of the
last run, each grade set by hand (``grader.course.overrides``) in its place.
Everything is read back from ``out`` itself: each student's JSON report and
the copy of the files graded (``submissions/NAME/``).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path

from grader.course.fingerprints import Fingerprinter, text_score
from grader.course.gradebook import (
    CLASS_JSON,
    CLASS_PAGE,
    GRADEBOOK,
    REPORTS,
    ROSTER_CHECK,
    SIMILARITY_CSV,
    SUBMISSIONS,
    cell,
    is_practice,
    points,
    read_gradebook,
    text_cell,
    untext,
    with_cell,
    write_gradebook,
)
from grader.course.overrides import NOTE_SUFFIX, read_overrides, student_note
from grader.course.roster import RosterEntry, match_roster
from grader.course.similarity import (
    COURSE_TESTS,
    MODEL_ANSWER,
    REFERENCE,
    WITNESS_TESTS,
    ClassFile,
    Similarity,
    find_copies,
    module_owner,
)
from grader.grading.jobs import Limits
from grader.grading.mutation import run_mutants
from grader.grading.witness import killing_tests
from grader.inputs.catalog import Chapter
from grader.inputs.patching import mutant_sources
from grader.inputs.submission import SubmissionProblem, read_text_inside
from grader.output.canvas import canvas_csv, roster_check_csv
from grader.output.check_json import report_from_dict
from grader.output.class_report import class_data, class_html, class_json
from grader.output.files import write_atomically
from grader.output.similarity import SIMILARITY_PAGE, similarity_csv, similarity_html
from grader.results.batch import ClassView, Override
from grader.results.check import CheckReport
from grader.sandbox.host.pool import WorkerPool

PoolFactory = Callable[[], WorkerPool]


class CopyFinder:
    """The class's files, fingerprinted as they come (in a batch, while the workers grade
    the others); the model answer's mutant run starts the first time a test file comes near
    it, beside the grading, or when the comparison needs it."""

    def __init__(self, chapter: Chapter, limits: Limits) -> None:
        assert chapter.similarity is not None
        self.chapter, self.limits = chapter, limits
        given = [chapter.stub.read_text("utf-8"), chapter.stub_tests.read_text("utf-8")]
        given += [need.reference.read_text("utf-8") for need in chapter.needs]  # the kit's map
        self.fingerprints = Fingerprinter(given, chapter.similarity)
        self.killing_tests = killing_tests(chapter)
        self.model_answer = chapter.model_tests.read_text(encoding="utf-8")
        self.files: dict[str, list[ClassFile]] = {}
        self.model_run: Future[dict[str, tuple[str, ...]]] | None = None

    def add(
        self,
        name: str,
        implementation: str | None,
        tests: str | None,
        report: CheckReport | None,
        beside: tuple[WorkerPool, ThreadPoolExecutor] | None = None,
    ) -> None:
        files = self.files[name] = []
        if implementation is not None:
            files.append(ClassFile(name, "implementation", implementation))
        if tests is None:
            return
        mutation = report.mutation if report is not None else None
        killed_by = {m.id: m.killed_by for m in mutation.mutants} if mutation else None
        files.append(ClassFile(name, "tests", tests, killed_by))
        if beside is None or self.model_run is not None:
            return
        model = self.fingerprints(self.model_answer)
        score = text_score(self.fingerprints(tests), model, self.fingerprints.settings)
        if score >= self.fingerprints.settings.floor:
            pool, threads = beside
            self.model_run = threads.submit(_model_answer_kills, self.chapter, self.limits, pool)

    def add_modules(self, name: str, texts: Mapping[str, str]) -> None:
        """The student's own copy of each module the chapter needs (file to text), compared
        as code with every other file (``similarity.module_owner``), in place of any
        added before."""
        files = self.files.setdefault(name, [])
        files[:] = [f for f in files if "/" not in f.owner]
        files += [ClassFile(module_owner(name, f), "implementation", t) for f, t in texts.items()]

    def compare(self, names: Sequence[str], pool: PoolFactory) -> Similarity:
        """Every student's files against each other's and the kit's
        (``grader.course.similarity``)."""
        files = [file for name in names for file in self.files.get(name, ())]
        reference = self.chapter.reference.read_text("utf-8")
        files.append(ClassFile(REFERENCE, "implementation", reference))
        files.append(ClassFile(MODEL_ANSWER, "tests", self.model_answer))
        course_tests = self.chapter.course_test_file.read_text("utf-8")
        files.append(ClassFile(COURSE_TESTS, "tests", course_tests))
        if self.killing_tests:
            files.append(ClassFile(WITNESS_TESTS, "tests", self.killing_tests))
        run = self.model_run

        def model_kills() -> dict[str, tuple[str, ...]]:
            if run is not None:
                return run.result()
            with pool() as own:
                return _model_answer_kills(self.chapter, self.limits, own)

        chapter = self.chapter
        wheats, interface = len(chapter.wheats), sorted(chapter.interface)
        needed = [need.module for need in chapter.needs]
        return find_copies(
            files, self.fingerprints, wheats, model_kills, interface, needed, chapter.implementation
        )


def _model_answer_kills(
    chapter: Chapter, limits: Limits, pool: WorkerPool
) -> dict[str, tuple[str, ...]]:
    """Each planted mutant's killers among the model answer's tests."""
    model_answer = chapter.model_tests.read_text(encoding="utf-8")
    with ThreadPoolExecutor(pool.workers + 1) as threads:
        mutation = run_mutants(
            chapter,
            model_answer,
            mutant_sources(chapter),
            limits.student_tests,
            pool,
            threads,
            every_kill=limits.every_kill,
        )
    return {m.id: m.killed_by for m in mutation.mutants}


def load_report(out: Path, cells: Sequence[str]) -> CheckReport | None:
    """The report a gradebook row points to, if it has one that can be read."""
    relative = untext(cell(cells, "report"))
    if not relative:
        return None
    try:
        return report_from_dict(json.loads((out / relative).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stored_files(out: Path, cells: Sequence[str]) -> tuple[str | None, str | None]:
    """The texts of the files graded, as the batch kept them under ``submissions/NAME/``."""
    student = untext(cell(cells, "student"))
    if student != Path(student).name or student in ("", ".", ".."):  # never outside the class
        return None, None
    folder = out / SUBMISSIONS / student
    texts: list[str | None] = []
    for column in ("implementation_file", "tests_file"):
        relative = untext(cell(cells, column))
        try:
            texts.append((folder / relative).read_text(encoding="utf-8") if relative else None)
        except (OSError, UnicodeDecodeError):
            texts.append(None)
    return texts[0], texts[1]


def stored_modules(out: Path, student: str, report: CheckReport | None) -> dict[str, str]:
    """The student's own copy of each needed module the report ran with, as the batch kept
    it under ``submissions/NAME/`` (file to text)."""
    if report is None or student != Path(student).name or student in ("", ".", ".."):
        return {}
    folder = out / SUBMISSIONS / student
    found = {}
    for use in report.dependencies:
        if use.used == "submission" and use.file is not None:
            with contextlib.suppress(SubmissionProblem, OSError, ValueError):
                found[use.file] = read_text_inside(folder, folder / use.file)
    return found


def rebuild_class(
    chapter: Chapter,
    out: Path,
    limits: Limits,
    pool: PoolFactory | None = None,
    copies: CopyFinder | None = None,
    roster: Sequence[RosterEntry] | None = None,
    canvas: Path | None = None,
    assignment: str | None = None,
) -> ClassView:
    """Draw the class in ``out`` over every row of its gradebook (see the module docstring).
    ``pool`` makes copy detection's workers (by default at ``limits.isolation`` at least);
    ``copies`` may hold students fingerprinted already, the others are read from ``out``."""
    pool = pool or partial(WorkerPool, minimum=limits.isolation)
    gradebook = out / GRADEBOOK
    rows = read_gradebook(gradebook)
    names = [untext(key) for key in rows]
    reports = {untext(key): load_report(out, cells) for key, cells in rows.items()}
    similarity, seconds = None, 0.0
    if chapter.similarity is not None:
        copies = copies or CopyFinder(chapter, limits)
        for key, cells in rows.items():
            if untext(key) not in copies.files:
                implementation, tests = stored_files(out, cells)
                copies.add(untext(key), implementation, tests, reports[untext(key)])
            copies.add_modules(untext(key), stored_modules(out, untext(key), reports[untext(key)]))
        started = time.monotonic()
        similarity = copies.compare(names, pool)
        seconds = round(time.monotonic() - started, 3)
        rows = {
            key: with_cell(cells, "flags", text_cell(" ".join(similarity.flags(untext(key)))))
            for key, cells in rows.items()
        }
        write_gradebook(gradebook, rows.values())
        write_atomically(out / SIMILARITY_CSV, similarity_csv(similarity))
        write_atomically(out / SIMILARITY_PAGE, similarity_html(chapter.id, similarity))
    overrides = read_overrides(out, chapter.grade_scale)
    rows, written = _with_overrides(rows, overrides), rows
    if rows != written:
        write_gradebook(gradebook, rows.values())
    for student, override in overrides.items():
        if text_cell(student) in rows:  # the student's note, to hand back with the report
            note = out / REPORTS / f"{student}{NOTE_SUFFIX}"
            write_atomically(note, student_note(chapter.id, override))
    grades = {untext(key): points(cells) for key, cells in rows.items()}
    grades |= {name: o.grade for name, o in overrides.items() if name in grades}
    practice = is_practice(rows.values())
    figures = class_data(chapter, grades, reports, similarity, overrides, practice)
    write_atomically(out / CLASS_JSON, class_json(figures))
    write_atomically(out / CLASS_PAGE, class_html(figures))
    matched = None
    if roster is not None:
        matched = match_roster(roster, names)
        write_atomically(out / ROSTER_CHECK, roster_check_csv(matched))
        if canvas is not None:
            title = assignment or chapter.id
            sheet = canvas_csv(title, chapter.grade_scale, matched, grades, practice)
            write_atomically(canvas, sheet)
    shown = tuple(o for name, o in overrides.items() if name in grades)
    return ClassView(similarity, seconds, matched, canvas if roster is not None else None, shown)


def _with_overrides(
    rows: dict[str, list[str]], overrides: Mapping[str, Override]
) -> dict[str, list[str]]:
    """The rows with each student's ``override`` cell: the grade set by hand, or empty."""
    return {
        key: with_cell(
            cells,
            "override",
            text_cell(overrides[untext(key)].describe()) if untext(key) in overrides else "",
        )
        for key, cells in rows.items()
    }
