"""What ``/proc`` says about processes and this process's mounts: the only reader of ``/proc``.

Every question the sandbox asks the kernel through ``/proc`` is one function
here: which processes lie below a pid (one scan, one parser of ``stat``),
which belong to a set of users, what state or CPU time a process has, whether
a run has stopped, which mounts and cgroups this process sees, which System V IPC
objects a set of users holds. A process may
vanish between any two reads, so every reader takes a missing file for a
process that is gone rather than raising. Nothing here kills or changes
anything (``reaper`` does).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = "/proc"
"""Where the kernel shows processes; a run at ``namespaces`` gets its own mounted here."""
OWN_PID_NAMESPACE = f"{ROOT}/self/ns/pid"
OWN_DESCRIPTORS = f"{ROOT}/self/fd"
"""Where a process finds its own open files (``/dev/fd`` and ``/dev/std*`` lead here)."""
_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name (the state letter first), or
    ``None`` if the process is gone. The name in parentheses may itself hold spaces and
    parentheses, so the fields start after the last one."""
    try:
        with open(f"{ROOT}/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()


def _status(pid: int | str) -> dict[bytes, bytes] | None:
    """``/proc/PID/status`` as a dict of its fields, or ``None`` if the process is gone."""
    try:
        with open(f"{ROOT}/{pid}/status", "rb") as status:
            return dict(line.split(b":", 1) for line in status if b":" in line)
    except (OSError, ValueError):
        return None


def _pids() -> Iterator[str]:
    for entry in os.scandir(ROOT):
        if entry.name.isdigit():
            yield entry.name


def descendants(root: int) -> list[int]:
    """The pids of every process below ``root``, whatever its state.

    A zombie is listed too: a thread-group leader that ended alone (``SYS_exit``)
    shows ``Z`` while its other threads run on, and a sweep that skipped
    zombies would never kill them. Signalling a real zombie is harmless.
    """
    children: dict[int, list[int]] = {}
    for name in _pids():
        fields = _stat_fields(name)
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def children(parent: int) -> list[int]:
    """The pids of ``parent``'s children, zombies included (they need reaping)."""
    try:
        tasks = os.listdir(f"{ROOT}/{parent}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        with contextlib.suppress(OSError, ValueError):
            listed = Path(f"{ROOT}/{parent}/task/{task}/children").read_text().split()
            found += [int(pid) for pid in listed]
    return found


def users_processes(uids: Iterable[int]) -> list[int]:
    """The pids of every process on the machine whose real, effective or saved uid is one of
    ``uids``, whatever its parent, and that still runs: a zombie counts only while a thread
    of it lives on (its leader ended alone)."""
    wanted = {str(uid).encode() for uid in uids}
    found = []
    for name in _pids():
        fields = _status(name)
        if fields is None:
            continue
        uids_held = set(fields.get(b"Uid", b"").split()[:3])
        if wanted & uids_held and not _dead(fields):
            found.append(int(name))
    return found


def _dead(fields: dict[bytes, bytes]) -> bool:
    """A zombie whose every thread has ended: nothing of it runs, only its exit status waits."""
    zombie = fields.get(b"State", b"").split()[:1] == [b"Z"]
    return zombie and fields.get(b"Threads", b"").strip() == b"1"


def still_runs(pid: int) -> bool:
    """Whether anything of process ``pid`` runs: it exists and is no dead zombie (a leader
    that ended alone while a thread of it runs on still runs)."""
    fields = _status(pid)
    return fields is not None and not _dead(fields)


def running_from(marker: bytes) -> list[int]:
    """The pids of every process but this one whose command line holds the argument
    ``marker`` whole."""
    pids = (int(name) for name in _pids())
    return [pid for pid in pids if pid != os.getpid() and runs_from(pid, marker)]


def runs_from(pid: int, marker: bytes) -> bool:
    """Whether process ``pid``'s command line holds the argument ``marker`` whole."""
    try:
        with open(f"{ROOT}/{pid}/cmdline", "rb") as cmdline:
            return b"\0" + marker + b"\0" in b"\0" + cmdline.read()
    except OSError:
        return False


IPC_KINDS = ("shm", "sem", "msg")
"""The System V IPC objects ``/proc/sysvipc`` lists, one file each."""


def users_ipc_objects(uids: Iterable[int]) -> list[tuple[str, int]]:
    """Each System V IPC object (kind, id) of this IPC namespace that one of ``uids`` owns or
    made: what a run's users could leave in the kernel, outside every folder."""
    wanted = {str(uid) for uid in uids}
    found = []
    for kind in IPC_KINDS:
        try:
            with open(f"{ROOT}/sysvipc/{kind}", encoding="ascii") as table:
                header, *rows = table.read().splitlines()
        except (OSError, ValueError):
            continue
        names = header.split()
        column = {name: names.index(name) for name in ("uid", "cuid") if name in names}
        for row in rows:
            fields = row.split()
            if len(fields) == len(names) and any(fields[i] in wanted for i in column.values()):
                found.append((kind, int(fields[1])))
    return found


def process_state(pid: int) -> str:
    """The state letter of process ``pid`` (``R``, ``S``, ``T`` stopped, ``Z``...); ``""`` if
    it is gone."""
    fields = _stat_fields(pid)
    return "" if fields is None else fields[0][:1].decode()


def process_cpu_seconds(pid: int) -> float:
    """User and system time of ``pid`` and of the children it has reaped."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return sum(int(field) for field in fields[11:15]) / _TICKS


def is_namespace_init(pid: int) -> bool:
    """Whether ``pid`` is the first process of a PID namespace of its own (a run's init)."""
    fields = _status(pid)
    line = (fields or {}).get(b"NSpid")
    return line is not None and line.split()[-1:] == [b"1"]


def run_is_stopped(root: int) -> bool:
    """Whether every living process below a run's root is stopped (a run's init, which only
    waits, aside)."""
    processes = [pid for pid in descendants(root) if not is_namespace_init(pid)]
    states = [process_state(process) for process in processes]
    living = [state for state in states if state not in ("Z", "X", "")]
    return bool(living) and all(state in ("T", "t") for state in living)


def address_space_limit(pid: int) -> int | None:
    """The hard limit on ``pid``'s address space in bytes; ``None`` if it has none or is
    gone."""
    try:
        limits = Path(f"{ROOT}/{pid}/limits").read_text()
    except OSError:
        return None
    for line in limits.splitlines():
        if line.startswith("Max address space"):
            hard = line.split()[4]
            return None if hard == "unlimited" else int(hard)
    return None


@dataclass(frozen=True)
class Mount:
    """One line of ``/proc/self/mountinfo``."""

    root: str
    """The folder of its file system that is mounted (``/`` for the whole)."""
    target: str
    options: tuple[str, ...]
    """The mount's own options (``ro``, ``nosuid``...)."""
    kind: str
    """The file system's type (``proc``, ``cgroup2``...)."""
    super_options: tuple[str, ...]
    """The file system's options (for a version-1 cgroup, its controllers)."""


def _unescaped(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), field)


def mounts() -> list[Mount]:
    """Every mount this process's mount namespace holds; ``OSError`` if ``/proc`` cannot
    tell (a confinement that cannot see its mounts must not go on)."""
    found = []
    table = Path(f"{ROOT}/self/mountinfo").read_text(encoding="utf-8")
    for line in table.splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 6 or len(tail) < 3:
            continue
        found.append(
            Mount(
                _unescaped(fields[3]),
                _unescaped(fields[4]),
                tuple(fields[5].split(",")),
                tail[0],
                tuple(tail[2].split(",")),
            )
        )
    return found


def own_cgroups() -> dict[str, str]:
    """The cgroup this process is in, per hierarchy: ``v2`` or a version-1 controller."""
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"{ROOT}/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else ["v2"]:
                own[controller] = path
    return own


def mapped_files() -> list[str]:
    """The files this process has mapped (its interpreter, shared libraries, extension
    modules), each once, sorted; those deleted since are left out."""
    found = set()
    for line in Path(f"{ROOT}/self/maps").read_text(encoding="utf-8").splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].startswith("/") and not fields[5].endswith(")"):
            found.add(fields[5])
    return sorted(found)


FULL_ID_MAP = (range(0, (1 << 32) - 1),)
"""The ids a process sees where its user namespace is the machine's own (``0 0 4294967295``),
and where the kernel has no ``uid_map`` to read."""


def parse_id_map(text: str) -> tuple[range, ...]:
    """The ids (as this namespace numbers them) that a ``uid_map`` or ``gid_map`` maps: one
    range per line ``INSIDE OUTSIDE COUNT``; ``ValueError`` for any other line."""
    found = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 3 or not all(field.isdigit() for field in fields):
            raise ValueError(f"not a line of an id map: {line!r}")
        inside, _, count = (int(field) for field in fields)
        found.append(range(inside, inside + count))
    return tuple(sorted(found, key=lambda ids: ids.start))


def own_id_map(kind: str) -> tuple[range, ...]:
    """The uids (``kind`` ``uid``) or gids (``gid``) this process's user namespace maps: a
    container with a uid map (``hostUsers: false``, rootless podman) maps only some."""
    try:
        text = Path(f"{ROOT}/self/{kind}_map").read_text(encoding="ascii")
    except FileNotFoundError:
        return FULL_ID_MAP  # a kernel without user namespaces: every id is the machine's
    return parse_id_map(text)


def write_own_id_maps(uid: int, outside_uid: int, gid: int, outside_gid: int) -> None:
    """Map ``uid`` and ``gid`` in this process's new user namespace to the ids outside it,
    one each, and deny ``setgroups`` there (the kernel requires it before a gid map)."""
    Path(f"{ROOT}/self/setgroups").write_text("deny")
    Path(f"{ROOT}/self/uid_map").write_text(f"{uid} {outside_uid} 1")
    Path(f"{ROOT}/self/gid_map").write_text(f"{gid} {outside_gid} 1")


def open_own_pid_namespace() -> int:
    """A descriptor (closed on exec) of this process's PID namespace, to ``setns`` back into."""
    return os.open(f"{ROOT}/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
