"""The runs a check makes: the limits they get and the jobs they are.

Every run of the student's tests, whatever the implementation, is built by
``student_tests_job``, so nothing in a run tells a mutant from the reference;
the course tests' run by ``course_tests_job``. ``PHASES`` names what the progress
line says while each phase runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import Sources, kit_sources
from grader.inputs.hypothesis_profile import GRADER_SETTINGS
from grader.sandbox.host.job import FIXED_HASH_SEED, OTHER_HASH_SEED, Interface, Job
from grader.sandbox.host.result import RunResult
from grader.sandbox.levels import IsolationLevel

Progress = Callable[[str, int, int], None]
"""Called as ``progress(phase, done, total)`` as a phase starts and runs (``total`` 0: a
phase whose runs are not counted)."""
PHASES = {
    "validation": "the course tests on your code; your tests on the reference, the correct "
    "variants, the stub and your code",
    "mutants": "your tests against the planted mutants",
    "robustness": "your kills by tests that draw examples, with further seeds",
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
    it needs (``--ref-deps``), not the submission's own (``grader.inputs.dependencies``)."""
    every_kill: bool = False
    """Run every test on every mutant (``--every-kill``): by default a mutant's run ends at
    its first failing test, which decides the kill, and names only that test as its killer."""
    robustness: int = 0
    """How many further seeds each kill by a test that draws examples is rerun with
    (``--robustness K``, ``grader.grading.robustness``); 0: none. The grade never changes."""

    def settings(self) -> dict[str, object]:
        """Everything that sets how the runs go, as plain data: the limits (not the isolation
        asked for, the key holds the one reached), whether the kit's copy of each needed module
        stood in for the student's, whether mutant runs go past their first failure, the two
        hash seeds, the reversed rerun and hypothesis's fixed settings, and the further seeds
        asked for, where there are any. A report carries it; a replay runs with it."""
        robustness = {"robustness": self.robustness} if self.robustness else {}
        return {
            "course_tests": self.course_tests,
            "student_tests": self.student_tests,
            "mutant_floor": self.mutant_floor,
            "mutant_factor": self.mutant_factor,
            "ref_deps": self.ref_deps,
            "every_kill": self.every_kill,
            "hash_seeds": [FIXED_HASH_SEED, OTHER_HASH_SEED],
            "rerun_reversed": True,
            "hypothesis": {name: str(value) for name, value in GRADER_SETTINGS.items()},
            **robustness,
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
        # a report from before mutant runs stopped at their first failure ran every test
        every_kill=settings.get("every_kill", True) is True,
        robustness=int(str(settings.get("robustness", 0))),
    )


def course_tests_job(
    chapter: Chapter, implementation: str, time_limit: float, dependencies: Sources | None = None
) -> Job:
    """The run of the course tests against ``implementation`` (the student's own: each call
    is bounded, ``Chapter.call_limit``), which may import ``dependencies``
    (``grader.inputs.dependencies.resolve``); ``None``: the kit's, as the reference runs with."""
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
        kit_tests=True,
        call_limit=chapter.call_limit,
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
    stop_at_failure: bool = False,
    own_tree: bool = False,
    heap_shift: int = 0,
) -> Job:
    """The run of the student's test file (its text, ``tests``) against ``implementation``.

    Every run of it, whatever the implementation, is this same job but for
    the implementation's source and its time limit, which the run cannot see:
    the same options, files, environment and visible limits (``ceiling``, the
    student's tests' own time limit, for every one of them), and the kit's copy
    of every earlier chapter's module the chapter needs (``dependencies``
    replaces it for the student's own implementation). ``stop_at_failure`` (the
    mutants' runs, and the reference's among them) is the worker's to apply.
    ``own_tree``: the implementation is the student's own, whose calls are bounded
    (``Chapter.call_limit``: a call past it is a located hang); no other run's are, so a
    timeout that decides a kill or a file's validity is still a confirmed one.
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
        stop_at_failure=stop_at_failure,
        call_limit=chapter.call_limit if own_tree else 0.0,
        heap_shift=heap_shift,
    )


def mutant_limit(limits: Limits, reference_cpu_seconds: float) -> float:
    """The CPU time a mutant run may use: ``factor`` times the reference run's, at least the
    floor, at most what the reference run itself was given."""
    wanted = max(limits.mutant_floor, limits.mutant_factor * reference_cpu_seconds)
    return min(limits.student_tests, wanted)


def too_slow_a_call(limit: float) -> str:
    """Why a test one of whose calls passed the bound (``Chapter.call_limit``) on the
    student's tree is the test's fault: that call passes it on the reference too."""
    return (
        f"too slow: one of its calls ran {limit:g} s of CPU time without returning, on the "
        "reference too (a correct tree), so it is the test that asks too much: make it do less"
    )


def blame_slow_tests(chapter: Chapter, run: RunResult, reference: dict[str, float]) -> RunResult:
    """``run`` of the student's tests on their own tree, each test that hung there (``RunResult.
    hung``) but took as long as the call bound on the reference (its ``reference`` seconds)
    said to be too slow: the tree is blamed for a hang only where the test is quick on a
    correct one."""
    slow = {
        name
        for name in run.test_names()
        if run.hung(name) and reference.get(name, 0.0) >= chapter.call_limit
    }
    if not slow:
        return run
    said = f"E   {too_slow_a_call(chapter.call_limit)}"
    outcomes = tuple(
        replace(outcome, detail=said) if outcome.name.split("[", 1)[0] in slow else outcome
        for outcome in run.outcomes
    )
    return replace(run, outcomes=outcomes)
