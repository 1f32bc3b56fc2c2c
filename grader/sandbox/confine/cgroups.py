"""A run's cgroups: one per run in every hierarchy a worker may write, and what it sets.

Where the machine gives them (root, a cgroup file system), every run is held by a cgroup
of its own: equal CPU weight, a process and a memory limit, its CPU time counted, and
everything in it killed at once when the run ends (``Cgroups``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from grader.sandbox import procfs, reaper
from grader.sandbox.confine.limits import MEMORY_LIMIT_BYTES

RUN_PROCESS_LIMIT = 512
"""The most processes (threads included) one run may have at once, where a cgroup holds it."""
RUN_MEMORY_LIMIT_BYTES = 2 * MEMORY_LIMIT_BYTES
"""The memory of all of one run's processes together, where a cgroup holds it: each process's
address space is bounded as well (``MEMORY_LIMIT_BYTES``)."""
_V1_SETTINGS = {
    "cpu": {"cpu.shares": "1024"},
    "cpuacct": {},
    "pids": {"pids.max": str(RUN_PROCESS_LIMIT)},
    "memory": {"memory.limit_in_bytes": str(RUN_MEMORY_LIMIT_BYTES)},
}
"""The version-1 hierarchies a run gets a cgroup in, and what each sets: equal CPU shares for
every run, a process limit, a memory limit (``cpuacct`` counts its CPU time)."""
_V2_SETTINGS = {
    "cpu": {"cpu.weight": "100"},
    "pids": {"pids.max": str(RUN_PROCESS_LIMIT)},
    "memory": {"memory.max": str(RUN_MEMORY_LIMIT_BYTES)},
}


def _cgroup_bases() -> dict[str, Path]:
    """Each cgroup hierarchy this process may make cgroups in, by name (``v2`` or a version-1
    controller), at the cgroup this process is in."""
    own = procfs.own_cgroups()
    bases: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for mount in procfs.mounts():
            if mount.kind == "cgroup2":
                names = ["v2"]
            elif mount.kind == "cgroup":
                names = [name for name in mount.super_options if name in _V1_SETTINGS]
            else:
                continue
            for name in names:
                if name in own and name not in bases:
                    root = mount.root
                    inside = os.path.relpath(own[name], root) if root != "/" else own[name]
                    bases[name] = Path(mount.target, inside.lstrip("/").removeprefix("."))
    return {name: base for name, base in bases.items() if os.access(base, os.W_OK)}


class Cgroups:
    """The cgroups of one warm worker's runs: a folder of its own in every hierarchy it may
    write (``grader-`` and a random name), and in it one cgroup per run (a random name too:
    a run that reads its cgroup's path learns nothing of which run it is).

    Where the machine gives none (not root, no cgroup file system) every call does nothing
    and ``kinds`` is empty.
    """

    def __init__(self) -> None:
        self.folders: dict[str, Path] = {}
        self.run: dict[str, Path] = {}
        if os.geteuid() != 0:
            return
        own = f"grader-{secrets.token_hex(6)}"
        for name, base in _cgroup_bases().items():
            folder = base / own
            try:
                folder.mkdir()
            except OSError:
                continue
            self.folders[name] = folder
        v2 = self.folders.get("v2")
        if v2 is not None:
            offered = _read(v2 / "cgroup.controllers").split()
            wanted = [name for name in _V2_SETTINGS if name in offered]
            with contextlib.suppress(OSError):
                (v2 / "cgroup.subtree_control").write_text(" ".join(f"+{n}" for n in wanted))

    @property
    def kinds(self) -> tuple[str, ...]:
        """What a run gets: ``v2``, and each version-1 controller, that worked."""
        return tuple(sorted(self.folders))

    def start_run(self) -> list[str]:
        """Make the next run's cgroups; the ``cgroup.procs`` files its roots join."""
        self.end_run()
        name = secrets.token_hex(6)
        for kind, folder in self.folders.items():
            run = folder / name
            try:
                run.mkdir()
            except OSError:
                continue
            for file, value in _settings(kind).items():
                with contextlib.suppress(OSError):  # a v2 controller this machine lacks
                    (run / file).write_text(value)
            self.run[kind] = run
        return [str(run / "cgroup.procs") for run in self.run.values()]

    def cpu_seconds(self) -> float | None:
        """The CPU time every process of the run has used, the dead ones too; ``None`` where no
        cgroup counts it."""
        if "v2" in self.run:
            for line in _read(self.run["v2"] / "cpu.stat").splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
        if "cpuacct" in self.run:
            usage = _read(self.run["cpuacct"] / "cpuacct.usage").strip()
            if usage.isdigit():
                return int(usage) / 1e9
        return None

    def end_run(self) -> None:
        """Kill what is left of the run and remove its cgroups."""
        for kind in sorted(self.run, key=lambda kind: kind != "v2"):  # cgroup.kill first
            reaper.kill_cgroup(self.run[kind])
        for kind, run in list(self.run.items()):
            with contextlib.suppress(OSError):
                run.rmdir()
            del self.run[kind]

    def close(self) -> None:
        self.end_run()
        for folder in self.folders.values():
            reaper.remove_cgroup_tree(folder)
        self.folders.clear()


def _settings(kind: str) -> dict[str, str]:
    if kind == "v2":
        return {file: value for each in _V2_SETTINGS.values() for file, value in each.items()}
    return _V1_SETTINGS.get(kind, {})


def join_cgroups(procs_files: Iterable[str]) -> None:
    """Put this process (and so everything it starts) into the cgroups of ``procs_files``."""
    for procs in procs_files:
        with contextlib.suppress(OSError):
            Path(procs).write_text(str(os.getpid()))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@functools.cache
def run_cgroups() -> tuple[str, ...]:
    """The cgroup hierarchies a worker on this machine puts its runs in: read once, since
    every report names them and the machine's mounts do not change while the grader runs."""
    return tuple(sorted(_cgroup_bases())) if os.geteuid() == 0 else ()
