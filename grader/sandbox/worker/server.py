"""The warm worker: imports pytest and hypothesis once, then forks two processes per run.

The grader starts it as a process of its own (``python -m
grader.sandbox.worker SCRATCH LEVEL``). Nothing it reads or writes is lines of
text: each job comes in as one frame of JSON (``protocol.jobs.JobMessage``) on
a Unix socket that is the worker's stdin, with the descriptors of its sealed
sources beside it; the test process's pid (``Started``), then the run's
``RunRecord``, go out as frames on stdout, a socket too. Each run is two
processes, the test process and the implementation process, talking over a pair
of pipes (``protocol.calls``); each:

- is confined by the operating system at the grader's isolation level
  (``grader.sandbox.confine``: another uid, namespaces) and runs in a new
  session (its own process group, out of reach of the terminal's Ctrl-C),
  so the whole group can be killed at once;
- works in a fresh folder (``run_folder``) holding no source (each process
  reads its own from a descriptor), an empty ``pytest.ini`` and its own
  ``home`` and ``tmp``, with a clean environment, fixed-size resource limits
  and no inherited files;
- sees every implementation the same way: the same module name, file name,
  folder layout, environment, ``sys.argv`` and ``sys.path`` (nothing on it
  leads into the kit), so only behaviour can tell a mutant from the reference.

The test process reports every collected test and every outcome on the events
channel as it goes (``protocol.events``), so a crash or a hang still leaves a
record of what ran.

The worker runs with address-space layout randomisation off (it re-runs
itself so), and every run's process is forked from a fork server
(``worker.forkserver``) made right after the warm-up: each starts
from the same memory, so the addresses, and with them the hash and ``set``
order of plain objects, are the same in every run of a job.

The worker never runs a test itself; it only forks, times, kills and reports.
It is a child subreaper: a grandchild that leaves its process group, or whose
parent dies, is handed to the worker instead of to init, so after every run
the worker can find and kill every process the run left behind. When its
control socket closes (the grader is done, interrupted or gone) it kills the run in
progress, removes its folder and exits.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from grader.sandbox import libc, procfs, protocol, reaper, untrusted
from grader.sandbox.confine import folders, leftovers, policy, user
from grader.sandbox.confine.cgroups import Cgroups
from grader.sandbox.confine.pid_namespace import exit_code
from grader.sandbox.confine.policy import Confinement
from grader.sandbox.levels import IsolationLevel, parse_level
from grader.sandbox.protocol import frames
from grader.sandbox.protocol.events import EventStream
from grader.sandbox.protocol.frames import channel
from grader.sandbox.protocol.jobs import MAX_JOB_BYTES, JobMessage, RunJob, RunRecord, Started
from grader.sandbox.worker import run_folder, warm_pytest
from grader.sandbox.worker.child import run_process
from grader.sandbox.worker.forkserver import ForkServer, Spawned
from grader.sandbox.worker.usage import Usage

EVENTS_LIMIT_BYTES = 2 * 1024 * 1024

CONTROL_FD = 0
"""The worker's stdin: a Unix socket on which each job comes with its sources' descriptors."""

SOURCES = 3
"""The descriptors every job brings: the implementation, the test file, the test file as
pytest compiles it (``host.compiled``; empty where it would not compile)."""

MAX_DEPENDENCIES = 8
"""The most modules besides the implementation a job may bring for its implementation process."""

RUN_MODULES = (str(Path(untrusted.__file__).parent), str(Path(protocol.__file__).parent))
"""The grader's own files a run's root holds at ``namespaces``: the code that runs inside a
run (imported before the fork; there for the source lines of its tracebacks)."""


class GraderGone(Exception):
    """The grader closed the worker's stdin while a run was going: stop at once."""


