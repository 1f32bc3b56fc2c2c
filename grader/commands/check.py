"""``check``: the verdict on a submission's code and the mutation grade of its tests.

Three phases, each a set of sandboxed runs on the warm worker pool:

1. the course tests against the student's ``radix.py`` (the verdict on the code);
2. the student's test file validated: it follows the static rules, names the
   required tests, passes on the reference (twice: another order and another
   hash seed, to catch flaky tests) and on every wheat, and each required test
   fails on the stub;
3. only if it is valid, the student's tests against every planted mutant.

This module runs them in order and assembles the ``CheckReport``
(``grader.results.check``); the runs themselves are built in ``grader.grading.jobs``,
phase 1 is ``grader.grading.course_tests``, phase 2 ``grader.grading.validation`` and
phase 3 ``grader.grading.mutation``. Every failure of the submission becomes a value in
the report; only a broken kit raises.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from grader.course.kit_sources import compare_with_the_kit
from grader.errors import GraderError
from grader.grading.course_tests import CoursePhase, finish_course_tests, start_course_tests
from grader.grading.jobs import (
    PHASES,
    Limits,
    Progress,
    blame_slow_tests,
    mutant_limit,
    student_tests_job,
)
from grader.grading.mutation import Stopped, run_mutants
from grader.grading.result_cache import ResultCache, content_key, kit_fingerprint
from grader.grading.robustness import robustness_seeds
from grader.grading.validation import disagreements, validate
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import Resolved, Sources, resolve
from grader.inputs.patching import mutant_sources
from grader.inputs.provenance import result_key
from grader.inputs.submission import Submission, read_submission
from grader.results.check import CheckReport, CourseTestsResult, MutationResult, StudentTestsResult
from grader.sandbox.host.job import OTHER_HASH_SEED
from grader.sandbox.host.pool import WorkerPool, require_isolation
from grader.sandbox.host.result import RunResult
from grader.sandbox.levels import IsolationLevel


@dataclass(frozen=True)
class ValidationPhase:
    """Phases 2 and 3 as the cache keeps them: what decides them is the test file and the kit."""

    student: StudentTestsResult
    mutation: MutationResult | None
    isolation: IsolationLevel
    validation_seconds: float
    mutation_seconds: float


@dataclass(frozen=True)
class YoursPhase:
    """The student's tests on the student's own code: decided by both files."""

    on_yours: tuple[str, ...]
    durations: dict[str, float]


def check(
    chapter: Chapter,
    folder: Path,
    limits: Limits = Limits(),
    progress: Progress | None = None,
    pool: WorkerPool | None = None,
    cache: ResultCache | None = None,
    compare_copies: bool = False,
) -> CheckReport:
    """Grade the submission in ``folder``: the phases in the module docstring.

    Copy scores are the staff's (docs/security.md): only with ``compare_copies`` (batch,
    the Gradescope autograder, a replay) does the report carry ``known_sources``
    (``grader.course.kit_sources``); a student's own check never shows one.

    Pass a ``pool`` to share warm workers between many checks (batch grading);
    otherwise the check starts its own, only if a phase must run, and closes it when
    done. With a ``cache``, each phase whose inputs a stored result was made from is
    reused (``grader.grading.result_cache``), and the report names it in ``reused``. An
    implementation that needs an earlier chapter's module the submission lacks (and
    ``limits.ref_deps`` off) raises ``DependencyProblem``, a fail, before anything runs.
    """
    submission = read_submission(chapter, folder)
    resolved = resolve(chapter, folder, submission.implementation, limits.ref_deps)
    started = time.monotonic()
    graded_at = datetime.now(UTC).isoformat(timespec="seconds")
    mutants = mutant_sources(chapter)  # first: a broken kit fails every check, whatever it holds
    level = pool.isolation if pool is not None else require_isolation(limits.isolation)
    keys = _phase_keys(chapter, submission, limits, resolved.sources, level)
    course_phase = cache.get(keys["course_tests"], CoursePhase, level) if cache else None
    tests_phase = cache.get(keys["tests"], ValidationPhase, level) if cache else None
    yours_phase = cache.get(keys["yours"], YoursPhase, level) if cache else None
    if course_phase is None or tests_phase is None or yours_phase is None:
        if pool is None:
            with WorkerPool(minimum=limits.isolation, other_seed=False) as own_pool:
                return check(chapter, folder, limits, progress, own_pool, cache, compare_copies)
        course_phase, tests_phase, yours_phase = _run_phases(
            chapter,
            submission,
            resolved,
            limits,
            pool,
            mutants,
            progress,
            course_phase,
            tests_phase,
        )
        if cache is not None:
            for name, phase in (
                ("course_tests", course_phase),
                ("tests", tests_phase),
                ("yours", yours_phase),
            ):
                cache.put(keys[name], phase, pool.isolation)
    reused = _reused(keys, cache, submission)
    phases = (course_phase, tests_phase, yours_phase)
    report = _report(chapter, folder, submission, resolved, limits, phases, started)
    known = compare_with_the_kit(chapter, submission, resolved) if compare_copies else ()
    return replace(report, graded_at=graded_at, reused=reused, known_sources=known)


def _reused(
    keys: dict[str, str], cache: ResultCache | None, submission: Submission
) -> tuple[str, ...]:
    """The phases taken from the cache: a reuse "because the file is unchanged" is said of
    files found, never of a missing one."""
    found = {
        "course_tests": submission.implementation is not None,
        "tests": submission.tests is not None,
        "yours": submission.implementation is not None and submission.tests is not None,
    }
    if cache is None:
        return ()
    return tuple(name for name, key in keys.items() if key in cache.hits and found[name])


def _report(
    chapter: Chapter,
    folder: Path,
    submission: Submission,
    resolved: Resolved,
    limits: Limits,
    phases: tuple[CoursePhase, ValidationPhase, YoursPhase],
    started: float,
) -> CheckReport:
    """The report of the phases' results, with the key of what decided it."""
    course_phase, tests_phase, yours_phase = phases
    student = replace(
        tests_phase.student,
        on_yours=yours_phase.on_yours,
        durations={**tests_phase.student.durations, "yours": yours_phase.durations},
    )
    timings = {
        "course_tests": round(course_phase.seconds, 3),
        "validation": round(tests_phase.validation_seconds, 3),
        "mutation": round(tests_phase.mutation_seconds, 3),
        "total": round(time.monotonic() - started, 3),
    }
    files = {
        "implementation": chapter.implementation if submission.implementation is not None else None,
        "tests": chapter.student_tests if submission.tests is not None else None,
    }
    settings = limits.settings()
    graded = graded_inputs(chapter, submission, resolved)
    isolation = min((course_phase.isolation, tests_phase.isolation), key=ISOLATION_ORDER.index)
    return CheckReport(
        chapter.id,
        str(folder),
        course_phase.result,
        student,
        tests_phase.mutation,
        timings,
        files=files,
        unmodified=unmodified_files(chapter, submission),
        isolation=isolation,
        key=result_key(chapter, graded, settings, isolation),
        settings=settings,
        dependencies=resolved.uses,
    )


