"""Issue 18: every run alone and alike, whatever the machine's load: keyrings, the test files,
seeds, zombie-looking leaders, malformed events, confirmed timeouts, a busy machine.
"""

from __future__ import annotations

import ast
import contextlib
import os
from pathlib import Path

import pytest
from hostile_harness import (
    CASES,
    CHAPTER,
    LIMITS,
    REFERENCE,
    busy_cores,
    lay_out,
    processes_mentioning,
    report_back,
    reported,
    run,
    stray_processes,
)

from grader.commands.check import check
from grader.inputs.catalog import Chapter
from grader.output.check_json import report_to_dict
from grader.sandbox.host.job import OTHER_HASH_SEED, Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.levels import LEVELS, IsolationLevel

pytest_plugins = ["hostile_harness"]
pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)


# ----------------------------------------------------------------------
# Issue 18: every run alone and alike, whatever the machine's load.


KEY_WRITER = f"""
import base64, ctypes, json, zlib

LIBC = ctypes.CDLL(None, use_errno=True)
MACHINE = __import__("os").uname().machine
NUMBERS = {{"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}}[MACHINE]
KEYRINGS = {{"session": -3, "user": -4, "user session": -5}}


def test_keys():
    add_key, request_key, _ = NUMBERS
    seen = {{}}
    for name, keyring in KEYRINGS.items():
        found = LIBC.syscall(request_key, b"user", b"grader-note", None, ctypes.c_long(keyring))
        added = LIBC.syscall(add_key, b"user", b"grader-note", b"x", 1, ctypes.c_long(keyring))
        seen[name] = [found >= 0, added >= 0 or ctypes.get_errno()]
    with open("/proc/keys") as keys:
        seen["notes"] = [line for line in keys if "grader-note" in line]
    {report_back("seen")}
"""


def test_no_key_of_one_run_reaches_another(pool: WorkerPool) -> None:
    """Route 4: a run can add no key to any keyring it holds (the kernel refuses every
    keyring call, ENOSYS), finds none an earlier run of this or another pool added, and
    sees no key of another run in /proc/keys: at every level."""
    with WorkerPool(workers=1) as other:
        runs = [reported(run(p, KEY_WRITER), "test_keys") for p in (pool, other, pool)]
    refused = {name: [False, 38] for name in ("session", "user", "user session")}
    for seen in runs:
        assert seen == {**refused, "notes": []}, seen


REACHES_THE_TESTS = """
import os

def _try(path, mode):
    try:
        with open(path, mode) as file:
            file.write("x") if "a" in mode else file.read()
        return "done"
    except OSError as error:
        return error.strerror

TEST_FILE = [_try("../tests/test_hostile.py", "r"), _try("../tests/test_hostile.py", "a"),
             _try("../tests/planted.py", "w"), _try("../pytest.ini", "a")]
ROOT = 0
"""


def test_the_implementation_cannot_reach_the_test_files(pool: WorkerPool) -> None:
    """Route 5: the implementation process runs as a user of its own, in a folder of its own:
    the test process's file and folder are out of its reach, for reading and for writing
    (at ``none`` both are the grader's user, and nothing keeps them apart)."""
    result = run(
        pool,
        "import radix\n\ndef test_x():\n    assert radix.TEST_FILE == ['Permission denied'] * 4\n",
        implementation=REACHES_THE_TESTS,
    )
    if pool.isolation == "none":
        assert "done" in result.detail("test_x")
    else:
        assert result.all_passed, result


def test_the_course_tests_seed_their_state_machines() -> None:
    """Route 5 also: hypothesis seeds a derandomized state machine from a digest of its source,
    which it reads again from the file at run time; every state machine the course tests run
    has a seed of its own instead (``@seed`` with a constant), so no rewrite of the file can
    pick the programs it draws."""
    tree = ast.parse(CHAPTER.course_test_file.read_text(encoding="utf-8"))
    machines = [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(base, ast.Name) and base.id.startswith("TreeAgainst") for base in node.bases
        )
    ]
    assert len(machines) == 2
    for machine in machines:
        seeds = [
            decorator
            for decorator in machine.decorator_list
            if isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Name)
            and decorator.func.id == "seed"
            and isinstance(decorator.args[0], ast.Name)
            and decorator.args[0].id.startswith("SEED_")
        ]
        assert len(seeds) == 1, machine.name


