"""The grader's end of one warm worker: it starts the worker, sends it jobs, reads its answers.

A worker is a process of its own (``python -m grader.sandbox.worker``) that
has imported pytest and hypothesis once and forks a run's processes for each
job. The grader keeps its own clock on it: a worker that does not answer in
time, or dies under a run, is killed and started again, and whatever its run
left is swept, so one hostile run cannot stop the grading of the others.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from grader.errors import GraderError
from grader.sandbox import procfs, reaper
from grader.sandbox.confine import limits
from grader.sandbox.host.compiled import rewritten_pyc
from grader.sandbox.host.job import ANY_INTERFACE, Job, wall_backstop
from grader.sandbox.host.result import PARENT_KILLED, RunResult, interpret
from grader.sandbox.levels import IsolationLevel
from grader.sandbox.protocol.frames import (
    FrameReader,
    WireError,
    channel,
    decode_json,
    json_frame,
    write_all,
)
from grader.sandbox.protocol.jobs import JobMessage, RunRecord, Started
from grader.sandbox.protocol.status import RunStatus

STOP_GRACE_SECONDS = 5.0

WORKER_GRACE_SECONDS = 10.0
"""How long past a run's time limit the grader waits for its worker's record: the worker
kills a run on time itself, so only a stopped, wedged or killed worker ever uses this."""

WORKER_START_SECONDS = 120.0
"""How long a new worker may take to import pytest and start its first run."""

STOPPED_CHECK_SECONDS = 0.5
"""How often a worker that has not answered is checked for being stopped (SIGSTOP)."""

_WORKER_FAILURES = (OSError, ValueError, EOFError, KeyError, TypeError, RecursionError, WireError)
"""What reading a worker's answer raises when the worker died under its run."""


class Worker:
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
        self,
        scratch: Path,
        hash_seed: int,
        cpus: list[int],
        level: IsolationLevel,
        home: int,
    ) -> None:
        self.scratch = scratch
        self.hash_seed = hash_seed
        self.cpus = cpus
        """Where the test process of every run of a student's test file may run: the same CPUs
        for every worker, so that no test can tell which worker runs it (the kit's own tests
        run on ``home``)."""
        self.home = home
        """The CPU its runs' implementation processes run on (``policy.pins_implementation``)."""
        self.level = level
        self.child_pid: int | None = None
        self.control: socket.socket | None = None
        """The jobs go out on this socket (the worker's stdin)."""
        self.replies: socket.socket | None = None
        """The worker's answers come back on this one, its stdout (``frames.channel``)."""
        self._frames = FrameReader()
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
        self._frames = FrameReader()
        command = [sys.executable, "-s", "-P", "-m", "grader.sandbox.worker", str(self.scratch)]
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
            "implementation_cpus": [self.home],
            "kit_tests": job.kit_tests,
            "dependencies": [name for name, _ in job.dependencies],
            "ceiling": job.time_limit if job.ceiling is None else job.ceiling,
            "only": list(job.only),
            "leave_out": list(job.leave_out),
            "stop_at_failure": job.stop_at_failure,
            "wall": wall_backstop(job.time_limit, confirming),
            "heap_shift": job.heap_shift,
        }
        if job.call_limit:
            message["call_limit"] = job.call_limit
        if job.hypothesis_seed is not None:
            message["hypothesis_seed"] = job.hypothesis_seed
        started = time.monotonic()
        try:
            implementation, tests, *dependencies = (
                text.encode("utf-8", "surrogateescape")
                for text in (job.implementation, job.test_source, *(s for _, s in job.dependencies))
            )
            self._send_job(message, [implementation, tests, rewritten_pyc(tests), *dependencies])
            started_message: Started = decode_json(self._read(started + WORKER_START_SECONDS))
            self.child_pid = int(started_message["pid"])
            backstop = wall_backstop(job.time_limit, confirming)
            deadline = time.monotonic() + backstop + WORKER_GRACE_SECONDS
            record: RunRecord = decode_json(self._read(deadline))
        except TimeoutError:
            if closed.is_set():
                raise GraderError("grading was stopped before it finished") from None
            return self._restart_after_deadline(time.monotonic() - started)
        except _WORKER_FAILURES as error:
            if closed.is_set():
                raise GraderError("grading was stopped before it finished") from error
            return self._restart_after_crash()
        self.child_pid = None
        return interpret(record)

    def _read(self, deadline: float) -> bytes:
        """The worker's next frame; ``TimeoutError`` if it has none by ``deadline``, or at
        once if the worker is stopped (it cannot answer)."""
        replies = self.replies
        assert replies is not None
        while (body := self._frames.next()) is None:
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
                self._frames.feed(chunk)
        return body

    def _restart_after_deadline(self, seconds: float) -> RunResult:
        """The worker missed the grader's deadline: kill it and its run, start a new one."""
        self.kill()
        self.process = self._start()
        return RunResult(
            RunStatus.TIMEOUT,
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
        return RunResult(RunStatus.CRASHED, (), PARENT_KILLED, "", 0.0)

    def _send_job(self, message: JobMessage, contents: list[bytes]) -> None:
        """Send the job with its sources (implementation, tests, the tests as pytest compiles
        them, then each dependency) as sealed in-memory files the worker never reads."""
        assert self.control is not None
        sources = [_memory_file(content) for content in contents]
        try:
            socket.send_fds(self.control, [json_frame(message)], sources)
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


def _memory_file(content: bytes) -> int:
    """A read-only descriptor of a file in memory holding ``content``, at its start."""
    fd = os.memfd_create("source", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    write_all(fd, content)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


LIVE_WORKERS: set[int] = set()
"""The pids of every live worker of every pool in this process."""


def sweep_strays() -> None:
    """Kill every process of a run handed to this process (known by the mark every run's
    process carries, ``limits.is_untrusted``) with what it started: the grader is a child
    subreaper, so a run whose worker died comes here (``reaper.sweep_strays``)."""
    reaper.sweep_strays(LIVE_WORKERS, limits.is_untrusted)


def kill_strays(scratch: Path) -> None:
    """Kill any process still running from ``scratch``: a last sweep after the workers stop.

    Every child of a worker is a fork of it and keeps its command line, which
    names the scratch folder; this finds such a process even where its worker
    was killed before it could clean up.
    """
    reaper.kill_running_from(str(scratch).encode())