def serve(scratch: Path, level: IsolationLevel) -> None:
    """Answer jobs from the control socket (fd 0) until it closes; leave no process behind."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)  # the grader stops the worker by closing fd 0
    libc.become_subreaper()
    libc.not_dumpable()
    folders.private_mounts(level)
    warm_pytest.warm_up(scratch)
    # What a run's root holds at namespaces: what the warm-up imported, of the grader only
    # the modules that run inside a run.
    confinement = policy.confinement_for(level, RUN_MODULES)
    gc.freeze()  # what the worker holds is never collected: forks neither scan nor copy it
    server = ForkServer(confinement, run_process)
    cgroups = Cgroups()
    control = socket.socket(fileno=CONTROL_FD)
    try:
        while True:
            job, sources = _receive_job(control)
            if job is None:
                break
            record = run_job(job, sources, scratch, confinement, server, cgroups)
            _send(record)
    except (GraderGone, BrokenPipeError):
        pass
    finally:
        cgroups.end_run()
        reaper.kill_descendants(spare=server.pid)
        server.close()
        cgroups.close()


def _receive_job(control: socket.socket) -> tuple[JobMessage | None, list[int]]:
    """The next job and its source descriptors (implementation, tests, the tests compiled,
    then one per dependency the job names); ``None`` at the end.

    The sources come as file descriptors the worker passes on to the run's
    children unread: no implementation's code is ever in this process's memory,
    so no process forked from it can find one there.
    """
    size = MAX_JOB_BYTES + frames.LENGTH_BYTES
    message, fds, _, _ = socket.recv_fds(control, size, SOURCES + MAX_DEPENDENCIES)
    if not message:
        for fd in fds:
            os.close(fd)
        return None, []
    job: JobMessage = frames.json_of_frame(message, MAX_JOB_BYTES)
    if len(fds) != SOURCES + len(job["dependencies"]):
        raise GraderGone
    return job, fds


def _send(message: Started | RunRecord) -> None:
    """One message to the grader, on this process's stdout."""
    frames.send_json(sys.stdout.fileno(), message)


def run_job(
    job: JobMessage,
    sources: list[int],
    scratch: Path,
    confinement: Confinement,
    server: ForkServer,
    cgroups: Cgroups | None = None,
) -> RunRecord:
    """Start a run's two processes for ``job`` (from the fork server, confined), wait within
    its limits, describe the run.

    The implementation process (``untrusted.implementation``) and the test process (pytest,
    the recorder, the stand-in ``untrusted.proxy``) talk over two pipes; only the test process
    holds the outcome channel. Each has a uid (``user.new_identities``) and a folder of its
    own: the implementation cannot read or write the test file, nor the test its folder. Both
    are in one cgroup of the run's own where the machine gives one. Whatever happens, every
    process of the run is dead and its folder gone before this returns (or raises).
    """
    marks = {"begun": time.monotonic()}
    steps: dict[str, float] = {}
    cgroups = cgroups or Cgroups()
    folder, seen = run_folder.new_folder(scratch, confinement.level)
    spawned: list[Spawned] = []
    identities = user.new_identities(confinement.level, ("test", "impl"))
    log = -1
    try:
        run_folder.lay_out(folder, confinement, identities["test"], identities["impl"])
        joined = cgroups.start_run()
        started = marks["set up"] = time.monotonic()
        jobs = _run_jobs(job, seen, confinement)
        events_in, log = _spawn_pair(jobs, sources, folder, identities, joined, server, spawned)
        marks["spawn"] = time.monotonic()
        usage = Usage(spawned, cgroups, folder, _shared_owners(identities, confinement))
        try:
            _send({"pid": spawned[1].pid})  # the test process's
            events, timed_out, stopped, status = _collect(spawned[1], events_in, job, usage, marks)
        finally:
            cpu_seconds = usage.seconds()
            over_cap = _sweep(spawned, cgroups, identities, confinement, server, usage)
            marks["sweep"] = time.monotonic()
        return {
            "events": run_folder.without_folder(events, seen),
            "timed_out": timed_out,
            "stopped": stopped,
            "exit_code": exit_code(status, confinement) if status is not None else None,
            "parent_killed": status is None and not timed_out and not stopped,
            "over_cap": over_cap or "",  # with every process gone: the last word
            "seconds": time.monotonic() - started,
            "cpu_seconds": round(cpu_seconds, 3),
            "output": run_folder.output(log, folder, seen),
            "steps": steps,
        }
    finally:
        for process in spawned:
            process.close()
        if log >= 0:
            os.close(log)
        folders.remove_run_folder(folder, confinement.level)
        marks["remove"] = time.monotonic()
        steps.update(_steps(marks))