ZOMBIE_LEADER = """
import ctypes, os, threading, time

def test_leave_a_thread_behind():
    if os.fork() == 0:
        os.setsid()
        def linger():
            ctypes.CDLL(None).prctl(15, NAME, 0, 0, 0)  # PR_SET_NAME: the test finds it so
            time.sleep(60)
        threading.Thread(target=linger).start()
        ctypes.CDLL(None).syscall({"x86_64": 60, "aarch64": 93}[os.uname().machine], 0)
    time.sleep(0.5)
"""


def threads_named(name: str) -> list[str]:
    """Every thread on the machine whose name is ``name``, as ``pid/tid``."""
    found = []
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
        with contextlib.suppress(OSError):
            if (task / "comm").read_text().strip() == name:
                found.append(f"{task.parent.parent.name}/{task.name}")
    return found


@pytest.mark.parametrize("level", LEVELS)
def test_a_zombie_looking_leader_is_swept_with_its_run(level: IsolationLevel) -> None:
    """Route 3: a process whose main thread ended alone reads ``Z`` while a thread of it runs
    on; once its run is over nothing of it lives, at every level the machine reaches."""
    name = f"z{os.urandom(6).hex()}"
    with WorkerPool(workers=1, at_most=level) as workers:
        result = run(workers, ZOMBIE_LEADER.replace("NAME", repr(name.encode())))
        assert result.all_passed, result
        assert threads_named(name) == []
    assert stray_processes() == []


def test_a_malformed_event_fails_its_run_not_the_worker(pool: WorkerPool) -> None:
    """Route 6: a line of 100,000 nested brackets, or a line of 1 MB, on the outcome channel
    is a crashed run with a one-line cause; the worker serves the next run."""
    for line in ('b"[" * 100_000', 'b"[" + b"1," * 500_000 + b"1]"'):
        result = run(
            pool,
            f"""
            import os
            def test_x():
                for name in os.listdir("/proc/self/fd"):
                    try:
                        if os.readlink(f"/proc/self/fd/{{name}}").startswith("socket:"):
                            os.write(int(name), {line} + b"\\n")
                    except OSError:
                        pass
            """,
        )
        assert result.status == "crashed", result
        assert result.message == "the test process sent a malformed event on the outcome channel"
    assert run(pool, "def test_x():\n    pass\n").all_passed


def test_a_timeout_counts_only_when_confirmed_alone(pool: WorkerPool) -> None:
    """Route 7: a run that uses its whole CPU time is run once more, alone, before its timeout
    counts (``confirmed``); one that only sleeps past its CPU limit is no timeout at all: the
    limit is on CPU time, and the wall clock only a backstop."""
    spin = Job(
        REFERENCE,
        "test_hostile.py",
        "def test_spin():\n    while True:\n        pass\n",
        1.0,
        "radix",
    )
    first = pool.run(spin)
    assert first.status == "timeout" and not first.confirmed, first
    spins = pool.confirm(spin, first)
    assert spins.status == "timeout" and spins.confirmed, spins
    assert spins.message.endswith("(confirmed: it timed out again, run alone)")
    assert pool.confirm(spin, run(pool, "def test_x():\n    pass\n")).all_passed
    nap = Job(
        REFERENCE,
        "test_hostile.py",
        "import time\ndef test_nap():\n    time.sleep(2.5)\n",
        1.0,
        "radix",
    )
    sleeps = pool.run_confirmed(nap)
    assert sleeps.all_passed and not sleeps.confirmed, sleeps