def graded_inputs(
    chapter: Chapter, submission: Submission, resolved: Resolved
) -> dict[str, str | None]:
    """What a check of ``submission`` reads, as ``grader.inputs.provenance.result_key``
    takes it: each file's place and text, and the text of each needed module the
    student's tree runs with."""
    graded = {
        "implementation": chapter.implementation,
        "implementation_text": submission.implementation,
        "tests": chapter.student_tests,
        "tests_text": submission.tests,
    }
    for module, text in resolved.sources:  # what the student's tree ran with decides too
        graded[f"dependency {module}"] = text
    return graded


def course_tests_only(
    chapter: Chapter, folder: Path, limits: Limits = Limits(), cache: ResultCache | None = None
) -> CourseTestsResult:
    """Phase 1 alone, the verdict on the code (``diff`` needs no more): the cached result of
    the same ``radix.py`` and kit where the cache holds one (a ``check`` just made it), else
    the course tests run as ``check`` runs them, and the result cached in turn."""
    submission = read_submission(chapter, folder)
    resolved = resolve(chapter, folder, submission.implementation, limits.ref_deps)
    level = require_isolation(limits.isolation)
    key = _phase_keys(chapter, submission, limits, resolved.sources, level)["course_tests"]
    phase = cache.get(key, CoursePhase, level) if cache else None
    if phase is None:
        with (
            WorkerPool(minimum=limits.isolation, other_seed=False) as pool,
            ThreadPoolExecutor(pool.workers + 1) as threads,
        ):
            started = time.monotonic()
            runs = start_course_tests(chapter, submission, limits, pool, threads, resolved.sources)
            phase = finish_course_tests(chapter, submission, runs, pool, started)
        if cache is not None:
            cache.put(key, phase, pool.isolation)
    return phase.result


ISOLATION_ORDER: tuple[IsolationLevel, ...] = ("none", "uid", "namespaces")


def _phase_keys(
    chapter: Chapter,
    submission: Submission,
    limits: Limits,
    dependencies: Sources,
    level: IsolationLevel,
) -> dict[str, str]:
    """Each phase's cache key: the kit, the files that decide the phase, the limits, and the
    isolation ``level`` the runs get (not the minimum asked for: ``grader.grading.result_cache``).

    The student's implementation is decided by its own text and by the modules it
    ran with (``dependencies``: the student's own or the kit's).
    """
    implementation = submission.implementation or f"missing: {submission.implementation_problem}"
    implementation += "".join(f"\0{module}\0{text}" for module, text in dependencies)
    tests = submission.tests or f"missing: {submission.tests_problem}"
    student_limits = (
        limits.student_tests,
        limits.mutant_factor,
        limits.mutant_floor,
        limits.every_kill,
        limits.robustness,
    )
    kit = kit_fingerprint(chapter)
    return {
        "course_tests": content_key(
            kit, "course_tests", implementation, limits.course_tests, level
        ),
        # whether mutants carry their titles is the chapter's setting, which --mutant-titles
        # overrides: it shapes the stored result too
        "tests": content_key(
            kit, "tests", tests, *student_limits, level, chapter.show_mutant_titles
        ),
        "yours": content_key(kit, "yours", tests, implementation, limits.student_tests, level),
    }


