"""Phase 2 of a check: is the student's test file one whose kills can be trusted?

It must follow the static rules and name the required tests, pass on the reference
(three times: once more in another order under another hash seed, once more with a
shifted heap, to catch flaky tests; ``RERUNS``) and on every wheat, and each required
test must fail on the stub. The sentences that say why a run shows the file wrong live
here too (``run_problem``), for ``tdd`` and the mutant phase alike.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from grader.grading.explain import (
    failure_reason,
    missing_reason,
    output_too_large,
    swallowing_handler,
    too_much_output,
)
from grader.grading.jobs import Limits, student_tests_job
from grader.grading.wording import too_slow
from grader.inputs import python_source
from grader.inputs.catalog import Chapter
from grader.inputs.patching import apply_patch
from grader.inputs.provenance import text_digest
from grader.inputs.submission import Submission
from grader.results.check import StudentTestsResult
from grader.sandbox.host.job import FIXED_HASH_SEED, OTHER_HASH_SEED, Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult, status_phrase
from grader.sandbox.protocol.status import TELLS_APART, RunStatus, TestStatus
from grader.static.checker import (
    UNREAD,
    check_test_source,
    describe_overrides,
    function_name,
    overridden_settings,
)

TESTS_RAN = frozenset({RunStatus.COMPLETED, RunStatus.CRASHED})
"""The ends of a run whose tests ran, so that their outcomes say something."""


def validate(
    chapter: Chapter,
    submission: Submission,
    limits: Limits,
    pool: WorkerPool,
    threads: ThreadPoolExecutor,
    on_reference: Callable[[RunResult], None] | None = None,
    seen: dict[str, RunResult] | None = None,
) -> StudentTestsResult:
    """Phase 2: is the student's test file one whose kills can be trusted?

    ``on_reference`` is called with the first run on the reference as soon as it is
    settled and shows the file right there, while the other runs go on: the mutants'
    limit is known from then (``check`` starts them there). ``seen``, when given, gets the
    runs on the ``reference`` and the ``stub`` (``tdd`` shows their outcomes)."""
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
    broken = [v.describe(chapter.student_tests) for v in violations]
    if not parsed:  # nothing to run: the file is not Python the check can read
        return StudentTestsResult(
            False, tuple(broken), missing, tuple(tests), 0.0, notes, missing_reasons=why_missing
        )
    # A file the rules refuse still runs (the sandbox is the wall, the rules explain), so
    # that every problem is said at once; its mutants never start.
    runs = _Runs(chapter, submission.tests, limits, pool, threads)
    start = on_reference if not violations else None
    result = _run_validation(chapter, submission.tests, runs, missing, start, seen)
    problems = in_file_order([*broken, *result.problems], submission.tests, chapter.student_tests)
    return replace(
        result,
        valid=result.valid and not violations,
        problems=problems,
        tests=tuple(tests),
        notes=notes,
        missing_reasons=why_missing,
    )


def in_file_order(problems: Iterable[str], source: str, filename: str) -> tuple[str, ...]:
    """``problems`` in the order of the file they are about: a problem of the whole file
    first, then each by the line it names (a rule's ``FILE line N:``) or the line of the
    test it opens with; ties keep their order."""
    lines = test_lines(source)

    def line_of(problem: str) -> int:
        at = re.match(rf"{re.escape(filename)} line (\d+):", problem)
        if at:
            return int(at[1])
        for word in re.findall(r"[\w:]+", problem):
            if word in lines:  # the first test it names (a flaky verdict names it later)
                return lines[word]
        return 0

    return tuple(sorted(dict.fromkeys(problems), key=line_of))


def test_lines(source: str) -> dict[str, int]:
    """The line of each function of ``source`` by the name pytest gives its test
    (``test_x``, ``TestGroup::test_x``); empty for a file that does not parse."""
    try:
        tree = python_source.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.setdefault(f"{node.name}::{inner.name}", inner.lineno)
    return found


class _Runs:
    """The validation's runs of one test file, started at once on the pool; a run's timeout
    is confirmed when its result is settled."""

    def __init__(
        self,
        chapter: Chapter,
        tests: str,
        limits: Limits,
        pool: WorkerPool,
        threads: ThreadPoolExecutor,
    ) -> None:
        self.chapter, self.tests, self.limits = chapter, tests, limits
        self.pool, self.threads = pool, threads
        self.jobs: dict[Future[RunResult], Job] = {}

    def start(
        self,
        implementation: str,
        reverse: bool = False,
        seed: int = FIXED_HASH_SEED,
        heap_shift: int = 0,
    ) -> Future[RunResult]:
        job = student_tests_job(
            self.chapter,
            self.tests,
            implementation,
            self.limits.student_tests,
            reverse=reverse,
            hash_seed=seed,
            heap_shift=heap_shift,
        )
        future = self.threads.submit(self.pool.run, job)
        self.jobs[future] = job
        return future

    def settled(self, future: Future[RunResult]) -> RunResult:
        """The run's result, its timeout confirmed: a timeout here makes the file not valid."""
        return self.pool.confirm(self.jobs[future], future.result())


def _run_validation(
    chapter: Chapter,
    source: str,
    runs: _Runs,
    missing: tuple[str, ...],
    on_reference_passed: Callable[[RunResult], None] | None,
    seen: dict[str, RunResult] | None = None,
) -> StudentTestsResult:
    """The file on the reference (three times: ``RERUNS``), every wheat and the stub; what each
    run shows."""
    filename, limit = chapter.student_tests, runs.limits.student_tests
    reference = chapter.reference.read_text(encoding="utf-8")
    first = runs.start(reference)
    again = runs.start(reference, reverse=True, seed=OTHER_HASH_SEED)
    shifted = runs.start(reference, heap_shift=heap_shift(source))
    wheats = {w.id: runs.start(apply_patch(reference, w.patch)) for w in chapter.wheats}
    stub = runs.start(chapter.stub.read_text(encoding="utf-8"))

    on_reference = runs.settled(first)
    required_names = frozenset(test.name for test in chapter.required_tests)
    problems = problems_on_correct(on_reference, REFERENCE, filename, limit, required_names)
    if not problems and not missing and on_reference_passed is not None:
        on_reference_passed(on_reference)
    settle = runs.settled if not problems else lambda run: run.result()
    reruns = {REVERSED: settle(again), SHIFTED_HEAP: settle(shifted)}
    said = {kind: flaky(on_reference, rerun, kind, filename) for kind, rerun in reruns.items()}
    flaky_kinds = tuple(kind for kind, sentences in said.items() if sentences)
    problems += [sentence for sentences in said.values() for sentence in sentences]
    wrong = {p.split(" ", 1)[0] for p in problems}
    if on_reference.status in TESTS_RAN:  # else nothing ran: said once above
        for wheat in chapter.wheats:  # a test wrong on the reference is said once, not per variant
            on_wheat = runs.settled(wheats[wheat.id])
            found = problems_on_correct(
                on_wheat, wheat.described(), filename, limit, required_names
            )
            problems += [p for p in found if p.split(" ", 1)[0] not in wrong]
    stub_run = stub.result()  # a timeout on the stub is a failure there, as it should be
    if seen is not None:
        seen.update(reference=on_reference, stub=stub_run)
    if on_reference.status in TESTS_RAN:
        required = [test.name for test in chapter.required_tests]
        present = [name for name in required if name not in missing]
        problems += _required_problems(present, on_reference, stub_run, source)
    durations = {
        "reference": on_reference.durations(),
        "reference, reversed": reruns[REVERSED].durations(),
        "reference, shifted heap": reruns[SHIFTED_HEAP].durations(),
        **{f"correct variant {w}": run.result().durations() for w, run in wheats.items()},
        "stub": stub_run.durations(),
    }
    valid = not problems and not missing
    return StudentTestsResult(
        valid,
        in_file_order(problems, source, filename),
        missing,
        (),
        on_reference.cpu_seconds,
        durations=durations,
        flaky_reruns=flaky_kinds,
    )


REFERENCE = "the reference (a correct tree)"
REVERSED = "reversed order, another hash seed"
SHIFTED_HEAP = "shifted heap"
RERUNS = {
    REVERSED: (
        "run again in reverse order and with another hash seed",
        "tests must not depend on order, chance or shared state",
    ),
    SHIFTED_HEAP: (
        "run again with its objects at other addresses (a shifted heap)",
        "tests must not depend on where objects lie in memory (the order of a set of "
        "objects that hash by identity, id())",
    ),
}
"""The reruns of the file on the reference beside its first run, by kind
(``StudentTestsResult.flaky_reruns`` names those that disagreed): how the flaky verdict
names the rerun, and the rule a difference breaks. A new kind of rerun is one more entry."""

_HEAP_SHIFTS = 4


def heap_shift(tests: str) -> int:
    """How many objects of each small size the shifted-heap rerun of the test file ``tests``
    keeps before its first test: odd (1 to 7), so that a plain object's address moves by an
    odd number of blocks, and drawn from the file's digest, so every check of it shifts
    alike."""
    return 1 + 2 * (int(text_digest(tests)[:8], 16) % _HEAP_SHIFTS)


def flaky(first: RunResult, rerun: RunResult, kind: str, filename: str) -> list[str]:
    """The sentence for a file whose rerun of kind ``kind`` on the reference gave other
    outcomes than its first run: which rerun, which tests, and how each changed."""
    if _signature(rerun) == _signature(first):
        return []
    if {first.status, rerun.status} & {RunStatus.COLLECTION_ERROR, RunStatus.TIMEOUT}:
        return []  # that run's own problem is said, not a difference of outcomes
    names = list(dict.fromkeys([*first.test_names(), *rerun.test_names()]))
    changes = []
    for name in names:
        before, after = first.outcome(name), rerun.outcome(name)
        if before == after:
            continue
        failed = first if before not in (TestStatus.PASSED, TestStatus.NOT_RUN) else rerun
        why = failure_reason(failed.detail(name), filename) if failed.detail(name) else ""
        changes.append(f"{name} {before} first, {after} then" + (f" ({why})" if why else ""))
    if not changes:
        changes = [f"the run ended {first.status} first, {rerun.status} then"]
    how, rule = RERUNS[kind]
    said = "; ".join(changes)
    return [f"flaky: on the reference, the file {how} gave other outcomes: {said}; {rule}"]


def disagreements(
    chapter: Chapter, student: StudentTestsResult, yours: RunResult | None, limit: float
) -> tuple[str, ...]:
    """The tests of a valid file (so each passes on the reference) that do not pass on the
    student's own code, with why."""
    if yours is None or not student.valid:
        return ()
    if (
        yours.status in (RunStatus.COLLECTION_ERROR, RunStatus.TIMEOUT, RunStatus.CRASHED)
        and not yours.failing()
    ):
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
            if status == TestStatus.PASSED:
                why = swallowing_handler(source, test)
                problems.append(
                    f"{test} passes on the stub, so it checks nothing yet: "
                    + (why if why else "make it assert behaviour")
                )
            elif status not in TELLS_APART:
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
    if run.status == RunStatus.COLLECTION_ERROR:
        return f"{filename} could not be collected: {run.message}"
    if run.status == RunStatus.TIMEOUT:
        running = next((o.name for o in run.outcomes if o.status == TestStatus.TIMEOUT), "")
        return too_slow(time_limit, running, run.durations(), run.confirmed)
    if output_too_large(run.message) or any(output_too_large(o.detail) for o in run.outcomes):
        return too_much_output()
    return f"{run.message}: tests must not end the process"


def problems_on_correct(
    run: RunResult,
    what: str,
    filename: str,
    limit: float,
    required: Collection[str] = (),
) -> list[str]:
    """Why a run on a correct implementation shows the tests themselves are wrong, if it
    does. ``what`` names the implementation and says it is correct; a test not among the
    ``required`` names (when given) is an extra one, whose removal clears its problem too."""
    if run.status in (RunStatus.COLLECTION_ERROR, RunStatus.TIMEOUT):
        return [f"on {_short(what)}: {run_problem(run, filename, limit)}"]
    problems = []
    for name in run.test_names():
        status = run.outcome(name)
        if status not in (TestStatus.PASSED, TestStatus.NOT_RUN):
            detail = failure_reason(run.detail(name), filename)
            verb = status_phrase(status)
            extra = ""
            if required and function_name(name) not in required:
                extra = (
                    f"; {function_name(name)} is not a required test, so removing it also "
                    "makes the file valid"
                )
            problems.append(f"{name} {verb} on {what}, so the test is wrong: {detail}{extra}")
    if run.status == RunStatus.CRASHED:
        problems.append(f"on {_short(what)}: {run_problem(run, filename, limit)}")
    if not run.outcomes and run.status == RunStatus.COMPLETED:
        problems.append(f"{filename} has no tests")
    return problems


def _short(what: str) -> str:
    """``what`` without what it says of the implementation: ``the reference``, ``w01``."""
    return what.replace(" (a correct tree)", "").split(", a correct tree", 1)[0]
