"""``check``: the verdict on a submission's code and the mutation grade of its tests.

Three phases, each a set of sandboxed runs on the warm worker pool:

1. the course tests against the student's ``radix.py`` (the verdict on the code);
2. the student's test file validated: it follows the static rules, names the
   required tests, passes on the reference (twice: another order and another
   hash seed, to catch flaky tests) and on every wheat, and each required test
   fails on the stub;
3. only if it is valid, the student's tests against every planted mutant.

Every failure of the submission becomes a value in the ``CheckReport``; only
a broken kit raises.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from grader.catalog import Chapter, Mutant
from grader.dependencies import DependencyUse, Resolved, Sources, kit_sources, resolve
from grader.explain import (
    failure_reason,
    missing_reason,
    output_too_large,
    swallowing_handler,
    too_much_output,
)
from grader.hypothesis_profile import GRADER_SETTINGS
from grader.patching import apply_patch, mutant_sources
from grader.provenance import ResultKey, result_key, text_digest
from grader.regrade import ResultCache, content_key, kit_fingerprint
from grader.sandbox.confine import IsolationLevel
from grader.sandbox.host.job import FIXED_HASH_SEED, OTHER_HASH_SEED, Interface, Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult, merged_runs, status_phrase
from grader.sandbox.protocol import TestStatus
from grader.similarity import COURSE_TESTS, MODEL_ANSWER, KnownSource, known_sources
from grader.static_check import (
    UNREAD,
    check_test_source,
    describe_overrides,
    function_name,
    overridden_settings,
)
from grader.submission import Submission, read_submission
from grader.tracebacks import for_students

MutantStatus = Literal["killed", "survived", "timeout", "error"]
"""``error``: the run reported fewer outcomes than it collected; it is neither a kill nor a pass."""
Verdict = Literal["pass", "fail"]
Progress = Callable[[str, int, int], None]
"""Called as ``progress(phase, done, total)`` as a phase starts and runs (``total`` 0: a
phase whose runs are not counted)."""
PHASES = {
    "validation": "the course tests on your code; your tests on the reference, the correct "
    "variants, the stub and your code",
    "mutants": "your tests against the planted mutants",
    "course_tests": "the course tests on your code (the rest is done)",
}
"""What the progress line says while each phase runs."""


@dataclass(frozen=True)
class Limits:
    """Time limits in seconds of CPU time (``grader.sandbox.host.job.Job``): a fixed one for the
    course tests and for the student's tests on the reference, the wheats and the stub;
    mutant runs get ``factor`` times the reference run's CPU time, at least ``floor`` and at
    most the student's tests' own limit. Every run of the student's tests sees the same
    limits whatever its own: ``student_tests`` is the ``RLIMIT_CPU`` of them all."""

    course_tests: float = 120.0
    student_tests: float = 60.0
    mutant_floor: float = 5.0
    mutant_factor: float = 5.0
    isolation: IsolationLevel = "none"
    """The least isolation the runs must get (``grader.sandbox.confine``): below it the
    check raises ``GraderError`` (exit 2) before grading; ``none`` takes what the machine
    gives."""
    ref_deps: bool = False
    """Run the student's implementation with the kit's copy of each earlier chapter's module
    it needs (``--ref-deps``), not the submission's own (``grader.dependencies``)."""

    def settings(self) -> dict[str, object]:
        """Everything that sets how the runs go, as plain data: the limits (not the isolation
        asked for, the key holds the one reached), whether the kit's copy of each needed module
        stood in for the student's, the two hash seeds, the reversed rerun and hypothesis's
        fixed settings. A report carries it; a replay runs with it."""
        return {
            "course_tests": self.course_tests,
            "student_tests": self.student_tests,
            "mutant_floor": self.mutant_floor,
            "mutant_factor": self.mutant_factor,
            "ref_deps": self.ref_deps,
            "hash_seeds": [FIXED_HASH_SEED, OTHER_HASH_SEED],
            "rerun_reversed": True,
            "hypothesis": {name: str(value) for name, value in GRADER_SETTINGS.items()},
        }


