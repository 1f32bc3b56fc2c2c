"""Running one test file against one implementation, isolated, from warm workers.

A ``WorkerPool`` keeps a few zygote processes (see ``grader.sandbox.zygote``) that have
imported pytest and hypothesis once; each run forks a fresh child from one of
them, so a run costs a fork, not an interpreter start. The pool turns each
child's event record into a ``RunResult`` here, in the grader's own process:
the verdict on a run never rests on what the child's exit status claims.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import queue
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Literal

from grader.errors import GraderError, GraderStopped
from grader.sandbox import confine, libc, procfs, protocol, reaper
from grader.sandbox.confine import IsolationLevel
from grader.sandbox.protocol import (
    Contract,
    JobMessage,
    RunRecord,
    Started,
    TestStatus,
    WireError,
    channel,
)

RunStatus = Literal["completed", "collection_error", "crashed", "timeout"]

FIXED_HASH_SEED = 0
OTHER_HASH_SEED = 12345
STOP_GRACE_SECONDS = 5.0
WORKER_GRACE_SECONDS = 10.0
"""How long past a run's time limit the grader waits for its worker's record: the worker
kills a run on time itself, so only a stopped, wedged or killed worker ever uses this."""
WORKER_START_SECONDS = 120.0
"""How long a new worker may take to import pytest and start its first run."""
PARENT_KILLED = "the test process killed its parent, the grader's worker"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each stops the grader the same way: every worker and run killed, every file removed."""
WALL_FACTOR = 2.0
WALL_MARGIN_SECONDS = 5.0
"""A run's time limit is on the CPU time its processes use; the wall clock is only a
backstop, ``WALL_FACTOR`` times the limit and ``WALL_MARGIN_SECONDS`` more (for a run that
sleeps or waits forever): a busy machine slows a run's clock, not its CPU time."""


CONFIRMING_WALL_FACTOR = 1.5
"""How much longer the wall-clock backstop is when a timeout is being confirmed: the run then
has the pool to itself, but the machine may still be busy with work of others."""


def wall_backstop(time_limit: float, confirming: bool = False) -> float:
    """How long by the wall clock a run with ``time_limit`` seconds of CPU time may take."""
    wall = WALL_FACTOR * time_limit + WALL_MARGIN_SECONDS
    return wall * CONFIRMING_WALL_FACTOR if confirming else wall


STOPPED_CHECK_SECONDS = 0.5
"""How often a worker that has not answered is checked for being stopped (SIGSTOP)."""


@dataclass(frozen=True)
class TestOutcome:
    """One test's final outcome in one run; ``detail`` is pytest's report of a failure."""

    name: str
    status: TestStatus
    detail: str = ""
    seconds: float = field(default=0.0, compare=False)
    """How long the test took, as the test process measured it (information only: it never
    decides a verdict, and it is bounded by the run's own time)."""


@dataclass(frozen=True)
class RunResult:
    """What one run of a test file against one implementation showed.

    ``status`` is ``completed`` only when every collected test reported an
    outcome and the session reported its end; otherwise the run timed out,
    crashed (ended early, killed, out of memory or output) or failed to collect.
    """

    status: RunStatus
    outcomes: tuple[TestOutcome, ...]
    message: str
    output: str
    seconds: float
    cpu_seconds: float = 0.0
    """The CPU time the run's processes used, all of them together."""
    confirmed: bool = False
    """A timeout that happened again when the run was made once more, alone on the pool."""

    def outcome(self, name: str) -> TestStatus:
        """The outcome of test ``name``; parametrized cases fold into their worst outcome."""
        statuses = [o.status for o in self.outcomes if _base_name(o.name) == name]
        if not statuses:
            return "not run"
        worst_first: tuple[TestStatus, ...] = ("timeout", "error", "failed", "not run", "skipped")
        return next((status for status in worst_first if status in statuses), "passed")

    def detail(self, name: str) -> str:
        return "\n".join(o.detail for o in self.outcomes if _base_name(o.name) == name and o.detail)

    def test_names(self) -> list[str]:
        return list(dict.fromkeys(_base_name(o.name) for o in self.outcomes))

    def durations(self) -> dict[str, float]:
        """Seconds per test, parametrized cases summed, in the run's order."""
        seconds: dict[str, float] = {}
        for o in self.outcomes:
            seconds[_base_name(o.name)] = seconds.get(_base_name(o.name), 0.0) + o.seconds
        return {name: round(value, 3) for name, value in seconds.items()}

    @property
    def all_passed(self) -> bool:
        return self.status == "completed" and all(o.status == "passed" for o in self.outcomes)

    def failing(self) -> list[str]:
        """Tests that failed, errored or timed out: those that tell this implementation apart."""
        return [n for n in self.test_names() if self.outcome(n) in ("failed", "error", "timeout")]


