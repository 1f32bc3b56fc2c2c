"""Kills that hold across seeds: each kill by a test that draws examples, rerun with more seeds.

Every graded run draws hypothesis's examples from one derandomized seed, so a
kill by a test that draws them (``@given``, a state machine) may be luck.
With K further seeds (``robustness_seeds``: derived from the chapter's id
alone, the same for every student and every run), each such kill is rerun:
it holds on a seed where the test fails on the mutant and passes on the
reference with that seed. A test that fails on the reference with a further
seed is flaky across seeds, a warning. The grade stays on the graded seed.

Which tests draw examples is read from the graded run's record: hypothesis's
report of a failure it found carries its shrunk example (``DRAWN_MARKS``), so
only those kills are rerun. Each selection of tests runs on the reference
once per seed under the very job it gets on a mutant, so nothing in a rerun
tells a mutant from the reference.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from grader.grading.explain import failure_reason
from grader.grading.jobs import student_tests_job
from grader.grading.validation import run_problem
from grader.inputs.catalog import Chapter
from grader.inputs.provenance import text_digest
from grader.results.check import FlakyAcrossSeeds, RobustnessResult, SeededKill
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult
from grader.sandbox.protocol.status import FAILING, TELLS_APART, TestStatus, is_kill, mutant_status

DRAWN_MARKS = (
    re.compile(r"^E\s+Failing test case:", re.MULTILINE),
    re.compile(r"^E\s+state\.teardown\(\)$", re.MULTILINE),
)
"""How hypothesis's report of a failure shows an example it drew: its opening line (an
explicit ``@example``'s says ``Failing explicit example``: no seed chooses it), or a state
machine's last step, for a program so long that the report's middle, its opening with it,
was cut (``sandbox.untrusted.recorder``)."""
SEED_BITS = 48
"""A seed's size: JSON readers that hold numbers as doubles keep it exactly."""
EXAMPLE_LINES = 20
"""The most lines of a shrunk example a flaky warning keeps."""

Rerun = tuple[str, tuple[str, ...], int]
"""A rerun's key: the mutant's id (empty for the reference), the tests run, the seed."""


