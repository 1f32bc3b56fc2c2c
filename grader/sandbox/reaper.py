"""Every way the sandbox ends or collects a process: the only code that sends a signal or waits.

A reviewer asking "what can kill a process here, and what could it miss?"
reads this file. Killing goes by pidfd wherever a pid is chosen from ``/proc``
(``kill_by_pidfd``, the one killer by pid: by number only on a kernel without
pidfds), so a pid reused meanwhile is never hit; by process group
for a run's root (``kill_group``); by cgroup (``kill_cgroup``), by user
(``kill_users``) and by ancestry (``kill_descendants``, ``sweep_strays``) for
what a run left behind, whatever its state letter, group or command line; what
a run's users left in System V IPC goes too (``remove_users_ipc``).
Waiting is ``wait_for`` (one child), ``reap_children`` (every dead child),
``serve_as_init`` (a PID namespace's first process) and the two calls on a
worker's ``Popen``. Which processes to look at comes from ``procfs``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from grader.sandbox import libc, procfs

SWEEP_ROUNDS = 200
"""How often a worker looks again for processes a run left; each round kills all it finds."""
SWEEP_SECONDS = 10.0
"""How long the grader's own sweep for the strays of dead workers may go on."""


def kill_by_pidfd(pid: int, marked: Callable[[int], bool] | None = None) -> None:
    """SIGKILL process ``pid`` through a pidfd, so a pid reused meanwhile is never hit; with
    ``marked``, only if the process opened still passes it (carries a run's mark). Only a
    kernel without pidfds (before Linux 5.3) has it go by the pid number instead."""
    try:
        handle = os.pidfd_open(pid)
    except OSError as error:
        if error.errno == errno.ENOSYS and (marked is None or marked(pid)):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return
    try:
        if marked is None or marked(pid):
            signal.pidfd_send_signal(handle, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(handle)


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads, if it is still there and ours to signal."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_users(uids: Iterable[int]) -> None:
    """SIGKILL, by pidfd, every process of ``uids`` (users one run alone held) until none
    runs: what a run started is found by its user, however it left its group or tree."""
    uids = tuple(uids)
    for _ in range(100):
        found = procfs.users_processes(uids)
        if not found:
            return
        for pid in found:
            kill_by_pidfd(pid)
        time.sleep(0.002)


def remove_users_ipc(uids: Iterable[int]) -> None:
    """Remove every System V IPC object (shared memory, semaphores, message queues) that one
    of ``uids`` (users one run alone held) owns or made: the seccomp filter refuses those
    calls to a run, and this sweeps what a run on a machine without the filter left."""
    for kind, ident in procfs.users_ipc_objects(uids):
        with contextlib.suppress(OSError):
            libc.remove_ipc_object(kind, ident)


def kill_descendants(spare: int | None = None) -> None:
    """Kill every process below this one but ``spare`` (the fork server), however it left
    its group, and reap them all.

    Killing a process hands its children to this subreaper, so each round
    finds what the last one orphaned; a process that forks between two rounds
    is found in the next one.
    """
    for _ in range(SWEEP_ROUNDS):
        living = [pid for pid in procfs.descendants(os.getpid()) if pid != spare]
        for pid in living:
            kill_by_pidfd(pid)
        _await_exits(living[:AWAITED_AT_ONCE], DEATH_WAIT_SECONDS)
        reap_children()
        if not living:
            return


AWAITED_AT_ONCE = 64
"""How many killed processes a sweep round watches die (a pidfd each); the rest are found
again in the next round if they still live."""
DEATH_WAIT_SECONDS = 0.005
"""The longest a sweep round waits for the processes it killed to die."""


def _await_exits(pids: list[int], seconds: float) -> None:
    """Wait until each of ``pids`` has exited (its pidfd readable), at most ``seconds``: a
    killed process mostly dies within a millisecond, so a round rarely waits that long."""
    handles = []
    for pid in pids:
        with contextlib.suppress(OSError):
            handles.append(os.pidfd_open(pid))
    poller = select.poll()
    for handle in handles:
        poller.register(handle, select.POLLIN)
    deadline = time.monotonic() + seconds
    try:
        waiting = len(handles)
        while waiting and (left := deadline - time.monotonic()) > 0:
            for handle, _ in poller.poll(left * 1000):
                poller.unregister(handle)
                waiting -= 1
    finally:
        for handle in handles:
            os.close(handle)


def reap_children() -> None:
    """Collect the exit status of every dead child, so none stays a zombie."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def wait_for(pid: int) -> int:
    """The wait status of child ``pid``, once it has ended; ``ChildProcessError`` if it is no
    child of this process."""
    return os.waitpid(pid, 0)[1]


def serve_as_init(child: int) -> int | None:
    """As a PID namespace's first process: reap every process of the namespace until
    ``child`` ends; its wait status, ``None`` if no child is left before it is seen."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return None
        except InterruptedError:
            continue
        if pid == child:
            return status


def sweep_strays(spare: Collection[int], marked: Callable[[int], bool]) -> None:
    """Kill, by pidfd, every child of this process that is ``marked`` as a run's and not in
    ``spare`` (the live workers), with everything below it, and reap it.

    The grader is a child subreaper: a run's process whose worker died comes
    here instead of to init, whatever it did to its session or command line.
    Killing it hands its own children here too, so the sweep goes on until
    none is left, or ``SWEEP_SECONDS`` pass.
    """
    deadline = time.monotonic() + SWEEP_SECONDS
    me = os.getpid()
    while time.monotonic() < deadline:
        strays = [pid for pid in procfs.children(me) if pid not in spare and marked(pid)]
        if not strays:
            return
        for pid in strays:
            for below in procfs.descendants(pid):
                kill_by_pidfd(below, marked)
            kill_by_pidfd(pid, marked)
        for pid in strays:
            _reap(pid, deadline)


def _reap(pid: int, deadline: float) -> None:
    """Collect child ``pid``'s exit status once it is dead, waiting no later than
    ``deadline``."""
    while True:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] or time.monotonic() > deadline:
                return
        except ChildProcessError:
            return
        time.sleep(0.005)