def merged_runs(runs: list[RunResult]) -> RunResult:
    """Runs of parts of one test file as one run: their outcomes in the order given, the
    status and message of the first that did not complete, the longest wall time (they went
    side by side) and all their CPU time."""
    unfinished = next((run for run in runs if run.status != "completed"), runs[0])
    return RunResult(
        unfinished.status,
        tuple(outcome for run in runs for outcome in run.outcomes),
        unfinished.message,
        "\n".join(run.output for run in runs if run.output),
        max(run.seconds for run in runs),
        sum(run.cpu_seconds for run in runs),
        any(run.confirmed for run in runs),
    )


@dataclass(frozen=True)
class Job:
    """A test file and an implementation to run it against.

    ``time_limit`` is on the CPU time the run's processes use (the wall clock
    is only a backstop, ``zygote.wall_backstop``); the run cannot see it.
    What it can see of its limits comes from ``ceiling`` (its ``RLIMIT_CPU``):
    give every run of one test file the same, so that no run looks unlike
    another; ``None`` takes ``time_limit``.
    """

    implementation: str
    test_name: str
    test_source: str
    time_limit: float
    module: str
    """The name the tests import ``implementation`` under (the chapter's ``module``)."""
    reverse: bool = False
    hash_seed: int = FIXED_HASH_SEED
    interface: Interface | None = None
    """What the tests may reach of the module; ``None``: every public name and member."""
    dependencies: tuple[tuple[str, str], ...] = ()
    """Each module the implementation may import beside the standard library (an earlier
    chapter's), as its name and source; it runs in the implementation's process, as the
    implementation does."""
    ceiling: float | None = None
    only: tuple[str, ...] = ()
    """The tests of the file to run (pytest node names within it); empty: all of them."""
    leave_out: tuple[str, ...] = ()
    """The tests of the file not to run."""


@dataclass(frozen=True)
class Interface:
    """What a test reaches of the module under test, which runs in a process of its own.

    ``names`` are the module's public names; ``members`` the members of each
    of its classes a test may use; ``exceptions`` the built-in exceptions
    (and their built-in subclasses) a test sees as themselves, all others
    arriving as ``ImplementationError``; ``private`` the members beyond those
    the course tests (never a student's) may call, such as the
    implementation's own invariant check.
    """

    names: tuple[str, ...]
    members: tuple[tuple[str, tuple[str, ...]], ...]
    exceptions: tuple[str, ...]
    private: tuple[str, ...] = ()
    frames: bool = False
    """Whether an error in the implementation shows its frames (the course tests' runs)."""

    def contract(self) -> Contract:
        """The interface as the zygote reads it."""
        return {
            "names": list(self.names),
            "members": {cls: list(members) for cls, members in self.members},
            "exceptions": list(self.exceptions),
            "private": list(self.private),
            "frames": self.frames,
        }


ANY_INTERFACE: Contract = {
    "names": None,
    "members": None,
    "exceptions": ["BaseException"],
    "private": [],
    "frames": False,
}
"""A job without an interface: every public name and member, every exception as itself."""


def status_phrase(status: TestStatus) -> str:
    """How a message says what a test did: ``fails``, ``fails with an error``, ``is skipped``."""
    return {"failed": "fails", "error": "fails with an error"}.get(status, f"is {status}")


def _without_addresses(text: str) -> str:
    """``text`` with memory addresses (``<Tree object at 0x7f...>``) masked: they change
    from run to run, and a report must be the same bytes for the same submission."""
    return re.sub(r" at 0x[0-9a-fA-F]+\b", " at 0x…", text)


