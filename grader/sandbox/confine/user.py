"""A run's identity: the uid and gid each of its processes takes, and how it takes them.

Each process of a run gets a uid (and gid, one number) of its own, drawn at random from a
band the grader reserves (``run_ids``), and drops to it (``drop_user``); at ``namespaces``
it then enters a user namespace in which it reads as ``nobody`` (``seen_as``).
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Iterable

from grader.sandbox import libc, procfs
from grader.sandbox.levels import IsolationLevel

UNTRUSTED_UID = 65534
UNTRUSTED_GID = 65534
"""``nobody`` and ``nogroup`` on Debian and most distributions: the identity of the probe that
measures the level, and of a ``Confinement`` made without an identity of its own."""

RUN_IDS = range(1_500_000_000, 1_500_000_000 + (1 << 24))
"""The uids (and gids of the same number) the grader reserves for runs: each process of a run
gets one of its own, drawn at random (``new_identity``), so no two runs share a user, and the
number tells a test nothing of which run it is in or what came before it."""

NARROW_RUN_IDS = range(60_000, 65_534)
"""The run ids where the user namespace does not map ``RUN_IDS``: a container with a uid map
of 65536 ids (Kubernetes' ``hostUsers: false``, rootless podman) maps 0 to 65535 only. Below
``nobody``, in the band Debian leaves to accounts made on demand, which a grading image has
none of: no file of the image or the kit is theirs."""

MIN_RUN_IDS = 1024
"""The fewest mapped run ids the grader grades with: the ids of the runs alive at once (two
per run, a run per worker) are redrawn, so a band this wide rarely needs a second draw."""


class RunIdsUnmapped(Exception):
    """The user namespace maps too few of the run ids (``run_ids``)."""


def _mapped(band: range, uids: tuple[range, ...], gids: tuple[range, ...]) -> range:
    """The widest run of ``band`` that ``uids`` and ``gids`` both map (a run's uid and gid are
    one number)."""
    widest = range(0)
    for uid_range in uids:
        for gid_range in gids:
            start = max(band.start, uid_range.start, gid_range.start)
            stop = min(band.stop, uid_range.stop, gid_range.stop)
            if stop - start > len(widest):
                widest = range(start, stop)
    return widest


def choose_run_ids(uids: tuple[range, ...], gids: tuple[range, ...]) -> range:
    """The ids runs draw from under the maps ``uids`` and ``gids``: the mapped part of
    ``RUN_IDS``, else of ``NARROW_RUN_IDS``; ``RunIdsUnmapped`` where neither has
    ``MIN_RUN_IDS``."""
    for band in (RUN_IDS, NARROW_RUN_IDS):
        ids = _mapped(band, uids, gids)
        if len(ids) >= MIN_RUN_IDS:
            return ids
    found = max(len(_mapped(band, uids, gids)) for band in (RUN_IDS, NARROW_RUN_IDS))
    raise RunIdsUnmapped(
        f"this container's user namespace maps only {found} of the ids the grader runs "
        f"students' code as ({RUN_IDS.start}-{RUN_IDS.stop - 1}, or else "
        f"{NARROW_RUN_IDS.start}-{NARROW_RUN_IDS.stop - 1}; at least {MIN_RUN_IDS} are "
        "needed): map 65536 ids from 0 (podman --uidmap 0:100000:65536 --gidmap "
        "0:100000:65536, or Kubernetes' hostUsers: false), or run it without a uid map"
    )


@functools.cache
def run_ids() -> range:
    """The ids this process's runs draw from, read once from its user namespace's maps
    (``choose_run_ids``)."""
    return choose_run_ids(procfs.own_id_map("uid"), procfs.own_id_map("gid"))


def new_identity(level: IsolationLevel, taken: Iterable[int] = ()) -> int | None:
    """A uid (and gid) from ``run_ids()`` for one process of one run, other than ``taken`` (the
    run's other process), where the level drops the grader's user; ``None`` at ``none``.

    Drawn at random, so it says nothing a test could use; it is never reused
    while anything of its run lives, since every run ends swept (by its PID
    namespace, its cgroup and its users: ``reaper.kill_users``). From the narrow band
    an id some process holds (another worker's run) is drawn again.
    """
    if level == "none":
        return None
    ids, taken = run_ids(), set(taken)
    for _ in range(64):
        candidate = ids.start + secrets.randbelow(len(ids))
        if candidate in taken:
            continue
        if len(ids) < len(RUN_IDS) and procfs.users_processes([candidate]):
            continue
        return candidate
    raise OSError(f"no free run id in {ids.start}-{ids.stop - 1} after 64 draws")


def new_identities(level: IsolationLevel, kinds: Iterable[str]) -> dict[str, int | None]:
    """An identity for each process of one run, by kind (``new_identity``), no two alike."""
    drawn: dict[str, int | None] = {}
    for kind in kinds:
        drawn[kind] = new_identity(level, [each for each in drawn.values() if each is not None])
    return drawn


def drop_user(uid: int, gid: int) -> None:
    """Take ``uid`` and ``gid`` for good, with no supplementary group; ``OSError`` if the
    kernel left this process any other uid."""
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("the uid was not dropped")


def seen_as(uid: int, gid: int) -> None:
    """Enter a user namespace of this process's own in which its uid and gid read as ``uid``
    and ``gid``, then give up the capabilities it has there.

    The run's own uid is drawn at random; inside, every run is the same
    ``nobody``, so no run looks unlike another (``/proc/self/uid_map`` still
    shows the random number, which says nothing). The mounts and the network
    stay those of the run's namespaces, which this user namespace does not own.
    Where the machine refuses the namespace the run goes on as its own uid.
    """
    outside_uid, outside_gid = os.geteuid(), os.getegid()
    if not libc.try_unshare(libc.CLONE_NEWUSER):
        return  # refused (a kernel or security module that keeps users from making one)
    # The uid change made the process not dumpable, and /proc/self root's: for a moment it
    # is dumpable again, to write its own maps (no other process has its uid).
    libc.set_dumpable(True)
    procfs.write_own_id_maps(uid, outside_uid, gid, outside_gid)
    libc.set_dumpable(False)
    libc.drop_capabilities()
    if os.getuid() != uid or os.getgid() != gid:
        raise OSError("the user namespace did not map the run's identity")