def _run_jobs(job: JobMessage, folder: Path, confinement: Confinement) -> tuple[RunJob, RunJob]:
    """The job as the run's implementation process and its test process each get it."""
    # The run gets no limit of its own, nor the rule that stops it at a failure: the worker
    # enforces them. A limit measured from the reference (a mutant's) differs from run to run;
    # in the job it would change the run's memory, and so the order of a set of plain
    # objects, and, like the rule, it would tell runs apart.
    job = {**job, "time_limit": 0.0, "wall": 0.0, "stop_at_failure": False}
    implementation: RunJob = {**job, "folder": str(folder), "kind": "implementation"}
    test: RunJob = {**job, "folder": str(folder), "kind": "test"}
    # Where the test cannot see the implementation process (a PID namespace of its own), that
    # runs on its worker's CPU, so a call and its answer mostly stay on one CPU. A student's
    # test process keeps every run's placement, and its copy of the job names no other; the
    # kit's own tests, which no student's code runs beside, go on that CPU too, which keeps
    # every call there (a run alone ran 1.3x as fast).
    test.pop("implementation_cpus", None)
    test.pop("call_limit", None)
    implementation.pop("hypothesis_seed", None)  # the test process's alone: it draws examples
    cpus = implementation.pop("implementation_cpus", None)
    if cpus and policy.pins_implementation(confinement):
        implementation["cpus"] = cpus
        if job["kit_tests"]:
            test["cpus"] = cpus
    return implementation, test


def _spawn_pair(
    jobs: tuple[RunJob, RunJob],
    sources: list[int],
    folder: Path,
    identities: dict[str, int | None],
    cgroups: list[str],
    server: ForkServer,
    spawned: list[Spawned],
) -> tuple[int, int]:
    """Start the implementation's process, then the test's, into ``spawned`` (so the caller
    closes whatever started, even if the second fails); the events channel's read end, and
    the descriptor the worker reads the run's output through (``run_folder.open_log``)."""
    implementation_source, test_source, test_compiled, *dependency_sources = sources
    implementation_job, test_job = jobs
    output, log = run_folder.open_log(folder)
    # The calls go over pipes, a fifth cheaper per call than sockets (benchmarks/grading.py).
    # Only root could reopen them through /proc: both ends are confined and not dumpable.
    requests = os.pipe()
    replies = os.pipe()
    events_read, events_write = channel()
    try:
        spawned.append(
            server.spawn(
                implementation_job,
                [implementation_source, requests[0], replies[1], output, *dependency_sources],
                folder,
                identities["impl"],
                cgroups,
            )
        )
        spawned.append(
            server.spawn(
                test_job,
                [test_source, test_compiled, events_write, requests[1], replies[0], output],
                folder,
                identities["test"],
                cgroups,
            )
        )
    except BaseException:
        os.close(events_read)
        os.close(log)
        raise
    finally:
        for fd in (*sources, *requests, *replies, events_write, output):
            os.close(fd)
    return events_read, log


def _shared_owners(identities: dict[str, int | None], confinement: Confinement) -> list[int]:
    """The run's uids whose files in the shared folders count with its folder: at ``uid``
    only, where a run has no ``/tmp`` of its own (``folders.folder_over_cap``)."""
    if confinement.level != "uid":
        return []
    return [uid for uid in identities.values() if uid is not None]


def _sweep(
    spawned: list[Spawned],
    cgroups: Cgroups,
    identities: dict[str, int | None],
    confinement: Confinement,
    server: ForkServer,
    usage: Usage,
) -> str | None:
    """Kill every process of the run, by its groups, its cgroup, its users (where no PID
    namespace ended them) and as descendants of this worker; remove what its users left in
    System V IPC and, once counted against the run's caps, in the shared folders. Why the
    run is over its caps (``Usage.over_cap``), with every process gone, or ``None``."""
    for process in spawned:
        process.close()
        reaper.kill_group(process.pid)
    cgroups.end_run()
    if confinement.level != "namespaces":  # there the PID and IPC namespaces' end clear all
        reaper.kill_users(uid for uid in identities.values() if uid is not None)
        reaper.remove_users_ipc(uid for uid in identities.values() if uid is not None)
    reaper.kill_descendants(spare=server.pid)
    over_cap = usage.over_cap()
    for uid in identities.values():
        leftovers.remove_leftovers(confinement.as_identity(uid))
    return over_cap