def _base_name(name: str) -> str:
    return name.split("[", 1)[0]


MALFORMED = "the test process sent a malformed event on the outcome channel"


def interpret(record: RunRecord) -> RunResult:
    """Turn a zygote's record of one run into a ``RunResult``; a run whose channel carried
    anything but the recorder's events is crashed, with one line saying so."""
    raw = record["events"] if isinstance(record.get("events"), list) else []
    events = protocol.well_formed(raw)
    if len(events) != len(raw):
        seconds = float(record.get("seconds", 0.0))
        return RunResult("crashed", (), MALFORMED, "", seconds, float(record.get("cpu_seconds", 0)))
    collected: list[str] = []
    collection_errors: list[str] = []
    outcomes: dict[str, TestOutcome] = {}
    running: str | None = None
    finished = False
    for event in events:
        if event["event"] == "collected":
            collected = list(event["names"])
        elif event["event"] == "collection_error":
            collection_errors.append(_without_addresses(event["detail"]))
        elif event["event"] == "start":
            running = event["name"]
        elif event["event"] == "outcome":
            detail = _without_addresses(event["detail"])
            took = _bounded_seconds(event.get("seconds"), float(record["seconds"]))
            outcomes[event["name"]] = TestOutcome(event["name"], event["status"], detail, took)
            running = None
        elif event["event"] == "finished":
            finished = True
    seconds = float(record["seconds"])
    cpu_seconds = float(record.get("cpu_seconds", 0.0))
    output = record["output"]
    if collection_errors:
        return RunResult(
            "collection_error",
            (),
            failure_line(collection_errors[0]) or "the test file could not be collected",
            collection_errors[0],
            seconds,
            cpu_seconds,
        )
    # Fewer outcomes than collected tests is never a pass, whatever the exit status said.
    missing = [name for name in collected if name not in outcomes]
    if record["timed_out"]:
        status: RunStatus = "timeout"
        message = f"stopped after its time limit while running {running or 'the tests'}"
    elif not finished or missing:
        status = "crashed"
        message = (
            PARENT_KILLED
            if record.get("parent_killed") is True
            else _crash_message(record.get("exit_code"), running)
        )
    else:
        ordered = tuple(outcomes[n] for n in collected)
        return RunResult("completed", ordered, "", output, seconds, cpu_seconds)
    for name in missing:
        stopped: TestStatus = "timeout" if status == "timeout" and name == running else "not run"
        if status == "crashed" and name == running:
            stopped = "error"
        outcomes[name] = TestOutcome(name, stopped, message if name == running else "")
    ordered = tuple(outcomes[n] for n in collected) if collected else tuple(outcomes.values())
    return RunResult(status, ordered, message, output, seconds, cpu_seconds)


def _bounded_seconds(value: object, run_seconds: float) -> float:
    """A test's reported seconds, if a finite number, kept within the run's own length: the
    test process reports it, so it may be anything."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return 0.0
    return min(max(float(value), 0.0), run_seconds)


def _crash_message(exit_code: int | None, running: str | None) -> str:
    where = f"while running {running}" if running else "before reporting every test"
    if exit_code is not None and exit_code < 0:
        name = signal.Signals(-exit_code).name if -exit_code in signal.valid_signals() else "?"
        hint = {
            "SIGXFSZ": " (too much output)",
            "SIGXCPU": " (CPU time limit)",
            "SIGKILL": " (killed, often for memory)",
            "SIGSEGV": " (segmentation fault)",
        }.get(name, "")
        return f"the test process died of {name}{hint} {where}"
    return f"the test process ended early (exit status {exit_code}) {where}"


LINE_LIMIT = 300
"""Longest line ``failure_line`` returns; pytest's own lines can be megabytes."""

_EXCEPTION_LINE = re.compile(r"[\w.]*(Error|Exception|Exit|Interrupt|Failed|Failure|Group)(:|$)")