def test_a_busy_machine_gives_the_same_report(chapter: Chapter, reachable_tmp_path: Path) -> None:
    """Route 7: an honest submission whose tests cost CPU time gets the same report while
    busy loops hold every core as on the machine as it is (timings aside): a limit on a run's
    own CPU time does not move with the machine's load, and a timeout is confirmed alone."""
    case = next(case for case in CASES if case["name"] == "steals_cpu")
    folder = lay_out({**case, "radix": "reference"}, reachable_tmp_path)
    reports = []
    with WorkerPool(workers=2) as workers:
        reports.append(report_to_dict(check(chapter, folder, LIMITS, pool=workers), CHAPTER))
        with busy_cores(4 * len(os.sched_getaffinity(0))):
            reports.append(report_to_dict(check(chapter, folder, LIMITS, pool=workers), CHAPTER))
    for report in reports:
        del report["timings"], report["graded_at"]
    assert reports[0] == reports[1]
    assert reports[0]["verdict"] == "fail"
    statuses = {
        name: mutant["status"] for name, mutant in reports[0]["mutation"]["mutants"].items()
    }
    assert set(statuses.values()) == {"survived"}, statuses


def test_no_run_finds_its_time_limit_in_its_memory(pool: WorkerPool) -> None:
    """Route 2 through memory: the job a run's process was started with holds no limit of
    its own (a mutant's limit, measured from the reference, would tell it apart and, by its
    length, move the addresses of what the test allocates); every run sees zeros, and no
    run sees whether the worker stops it at its first failure."""
    result = run(
        pool,
        f"""
        import base64, gc, json, zlib

        def test_limits():
            seen = sorted({{
                (str(held.get("time_limit")), str(held.get("wall")), held.get("stop_at_failure"))
                for held in gc.get_objects()
                if isinstance(held, dict) and "ceiling" in held and "time_limit" in held
            }})
            {report_back("seen")}
        """,
        time_limit=7.25,
        stop_at_failure=True,
    )
    assert result.status == "stopped", result  # the worker's rule, not the run's
    assert reported(result, "test_limits") == [["0.0", "0.0", False]]


# ----------------------------------------------------------------------
# Issue 25: what a run is spared, with nothing a test can tell apart.


def test_a_run_that_stops_at_its_first_failure_ends_there(pool: WorkerPool) -> None:
    """The worker ends a mutant's run as soon as a test fails: a test after it that would
    spin until the time limit never gets to; the same file run to the end times out."""
    source = """
        def test_a():
            assert 1 == 2

        def test_spins():
            while True:
                pass

        def test_c():
            pass
        """
    stopped = run(pool, source, time_limit=2.0, stop_at_failure=True)
    assert stopped.status == "stopped", stopped
    assert stopped.message == "stopped at its first failing test, test_a"
    statuses = [(o.name, o.status) for o in stopped.outcomes]
    assert statuses == [("test_a", "failed"), ("test_spins", "not run"), ("test_c", "not run")]
    assert "assert 1 == 2" in stopped.detail("test_a")
    whole = run(pool, source, time_limit=2.0)
    assert whole.status == "timeout", whole
    assert whole.outcome("test_a") == "failed" and whole.outcome("test_spins") == "timeout"


FORGES_ITS_FAILURE = """
import json, os

def test_forges():
    event = {"event": "outcome", "name": "test_forges", "status": "failed", "detail": "forged"}
    body = json.dumps(event).encode()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                os.write(int(name), len(body).to_bytes(4, "big") + body)
        except OSError:
            pass
"""


def test_a_forged_failure_counts_alike_in_every_run(pool: WorkerPool) -> None:
    """A test that forges its own failure on the outcome channel, then passes: a run that
    stops at the first failure stops at the forged one, and a run that goes on reads the
    recorder's second outcome as the forgery it is. Neither run reads as a pass, so a
    forgery that would count only where runs stop (the mutants') fails the file on the
    reference."""
    whole = run(pool, FORGES_ITS_FAILURE)
    assert whole.status == "crashed", whole
    assert whole.message == "the test process reported the outcome of test_forges twice"
    stopped = run(pool, FORGES_ITS_FAILURE, stop_at_failure=True)
    assert stopped.status == "stopped" and stopped.failing() == ["test_forges"], stopped