STEPS = {
    "set up": "set up",
    "spawn": "spawn",
    "start-up": "first event",
    "tests": "last event",
    "exit": "exit",
    "sweep": "sweep",
    "remove": "remove",
}
"""The steps of a run the worker times, each ending at the mark named (``benchmarks/
run_steps.py`` prints them): the run's folder, pipes and cgroups; the fork server's two
roots; the confinement, pytest's start and collection, up to the first event; the tests, to
the last event; the test process's exit; the sweep of every process and leftover; the
folder's removal. Times come from the worker's clock alone, never from inside the run."""


def _steps(marks: dict[str, float]) -> dict[str, float]:
    """Milliseconds per step of ``STEPS``; a step whose mark the run never reached (no event,
    no exit) is left out, and the next step counts from the last mark reached."""
    steps: dict[str, float] = {}
    before = marks["begun"]
    for step, mark in STEPS.items():
        if mark in marks:
            steps[step] = round((marks[mark] - before) * 1000, 2)
            before = marks[mark]
    return steps


USAGE_CHECK_SECONDS = 0.25
"""How often a run's CPU time is read, and a run that reports nothing checked for being stopped."""


def _collect(
    spawned: Spawned,
    read_end: int,
    job: JobMessage,
    usage: Usage,
    marks: dict[str, float],
) -> tuple[list[Any], bool, bool, int | None]:
    """Read the test process's events until it exits, its time is up, or (where the job stops
    at its first failure) a test has failed; then kill its group.

    Its time is up when the run's processes have used the job's ``time_limit``
    in seconds of CPU time, or after ``wall`` seconds by the wall clock. Its
    exit is watched through a pidfd on its root, not the channel's end, which a
    grandchild may hold open. The control socket becomes readable only when the
    grader closes it: the run is then abandoned (``GraderGone``). A run whose
    every process is stopped (SIGSTOP) can never go on: it times out at once.
    """
    pid = spawned.pid
    budget, stop_at_failure = float(job["time_limit"]), job["stop_at_failure"]
    deadline = time.monotonic() + float(job["wall"])
    next_check = time.monotonic() + USAGE_CHECK_SECONDS
    exited = os.pidfd_open(pid)
    stream = EventStream(until_failure=stop_at_failure)
    received = 0
    watched = [read_end, exited, CONTROL_FD]
    timed_out, stopped = True, False
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            wait = min(remaining, USAGE_CHECK_SECONDS)
            ready, _, _ = select.select(watched, [], [], wait)
            if CONTROL_FD in ready:
                raise GraderGone
            if read_end in ready:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    watched.remove(read_end)
                elif received < EVENTS_LIMIT_BYTES:
                    received += len(chunk)
                    stream.feed(chunk)
                    marks.setdefault("first event", time.monotonic())
                    marks["last event"] = time.monotonic()
                if stop_at_failure and stream.failed is not None:
                    timed_out, stopped = False, True
                    break
            if exited in ready:
                marks["exit"] = time.monotonic()
                timed_out = False
                break
            if time.monotonic() >= next_check:
                next_check = time.monotonic() + USAGE_CHECK_SECONDS
                over = usage.seconds() > budget or usage.over_cap() is not None
                if over or (not ready and procfs.run_is_stopped(pid)):
                    break  # over the folder's caps the run fails (``over_cap``), not times out
        reaper.kill_group(pid)
        status = spawned.status()
        stream.feed(_drain(read_end))
    finally:
        os.close(exited)
        os.close(read_end)
    return stream.close(), timed_out, stopped, status


def _drain(read_end: int) -> bytes:
    """What is left in the channel, without waiting for writers a grandchild may still hold."""
    os.set_blocking(read_end, False)
    data = b""
    while True:
        try:
            chunk = os.read(read_end, 65536)
        except BlockingIOError:
            return data
        if not chunk:
            return data
        data += chunk


def main() -> None:
    """``python -m grader.sandbox.worker SCRATCH LEVEL``: serve jobs, with the same addresses
    in every run (the process runs itself again with address randomisation off)."""
    if libc.turn_off_address_randomisation():
        os.execv(sys.executable, sys.orig_argv)
    serve(Path(sys.argv[1]), parse_level(sys.argv[2]))
