"""What ``grader check`` finds: the verdict on a submission's code and the grade of its tests.

``CheckReport`` holds one part per phase (``CourseTestsResult``, ``StudentTestsResult``,
``MutationResult``); ``kills_needed`` is the threshold rule a ``MutationResult`` is held to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from grader.course.similarity import KnownSource
from grader.inputs.dependencies import DependencyUse
from grader.inputs.provenance import ResultKey
from grader.sandbox.levels import IsolationLevel
from grader.sandbox.protocol.status import MutantStatus, TestStatus, Verdict, is_kill


@dataclass(frozen=True)
class CourseTestsResult:
    """Phase 1: the course tests against the student's implementation."""

    results: dict[str, TestStatus]
    """Each course test's outcome, by name (parametrized cases folded into the worst)."""
    failures: dict[str, str]
    """For each course test that did not pass, the report a student reads (its first
    failing case, whole)."""
    problem: str | None
    """Why the run gave no usable outcomes (no implementation, not importable, did not
    finish); ``None`` when it ran to the end."""
    durations: dict[str, float] = field(default_factory=dict, compare=False)
    """Seconds per course test."""

    @property
    def passed(self) -> int:
        """How many course tests passed."""
        return sum(status == TestStatus.PASSED for status in self.results.values())

    @property
    def total(self) -> int:
        """How many course tests there are."""
        return len(self.results)


@dataclass(frozen=True)
class StudentTestsResult:
    """Phase 2: whether the student's test file is one whose kills can be trusted."""

    valid: bool
    """The file follows the rules, names every required test, passes on the reference and
    every wheat (in either order, under either hash seed), and each required test fails on
    the stub: only then are the mutants run."""
    problems: tuple[str, ...]
    """Why the file is not valid, one sentence each."""
    missing: tuple[str, ...]
    """The required tests the file does not define."""
    tests: tuple[str, ...]
    """The tests the file defines, in its order."""
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
    flaky_reruns: tuple[str, ...] = ()
    """The reruns on the reference whose outcomes differed from its first run, by kind
    (``grader.grading.validation.RERUNS``: ``reversed order, another hash seed``, ``shifted heap``);
    each has its sentence in ``problems``."""


@dataclass(frozen=True)
class MutantResult:
    """Phase 3, one planted mutant: what the student's tests did to it."""

    id: str
    """The mutant's id in the catalog."""
    title: str
    """What the mutant breaks, in words; empty where the chapter hides titles from students."""
    status: MutantStatus
    """How the run on the mutant ended (``grader.sandbox.protocol.status``)."""
    killed_by: tuple[str, ...]
    """The tests that failed on the mutant (for a timeout, those that failed before it)."""
    message: str = field(default="", compare=False)
    """What a timeout or an error was, in one line; empty for a kill or a survivor."""
    durations: dict[str, float] = field(default_factory=dict, compare=False)
    """Seconds per test of the run on this mutant."""

    @property
    def detected(self) -> bool:
        """A kill, by the one kill rule (``grader.sandbox.protocol.status.KILLS``)."""
        return is_kill(self.status)


@dataclass(frozen=True)
class StudentTestWorth:
    """What one of the student's tests earns: the mutants it kills, and the tests that make it
    redundant (each kills every mutant this one kills; empty when it kills nothing)."""

    name: str
    """The test's name."""
    kills: tuple[str, ...]
    """The ids of the mutants it kills."""
    covered_by: tuple[str, ...]
    """The other tests that kill every mutant this one kills."""


@dataclass(frozen=True)
class SeededKill:
    """One kill by a test that draws examples, rerun with the further seeds: on how many of
    all the seeds (the graded one first) the test failed on the mutant and passed on the
    reference."""

    mutant: str
    """The mutant's id."""
    test: str
    """The test that killed it with the graded seed."""
    held: int
    """On how many seeds the kill held, the graded one included (so at least 1)."""
    seeds: int
    """How many seeds there were in all: the further ones and the graded one."""


@dataclass(frozen=True)
class FlakyAcrossSeeds:
    """A test that passes on the reference with the graded seed but fails there with another:
    a warning, which changes no grade."""

    test: str
    """The test's name."""
    seed: int
    """The further seed it failed with."""
    reason: str
    """Why it failed, in one line (``grader.grading.explain.failure_reason``)."""
    example: str
    """Hypothesis's shrunk example it failed on (the failing call, or the state machine's
    steps), one line each; empty where the report shows none."""


@dataclass(frozen=True)
class RobustnessResult:
    """Each kill by a test that draws examples, rerun with further seeds
    (``grader.grading.robustness``); the grade stays on the graded seed."""

    seeds: tuple[int, ...]
    """The further seeds, derived from the chapter alone: the same for every student."""
    robust_share: float
    """The share of all the seeds a kill must hold on to be robust (the catalog's)."""
    kills: tuple[SeededKill, ...]
    """Each kill rerun, in the catalog's order of mutants, then the file's order of tests."""
    flaky: tuple[FlakyAcrossSeeds, ...] = ()
    """The tests that failed on the reference with a further seed, each seed once."""

    def robust(self, kill: SeededKill) -> bool:
        """Whether ``kill`` held on at least ``robust_share`` of the seeds."""
        return kill.held >= self.robust_share * kill.seeds - 1e-9

    def holds(self, mutant: str) -> bool:
        """Whether the kill of ``mutant`` (a killed one) is robust: made by a test that draws
        no example (no seed decides it), or, at its best, holding on enough seeds."""
        best = self.best(mutant)
        return best is None or self.robust(best)

    def best(self, mutant: str) -> SeededKill | None:
        """The kill of ``mutant`` that held on the most seeds; ``None``: no test that draws
        examples killed it, so no seed decides its kill (robust by construction)."""
        kills = [kill for kill in self.kills if kill.mutant == mutant]
        return max(kills, key=lambda kill: kill.held) if kills else None


