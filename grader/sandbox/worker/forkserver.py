"""Every run's processes forked from one pristine copy of the warm worker.

**The invariant: every run of a job starts from the same memory.** With
address-space layout randomisation off, a process's objects lie where its
allocator's state puts them, so a ``set`` of plain objects (hashed by
address) iterates in an order that follows everything allocated before it;
if that state varied from run to run, a test could pass on one check and
fail on the next. Six choices, each far from the others, hold it; a change
to any of them must keep it (``tests/sandbox/test_same_memory.py`` forks
runs of one job and compares what a test can see of memory):

1. Address randomisation off: ``worker.server.main`` runs the worker again
   under ``personality(ADDR_NO_RANDOMIZE)`` (``libc.turn_off_address_randomisation``),
   so every fresh worker maps its heap and libraries at the same addresses.
2. The fork server (this module): runs are forked from a copy of the worker
   made once, right after the warm-up, not from the worker, whose heap
   changes with every job it reads and every record it builds.
3. ``gc.freeze()`` just before the server is made (``worker.server.serve``):
   the worker's objects go to the permanent generation, so no collection in
   a run scans, copies or frees them: a run's collections follow its own
   objects alone. (Two forks of one server agree without it too; it is the
   one choice the unit test does not catch by itself.)
4. Limits stripped from the job (``worker.server._run_jobs``): a run's job
   carries no time limit, wall backstop or stop rule, which differ by variant
   (a mutant's limit is measured from the reference); their text would
   change the heap the root decodes the job in.
5. An equal-heap warm-up (``worker.warm_pytest`` and what the worker
   imports): it records no warnings, and the worker makes no
   ``typing.NamedTuple`` class, both of which once left fresh workers' heaps
   a few blocks apart.
6. The shape of the framing code (``protocol``, and the loop below): what
   the server and a root allocate while they read a command and a job is the
   same for every run of a job, since the job is (its folder path included:
   ``confine.folders.make_run_folder``); a random folder name once made the
   set order follow how the framing code happened to allocate.

How it works. The fork server is forked from the worker once, after the
warm-up, and from then on does nothing but wait for a byte and fork, which
leaves its memory as it was: every fork starts from the same heap. What it
forks is a run's *root*, a process of the grader's that receives its job
and file descriptors from the worker, forks the confined process that runs
the job (``contain.fork_confined``), waits for it and reports its exit
status. What happens before the untrusted code starts is then a function of
the job alone, and so are the addresses it sees.

The root leads a session of its own holding the run's processes:
``os.killpg(root, SIGKILL)`` ends them, and each of them dies with its parent
(``PR_SET_PDEATHSIG``), the fork server with the worker.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from grader.sandbox import libc, reaper
from grader.sandbox.confine import cgroups, contain, descriptors
from grader.sandbox.confine.policy import Confinement
from grader.sandbox.protocol import frames
from grader.sandbox.protocol.frames import channel
from grader.sandbox.protocol.jobs import RunJob, SpawnMessage

Entry = Callable[[RunJob, list[int]], None]
"""What a run's confined process runs: the job and the descriptors sent with it. It should
not return (``os._exit``); if it does, the process exits with status 0."""

_MAX_DESCRIPTORS = 32
_FORK = 1
"""The one command the fork server takes: fork a run's root."""


class Spawned:
    """A run's root as the worker sees it: its pid and the channel its exit status comes on."""

    def __init__(self, pid: int, status_channel: int) -> None:
        self.pid = pid
        self._status_channel = status_channel

    def status(self) -> int | None:
        """The wait status of the run's confined process, once the root has it (this blocks
        until the root exits); ``None`` if the root was killed first."""
        status = frames.receive_number(self._status_channel)
        os.close(self._status_channel)
        self._status_channel = -1
        return status

    def close(self) -> None:
        if self._status_channel >= 0:
            os.close(self._status_channel)
            self._status_channel = -1


class ForkServer:
    """Forks run roots from a copy of this process as it is when the server is made.

    Make it in a single-threaded process once its state is final (after the
    warm-up and ``gc.freeze()``); ``spawn`` then starts one confined process
    per call. ``pid`` is the server's own pid, to spare it when sweeping.
    """

    def __init__(self, confinement: Confinement, entry: Entry) -> None:
        command_read, self._commands = channel()
        self._jobs, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            os.close(self._commands)
            self._jobs.close()
            _serve(command_read, server_end, confinement, entry)
        os.close(command_read)
        server_end.close()
        self.pid = pid

    def spawn(
        self,
        job: RunJob,
        descriptors: Sequence[int],
        workdir: Path,
        identity: int | None = None,
        cgroups: Sequence[str] = (),
    ) -> Spawned:
        """Start a run's root for ``job``; its confined process gets ``descriptors`` (the
        caller still closes its own copies), works in ``workdir`` and takes the uid and gid
        ``identity``; the root first joins the cgroups whose ``cgroup.procs`` are
        ``cgroups``, so that every process of the run is in them."""
        status_read, status_write = channel()
        job_read, job_write = channel()
        try:
            frames.send_number(self._commands, _FORK)
            socket.send_fds(self._jobs, [b"j"], [status_write, job_read, *descriptors])
        finally:
            os.close(status_write)
            os.close(job_read)
        message: SpawnMessage = {
            "job": job,
            "workdir": str(workdir),
            "identity": identity,
            "cgroups": list(cgroups),
        }
        try:
            with contextlib.suppress(BrokenPipeError):
                frames.send_json(job_write, message)
        finally:
            os.close(job_write)
        pid = frames.receive_number(status_read)
        if pid is None:
            os.close(status_read)
            raise OSError("the fork server could not start a run")
        return Spawned(pid, status_read)

    def close(self) -> None:
        """Stop the server; runs already started are the caller's to end."""
        with contextlib.suppress(OSError):
            os.close(self._commands)
        self._jobs.close()
        with contextlib.suppress(ChildProcessError):
            reaper.wait_for(self.pid)


def _serve(commands: int, jobs: socket.socket, confinement: Confinement, entry: Entry) -> NoReturn:
    """The server: a command in, a root out. Nothing here allocates memory that outlives one
    turn of the loop, so every fork starts from the same heap."""
    try:
        libc.die_with_parent()
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # roots report through their channel
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        descriptors.close_descriptors_but({0, 1, 2, commands, jobs.fileno()})
        while frames.receive_number(commands) == _FORK:
            if os.fork() == 0:
                _root(commands, jobs, confinement, entry)
    finally:
        os._exit(0)


def _root(commands: int, jobs: socket.socket, confinement: Confinement, entry: Entry) -> NoReturn:
    """A run's root: take the job, fork the confined process, report its pid, then its status."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(commands)
        os.setsid()
        libc.die_with_parent()
        _, descriptors, _, _ = socket.recv_fds(jobs, 16, _MAX_DESCRIPTORS)
        jobs.close()
        status, job_channel, *passed = descriptors
        frames.send_number(status, os.getpid())
        message: SpawnMessage = frames.receive_json(job_channel)
        os.close(job_channel)
        cgroups.join_cgroups(message["cgroups"])
        confined = confinement.as_identity(message["identity"])
        child = contain.fork_confined(confined, Path(message["workdir"]), new_session=False)
        if child == 0:
            os.close(status)
            entry(message["job"], passed)
            os._exit(0)
        for descriptor in passed:
            os.close(descriptor)
        wait_status = reaper.wait_for(child)
        frames.send_number(status, wait_status)
    finally:
        os._exit(0)
