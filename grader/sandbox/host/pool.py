"""Running one test file against one implementation, isolated, from warm workers.

A ``WorkerPool`` keeps a few warm workers (``client.Worker``, each a process
running ``grader.sandbox.worker``) that have imported pytest and hypothesis
once; each run forks fresh processes from one of them, so a run costs a fork,
not an interpreter start. The pool hands out workers to threads, runs a
timeout's confirmation alone, and on close or a stop signal ends every worker
and removes every trace.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from grader.errors import STOP_SIGNALS, GraderError, GraderStopped
from grader.sandbox import levels, libc
from grader.sandbox.confine import folders, probe, user
from grader.sandbox.host.client import Worker, kill_strays, sweep_strays
from grader.sandbox.host.job import FIXED_HASH_SEED, OTHER_HASH_SEED, Job
from grader.sandbox.host.result import RunResult
from grader.sandbox.levels import IsolationLevel
from grader.sandbox.protocol.status import RunStatus

WORKERS = 2
"""Warm workers a pool starts unless told otherwise: two keep both cores of the machine busy."""


class WorkerPool:
    """Warm workers sharing one scratch folder, removed with every trace when the pool closes.

    ``workers`` workers run with the fixed hash seed; one more runs with
    another seed, for the run that checks a test file does not depend on it:
    started with the others, or with ``other_seed=False`` only when a run needs
    it (a check whose tests' phase is cached, a diff: its warm-up is a core's
    second). Safe to call ``run`` from several threads at once.

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
        other_seed: bool = True,
    ) -> None:
        self.workers = workers
        self.scratch: Path | None = None
        self._idle: dict[int, queue.Queue[Worker]] = {}
        self._all: list[Worker] = []
        self._lock = threading.RLock()
        self._closed = threading.Event()
        self._gate = _Gate()
        self.isolation: IsolationLevel = require_isolation(minimum, at_most)
        """The isolation level every run of this pool gets (``grader.sandbox.confine``)."""
        self._one_at_a_time = _MachineLock() if self.isolation == "uid" else None
        """At the ``uid`` level no run has a PID, mount or IPC namespace of its own, so one run
        could signal another (a SIGSTOP makes a run time out, which kills its mutant) or pass
        it a note through the folders every user may write: there, runs go one at a time, the
        runs of every grader on the machine included, and nothing of an earlier run is left
        when the next starts."""
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
                    if self.isolation == "uid" and not folders.reachable(self.scratch):
                        raise GraderError(
                            f"the scratch folder {self.scratch} lies in a folder other users "
                            "cannot pass through, so the confined runs cannot reach it; "
                            "set TMPDIR to a folder such as /tmp"
                        )
                for _ in range(workers):
                    self._start_worker(FIXED_HASH_SEED)
                if other_seed:
                    self._start_worker(OTHER_HASH_SEED)
        except BaseException:
            self.close()
            raise

    def _start_worker(self, seed: int) -> queue.Queue[Worker]:
        """One more worker, with hash seed ``seed``, its calls on the next CPU in turn."""
        cpus = sorted(os.sched_getaffinity(0))
        home = cpus[len(self._all) % len(cpus)]
        assert self.scratch is not None
        worker = Worker(self.scratch, seed, cpus, self.isolation, home)
        self._all.append(worker)
        idle = self._idle.setdefault(seed, queue.Queue())
        idle.put(worker)
        return idle

    def _workers_of(self, seed: int) -> queue.Queue[Worker]:
        """The idle workers with hash seed ``seed``, the first started if there is none yet."""
        with self._lock:
            idle = self._idle.get(seed)
            if idle is not None:
                return idle
            with _stop_deferred():
                if self._closed.is_set():
                    raise GraderError("grading was stopped before it finished")
                return self._start_worker(seed)

    def warm(self, seed: int) -> None:
        """Start a worker with hash seed ``seed`` now, if there is none yet, so that it is warm
        by the time a run needs it."""
        self._workers_of(seed)

    def run(self, job: Job) -> RunResult:
        """Run ``job`` once, beside whatever else the pool runs."""
        return self._run(job, alone=False)

    def confirm(self, job: Job, result: RunResult) -> RunResult:
        """``result`` of ``job`` if it is no timeout; else the job run once more, alone on the
        pool (no other run of it beside it, a longer wall-clock backstop), before the timeout
        counts: ``confirmed`` if it timed out again, else the second run is the result.
        Call it where a timeout decides something (a kill, a file not valid)."""
        if result.status != RunStatus.TIMEOUT:
            return result
        again = self._run(job, alone=True)
        if again.status != RunStatus.TIMEOUT:
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
            idle = self._workers_of(job.hash_seed)
            worker = idle.get()
            try:
                with self._one_at_a_time or contextlib.nullcontext():
                    return worker.run(job, self._closed, confirming=alone)
            finally:
                idle.put(worker)

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
            for worker in self._all:
                worker.close_input()
            for worker in self._all:
                worker.stop()
            self._all.clear()
            sweep_strays()
            if self._one_at_a_time is not None:
                self._one_at_a_time.close()
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


MACHINE_LOCK = Path("/run/ds07-grader-uid.lock")
"""The lock every grader on this machine holds while one of its runs at ``uid`` goes: in a
folder only root may write, and a file only root may open, so no run can hold it."""