def limits_from_settings(settings: dict[str, object], isolation: IsolationLevel) -> Limits:
    """The limits a report's ``settings`` name, demanding ``isolation`` (a replay's)."""
    return Limits(
        course_tests=float(str(settings["course_tests"])),
        student_tests=float(str(settings["student_tests"])),
        mutant_floor=float(str(settings["mutant_floor"])),
        mutant_factor=float(str(settings["mutant_factor"])),
        isolation=isolation,
        ref_deps=settings.get("ref_deps") is True,
    )


@dataclass(frozen=True)
class CourseTestsResult:
    results: dict[str, TestStatus]
    failures: dict[str, str]
    problem: str | None
    durations: dict[str, float] = field(default_factory=dict, compare=False)
    """Seconds per course test."""

    @property
    def passed(self) -> int:
        return sum(status == "passed" for status in self.results.values())

    @property
    def total(self) -> int:
        return len(self.results)


@dataclass(frozen=True)
class StudentTestsResult:
    valid: bool
    problems: tuple[str, ...]
    missing: tuple[str, ...]
    tests: tuple[str, ...]
    reference_seconds: float
    """The CPU time of the run on the reference (the mutants' limit is set from it)."""
    notes: tuple[str, ...] = ()
    """What the grader changed and the student may want to know (settings it overrode)."""
    missing_reasons: tuple[str, ...] = ()
    """For each of ``missing``, in order, why it is missing (a near-miss name, a class
    pytest does not collect)."""
    on_yours: tuple[str, ...] = ()
    """The tests that pass on the reference but fail on the student's own implementation,
    each with its reason: one of the two is wrong. Information: it changes no verdict."""
    durations: dict[str, dict[str, float]] = field(default_factory=dict, compare=False)
    """Seconds per test of each validation run, by run (``reference``, ``stub``, ...)."""


@dataclass(frozen=True)
class MutantResult:
    id: str
    title: str
    status: MutantStatus
    killed_by: tuple[str, ...]
    message: str = field(default="", compare=False)
    durations: dict[str, float] = field(default_factory=dict, compare=False)
    """Seconds per test of the run on this mutant."""

    @property
    def detected(self) -> bool:
        """A kill: a test failed or errored on the mutant, or the run timed out twice (the
        second time alone: ``timeout (confirmed)``)."""
        return self.status in ("killed", "timeout")


@dataclass(frozen=True)
class StudentTestWorth:
    """What one of the student's tests earns: the mutants it kills, and the tests that make it
    redundant (each kills every mutant this one kills; empty when it kills nothing)."""

    name: str
    kills: tuple[str, ...]
    covered_by: tuple[str, ...]


def kills_needed(threshold: float, total: int) -> int:
    """The fewest kills of ``total`` mutants that meet ``threshold``: 13 of 18 at 0.70.

    The small allowance absorbs floating point: 0.28 * 25 is 7.000000000000001, and needs 7.
    """
    return max(0, math.ceil(threshold * total - 1e-9))


@dataclass(frozen=True)
class MutationResult:
    threshold: float
    required: tuple[str, ...]
    mutants: tuple[MutantResult, ...]
    reference_problems: tuple[str, ...] = ()
    """What the test file did wrong on the reference runs among the mutant runs."""

    @property
    def killed(self) -> int:
        return sum(m.detected for m in self.mutants)

    @property
    def total(self) -> int:
        return len(self.mutants)

    @property
    def score(self) -> float:
        return round(self.killed / self.total, 4) if self.total else 0.0

    @property
    def survivors(self) -> tuple[MutantResult, ...]:
        return tuple(m for m in self.mutants if m.status == "survived")

    @property
    def missed_required(self) -> tuple[str, ...]:
        survived = {m.id for m in self.survivors}
        return tuple(m for m in self.required if m in survived)

    def status(self, mutant_id: str) -> MutantStatus:
        """The status of the mutant ``mutant_id``."""
        return next(m.status for m in self.mutants if m.id == mutant_id)

    @property
    def errors(self) -> tuple[MutantResult, ...]:
        return tuple(m for m in self.mutants if m.status == "error")

    @property
    def needed(self) -> int:
        return kills_needed(self.threshold, self.total)

    @property
    def enough_killed(self) -> bool:
        return self.killed >= self.needed

    @property
    def passed(self) -> bool:
        return self.enough_killed and not self.missed_required and not self.errors

    def worth(self, tests: Sequence[str]) -> tuple[StudentTestWorth, ...]:
        """Each test's kills, for ``tests`` (the file's tests, in its order) and any other test
        that killed a mutant; a timeout counts for the tests that failed before it."""
        kills: dict[str, list[str]] = {name: [] for name in tests}
        for mutant in self.mutants:
            if mutant.status in ("killed", "timeout"):
                for name in mutant.killed_by:
                    kills.setdefault(name, []).append(mutant.id)
        sets = {name: set(ids) for name, ids in kills.items()}
        return tuple(
            StudentTestWorth(
                name,
                tuple(ids),
                tuple(
                    other
                    for other, theirs in sets.items()
                    if ids and other != name and sets[name] <= theirs
                ),
            )
            for name, ids in kills.items()
        )


