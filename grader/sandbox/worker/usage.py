"""What a run has used, as the worker reads it while the run goes: CPU time, by its cgroup
or its processes, and whether its folder is over its caps."""

from __future__ import annotations

from pathlib import Path

from grader.sandbox import procfs
from grader.sandbox.confine import folders
from grader.sandbox.confine.cgroups import Cgroups
from grader.sandbox.worker.forkserver import Spawned


class Usage:
    """The CPU time a run's processes have used: its cgroup's count where it has one, else
    the sum over its processes (those alive, and the dead its processes have reaped); and
    whether its folder is over its caps."""

    def __init__(
        self, spawned: list[Spawned], cgroups: Cgroups, folder: Path, owners: list[int]
    ) -> None:
        self.roots = [process.pid for process in spawned]
        self.cgroups = cgroups
        self.folder = folder
        self.owners = owners
        """The run's uids whose files in the shared folders count with its folder (``uid``)."""
        self.most = 0.0

    def over_cap(self) -> str | None:
        return folders.folder_over_cap(self.folder, self.owners)

    def seconds(self) -> float:
        counted = self.cgroups.cpu_seconds()
        if counted is None:
            below = (pid for root in self.roots for pid in procfs.descendants(root))
            counted = sum(procfs.process_cpu_seconds(pid) for pid in [*self.roots, *below])
        self.most = max(self.most, counted)  # a process reaped by the worker leaves the sum
        return self.most