class _MachineLock:
    """One run at a time in this process (a thread lock) and on this machine (``flock`` on
    ``MACHINE_LOCK``; where it cannot be made, this process's runs alone)."""

    def __init__(self) -> None:
        self._threads = threading.Lock()
        try:
            self._fd: int | None = os.open(
                MACHINE_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
            )
        except OSError:
            self._fd = None

    def __enter__(self) -> None:
        self._threads.acquire()
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._threads.release()
                raise

    def __exit__(self, *exception: object) -> None:
        fd = self._fd
        if fd is not None:
            with contextlib.suppress(OSError):  # closed meanwhile: the lock went with it
                fcntl.flock(fd, fcntl.LOCK_UN)
        self._threads.release()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


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
    kit's tests try each level); ``GraderError`` (exit 2) below ``minimum``.

    As root a grade is of record: ``minimum`` is then at least ``uid`` (``best`` means
    ``namespaces``, else ``uid``), and the error says what each level lacks and how to give
    it. Only the kit's own tests, forcing a weaker level with ``at_most``, run as root at
    ``none``; a check at ``none`` is practice, and every report of it says so. At ``uid``,
    forced down to it or not, the kit and the grader's install are closed to run uids
    (``probe.close_to_runs``; the level's probe also checks the runs can read Python,
    which a forced pool's worker has imported). The probe forks, so it runs with the stop
    signals held (``_held_by_the_kernel``).
    """
    with _held_by_the_kernel():
        level = probe.isolation_level()
    if levels.level_at_least(level, at_most):
        level = at_most
    if os.geteuid() == 0 and at_most != "none" and not levels.level_at_least(minimum, "uid"):
        minimum = "uid"
    unmapped = _unmapped_run_ids() if os.geteuid() == 0 and at_most != "none" else None
    if unmapped is not None:
        raise GraderError(f"{unmapped}; nothing was graded")
    if not levels.level_at_least(level, minimum):
        raise GraderError(_why_not(minimum, level))
    if level == "uid" and os.geteuid() == 0:  # also where forced below the machine's level
        cannot = probe.close_to_runs(probe.private_paths(probe.installed_kit()))
        if cannot:
            raise GraderError(
                f"runs at isolation 'uid' are kept from the kit by permissions alone, and "
                f"{'; '.join(cannot)}; nothing was graded"
            )
    return level


def _unmapped_run_ids() -> str | None:
    """Why runs have no ids to take in this user namespace (``confine.user.run_ids``), or ``None``:
    as root a grade needs them, and a level probe in a namespace that maps too few finds no
    level at all, whose reason is the map."""
    try:
        user.run_ids()
    except (user.RunIdsUnmapped, OSError, ValueError) as error:
        return str(error)
    return None


def _why_not(minimum: IsolationLevel, level: IsolationLevel) -> str:
    """The one-line refusal where runs would get ``level`` but need ``minimum``."""
    if os.geteuid() != 0:
        return (
            f"isolation {minimum!r} was required but this machine gives runs only {level!r}: "
            "confinement needs the grader to run as root (sudo, or root in a container); "
            "nothing was graded"
        )
    wanted = [name for name in ("namespaces", "uid") if levels.level_at_least(name, minimum)]
    with _held_by_the_kernel():  # each level's probe (cached) forks
        lacks = "; ".join(
            f"{name}: {', '.join(probe.level_lacks(name))}" for name in wanted if name != level
        )
    return (
        f"as root the grader grades only in confined runs (at least {minimum!r}), and this "
        f"machine gives runs only {level!r} ({lacks}). To give namespaces, run with "
        "CAP_SYS_ADMIN (docker run --cap-add SYS_ADMIN, or --privileged); to give uid, "
        "install Python where every user may read it (/usr or /opt, not under /root) and make "
        "the kit readable by root alone (chmod -R go-rwx on each folder named); for a practice "
        "check, run the grader as an ordinary user; nothing was graded"
    )


@contextlib.contextmanager
def _held_by_the_kernel() -> Iterator[None]:
    """Block the stop signals in this thread while the block runs; one that came is delivered
    as it ends. For a block that forks in the main thread: a signal whose handler raises
    while the fork's callbacks run (``logging``'s) would raise there, where Python reports
    the error as unraisable and drops it, and the command would go on as if never stopped."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextlib.contextmanager
def _stop_deferred(then: Any = None) -> Iterator[None]:
    """Hold the stop signals off while the block runs (main thread only), then deliver one.

    Afterwards the handlers are ``then``'s (one handler for all, or a dict by signal), or
    those in place before. A signal ignored before stays ignored. A signal held off is sent
    again once they are in place, so the handler that would have had it has it (a pool's
    closes the pool first), whether or not the block raised: none is ever dropped; where the
    handler is the default one, it is raised as ``KeyboardInterrupt`` or ``GraderStopped``.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    delivered = False
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
        if caught and callable(signal.getsignal(caught[0])):
            delivered = True
            signal.raise_signal(caught[0])
    if caught and not delivered:  # the default handler's: unwind as Ctrl-C does
        raise KeyboardInterrupt if caught[0] == signal.SIGINT else GraderStopped(caught[0])