@dataclass(frozen=True)
class CheckReport:
    chapter: str
    submission: str
    course_tests: CourseTestsResult
    student_tests: StudentTestsResult
    mutation: MutationResult | None
    timings: dict[str, float] = field(compare=False)
    files: dict[str, str | None] = field(default_factory=dict)
    """The files graded, relative to the submission folder (``implementation``, ``tests``);
    ``None`` for one that could not be read."""
    unmodified: tuple[str, ...] = ()
    """The submission's files that are the kit's stub or test skeleton, unchanged."""
    graded_at: str = field(default="", compare=False)
    """When the check ran (UTC, ISO 8601): with ``timings``, all that differs between runs."""
    isolation: IsolationLevel = "none"
    """The isolation level the runs got (``grader.sandbox.confine``)."""
    known_sources: tuple[KnownSource, ...] = ()
    """The test file against the kit's own test files, for staff (``grader.similarity``)."""
    key: ResultKey | None = field(default=None, compare=False)
    """What decided this result (``grader.provenance``); ``None`` for a report built by hand."""
    settings: dict[str, object] = field(default_factory=dict, compare=False)
    """The settings of the runs (``Limits.settings``): what a replay needs."""
    dependencies: tuple[DependencyUse, ...] = ()
    """Which copy of each earlier chapter's module the student's implementation ran with."""
    reused: tuple[str, ...] = field(default=(), compare=False)
    """The phases taken from the cache (``course_tests``, ``tests``, ``yours``): their
    inputs are those of an earlier check's."""

    @property
    def verdict(self) -> Verdict:
        ok = (
            self.course_tests.passed == self.course_tests.total
            and self.student_tests.valid
            and self.mutation is not None
            and self.mutation.passed
        )
        return "pass" if ok else "fail"

    def fail_reasons(self) -> list[str]:
        """Why the verdict is fail, one short reason each; empty for a pass."""
        reasons = []
        if self.course_tests.passed != self.course_tests.total:
            reasons.append("course tests failing")
        if not self.student_tests.valid:
            reasons.append("your tests are not valid")
        mutation = self.mutation
        if mutation is not None and not mutation.passed:
            if not mutation.enough_killed:
                reasons.append(
                    f"mutation score {mutation.score:.2f} below {mutation.threshold:.2f}"
                )
            if mutation.missed_required:
                reasons.append(f"required mutant {', '.join(mutation.missed_required)} survived")
        return reasons


def course_tests_job(
    chapter: Chapter, implementation: str, time_limit: float, dependencies: Sources | None = None
) -> Job:
    """The run of the course tests against ``implementation``, which may import
    ``dependencies`` (``grader.dependencies.resolve``); ``None``: the kit's, as the reference
    runs with."""
    test_file = chapter.course_test_file
    source = test_file.read_text(encoding="utf-8")
    interface = chapter_interface(chapter, course_tests=True)
    return Job(
        implementation,
        test_file.name,
        source,
        time_limit,
        chapter.module,
        interface=interface,
        dependencies=kit_sources(chapter) if dependencies is None else dependencies,
    )


def course_test_jobs(
    chapter: Chapter, implementation: str, time_limit: float, dependencies: Sources | None = None
) -> list[Job]:
    """The course tests as runs that go side by side: the tests of no shard, then one run per
    shard the catalog names (``Chapter.course_test_shards``); each has the whole run's limits,
    and ``merged_runs`` makes them one result."""
    whole = course_tests_job(chapter, implementation, time_limit, dependencies)
    shards = chapter.course_test_shards
    if not shards:
        return [whole]
    apart = tuple(name for shard in shards for name in shard)
    return [replace(whole, leave_out=apart), *(replace(whole, only=shard) for shard in shards)]


