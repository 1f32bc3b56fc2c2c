"""A run's PID namespace at ``namespaces``, and its init: the grader's process that is its pid 1.

The run's root forks into a new PID namespace (``fork_into_own_namespace``); that first
process serves as the namespace's init (``serve_as_init``): it reaps every process of the
run and exits with the confined child's status (``exit_code`` decodes it), and when it
exits the kernel kills whatever of the run is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import NoReturn

from grader.sandbox import libc, procfs, reaper
from grader.sandbox.confine.descriptors import close_descriptors_but
from grader.sandbox.confine.limits import mark_untrusted
from grader.sandbox.confine.policy import Confinement


def fork_into_own_namespace() -> int:
    """Fork like ``os.fork()``, the child the first process (pid 1) of a new PID namespace;
    this process's later children go to its own namespace again."""
    own_namespace = procfs.open_own_pid_namespace()
    try:
        libc.unshare(libc.CLONE_NEWPID, "unshare(CLONE_NEWPID)")
        try:
            return os.fork()
        finally:
            if os.getpid() != 1:  # back in the parent
                libc.setns(own_namespace, libc.CLONE_NEWPID)
    finally:
        os.close(own_namespace)


def serve_as_init(child: int) -> NoReturn:
    """The run's init: reap every process of the namespace until ``child`` ends, then exit
    with its status, which makes the kernel kill whatever of the run is left."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    with contextlib.suppress(OSError):
        close_descriptors_but(())
    with contextlib.suppress(OSError):
        libc.die_with_parent()
        mark_untrusted()
    status = reaper.serve_as_init(child)
    os._exit(125 if status is None else _encode(status))


def _encode(status: int) -> int:
    """An exit status for the run's init that ``exit_code`` turns back into the child's."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 125


def exit_code(status: int, confinement: Confinement) -> int:
    """The child's exit code from the wait status of ``contain.fork_confined``'s pid, as
    ``os.waitstatus_to_exitcode`` gives it: negative for a signal. At the ``namespaces``
    level an exit status of 129 to 159 means the signal of that number less 128."""
    code = os.waitstatus_to_exitcode(status)
    if confinement.level == "namespaces" and 128 < code < 128 + signal.NSIG:
        return -(code - 128)
    return code