def failure_line(report: str) -> str:
    """The one line of a pytest report that says what went wrong; ``""`` for an empty report.

    pytest marks an exception's lines with ``E``, and shows a chained exception's
    cause before it, so the last run of ``E`` lines is the exception the test
    (or the collection) ended with. Its headline is its exception line
    (``KeyError: 5``, ``Failed: DID NOT RAISE``), else its first line (``assert
    3 == 4``); a syntax error gets the file and line its run names. A report
    with no ``E`` line (pytest's own message) gives its last line.
    """
    lines = [line.strip() for line in report.splitlines() if line.strip()]
    runs: list[list[str]] = []
    in_run = False
    for line in lines:
        marked = line == "E" or line.startswith("E ")
        if marked and not in_run:
            runs.append([])
        if marked and line[1:].strip():
            runs[-1].append(line[1:].strip())
        in_run = marked
    last = runs[-1] if runs and runs[-1] else None
    if last is None:
        headline = lines[-1] if lines else ""
    else:
        headline = next((line for line in last if _EXCEPTION_LINE.match(line)), last[0])
        places = [place for line in last if (place := re.match(r'File "(.+)", line (\d+)', line))]
        if headline.startswith(("SyntaxError", "IndentationError", "TabError")) and places:
            headline += f" ({places[-1][1]}, line {places[-1][2]})"
    return headline if len(headline) <= LINE_LIMIT else f"{headline[:LINE_LIMIT]} [cut]"


_WORKER_FAILURES = (OSError, ValueError, EOFError, KeyError, TypeError, RecursionError, WireError)
"""What reading a worker's answer raises when the worker died under its run."""


