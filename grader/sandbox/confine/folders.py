"""A run's folder: made, handed to the run's user, capped, seen by the run, removed.

Every run of a job gets a folder at the same path (``make_run_folder``; at ``namespaces``
a tmpfs of its own, seen at ``RUN_FOLDER``); where no file system caps it, the worker
checks its caps itself (``folder_over_cap``). At ``uid`` a run reaches its folder only
through folders others may pass (``reachable``, ``open_to_runs``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from grader.sandbox import libc
from grader.sandbox.confine.leftovers import SHARED_FOLDERS
from grader.sandbox.confine.limits import OUTPUT_LIMIT_BYTES
from grader.sandbox.confine.policy import Confinement
from grader.sandbox.levels import IsolationLevel

FOLDER_FILES_LIMIT = 2000
"""The most files and folders a run may make in its own folder (``folder_over_cap``)."""
FOLDER_BYTES_LIMIT = 64 * 1024 * 1024
"""The most disk a run's folder may take (``folder_over_cap``); one file is capped at
``OUTPUT_LIMIT_BYTES`` by the kernel."""

RUN_FOLDER = Path("/run/grader")
"""Where a run's folder is at the ``namespaces`` level, inside the run's own root: the same
path for every run, so that no path a run sees (its folder, ``HOME``, ``TMPDIR``, the
test file's) differs from one run or variant to the next."""

RUN_FOLDER_BYTES = FOLDER_BYTES_LIMIT + OUTPUT_LIMIT_BYTES
"""The size of a run's folder at ``namespaces`` (a tmpfs of its own): the kernel's hard stop
behind the worker's cap (``folder_over_cap``), one largest file above it, so a run that
writes past the cap is failed by the worker with its message and none writes further."""
RUN_FOLDER_FILES = FOLDER_FILES_LIMIT + 64
"""The most inodes a run's folder at ``namespaces`` holds: the worker's cap, and room for the
run's own layout (about ten entries); each costs the kernel memory the size does not count."""


def hand_over(paths: Iterable[Path], confinement: Confinement) -> None:
    """Make ``paths`` (a run's folder and what it holds) the untrusted uid's, where it has one."""
    if confinement.uid is None or confinement.gid is None:
        return
    for path in paths:
        os.chown(path, confinement.uid, confinement.gid, follow_symlinks=False)


def private_mounts(level: IsolationLevel) -> None:
    """At ``namespaces``, give this process (a warm worker) a mount namespace of its own, in
    which its runs' folders are mounted (``make_run_folder``): no other process of the
    machine sees them, and they all go when the worker does."""
    if level == "namespaces":
        libc.unshare(libc.CLONE_NEWNS, "unshare(CLONE_NEWNS)")
        libc.mount("none", "/", None, libc.MS_REC | libc.MS_PRIVATE, None)


def make_run_folder(scratch: Path, name: str, level: IsolationLevel) -> Path:
    """A new run's folder: ``scratch/NAME-N``, ``N`` the lowest number free (made as
    ``O_EXCL`` makes a file: never one that exists), so that every run gets the same path
    unless another runs at that moment. At ``namespaces`` it is a tmpfs of its
    own of ``RUN_FOLDER_BYTES`` and ``RUN_FOLDER_FILES`` (call ``private_mounts`` first): a
    run that fills it fails alone, and nothing of it outlives ``remove_run_folder``."""
    for slot in range(1 << 16):
        folder = scratch / f"{name}-{slot}"
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        if level == "namespaces":
            caps = f"size={RUN_FOLDER_BYTES},nr_inodes={RUN_FOLDER_FILES},mode=0700"
            try:
                libc.mount("none", str(folder), "tmpfs", libc.MS_NOSUID | libc.MS_NODEV, caps)
            except BaseException:
                folder.rmdir()
                raise
        return folder
    raise OSError(f"no free run folder named {name} in {scratch}")


def remove_run_folder(folder: Path, level: IsolationLevel) -> None:
    """Remove a folder ``make_run_folder`` made, with everything in it."""
    if level == "namespaces":
        with contextlib.suppress(OSError):
            libc.umount(str(folder), libc.MNT_DETACH)
    shutil.rmtree(folder, ignore_errors=True)


def folder_seen(folder: Path, level: IsolationLevel) -> Path:
    """Where a run's processes find their folder ``folder``: at ``namespaces`` always at
    ``RUN_FOLDER`` in their own root, else where it is."""
    return RUN_FOLDER if level == "namespaces" else folder


def folder_over_cap(folder: Path, owners: Iterable[int] = ()) -> str | None:
    """Why a run's ``folder`` is over its caps (``FOLDER_FILES_LIMIT`` entries,
    ``FOLDER_BYTES_LIMIT`` of disk), or ``None``: where no file system caps a run's folder
    (``uid``, ``none``), a run that writes thousands of files or a folder of them must fail
    itself, not fill the machine's disk for every other run. At ``uid``, where a run has no
    private ``/tmp``, what the run's uids (``owners``) own in ``SHARED_FOLDERS`` counts too:
    files in ``/tmp`` or ``/dev/shm`` (memory) escape no cap. It never reads more than the
    limit's count of entries, nor follows a link."""
    owners = set(owners)
    entries = used = shared = 0
    todo = [(str(folder), True), *((path, False) for path in SHARED_FOLDERS if owners)]
    while todo:
        where, everything = todo.pop()
        try:
            listing = os.scandir(where)
        except OSError:
            continue
        with listing:
            for entry in listing:
                try:
                    status = entry.stat(follow_symlinks=False)
                except OSError:
                    entries += everything
                    continue
                mine = everything or status.st_uid in owners
                if stat.S_ISDIR(status.st_mode) and (mine or status.st_mode & 0o002):
                    todo.append((entry.path, mine))
                if mine:
                    entries, used = entries + 1, used + status.st_blocks * 512
                    shared += not everything
                if entries > FOLDER_FILES_LIMIT:
                    return f"the run made more than {FOLDER_FILES_LIMIT} files in its folder" + (
                        _IN_SHARED if shared else ""
                    )
    if used > FOLDER_BYTES_LIMIT:
        megabytes = FOLDER_BYTES_LIMIT // 2**20
        return f"the run wrote more than {megabytes} MB into its folder" + (
            _IN_SHARED if shared else ""
        )
    return None


_IN_SHARED = " and the folders every user may write (/tmp, /dev/shm), which count with it"


def reachable(path: Path) -> bool:
    """Whether a process of another user could reach ``path`` (every folder above it lets
    others through); at the ``uid`` level a run's folder must be."""
    return all(folder.stat().st_mode & 0o001 for folder in path.resolve().parents)


def open_to_runs(paths: Iterable[Path]) -> list[Path]:
    """Those of ``paths`` a run at the ``uid`` level could enter: every folder above, and the
    path itself, let others through. A path not made yet counts as its nearest folder that
    is (what is made in it inherits the way in)."""
    found = []
    for path in paths:
        existing = path.resolve()
        while not existing.exists():
            existing = existing.parent
        if all(folder.stat().st_mode & 0o001 for folder in (existing, *existing.parents)):
            found.append(path)
    return found