def test_a_run_imports_the_test_file_the_grader_compiled(pool: WorkerPool) -> None:
    """The run finds pytest's cached form of its file, made by the grader from the very bytes
    it wrote, and pytest takes it (it checks the bytes' hash): no run rewrites its file."""
    result = run(
        pool,
        """
        import base64, json, zlib
        from pathlib import Path
        from _pytest.assertion.rewrite import _read_pyc

        def test_compiled():
            here = Path(__file__)
            cache = here.parent / "__pycache__"
            names = sorted(path.name for path in cache.iterdir())
            seen = [names, _read_pyc(here, cache / names[0]) is not None]
            {report_back}
        """.replace("{report_back}", report_back("seen")),
    )
    names, taken = reported(result, "test_compiled")
    assert len(names) == 1 and names[0].startswith("test_hostile.") and taken


PLACEMENT = """
import os


class Placement:
    def cpus(self):
        return sorted(os.sched_getaffinity(0))
"""


def test_the_implementation_runs_on_its_workers_cpu_and_the_test_anywhere(
    pool: WorkerPool,
) -> None:
    """Where the test cannot see the implementation process (namespaces), that is pinned to
    its worker's CPU, one per worker, so that calls stay on one CPU; the test process may run
    on every CPU in every run, and its copy of the job names no other placement."""
    source = f"""
        import base64, gc, json, os, zlib
        import radix

        def test_placement():
            held = sorted({{
                key
                for job in gc.get_objects()
                if isinstance(job, dict) and "ceiling" in job
                for key in job
                if "cpu" in key
            }})
            seen = [sorted(os.sched_getaffinity(0)), radix.Placement().cpus(), held]
            {report_back("seen")}
    """
    runs = [reported(run(pool, source, PLACEMENT), "test_placement") for _ in range(4)]
    everywhere = sorted(os.sched_getaffinity(0))
    assert all(test == everywhere and held == ["cpus"] for test, _, held in runs), runs
    homes = {cpu for _, implementation, _ in runs for cpu in implementation}
    if pool.isolation == "namespaces":
        assert all(len(implementation) == 1 for _, implementation, _ in runs), runs
        assert len(homes) == min(2, len(everywhere)), runs
    else:
        assert all(implementation == everywhere for _, implementation, _ in runs), runs


def test_the_kits_own_tests_run_on_the_implementations_cpu(pool: WorkerPool) -> None:
    """A run of the kit's own tests (no student's code in the test process) puts its test
    process on the implementation's CPU too, where that is pinned: a call and its answer
    never cross CPUs."""
    source = f"""
        import base64, json, os, zlib
        import radix

        def test_placement():
            seen = [sorted(os.sched_getaffinity(0)), radix.Placement().cpus()]
            {report_back("seen")}
    """
    runs = [
        reported(run(pool, source, PLACEMENT, kit_tests=True), "test_placement") for _ in range(4)
    ]
    everywhere = sorted(os.sched_getaffinity(0))
    if pool.isolation == "namespaces":
        assert all(test == implementation and len(test) == 1 for test, implementation in runs)
        assert len({cpu for test, _ in runs for cpu in test}) == min(2, len(everywhere)), runs
    else:
        assert all(test == implementation == everywhere for test, implementation in runs), runs


def test_the_other_seed_worker_starts_only_when_a_run_needs_it() -> None:
    """A pool told so starts its other-seed worker at the first run with that seed (a check
    whose tests' phase is cached never needs it), and that run gets the other seed."""
    source = f"""
        import base64, json, zlib

        def test_seed():
            seen = hash("grader")
            {report_back("seen")}
    """
    with WorkerPool(workers=1, other_seed=False) as pool:
        marker = str(pool.scratch)
        fixed = reported(run(pool, source), "test_seed")
        before = len(processes_mentioning(marker))
        other = reported(run(pool, source, hash_seed=OTHER_HASH_SEED), "test_seed")
        after = len(processes_mentioning(marker))
    assert fixed != other
    assert after > before