class _Zygote:
    """One warm worker process and the pid of the child it is running, if any.

    Every worker of a pool has the same command line (it names the pool's
    scratch folder and isolation level), so a test cannot tell which worker
    runs it.

    The grader keeps its own clock: it waits for a run's record no longer
    than the run's time limit and ``WORKER_GRACE_SECONDS``. A worker that
    misses it (stopped by a test that could signal it, wedged, silent) is
    killed with its run, which counts as a timeout; one that dies under a
    run (killed by its test) gives a crashed run. Either way the worker is
    started again and the processes its run left are swept, so one hostile
    run cannot stop the grading of the others.
    """

    def __init__(
        self, scratch: Path, hash_seed: int, cpus: list[int], level: IsolationLevel
    ) -> None:
        self.scratch = scratch
        self.hash_seed = hash_seed
        self.cpus = cpus
        """Where every run may run: the same CPUs for every worker, so that no run can tell
        which worker runs it."""
        self.level = level
        self.child_pid: int | None = None
        self.control: socket.socket | None = None
        """The jobs go out on this socket (the worker's stdin)."""
        self.replies: socket.socket | None = None
        """The worker's answers come back on this one, its stdout (``protocol.channel``)."""
        self._buffer = b""
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONHASHSEED": str(self.hash_seed),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "LANG": "C.UTF-8",
        }
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        replies, their_replies = channel()
        if self.control is not None:
            self.control.close()
        self.control = ours
        self.replies = socket.socket(fileno=replies)
        self._buffer = b""
        command = [sys.executable, "-s", "-P", "-m", "grader.sandbox.zygote", str(self.scratch)]
        try:
            process = subprocess.Popen(
                [*command, self.level],
                stdin=theirs.fileno(),
                stdout=their_replies,
                env=env,
                cwd=self.scratch,
                start_new_session=True,
            )
        finally:
            theirs.close()
            os.close(their_replies)
        LIVE_WORKERS.add(process.pid)
        return process

    def run(self, job: Job, closed: threading.Event, confirming: bool = False) -> RunResult:
        """Run ``job``; a worker that dies under it gives a crashed run, one that misses the
        grader's deadline a timeout, and a worker gone because grading stopped an error.
        ``confirming``: the run confirms a timeout, with a longer wall-clock backstop."""
        message: JobMessage = {
            "test_name": job.test_name,
            "time_limit": job.time_limit,
            "module": job.module,
            "reverse": job.reverse,
            "contract": job.interface.contract() if job.interface else ANY_INTERFACE,
            "cpus": self.cpus,
            "dependencies": [name for name, _ in job.dependencies],
            "ceiling": job.time_limit if job.ceiling is None else job.ceiling,
            "only": list(job.only),
            "leave_out": list(job.leave_out),
            "wall": wall_backstop(job.time_limit, confirming),
        }
        started = time.monotonic()
        try:
            dependencies = [source for _, source in job.dependencies]
            self._send_job(message, [job.implementation, job.test_source, *dependencies])
            started_message: Started = self._read(started + WORKER_START_SECONDS)
            self.child_pid = int(started_message["pid"])
            backstop = wall_backstop(job.time_limit, confirming)
            record: RunRecord = self._read(time.monotonic() + backstop + WORKER_GRACE_SECONDS)
        except TimeoutError:
            if closed.is_set():
                raise GraderError("grading was stopped before it finished") from None
            return self._restart_after_deadline(time.monotonic() - started)
        except (
            OSError,
            ValueError,
            EOFError,
            KeyError,
            TypeError,
            RecursionError,
            WireError,
        ) as error:
            if closed.is_set():
                raise GraderError("grading was stopped before it finished") from error
            return self._restart_after_crash()
        self.child_pid = None
        return interpret(record)

    def _read(self, deadline: float) -> Any:
        """The worker's next message; ``TimeoutError`` if it has none by ``deadline``, or at
        once if the worker is stopped (it cannot answer)."""
        replies = self.replies
        assert replies is not None
        while (body := self._next_frame()) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            ready, _, _ = select.select([replies], [], [], min(remaining, STOPPED_CHECK_SECONDS))
            if not ready and procfs.process_state(self.process.pid) in ("T", "t"):
                raise TimeoutError
            if ready:
                chunk = replies.recv(65536)
                if not chunk:
                    raise EOFError("the grading worker stopped")
                self._buffer += chunk
        return json.loads(body)

    def _next_frame(self) -> bytes | None:
        body, self._buffer = protocol.take_frame(self._buffer)
        return body

    def _restart_after_deadline(self, seconds: float) -> RunResult:
        """The worker missed the grader's deadline: kill it and its run, start a new one."""
        self.kill()
        self.process = self._start()
        return RunResult(
            "timeout",
            (),
            "stopped after its time limit: its worker was stopped or stopped answering",
            "",
            seconds,
        )

    def _restart_after_crash(self) -> RunResult:
        """The worker died during a run (the test killed it): clean up, start a new one."""
        self.stop()
        if self.process.returncode is not None and self.process.returncode >= 0:
            raise GraderError(
                "the kit is broken: a grading worker stopped with exit status "
                f"{self.process.returncode}; rerun with --debug and report it"
            )
        self.process = self._start()
        return RunResult("crashed", (), PARENT_KILLED, "", 0.0)

    def _send_job(self, message: JobMessage, texts: list[str]) -> None:
        """Send the job with its sources (implementation, tests, then each dependency) as sealed
        in-memory files the worker never reads."""
        assert self.control is not None
        sources = [_memory_file(text) for text in texts]
        try:
            socket.send_fds(self.control, [protocol.json_frame(message)], sources)
        finally:
            for fd in sources:
                os.close(fd)

    def close_input(self) -> None:
        """Tell the worker to stop: it kills its run, removes the run's folder and exits."""
        if self.control is not None:
            with contextlib.suppress(OSError, ValueError):
                self.control.shutdown(socket.SHUT_RDWR)
            self.control.close()

    def kill(self) -> None:
        """Kill the worker and its run at once, and every process the run left."""
        reaper.end_process(self.process)
        self._forget()

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Stop the worker, cleanly if it answers within ``grace`` seconds, else by force."""
        self.close_input()
        if reaper.wait_process(self.process, grace) is None:
            self.kill()
        self._forget()

    def _forget(self) -> None:
        """After the worker is gone: its run and what the run left, then its sockets."""
        if self.child_pid is not None:
            reaper.kill_group(self.child_pid)
            self.child_pid = None
        sweep_strays()
        LIVE_WORKERS.discard(self.process.pid)
        if self.replies is not None:
            self.replies.close()


def _memory_file(text: str) -> int:
    """A read-only descriptor of a file in memory holding ``text``, at its start."""
    fd = os.memfd_create("source", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    data = memoryview(text.encode("utf-8", "surrogateescape"))
    while data:
        data = data[os.write(fd, data) :]
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


LIVE_WORKERS: set[int] = set()
"""The pids of every live worker of every pool in this process."""


def sweep_strays() -> None:
    """Kill every process of a run handed to this process (known by the mark every run's
    process carries, ``confine.is_untrusted``) with what it started: the grader is a child
    subreaper, so a run whose worker died comes here (``reaper.sweep_strays``)."""
    reaper.sweep_strays(LIVE_WORKERS, confine.is_untrusted)


def kill_strays(scratch: Path) -> None:
    """Kill any process still running from ``scratch``: a last sweep after the workers stop.

    Every child of a worker is a fork of it and keeps its command line, which
    names the scratch folder; this finds such a process even where its worker
    was killed before it could clean up.
    """
    reaper.kill_running_from(str(scratch).encode())


WORKERS = 2
"""Warm workers a pool starts unless told otherwise: two keep both cores of the machine busy."""


class WorkerPool:
    """Warm workers sharing one scratch folder, removed with every trace when the pool closes.

    ``workers`` zygotes run with the fixed hash seed; one more runs with
    another seed, for the run that checks a test file does not depend on it.
    Safe to call ``run`` from several threads at once.

    ``close`` stops every worker, which kills its run and every process the
    run started, and removes the scratch folder; runs still waiting then raise
    ``GraderError`` instead of starting. A pool made in the main thread also
    closes itself on Ctrl-C before the ``KeyboardInterrupt`` unwinds, so that
    nothing waits for runs in flight to finish.
    """

    def __init__(
        self,
        workers: int = WORKERS,
        minimum: IsolationLevel = "none",
        at_most: IsolationLevel = "namespaces",
    ) -> None:
        self.workers = workers
        self.scratch: Path | None = None
        self._idle: dict[int, queue.Queue[_Zygote]] = {}
        self._all: list[_Zygote] = []
        self._lock = threading.RLock()
        self._closed = threading.Event()
        self._gate = _Gate()
        self.isolation: IsolationLevel = require_isolation(minimum, at_most)
        """The isolation level every run of this pool gets (``grader.sandbox.confine``)."""
        self._one_at_a_time = threading.Lock() if self.isolation == "uid" else None
        """At the ``uid`` level every run has the same user and no PID namespace, so one run
        could signal another (a SIGSTOP makes a run time out, which kills its mutant): there,
        runs go one at a time, and nothing of an earlier run is left when the next starts."""
        in_main = threading.current_thread() is threading.main_thread()
        self._previous: dict[int, Any] = (
            {number: signal.getsignal(number) for number in STOP_SIGNALS} if in_main else {}
        )
        # Where a signal is ignored (Ctrl-C in a background job, SIGHUP under nohup) it stays so.
        self._in_main = in_main
        libc.become_subreaper()
        libc.not_dumpable()  # where runs keep the grader's user, they cannot ptrace it
        try:
            # A stop signal waits until the scratch folder and every worker are known to close().
            with _stop_deferred(then=self._interrupted if self._in_main else None):
                self.scratch = Path(tempfile.mkdtemp(prefix="grader-"))
                if self.isolation != "none":
                    self.scratch.chmod(0o711)  # its runs pass through; only the grader lists it
                    if self.isolation == "uid" and not confine.reachable(self.scratch):
                        raise GraderError(
                            f"the scratch folder {self.scratch} lies in a folder other users "
                            "cannot pass through, so the confined runs cannot reach it; "
                            "set TMPDIR to a folder such as /tmp"
                        )
                cpus = sorted(os.sched_getaffinity(0))
                seeds = [FIXED_HASH_SEED] * workers + [OTHER_HASH_SEED]
                for seed in seeds:
                    zygote = _Zygote(self.scratch, seed, cpus, self.isolation)
                    self._all.append(zygote)
                    self._idle.setdefault(seed, queue.Queue()).put(zygote)
        except BaseException:
            self.close()
            raise

    def run(self, job: Job) -> RunResult:
        """Run ``job`` once, beside whatever else the pool runs."""
        return self._run(job, alone=False)

    def confirm(self, job: Job, result: RunResult) -> RunResult:
        """``result`` of ``job`` if it is no timeout; else the job run once more, alone on the
        pool (no other run of it beside it, a longer wall-clock backstop), before the timeout
        counts: ``confirmed`` if it timed out again, else the second run is the result.
        Call it where a timeout decides something (a kill, a file not valid)."""
        if result.status != "timeout":
            return result
        again = self._run(job, alone=True)
        if again.status != "timeout":
            return again
        message = f"{again.message} (confirmed: it timed out again, run alone)"
        return replace(again, message=message, confirmed=True)

    def run_confirmed(self, job: Job) -> RunResult:
        """Run ``job``; a timeout is confirmed (``confirm``) before it is returned."""
        return self.confirm(job, self.run(job))

    def _run(self, job: Job, alone: bool) -> RunResult:
        if self._closed.is_set():
            raise GraderError("grading was stopped before it finished")
        with self._gate.exclusive() if alone else self._gate.shared():
            if self._closed.is_set():
                raise GraderError("grading was stopped before it finished")
            zygote = self._idle[job.hash_seed].get()
            try:
                with self._one_at_a_time or contextlib.nullcontext():
                    return zygote.run(job, self._closed, confirming=alone)
            finally:
                self._idle[job.hash_seed].put(zygote)

    def _interrupted(self, signum: int, frame: FrameType | None) -> None:
        """Ctrl-C, SIGTERM or SIGHUP: stop everything first, then let the interrupt unwind."""
        self.close()
        raise KeyboardInterrupt if signum == signal.SIGINT else GraderStopped(signum)

    def close(self) -> None:
        """Stop every worker, kill what their runs left and remove the scratch folder; a stop
        signal meanwhile waits for it."""
        then = None
        if self._in_main:
            then = {
                number: _default_handler(number) if previous is None else previous
                for number, previous in self._previous.items()
            }
        self._in_main = False  # the handlers are given back once
        with _stop_deferred(then=then), self._lock:
            self._closed.set()
            for zygote in self._all:
                zygote.close_input()
            for zygote in self._all:
                zygote.stop()
            self._all.clear()
            sweep_strays()
            if self.scratch is not None:
                kill_strays(self.scratch)
                shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class _Gate:
    """Runs go side by side (``shared``), or one alone (``exclusive``): the alone run waits
    for those in flight to end, and no run starts while it goes or waits."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._running = 0
        self._alone_waiting = 0
        self._alone = False

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._condition:
            self._condition.wait_for(lambda: not self._alone and not self._alone_waiting)
            self._running += 1
        try:
            yield
        finally:
            with self._condition:
                self._running -= 1
                self._condition.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._condition:
            self._alone_waiting += 1
            self._condition.wait_for(lambda: not self._alone and self._running == 0)
            self._alone_waiting -= 1
            self._alone = True
        try:
            yield
        finally:
            with self._condition:
                self._alone = False
                self._condition.notify_all()


