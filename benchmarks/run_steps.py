"""What one sandboxed run costs, step by step, against the same test file in process.

On a warm pool at the strongest isolation level this machine gives, this
runs two test files ``--runs`` times each: a file of one trivial test (the
run's own cost, nearly nothing of the tests) and the model answer's tests on
the reference. For each it prints the worker's time per step of a run
(``grader.sandbox.worker.server.STEPS``: set-up, the fork server's spawn,
start-up to the first event, the tests, the exit, the sweep, the folder's
removal), the mean wall time of a run seen from the grader, and the same
file run by ``pytest.main`` in a child forked from a warm process (no
sandbox, the implementation imported, pytest's cache of the rewritten file
warm). The overhead is their difference; issue 25's target is at most 50 ms
a run. For information it then runs the model answer once more with its test
process on its implementation's CPU, as only the kit's own tests run (a
student's test process may use every CPU, so that it cannot tell which
worker runs it): on this machine a call that crosses CPUs costs several
times one that stays.

Where the grader is root it also times each confinement step a run's process
takes on its own (``grader.sandbox.confine``), each in a fresh fork of this
process, against a bare fork: the PID namespace with its init, the other
namespaces with the mounts (its own ``/proc``, the kit hidden, every mount
read-only but the run's folder), and the identity (keyrings, uid, the user
namespace, no new privileges, the seccomp filter). A run takes them twice,
once per process, side by side.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.grading.jobs import student_tests_job
from grader.inputs.catalog import load_chapter
from grader.inputs.hypothesis_profile import enforce as enforce_grader_settings
from grader.sandbox.confine import contain, mounts, policy, probe, user
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.worker.server import STEPS
from grader.sandbox.worker.warm_pytest import PYTEST_ARGS

OVERHEAD_TARGET_MS = 50.0
TRIVIAL_TESTS = "def test_nothing() -> None:\n    assert True\n"
TRIVIAL_IMPLEMENTATION = "VALUE = 1\n"


def sandboxed(pool: WorkerPool, job: Job, runs: int) -> tuple[float, dict[str, float]]:
    """The mean milliseconds of a run from the grader's side, and per step from the worker's."""
    pool.run(job)  # the worker's first run of a file warms what it imports lazily
    totals: list[float] = []
    steps: dict[str, list[float]] = {step: [] for step in STEPS}
    for _ in range(runs):
        started = time.perf_counter()
        result = pool.run(job)
        totals.append((time.perf_counter() - started) * 1000)
        assert result.all_passed, result.message
        for step, milliseconds in result.steps.items():
            steps[step].append(milliseconds)
    means = {step: statistics.fmean(values) for step, values in steps.items() if values}
    return statistics.fmean(totals), means


def in_process(job: Job, runs: int) -> float:
    """The mean milliseconds of ``pytest.main`` on the job's tests in a child forked per run
    from this warm process, its implementation (and earlier chapters' modules) importable and
    pytest's cache of the rewritten test file warm (the first run writes it)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "tests").mkdir()
        (folder / "tests" / "test_file.py").write_text(job.test_source, encoding="utf-8")
        for module, source in ((job.module, job.implementation), *job.dependencies):
            (folder / f"{module}.py").write_text(source, encoding="utf-8")
        (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        totals = []
        for index in range(runs + 1):
            started = time.perf_counter()
            pid = os.fork()
            if pid == 0:
                os.chdir(folder)
                sys.path.insert(0, str(folder))
                sys.dont_write_bytecode = False  # pytest caches the rewritten file, as usual
                quiet = os.open(os.devnull, os.O_WRONLY)
                os.dup2(quiet, 1)
                os.dup2(quiet, 2)
                enforce_grader_settings()
                os._exit(pytest.main(["tests/test_file.py", *PYTEST_ARGS]))
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0, "the file must pass in process"
            if index:  # the first run warms, as in the pool
                totals.append((time.perf_counter() - started) * 1000)
    return statistics.fmean(totals)


def confinement_steps(runs: int) -> dict[str, float]:
    """Median milliseconds of each confinement step in a fresh fork, a bare fork's included."""
    confinement = policy.confinement_for("namespaces")
    identity = confinement.as_identity(user.new_identity("namespaces"))
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        folder.chmod(0o777)

        steps: dict[str, Callable[[], None]] = {
            "a bare fork": lambda: None,
            "namespaces and mounts": lambda: mounts.enter_namespaces(identity.view, folder),
            "identity, keyrings, seccomp": lambda: contain._contain_process(identity),
            "all of it (fork_confined)": lambda: _confined_and_gone(identity, folder),
        }
        return {name: _median_fork(step, runs) for name, step in steps.items()}


def _confined_and_gone(confinement: policy.Confinement, folder: Path) -> None:
    child = contain.fork_confined(confinement, folder)
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)


def _median_fork(step: Callable[[], None], runs: int) -> float:
    """The median milliseconds of forking a child that does ``step`` and exits."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                step()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def print_steps(steps: dict[str, float], total: float) -> None:
    for step, milliseconds in steps.items():
        print(f"  {step:<10} {milliseconds:7.1f} ms")
    print(f"  a run, from the grader  {total:7.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of each file")
    args = parser.parse_args(argv)
    chapter = load_chapter()
    reference = chapter.reference.read_text(encoding="utf-8")
    model = chapter.model_tests.read_text(encoding="utf-8")
    cases = {
        "one trivial test": (TRIVIAL_TESTS, TRIVIAL_IMPLEMENTATION),
        "model answer on the reference": (model, reference),
    }
    ok = True
    with WorkerPool(workers=1) as pool:
        print(f"isolation level: {pool.isolation}")
        for name, (tests, implementation) in cases.items():
            job = student_tests_job(chapter, tests, implementation, 60.0)
            total, steps = sandboxed(pool, job, args.runs)
            baseline = in_process(job, args.runs)
            overhead = total - baseline
            ok = ok and overhead <= OVERHEAD_TARGET_MS
            print(f"\n{name}: {args.runs} runs")
            print_steps(steps, total)
            print(f"  in process (a fork)     {baseline:7.1f} ms")
            verdict = "PASS" if overhead <= OVERHEAD_TARGET_MS else "MISS"
            print(f"  overhead {overhead:6.1f} ms  target <= {OVERHEAD_TARGET_MS:g} ms  {verdict}")
        pinned = dataclasses.replace(job, kit_tests=True)
        total, steps = sandboxed(pool, pinned, args.runs)
        print(f"\nthe same, the test process on the implementation's CPU: {args.runs} runs")
        print_steps(steps, total)
    if probe.isolation_level() == "namespaces":
        print("\nconfinement, each step in a fresh fork (median)")
        for step, milliseconds in confinement_steps(args.runs).items():
            print(f"  {step:<30} {milliseconds:7.1f} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
