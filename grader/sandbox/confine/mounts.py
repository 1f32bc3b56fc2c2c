"""A run's namespaces at ``namespaces`` (but its PID namespace: ``pid``) and its root.

In the run's init: private mount, network, IPC, UTS and cgroup namespaces, then a root
of the run's own, a small tmpfs holding exactly the allow-list (``view.View``), four
devices, the run's ``/proc`` and its folder at ``folders.RUN_FOLDER``: what is not bound
does not exist, as in bubblewrap and nsjail.
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.sandbox import libc, procfs
from grader.sandbox.confine.folders import RUN_FOLDER
from grader.sandbox.confine.view import View

DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
"""The devices a run's root holds at ``namespaces``: bound from the machine's."""
DEVICE_LINKS = (
    ("/dev/fd", procfs.OWN_DESCRIPTORS),
    ("/dev/stdin", f"{procfs.OWN_DESCRIPTORS}/0"),
    ("/dev/stdout", f"{procfs.OWN_DESCRIPTORS}/1"),
    ("/dev/stderr", f"{procfs.OWN_DESCRIPTORS}/2"),
)


def enter_namespaces(view: View, workdir: Path) -> None:
    """In the run's init: private mount, network, IPC, UTS and cgroup namespaces, and a root
    of the run's own built from ``view`` (``_build_root``)."""
    # Its own cgroup namespace too: the run's cgroup (joined by its root) reads as "/".
    spaces = (
        libc.CLONE_NEWNS
        | libc.CLONE_NEWNET
        | libc.CLONE_NEWIPC
        | libc.CLONE_NEWUTS
        | libc.CLONE_NEWCGROUP
    )
    libc.unshare(spaces)
    libc.mount("none", "/", None, libc.MS_REC | libc.MS_PRIVATE, None)
    _build_root(view, workdir)


_OLD_ROOT = "/.old-root"
"""Where the machine's root is while a run's root is built from it, then detached."""
_ROOT_OPTIONS = "size=1m,nr_inodes=1024,mode=0755"
"""The run's root tmpfs: only folders, links and mount points, read-only once built."""
_READ_ONLY = libc.MS_REMOUNT | libc.MS_BIND | libc.MS_RDONLY | libc.MS_NOSUID | libc.MS_NODEV


def _build_root(view: View, workdir: Path) -> None:
    """Make a new tmpfs this mount namespace's root, holding exactly ``view``, ``DEVICES``,
    a ``/proc`` of this PID namespace and ``workdir`` (writable) at ``RUN_FOLDER``; the
    machine's own root is then detached, out of every path's reach (bubblewrap's way).

    The tmpfs is mounted over ``/tmp`` and made the root with ``pivot_root``: the old root,
    with whatever lay under ``/tmp`` (the run's folder), stays reachable below
    ``_OLD_ROOT`` until every bind is made."""
    mask = os.umask(0o022)
    try:
        flags = libc.MS_NOSUID | libc.MS_NODEV
        libc.mount("none", "/tmp", "tmpfs", flags, _ROOT_OPTIONS)
        os.mkdir(f"/tmp{_OLD_ROOT}")
        libc.pivot_root("/tmp", f"/tmp{_OLD_ROOT}")
        os.chdir("/")
        for path, target in view.links:
            _make_parents(path)
            if not os.path.lexists(path):
                os.symlink(target, path)
        empty = set(view.empty)
        for path in sorted([*view.binds, *empty]):
            _make_parents(path)
            if path in empty:
                libc.mount("none", path, "tmpfs", flags, _ROOT_OPTIONS)
                continue
            _bind(path, path)
            libc.mount("none", path, None, _READ_ONLY, None)
        for device in DEVICES:
            _make_parents(device)
            _bind(device, device)
        for path, target in DEVICE_LINKS:
            os.symlink(target, path)
        run_folder = str(RUN_FOLDER)
        _make_parents(run_folder)
        _bind(str(workdir), run_folder)
        os.mkdir(procfs.ROOT)
        proc_flags = libc.MS_NOSUID | libc.MS_NODEV | libc.MS_NOEXEC
        libc.mount("proc", procfs.ROOT, "proc", proc_flags, None)
        for folder in ("/dev", *view.listed):
            if folder not in empty and os.path.isdir(folder):
                os.chmod(folder, 0o755)
        libc.umount(_OLD_ROOT, libc.MNT_DETACH)
        os.rmdir(_OLD_ROOT)
        for path in sorted(empty, reverse=True):
            libc.mount("none", path, None, libc.MS_REMOUNT | libc.MS_RDONLY | flags, None)
        libc.mount("none", "/", None, libc.MS_REMOUNT | libc.MS_RDONLY | flags, None)
    finally:
        os.umask(mask)


def _make_parents(path: str) -> None:
    """The folders above ``path`` in the run's root being built, each one that this makes
    passable but not listable (mode 0711; ``View.listed`` are opened to listing after)."""
    folder = "/"
    for part in Path(os.path.dirname(path)).parts[1:]:
        folder = os.path.join(folder, part)
        if not os.path.lexists(folder):
            os.mkdir(folder, 0o711)
            os.chmod(folder, 0o711)


def _bind(source: str, target: str) -> None:
    """Bind the machine's ``source`` (below the old root) at ``target``, which this makes."""
    old = f"{_OLD_ROOT}{source}"
    if not os.path.lexists(target):
        if os.path.isdir(old):
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    libc.mount(old, target, None, libc.MS_BIND, None)