def _default_handler(number: int) -> Any:
    return signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL


def require_isolation(
    minimum: IsolationLevel, at_most: IsolationLevel = "namespaces"
) -> IsolationLevel:
    """The isolation level runs get: what this machine gives, but no more than ``at_most`` (the
    kit's tests try each level); ``GraderError`` (exit 2) below ``minimum``."""
    level = confine.isolation_level()
    if confine.level_at_least(level, at_most):
        level = at_most
    if not confine.level_at_least(level, minimum):
        raise GraderError(
            f"isolation {minimum!r} was required but this machine gives runs only {level!r} "
            "(confinement needs the grader to run as root, namespaces a kernel that allows "
            "them); nothing was graded"
        )
    return level


@contextlib.contextmanager
def _stop_deferred(then: Any = None) -> Iterator[None]:
    """Hold the stop signals off while the block runs (main thread only), then deliver one.

    Afterwards the handlers are ``then``'s (one handler for all, or a dict by signal), or
    those in place before. A signal ignored before stays ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    before = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    for number in STOP_SIGNALS:
        if before[number] != signal.SIG_IGN:
            signal.signal(number, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for number in STOP_SIGNALS:
            after = then.get(number) if isinstance(then, dict) else then
            after = before[number] if after is None else after
            if before[number] == signal.SIG_IGN:
                continue
            signal.signal(number, _default_handler(number) if after is None else after)
    if caught:
        raise KeyboardInterrupt if caught[0] == signal.SIGINT else GraderStopped(caught[0])