def kill_running_from(marker: bytes) -> None:
    """SIGKILL, by pidfd, every process whose command line holds the argument ``marker`` (a
    worker's scratch folder, which every fork of the worker keeps), if the process opened
    still holds it."""
    for pid in procfs.running_from(marker):
        kill_by_pidfd(pid, lambda opened: procfs.runs_from(opened, marker))


def kill_cgroup(folder: Path) -> None:
    """SIGKILL every process of the cgroup ``folder`` at once (``cgroup.kill``, version 2),
    then each one it still lists."""
    kill = folder / "cgroup.kill"
    if kill.exists():
        with contextlib.suppress(OSError):
            kill.write_text("1")
    for pid in _read(folder / "cgroup.procs").split():
        kill_by_pidfd(int(pid))


def remove_cgroup_tree(folder: Path) -> None:
    """Remove the cgroup ``folder`` and every cgroup below it, killing what they hold."""
    for below in sorted(folder.glob("*/"), key=lambda path: -len(path.parts)):
        if (below / "cgroup.procs").exists():
            remove_cgroup_tree(below)
    for pid in _read(folder / "cgroup.procs").split():
        kill_by_pidfd(int(pid))
    with contextlib.suppress(OSError):
        folder.rmdir()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def end_process(process: subprocess.Popen[bytes]) -> None:
    """Kill a process the grader started, and the session it leads, and reap it."""
    kill_group(process.pid)
    with contextlib.suppress(OSError):
        process.kill()
    process.wait()


def wait_process(process: subprocess.Popen[bytes], seconds: float | None = None) -> int | None:
    """The exit code of a process the grader started, once it ends; ``None`` if it has not
    within ``seconds``."""
    try:
        return process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None
