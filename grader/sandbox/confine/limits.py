"""A run's resource limits, set per process (``setrlimit``), and the mark they leave.

The hard address-space limit doubles as the mark of a run's process (``is_untrusted``):
the grader's sweeps kill only what carries it.
"""

from __future__ import annotations

import resource

from grader.sandbox import procfs

MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024
"""Address space of every untrusted process. Its hard limit also marks the process as a
run's: an unprivileged process can lower a hard limit but never raise it, so a process
the grader did not start with this limit is never taken for one (see ``is_untrusted``)."""
OUTPUT_LIMIT_BYTES = 4 * 1024 * 1024
"""The largest file an untrusted process may write (``RLIMIT_FSIZE``): its output included."""
OPEN_FILES_LIMIT = 256
"""The most descriptors an untrusted process may hold (``RLIMIT_NOFILE``)."""
UID_PROCESS_LIMIT = 64
"""The most processes and threads one process of a run and what it starts may have
(``RLIMIT_NPROC`` on its uid, which no other process has): a test needs one, pytest and
hypothesis start none; a fork bomb stops here, after a few milliseconds."""


def mark_untrusted() -> None:
    """Bound this process's address space to ``MEMORY_LIMIT_BYTES``, for good: the mark."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def cap_user_processes() -> None:
    """Cap the processes of this process's uid at ``UID_PROCESS_LIMIT``: where the uid is
    the process's alone, the kernel's count of them is the run's, a pids limit where no
    cgroup gives one."""
    resource.setrlimit(resource.RLIMIT_NPROC, (UID_PROCESS_LIMIT, UID_PROCESS_LIMIT))


def is_untrusted(pid: int) -> bool:
    """Whether process ``pid`` carries the mark of a run (a hard address-space limit no
    higher than ``MEMORY_LIMIT_BYTES``, set by ``mark_untrusted``) or is a run's init."""
    limit = procfs.address_space_limit(pid)
    return limit is not None and limit <= MEMORY_LIMIT_BYTES