def kills_needed(threshold: float, total: int) -> int:
    """The fewest kills of ``total`` mutants that meet ``threshold``: 13 of 18 at 0.70.

    The small allowance absorbs floating point: 0.28 * 25 is 7.000000000000001, and needs 7.
    """
    return max(0, math.ceil(threshold * total - 1e-9))


@dataclass(frozen=True)
class MutationResult:
    """Phase 3: the student's tests against every planted mutant."""

    threshold: float
    """The share of mutants the tests must kill (the chapter's)."""
    required: tuple[str, ...]
    """The mutants that must be killed whatever the score."""
    mutants: tuple[MutantResult, ...]
    """Each mutant's result, in the catalog's order."""
    reference_problems: tuple[str, ...] = ()
    """What the test file did wrong on the reference runs among the mutant runs."""
    robustness: RobustnessResult | None = None
    """The kills by tests that draw examples, rerun with further seeds (``--robustness``, the
    catalog's ``[robustness]`` for batch); ``None`` when none were asked for."""

    @property
    def killed(self) -> int:
        """How many mutants were detected."""
        return sum(m.detected for m in self.mutants)

    @property
    def total(self) -> int:
        """How many mutants ran."""
        return len(self.mutants)

    @property
    def score(self) -> float:
        """The share of mutants detected, to four places."""
        return round(self.killed / self.total, 4) if self.total else 0.0

    @property
    def survivors(self) -> tuple[MutantResult, ...]:
        """The mutants no test detected."""
        return tuple(m for m in self.mutants if m.status == MutantStatus.SURVIVED)

    @property
    def missed_required(self) -> tuple[str, ...]:
        """The required mutants that survived."""
        survived = {m.id for m in self.survivors}
        return tuple(m for m in self.required if m in survived)

    def status(self, mutant_id: str) -> MutantStatus:
        """The status of the mutant ``mutant_id``."""
        return next(m.status for m in self.mutants if m.id == mutant_id)

    @property
    def errors(self) -> tuple[MutantResult, ...]:
        """The mutants whose run neither killed nor passed (they make the file not valid)."""
        return tuple(m for m in self.mutants if m.status == MutantStatus.ERROR)

    @property
    def needed(self) -> int:
        """The kills the threshold asks for (``kills_needed``)."""
        return kills_needed(self.threshold, self.total)

    @property
    def enough_killed(self) -> bool:
        """Whether the kills meet the threshold."""
        return self.killed >= self.needed

    @property
    def passed(self) -> bool:
        """Enough kills, every required mutant among them, and no error."""
        return self.enough_killed and not self.missed_required and not self.errors


@dataclass(frozen=True)
class CheckReport:
    """Everything one check found about one submission; ``verdict`` is the decision."""

    chapter: str
    """The chapter's id."""
    submission: str
    """The submission's folder, as given."""
    course_tests: CourseTestsResult
    """Phase 1."""
    student_tests: StudentTestsResult
    """Phase 2."""
    mutation: MutationResult | None
    """Phase 3; ``None`` when the tests were not valid, so no mutant ran."""
    timings: dict[str, float] = field(compare=False)
    """Seconds per phase (``course_tests``, ``validation``, ``mutation``) and in all."""
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
    """The test file against the kit's own test files, for staff (``grader.course.similarity``)."""
    key: ResultKey | None = field(default=None, compare=False)
    """What decided this result (``grader.inputs.provenance``); ``None`` for a report built
    by hand."""
    settings: dict[str, object] = field(default_factory=dict, compare=False)
    """The settings of the runs (``Limits.settings``): what a replay needs."""
    dependencies: tuple[DependencyUse, ...] = ()
    """Which copy of each earlier chapter's module the student's implementation ran with."""
    reused: tuple[str, ...] = field(default=(), compare=False)
    """The phases taken from the cache (``course_tests``, ``tests``, ``yours``): their
    inputs are those of an earlier check's."""

    @property
    def first_kills_only(self) -> bool:
        """Whether each mutant's run ended at its first failing test (without ``--every-kill``),
        so each kill names that test alone; a report that does not say ran every test."""
        return self.settings.get("every_kill") is False

    @property
    def verdict(self) -> Verdict:
        """``pass`` when every course test passes and the tests are valid and pass the mutants."""
        ok = (
            self.course_tests.passed == self.course_tests.total
            and self.student_tests.valid
            and self.mutation is not None
            and self.mutation.passed
        )
        return Verdict.PASS if ok else Verdict.FAIL

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