def _run_phases(
    chapter: Chapter,
    submission: Submission,
    resolved: Resolved,
    limits: Limits,
    pool: WorkerPool,
    mutants: dict[str, str],
    progress: Progress | None,
    course_phase: CoursePhase | None,
    tests_phase: ValidationPhase | None,
) -> tuple[CoursePhase, ValidationPhase, YoursPhase]:
    """Run the phases not already given on ``pool``.

    The student's own ``radix.py`` (the course tests, and the student's tests on it)
    runs first, and all of it is gone before the first run that grades the student's
    tests starts: it can take no CPU time from them, nor stop them.
    """
    say = progress or (lambda phase, done, total: None)
    started = time.monotonic()
    with ThreadPoolExecutor(pool.workers + 1) as threads:
        course_runs: list[Future[RunResult]] = []
        if course_phase is None:
            course_runs = start_course_tests(
                chapter, submission, limits, pool, threads, resolved.sources
            )
        if tests_phase is None:
            _warm_other_seed(pool, course_runs)
        yours_run = None
        if submission.tests is not None and submission.implementation is not None:
            job = student_tests_job(
                chapter,
                submission.tests,
                submission.implementation,
                limits.student_tests,
                dependencies=resolved.sources,
                own_tree=True,
            )
            yours_run = threads.submit(pool.run, job)
        if course_phase is None:
            if not all(run.done() for run in course_runs):
                say(PHASES["course_tests"], 0, 0)
            course_phase = finish_course_tests(chapter, submission, course_runs, pool, started)
        on_yours = yours_run.result() if yours_run is not None else None
        if tests_phase is None:
            tests_phase = _grade_tests(chapter, submission, limits, pool, mutants, threads, say)
    if on_yours is not None:
        on_yours = blame_slow_tests(
            chapter, on_yours, tests_phase.student.durations.get("reference", {})
        )
    yours = YoursPhase(
        disagreements(chapter, tests_phase.student, on_yours, limits.student_tests),
        on_yours.durations() if on_yours is not None else {},
    )
    return course_phase, tests_phase, yours


def _warm_other_seed(pool: WorkerPool, course_runs: list[Future[RunResult]]) -> None:
    """Start the other-seed worker, whose one run is in the tests' phase, once a core is free
    of phase 1 (its warm-up costs a core a second), or now if phase 1 runs nothing."""

    def warm(_: object = None) -> None:
        with contextlib.suppress(GraderError):  # grading was stopped meanwhile
            pool.warm(OTHER_HASH_SEED)

    if not course_runs:
        warm()
    for run in course_runs:
        run.add_done_callback(warm)


def _grade_tests(
    chapter: Chapter,
    submission: Submission,
    limits: Limits,
    pool: WorkerPool,
    mutants: dict[str, str],
    threads: ThreadPoolExecutor,
    say: Progress,
) -> ValidationPhase:
    """Validation and the mutants of the student's test file.

    The mutants' limit comes from the first run on the reference, so they start as soon
    as that run shows the file right, beside the rest of the validation; if the file then
    proves not valid, no more of them start and their phase has no result."""
    validation_started = time.monotonic()
    say(PHASES["validation"], 0, 0)
    started: list[tuple[float, Future[MutationResult]]] = []
    stop = threading.Event()

    def start_mutants(on_reference: RunResult) -> None:
        assert submission.tests is not None
        limit = mutant_limit(limits, on_reference.cpu_seconds)
        phase = (submission.tests, mutants, limit, pool, threads, say, limits.student_tests)
        seeds = robustness_seeds(chapter.id, limits.robustness)
        future = coordinator.submit(
            run_mutants, chapter, *phase, stop=stop, every_kill=limits.every_kill, seeds=seeds
        )
        started.append((time.monotonic(), future))

    with ThreadPoolExecutor(1) as coordinator:  # not one of the runs' threads: it waits on them
        student = validate(chapter, submission, limits, pool, threads, start_mutants)
        validation_seconds = time.monotonic() - validation_started
        mutation, mutation_seconds = None, 0.0
        if started and not student.valid:
            stop.set()
            with contextlib.suppress(Stopped):
                started[0][1].result()
        elif started:
            mutation = started[0][1].result()
            mutation_seconds = time.monotonic() - started[0][0]
    if mutation is not None:
        problems = mutation.reference_problems + tuple(m.message for m in mutation.errors)
        if problems:
            student = replace(student, valid=False, problems=student.problems + problems)
    return ValidationPhase(student, mutation, pool.isolation, validation_seconds, mutation_seconds)


def unmodified_files(chapter: Chapter, submission: Submission) -> tuple[str, ...]:
    """The submission's files that are the kit's stub or skeleton, unchanged (line ends aside)."""
    pairs = (
        (chapter.implementation, submission.implementation, chapter.stub),
        (chapter.student_tests, submission.tests, chapter.stub_tests),
    )
    return tuple(
        path
        for path, text, kit_file in pairs
        if text is not None and _lines(text) == _lines(kit_file.read_text(encoding="utf-8"))
    )


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]
