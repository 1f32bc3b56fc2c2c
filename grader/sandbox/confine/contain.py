"""The one call that forks a run's process confined (``fork_confined``), read as its steps.

As nsjail's ``containProc``, each step is one kernel concern's, in its own module: the PID
namespace and its init (``pid_namespace``), the other namespaces and the run's root
(``mounts``), the keyrings and the seccomp filter (``keyrings``), the run's user
(``user``), the limits and the mark (``limits``). A step that fails ends the child at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from grader.sandbox import libc
from grader.sandbox.confine import keyrings, limits, mounts, pid_namespace, user
from grader.sandbox.confine.policy import Confinement


def fork_confined(confinement: Confinement, workdir: Path, new_session: bool = True) -> int:
    """Fork like ``os.fork()``: the child's pid in the parent, 0 in a confined child.

    With ``new_session`` the child leads a session of its own
    (``os.killpg(pid, ...)`` reaches it and what it starts, unless that
    leaves the session); else it stays in the caller's.

    Call it in a single-threaded process, after making the run's folder
    ``workdir`` writable for ``confinement.uid`` (``folders.hand_over``). At the
    ``namespaces`` level the child's root holds only ``confinement.view``,
    with ``workdir`` at ``RUN_FOLDER``; the folders on the way to them are
    the root's own, which every user may pass (``/root`` holding a pyenv,
    say, shows only the way). The pid returned is then the run's init, a small process of the
    grader's that waits for the confined child and exits with its status
    (decoded by ``pid_namespace.exit_code``): killing it kills every process of the run.
    Raises ``OSError`` in the parent if the fork or the namespace fails; in
    the child, a step that fails ends the child at once with exit status
    125, never running untrusted code half confined.
    """
    if confinement.level != "namespaces":
        pid = os.fork()
        if pid == 0:
            if new_session:
                os.setsid()
            _must(_contain_process, confinement)
        return pid
    init = pid_namespace.fork_into_own_namespace()
    if init != 0:
        return init
    if new_session:
        os.setsid()
    _must(lambda confinement: mounts.enter_namespaces(confinement.view, workdir), confinement)
    child = os.fork()
    if child == 0:
        _must(_contain_process, confinement)
        return 0
    pid_namespace.serve_as_init(child)


def _must(step: Callable[[Confinement], None], confinement: Confinement) -> None:
    """Take ``step``, or end this (forked) process with exit status 125."""
    try:
        step(confinement)
    except BaseException:
        os._exit(125)


def _contain_process(confinement: Confinement) -> None:
    """In the process that runs untrusted code: its own keyrings and uid, then the mark, then
    no way back, and no keyring or IPC calls at all."""
    keyrings.own_keyrings()
    if confinement.uid is not None and confinement.gid is not None:
        user.drop_user(confinement.uid, confinement.gid)
        keyrings.own_keyrings()  # the new user's: empty, whatever an earlier holder left
        limits.cap_user_processes()
        if confinement.level == "namespaces":
            user.seen_as(user.UNTRUSTED_UID, user.UNTRUSTED_GID)
    limits.mark_untrusted()
    libc.no_new_privileges()
    libc.die_with_parent()
    keyrings.refuse_shared_kernel_objects()
