"""mutmut's time per generated mutant next to the grader's time per planted mutant.

In one run on the model answer's tests (the submission ``reference/``), this
measures:

- the grader: ``check``'s mutation phase (``timings["mutation"]``) over the
  18 planted mutants, each run forked from a warm worker; and, to tell the
  runs' own cost from the course tests' run that shares the pool during a
  check, the same 18 runs alone on a warmed pool of the same size;
- mutmut, through ``grader audit``: its mutation phase over the generated
  mutants it ran, and its whole run (mutant generation, the runs on the
  unmutated reference, the forced-fail run) over the same count.

Both run as many mutants at once as the grader's default (``grader.sandbox.host.pool.WORKERS``).
The target: the grader's time per planted mutant is no higher than mutmut's
time per generated mutant. ``--function`` restricts the audit for a quick
look; the figures in docs/benchmarks.md come from a run over every function.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.commands.audit import run_audit
from grader.commands.check import check
from grader.grading.jobs import Limits, student_tests_job
from grader.inputs.catalog import Chapter, load_chapter
from grader.inputs.patching import mutant_sources
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WORKERS, WorkerPool

KIT = Path(__file__).resolve().parent.parent
SUBMISSION = KIT / "reference"


def planted_alone(chapter: Chapter, workers: int) -> float:
    """Seconds per planted mutant when the 18 runs have a warmed pool to themselves."""
    tests = chapter.model_tests.read_text(encoding="utf-8")
    sources = list(mutant_sources(chapter).values())

    def job(source: str) -> Job:  # as check runs a mutant
        return student_tests_job(chapter, tests, source, 60.0)

    with WorkerPool(workers) as pool, ThreadPoolExecutor(workers + 1) as threads:
        for _ in range(workers):  # the first run of each worker warms it
            pool.run(job(chapter.reference.read_text(encoding="utf-8")))
        started = time.monotonic()
        list(threads.map(lambda source: pool.run(job(source)), sources))
        return (time.monotonic() - started) / len(sources)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--function", action="append", default=[], metavar="NAME")
    args = parser.parse_args(argv)
    chapter = load_chapter()
    limits = Limits()

    report = check(chapter, SUBMISSION, limits)
    assert report.mutation is not None, "the model answer's tests must be valid"
    grader_each = report.timings["mutation"] / report.mutation.total
    grader_alone = planted_alone(chapter, WORKERS)

    started = time.monotonic()
    audit = run_audit(chapter, SUBMISSION, functions=args.function, jobs=WORKERS, grade=False)
    audit_wall = time.monotonic() - started
    count = len(audit.mutants)
    mutmut_each = audit.timings["mutation"] / count
    mutmut_whole = audit.timings["mutmut"] / count

    rows = [
        ("grader, per planted mutant (check)", grader_each, report.mutation.total),
        ("grader, per planted mutant (runs alone)", grader_alone, report.mutation.total),
        ("mutmut, per generated mutant (mutation phase)", mutmut_each, count),
        ("mutmut, per generated mutant (whole run)", mutmut_whole, count),
    ]
    print(f"{'':48} {'seconds':>9} {'mutants':>8}")
    for name, seconds, mutants in rows:
        print(f"{name:48} {seconds:9.3f} {mutants:8d}")
    print(
        f"\ngrader check mutation phase {report.timings['mutation']:.1f} s "
        f"({report.mutation.killed}/{report.mutation.total} killed); "
        f"grader audit {audit_wall:.1f} s, mutmut {audit.timings['mutmut']:.1f} s of it, "
        f"kill rate {audit.kill_rate:.1%} ({audit.detected}/{len(audit.counted)}), "
        f"{WORKERS} at once"
    )
    ratio = mutmut_each / grader_each if grader_each else float("inf")
    met = grader_each <= mutmut_each
    print(
        f"mutmut per mutant / grader per mutant: {ratio:.2f}x "
        f"(target: grader's no higher) {'met' if met else 'MISSED'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
