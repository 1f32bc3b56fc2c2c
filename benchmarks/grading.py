"""How fast ``grader check`` grades, against the work itself and against a naive loop.

In one run on the model-answer submission (``reference/``), this measures:

- ``check``: the wall time of ``python -m grader check`` (a fresh process,
  as a student runs it);
- the floor: one plain ``pytest`` process running the course tests and the
  student's tests once each against the reference (the work with no
  grading around it);
- the naive loop: a fresh ``python -m pytest`` of the student's tests per
  mutant, the mutant written to a temporary folder first;
- the mutation phase of ``check`` (the same 18 mutants, from warm workers).

It prints ``check / floor`` (target at most 3x) and ``naive loop /
mutation phase`` (target at least 5x). Each figure is the best of
``--repeat`` runs, since the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader.catalog import load_chapter
from grader.commands.check import check, run_mutants
from grader.patching import mutant_sources
from grader.sandbox.pool import WorkerPool

KIT = Path(__file__).resolve().parent.parent
SUBMISSION = KIT / "reference"
CHECK_TARGET = 3.0
NAIVE_TARGET = 5.0


def best_of(repeat: int, measure: Callable[[], float]) -> float:
    return min(measure() for _ in range(repeat))


def timed_process(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=False, capture_output=True)
    return time.perf_counter() - started


def grader_check_seconds() -> float:
    return timed_process(
        [sys.executable, "-m", "grader", "check", "--submission", str(SUBMISSION)], KIT
    )


def pytest_command(*arguments: str | Path) -> list[str]:
    """A plain ``pytest`` in a fresh interpreter, as a student would type it."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, arguments)]


def floor_seconds() -> float:
    chapter = load_chapter()
    return timed_process(pytest_command(chapter.course_test_file, chapter.model_tests), KIT)


def naive_loop_seconds() -> float:
    chapter = load_chapter()
    started = time.perf_counter()
    for source in mutant_sources(chapter).values():
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "radix.py").write_text(source)
            env = dict(os.environ, PYTHONPATH=folder)
            command = pytest_command("--rootdir", folder, chapter.model_tests)
            subprocess.run(command, cwd=folder, env=env, check=False, capture_output=True)
    return time.perf_counter() - started


def mutation_phase_seconds() -> float:
    """The mutation phase alone: the model answer against the 18 mutants on a warm pool."""
    chapter = load_chapter()
    tests = chapter.model_tests.read_text(encoding="utf-8")
    sources = mutant_sources(chapter)
    with WorkerPool(workers=2) as pool, ThreadPoolExecutor(3) as threads:
        run_mutants(chapter, tests, sources, 30, pool, threads)  # the workers warm up
        started = time.perf_counter()
        result = run_mutants(chapter, tests, sources, 30, pool, threads)
        seconds = time.perf_counter() - started
    assert result.killed == result.total, "the model answer must kill every mutant"
    return seconds


def mutation_in_check_seconds() -> float:
    """The mutation phase as ``check`` runs it, sharing the workers with the course tests."""
    report = check(load_chapter(), SUBMISSION)
    assert report.verdict == "pass", "the model answer must pass for this figure to mean anything"
    return report.timings["mutation"]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    args = parser.parse_args()

    whole = best_of(args.repeat, grader_check_seconds)
    floor = best_of(args.repeat, floor_seconds)
    naive = best_of(args.repeat, naive_loop_seconds)
    mutation = best_of(args.repeat, mutation_phase_seconds)
    in_check = best_of(args.repeat, mutation_in_check_seconds)

    print(f"grader check (fresh process)         {whole:7.2f} s")
    print(f"floor: one pytest, both files        {floor:7.2f} s")
    print(f"naive loop: 18 fresh pytests         {naive:7.2f} s")
    print(f"mutation phase: 18 on a warm pool    {mutation:7.2f} s")
    print(f"  (inside check, beside the course tests: {in_check:.2f} s)")
    ratio = whole / floor
    ok = verdict(ratio <= CHECK_TARGET)
    print(f"check / floor      {ratio:6.2f}x  target <= {CHECK_TARGET}x  {ok}")
    ratio = naive / mutation
    ok = verdict(ratio >= NAIVE_TARGET)
    print(f"naive / mutation   {ratio:6.2f}x  target >= {NAIVE_TARGET}x  {ok}")


if __name__ == "__main__":
    main()