def chapter_interface(chapter: Chapter, course_tests: bool = False) -> Interface:
    """What the tests reach of the chapter's module; the course tests reach a little more."""
    return Interface(
        names=tuple(sorted(chapter.interface)),
        members=chapter.members,
        exceptions=chapter.exceptions,
        private=chapter.course_tests_also_call if course_tests else (),
        frames=course_tests,
    )


def student_tests_job(
    chapter: Chapter,
    tests: str,
    implementation: str,
    time_limit: float,
    *,
    reverse: bool = False,
    hash_seed: int = FIXED_HASH_SEED,
    dependencies: Sources | None = None,
    ceiling: float | None = None,
) -> Job:
    """The run of the student's test file (its text, ``tests``) against ``implementation``.

    Every run of it, whatever the implementation, is this same job but for
    the implementation's source and its time limit, which the run cannot see:
    the same options, files, environment and visible limits (``ceiling``, the
    student's tests' own time limit, for every one of them), and the kit's copy
    of every earlier chapter's module the chapter needs (``dependencies``
    replaces it for the student's own implementation).
    """
    name = Path(chapter.student_tests).name
    return Job(
        implementation,
        name,
        tests,
        time_limit,
        chapter.module,
        reverse=reverse,
        hash_seed=hash_seed,
        interface=chapter_interface(chapter),
        dependencies=kit_sources(chapter) if dependencies is None else dependencies,
        ceiling=time_limit if ceiling is None else ceiling,
    )


@dataclass(frozen=True)
class CoursePhase:
    """Phase 1's result as the cache keeps it: what decides it is ``radix.py`` and the kit."""

    result: CourseTestsResult
    isolation: IsolationLevel
    seconds: float


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
) -> CheckReport:
    """Grade the submission in ``folder``: the phases in the module docstring.

    Pass a ``pool`` to share warm workers between many checks (batch grading);
    otherwise the check starts its own, only if a phase must run, and closes it when
    done. With a ``cache``, each phase whose inputs a stored result was made from is
    reused (``grader.regrade``), and the report names it in ``reused``. An
    implementation that needs an earlier chapter's module the submission lacks (and
    ``limits.ref_deps`` off) raises ``DependencyProblem``, a fail, before anything runs.
    """
    submission = read_submission(chapter, folder)
    resolved = resolve(chapter, folder, submission.implementation, limits.ref_deps)
    started = time.monotonic()
    graded_at = datetime.now(UTC).isoformat(timespec="seconds")
    mutants = mutant_sources(chapter)  # first: a broken kit fails every check, whatever it holds
    keys = _phase_keys(chapter, submission, limits, resolved.sources)
    course_phase = cache.get(keys["course_tests"], CoursePhase) if cache else None
    tests_phase = cache.get(keys["tests"], ValidationPhase) if cache else None
    yours_phase = cache.get(keys["yours"], YoursPhase) if cache else None
    if course_phase is None or tests_phase is None or yours_phase is None:
        if pool is None:
            with WorkerPool(minimum=limits.isolation) as own_pool:
                return check(chapter, folder, limits, progress, own_pool, cache)
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
                cache.put(keys[name], phase)
    reused = tuple(name for name, key in keys.items() if cache is not None and key in cache.hits)
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
    graded = {
        "implementation": chapter.implementation,
        "implementation_text": submission.implementation,
        "tests": chapter.student_tests,
        "tests_text": submission.tests,
    }
    for module, text in resolved.sources:  # what the student's tree ran with decides too
        graded[f"dependency {module}"] = text
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
        graded_at=graded_at,
        isolation=isolation,
        reused=reused,
        known_sources=compare_with_the_kit(chapter, submission.tests),
        key=result_key(chapter, graded, settings, isolation),
        settings=settings,
        dependencies=resolved.uses,
    )