def robustness_seeds(chapter_id: str, count: int) -> tuple[int, ...]:
    """The ``count`` further seeds of chapter ``chapter_id``: drawn from a digest of its id
    and their place, so every student, run and machine gets the same, and the first seeds
    of a longer list are those of a shorter one; never 0 (the graded run's own draw)."""
    digests = (text_digest(f"{chapter_id} robustness seed {i}") for i in range(1, count + 1))
    return tuple(max(1, int(digest[: SEED_BITS // 4], 16)) for digest in digests)


def draws_examples(detail: str) -> bool:
    """Whether a failure report (``detail``) is hypothesis's, with an example it drew."""
    return any(mark.search(detail) for mark in DRAWN_MARKS)


def drawn_example(detail: str) -> str:
    """The shrunk example of hypothesis's report ``detail``, one line each without pytest's
    ``E`` (the failing call, or a state machine's steps); empty where it shows none."""
    lines = detail.splitlines()
    start = next((i for i, line in enumerate(lines) if DRAWN_MARKS[0].match(line)), None)
    if start is None:
        return ""
    opening = lines[start].split(":", 1)[1].strip()
    kept = [opening] if opening and opening != "<state machine>" else []
    for line in lines[start + 1 :]:
        if not line.startswith("E "):
            break
        kept.append(line[1:].strip())
    if len(kept) > EXAMPLE_LINES:
        kept = [*kept[: EXAMPLE_LINES - 1], f"... ({len(kept) - EXAMPLE_LINES + 1} lines more)"]
    return "\n".join(line for line in kept if line)


def drawing_kills(chapter: Chapter, runs: dict[str, RunResult]) -> dict[str, tuple[str, ...]]:
    """Each killed mutant's killers whose failure shows a drawn example, by mutant id in the
    catalog's order (mutants without such a killer left out)."""
    found = {}
    for mutant in chapter.mutants:
        run = runs[mutant.id]
        if not is_kill(mutant_status(run.status, bool(run.failing()))):
            continue
        drawing = tuple(
            name
            for name in run.failing()
            if run.outcome(name) in FAILING and draws_examples(run.detail(name))
        )
        if drawing:
            found[mutant.id] = drawing
    return found


def rerun_kills(
    chapter: Chapter,
    tests: str,
    sources: dict[str, str],
    runs: dict[str, RunResult],
    seeds: tuple[int, ...],
    job_settings: tuple[float, float | None, bool],
    pool: WorkerPool,
    threads: ThreadPoolExecutor,
    stop: threading.Event,
) -> RobustnessResult | None:
    """Each kill of ``runs`` (the mutant phase's, by mutant id) by a test that draws examples,
    rerun on its mutant and on the reference with every seed of ``seeds``.

    ``job_settings`` are the mutant runs' own: their time limit, the limits every run sees
    (``ceiling``) and whether a run stops at its first failing test. Once ``stop`` is set
    no more reruns start, and there is no result (``None``)."""
    drawn = drawing_kills(chapter, runs)
    reference = chapter.reference.read_text(encoding="utf-8")
    limit, ceiling, stop_at_failure = job_settings

    def job(implementation: str, only: tuple[str, ...], seed: int) -> Job:
        run = student_tests_job(
            chapter, tests, implementation, limit, ceiling=ceiling, stop_at_failure=stop_at_failure
        )
        return replace(run, only=only, hypothesis_seed=seed)

    jobs: dict[Rerun, Job] = {}
    for seed in seeds:
        for mutant, chosen in drawn.items():
            jobs[(mutant, chosen, seed)] = job(sources[mutant], chosen, seed)
        for chosen in dict.fromkeys(drawn.values()):
            jobs[("", chosen, seed)] = job(reference, chosen, seed)

    def run(each: Job) -> RunResult | None:
        return None if stop.is_set() else pool.confirm(each, pool.run(each))

    futures: dict[Rerun, Future[RunResult | None]] = {
        key: threads.submit(run, each) for key, each in jobs.items()
    }
    done = {key: future.result() for key, future in futures.items()}
    finished = {key: result for key, result in done.items() if result is not None}
    if len(finished) < len(done):
        return None
    return _robustness(chapter, drawn, finished, seeds, limit)


def _robustness(
    chapter: Chapter,
    drawn: dict[str, tuple[str, ...]],
    done: dict[Rerun, RunResult],
    seeds: tuple[int, ...],
    limit: float,
) -> RobustnessResult:
    """What the reruns show: each kill's seeds, and each test flaky on the reference."""
    kills = []
    for mutant, chosen in drawn.items():
        for test in chosen:
            held = 1 + sum(
                done[(mutant, chosen, seed)].outcome(test) in TELLS_APART
                and done[("", chosen, seed)].outcome(test) == TestStatus.PASSED
                for seed in seeds
            )
            kills.append(SeededKill(mutant, test, held, len(seeds) + 1))
    flaky: dict[tuple[str, int], FlakyAcrossSeeds] = {}
    for seed in seeds:
        for chosen in dict.fromkeys(drawn.values()):
            run = done[("", chosen, seed)]
            for test in chosen:
                if (
                    run.outcome(test) in (TestStatus.PASSED, TestStatus.NOT_RUN)
                    or (test, seed) in flaky
                ):
                    continue
                detail = run.detail(test)
                reason = (
                    failure_reason(detail, chapter.student_tests)
                    if detail
                    else run_problem(run, chapter.student_tests, limit)
                )
                flaky[(test, seed)] = FlakyAcrossSeeds(test, seed, reason, drawn_example(detail))
    robust_share = chapter.robustness.robust_share
    return RobustnessResult(seeds, robust_share, tuple(kills), tuple(flaky.values()))