def compare_with_the_kit(chapter: Chapter, tests: str | None) -> tuple[KnownSource, ...]:
    """A student's test file against the course tests and, in the staff edition, the model
    answer: a copy of the kit's own tests is flagged for staff at every grading."""
    if chapter.similarity is None or tests is None:
        return ()
    sources = {COURSE_TESTS: chapter.course_test_file.read_text(encoding="utf-8")}
    if chapter.model_tests.is_file():
        sources[MODEL_ANSWER] = chapter.model_tests.read_text(encoding="utf-8")
    given = [chapter.stub.read_text("utf-8"), chapter.stub_tests.read_text("utf-8")]
    return known_sources(tests, sources, given, chapter.similarity)


ISOLATION_ORDER: tuple[IsolationLevel, ...] = ("none", "uid", "namespaces")


def _phase_keys(
    chapter: Chapter, submission: Submission, limits: Limits, dependencies: Sources
) -> dict[str, str]:
    """Each phase's cache key: the kit, the files that decide the phase, the limits.

    The student's implementation is decided by its own text and by the modules it
    ran with (``dependencies``: the student's own or the kit's).
    """
    implementation = submission.implementation or f"missing: {submission.implementation_problem}"
    implementation += "".join(f"\0{module}\0{text}" for module, text in dependencies)
    tests = submission.tests or f"missing: {submission.tests_problem}"
    student_limits = (limits.student_tests, limits.mutant_factor, limits.mutant_floor)
    kit = kit_fingerprint(chapter)
    return {
        "course_tests": content_key(
            kit, "course_tests", implementation, limits.course_tests, limits.isolation
        ),
        # whether mutants carry their titles is the chapter's setting, which --mutant-titles
        # overrides: it shapes the stored result too
        "tests": content_key(
            kit, "tests", tests, *student_limits, limits.isolation, chapter.show_mutant_titles
        ),
        "yours": content_key(
            kit, "yours", tests, implementation, limits.student_tests, limits.isolation
        ),
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
    with ThreadPoolExecutor(pool.workers + 1) as threads:
        course_runs: list[Future[RunResult]] = []
        if course_phase is None:
            course_runs = _start_course_tests(
                chapter, submission, limits, pool, threads, resolved.sources
            )
        yours_run = None
        if submission.tests is not None and submission.implementation is not None:
            job = student_tests_job(
                chapter,
                submission.tests,
                submission.implementation,
                limits.student_tests,
                dependencies=resolved.sources,
            )
            yours_run = threads.submit(pool.run, job)
        if course_phase is None:
            if not all(run.done() for run in course_runs):
                say(PHASES["course_tests"], 0, 0)
            merged = merged_runs([run.result() for run in course_runs]) if course_runs else None
            course = _course_result(chapter, submission, merged)
            course_phase = CoursePhase(course, pool.isolation, merged.seconds if merged else 0.0)
        on_yours = yours_run.result() if yours_run is not None else None
        if tests_phase is None:
            tests_phase = _grade_tests(chapter, submission, limits, pool, mutants, threads, say)
    yours = YoursPhase(
        _disagreements(chapter, tests_phase.student, on_yours, limits.student_tests),
        on_yours.durations() if on_yours is not None else {},
    )
    return course_phase, tests_phase, yours


def _grade_tests(
    chapter: Chapter,
    submission: Submission,
    limits: Limits,
    pool: WorkerPool,
    mutants: dict[str, str],
    threads: ThreadPoolExecutor,
    say: Progress,
) -> ValidationPhase:
    """Validation, then the mutants, of the student's test file."""
    validation_started = time.monotonic()
    say(PHASES["validation"], 0, 0)
    student = _validate(chapter, submission, limits, pool, threads)
    validation_seconds = time.monotonic() - validation_started
    mutation_started = time.monotonic()
    mutation = None
    if student.valid and submission.tests is not None:
        mutation = run_mutants(
            chapter,
            submission.tests,
            mutants,
            mutant_limit(limits, student.reference_seconds),
            pool,
            threads,
            say,
            ceiling=limits.student_tests,
        )
        problems = mutation.reference_problems + tuple(m.message for m in mutation.errors)
        if problems:
            student = replace(student, valid=False, problems=student.problems + problems)
    return ValidationPhase(
        student, mutation, pool.isolation, validation_seconds, time.monotonic() - mutation_started
    )


def mutant_limit(limits: Limits, reference_cpu_seconds: float) -> float:
    """The CPU time a mutant run may use: ``factor`` times the reference run's, at least the
    floor, at most what the reference run itself was given."""
    wanted = max(limits.mutant_floor, limits.mutant_factor * reference_cpu_seconds)
    return min(limits.student_tests, wanted)


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


def _start_course_tests(
    chapter: Chapter,
    submission: Submission,
    limits: Limits,
    pool: WorkerPool,
    threads: ThreadPoolExecutor,
    dependencies: Sources,
) -> list[Future[RunResult]]:
    if submission.implementation is None:
        return []
    jobs = course_test_jobs(chapter, submission.implementation, limits.course_tests, dependencies)
    return [threads.submit(pool.run_confirmed, job) for job in jobs]


def _course_result(
    chapter: Chapter, submission: Submission, result: RunResult | None
) -> CourseTestsResult:
    names = [test.name for test in chapter.course_tests]
    if result is None:
        missing = submission.implementation_problem or "no implementation"
        return CourseTestsResult({name: "error" for name in names}, {}, missing)
    problem: str | None = None
    if result.status == "collection_error":
        problem = f"{chapter.implementation} could not be imported: {result.message}"
        return CourseTestsResult({name: "error" for name in names}, {}, problem)
    if result.status != "completed":
        problem = f"the course tests did not finish: {result.message}"
    results = {name: result.outcome(name) for name in names}
    failures = {
        name: for_students(_first_failing_case(result, name))
        for name in names
        if results[name] != "passed"
    }
    return CourseTestsResult(results, failures, problem, result.durations())


def _first_failing_case(run: RunResult, name: str) -> str:
    """The report of the first failing case of test ``name``, whole (a model-based test's
    shrunk program with it), and the names of the other cases that fail too."""
    failing = [o for o in run.outcomes if o.name.split("[", 1)[0] == name and o.status != "passed"]
    first = next((o for o in failing if o.detail), None)
    if first is None:
        return run.detail(name)
    others = [o.name for o in failing if o is not first]
    also = f"\n\n({', '.join(others)} fails too: fix this case first)" if others else ""
    return first.detail + also


def _validate(
    chapter: Chapter,
    submission: Submission,
    limits: Limits,
    pool: WorkerPool,
    threads: ThreadPoolExecutor,
) -> StudentTestsResult:
    """Phase 2: is the student's test file one whose kills can be trusted?"""
    required = [test.name for test in chapter.required_tests]
    if submission.tests is None:
        problem = submission.tests_problem or "no test file"
        return StudentTestsResult(False, (problem,), tuple(required), (), 0.0)
    violations, tests = check_test_source(submission.tests, chapter.module, chapter.interface)
    note = describe_overrides(overridden_settings(submission.tests))
    notes = (note,) if note else ()
    # A file that does not parse names no tests; calling them all missing would mislead.
    parsed = not any(v.code in UNREAD for v in violations)
    defined = {function_name(test) for test in tests}
    missing = tuple(name for name in required if name not in defined) if parsed else ()
    why_missing = tuple(missing_reason(name, submission.tests, defined) for name in missing)
    if violations:
        broken = tuple(v.describe(chapter.student_tests) for v in violations)
        return StudentTestsResult(
            False, broken, missing, tuple(tests), 0.0, notes, missing_reasons=why_missing
        )

    jobs: dict[Future[RunResult], Job] = {}

    def job(
        implementation: str,
        reverse: bool = False,
        seed: int = FIXED_HASH_SEED,
    ) -> Future[RunResult]:
        run = student_tests_job(
            chapter,
            submission.tests or "",
            implementation,
            limits.student_tests,
            reverse=reverse,
            hash_seed=seed,
        )
        future = threads.submit(pool.run, run)
        jobs[future] = run
        return future

    def settled(future: Future[RunResult]) -> RunResult:
        """The run's result, its timeout confirmed: a timeout here makes the file not valid."""
        return pool.confirm(jobs[future], future.result())

    reference = chapter.reference.read_text(encoding="utf-8")
    first = job(reference)
    again = job(reference, reverse=True, seed=OTHER_HASH_SEED)
    wheats = {w.id: job(apply_patch(reference, w.patch)) for w in chapter.wheats}
    stub = job(chapter.stub.read_text(encoding="utf-8"))

    problems: list[str] = []
    on_reference = settled(first)
    problems += _problems_on_correct(
        on_reference, "the reference", chapter.student_tests, limits.student_tests
    )
    rerun = settled(again) if not problems else again.result()
    if not problems and _signature(rerun) != _signature(on_reference):
        changed = [
            n for n in on_reference.test_names() if rerun.outcome(n) != on_reference.outcome(n)
        ]
        problems.append(
            f"flaky: {', '.join(changed) or 'the run'} gave another outcome in another order or "
            "with another hash seed; tests must not depend on order, chance or shared state"
        )
    if not problems:  # a test wrong on the reference is wrong on every variant: say it once
        for wheat_id, run in wheats.items():
            problems += _problems_on_correct(
                settled(run),
                f"the correct variant {wheat_id}",
                chapter.student_tests,
                limits.student_tests,
            )
    stub_run = stub.result()  # a timeout on the stub is a failure there, as it should be
    if on_reference.status in ("completed", "crashed"):
        present = [name for name in required if name not in missing]
        problems += _required_problems(present, on_reference, stub_run, submission.tests)
    valid = not problems and not missing
    durations = {
        "reference": on_reference.durations(),
        "reference, reversed": rerun.durations(),
        **{f"correct variant {w}": run.result().durations() for w, run in wheats.items()},
        "stub": stub_run.durations(),
    }
    return StudentTestsResult(
        valid,
        tuple(problems),
        missing,
        tuple(tests),
        on_reference.cpu_seconds,
        notes,
        why_missing,
        (),
        durations,
    )


def _disagreements(
    chapter: Chapter, student: StudentTestsResult, yours: RunResult | None, limit: float
) -> tuple[str, ...]:
    """The tests of a valid file (so each passes on the reference) that do not pass on the
    student's own code, with why."""
    if yours is None or not student.valid:
        return ()
    if yours.status in ("collection_error", "timeout", "crashed") and not yours.failing():
        return (
            f"on your {chapter.implementation}: "
            + run_problem(yours, chapter.student_tests, limit),
        )
    return tuple(
        f"{name} {status_phrase(yours.outcome(name))} on your {chapter.implementation}: "
        + failure_reason(yours.detail(name), chapter.student_tests)
        for name in yours.failing()
    )


def _required_problems(
    required: list[str], reference: RunResult, stub: RunResult, source: str
) -> list[str]:
    """Each required test must be collected and must fail on the stub; why each one does not.

    A test counts under its function's own name, at the top level or in a
    test class (``TestSplits::test_split_by_hand``); every test of that name
    must fail on the stub, or it checks nothing yet.
    """
    problems = []
    for name in required:
        collected = [t for t in reference.test_names() if function_name(t) == name]
        if not collected:
            problems.append(
                f"{name} is defined but pytest does not collect it: keep it a function named "
                "test_... at the top level or a method of a class named Test..., and do not "
                "bind the name to anything else"
            )
            continue
        for test in collected:
            status = stub.outcome(test)
            if status == "passed":
                why = swallowing_handler(source, test)
                problems.append(
                    f"{test} passes on the stub, so it checks nothing yet: "
                    + (why if why else "make it assert behaviour")
                )
            elif status not in ("failed", "error", "timeout"):
                why = f": {stub.message}" if stub.message else ""
                problems.append(
                    f"{test} {status_phrase(status)} on the stub{why}; every required test must "
                    "run and fail there"
                )
    return problems


def _signature(run: RunResult) -> tuple[str, dict[str, str]]:
    return run.status, {o.name: o.status for o in run.outcomes}


def run_problem(run: RunResult, filename: str, time_limit: float) -> str:
    """Why a run did not give every test an outcome, in one line: not collected, too slow
    (named as slow, with its limit: a slow test is not a hung one), out of output, ended."""
    from grader.output.wording import too_slow  # wording reads the results defined here

    if run.status == "collection_error":
        return f"{filename} could not be collected: {run.message}"
    if run.status == "timeout":
        running = next((o.name for o in run.outcomes if o.status == "timeout"), "")
        return too_slow(time_limit, running, run.durations(), run.confirmed)
    if output_too_large(run.message) or any(output_too_large(o.detail) for o in run.outcomes):
        return too_much_output()
    return f"{run.message}: tests must not end the process"


def _problems_on_correct(run: RunResult, what: str, filename: str, limit: float) -> list[str]:
    """Why a run on a correct implementation shows the tests themselves are wrong, if it does."""
    if run.status in ("collection_error", "timeout"):
        return [f"on {what}: {run_problem(run, filename, limit)}"]
    problems = []
    for name in run.test_names():
        status = run.outcome(name)
        if status not in ("passed", "not run"):
            detail = failure_reason(run.detail(name), filename)
            verb = status_phrase(status)
            problems.append(
                f"{name} {verb} on {what} (a correct tree), so the test is wrong: " + detail
            )
    if run.status == "crashed":
        problems.append(f"on {what}: {run_problem(run, filename, limit)}")
    if not run.outcomes and run.status == "completed":
        problems.append(f"{filename} has no tests")
    return problems


REFERENCE_AMONG_MUTANTS = 2
"""How often the reference runs again among the mutant runs, under the mutants' limits."""


def run_mutants(
    chapter: Chapter,
    tests: str,
    sources: dict[str, str],
    limit: float,
    pool: WorkerPool,
    threads: ThreadPoolExecutor,
    progress: Progress | None = None,
    ceiling: float | None = None,
) -> MutationResult:
    """Phase 3: the test file ``tests`` against every planted mutant, ``limit`` seconds of CPU
    time each, every run seeing the limits ``ceiling``; and the reference again, at places
    among them (``reference_places``), under the same conditions: what fails on any of
    those is in ``reference_problems``, and makes the file not valid."""
    reference = chapter.reference.read_text(encoding="utf-8")
    ids = [mutant.id for mutant in chapter.mutants]
    order = list(ids)
    for place in reference_places(tests, len(ids)):
        order.insert(place, f"reference {len(order)}")
    jobs = {
        name: student_tests_job(
            chapter, tests, sources.get(name, reference), limit, ceiling=ceiling
        )
        for name in order
    }
    futures = {name: threads.submit(pool.run, job) for name, job in jobs.items()}
    for done, _ in enumerate(as_completed(futures.values()), start=1):
        if progress is not None:
            progress(PHASES["mutants"], done, len(futures))
    # A timeout is a kill (or, on the reference, a file not valid) only once confirmed alone.
    runs = {name: pool.confirm(jobs[name], futures[name].result()) for name in order}
    results = tuple(
        replace(
            _mutant_result(m, runs[m.id], chapter.show_mutant_titles),
            durations=runs[m.id].durations(),
        )
        for m in chapter.mutants
    )
    problems: list[str] = []
    for name in order:
        if name not in sources:
            what = "the reference, run again among the mutants"
            problems += _problems_on_correct(runs[name], what, chapter.student_tests, limit)
    unique = tuple(dict.fromkeys(problems))
    return MutationResult(chapter.threshold, chapter.required, results, unique)


def reference_places(tests: str, mutants: int) -> list[int]:
    """Where among ``mutants`` runs the reference runs again: places drawn from a digest of the
    test file, so the same file gets them every time, yet nothing in a run tells which it is
    (every run of the file looks alike, and no run sees another)."""
    digest = bytes.fromhex(text_digest(tests))
    return sorted(digest[i] % (mutants + 1) for i in range(REFERENCE_AMONG_MUTANTS))


def _mutant_result(mutant: Mutant, run: RunResult, show_title: bool) -> MutantResult:
    """The mutant's status; its title only where the chapter shows titles to students."""
    title = mutant.title if show_title else ""
    killers = tuple(run.failing())
    if run.status in ("crashed", "collection_error"):
        what = run.message if run.status == "crashed" else f"collection failed: {run.message}"
        message = (
            f"on mutant {mutant.id} {what}: a run that does not report every test "
            "is an error, not a kill"
        )
        return MutantResult(mutant.id, title, "error", (), message)
    if run.status == "timeout":
        message = f"timeout (confirmed): {run.message}"
        return MutantResult(mutant.id, title, "timeout", killers, message)
    if killers:
        return MutantResult(mutant.id, title, "killed", killers)
    return MutantResult(mutant.id, title, "survived", ())
