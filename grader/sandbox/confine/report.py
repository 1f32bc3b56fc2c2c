"""What a run gets from the operating system at a level on this machine, for a report."""

from __future__ import annotations

from grader.sandbox.confine.cgroups import run_cgroups
from grader.sandbox.confine.keyrings import keyrings_refused
from grader.sandbox.levels import IsolationLevel


def what_runs_get(level: IsolationLevel) -> dict[str, str | list[str]]:
    """What the operating system gives each run at ``level`` on this machine, for a report:
    its identity, its keyrings, its IPC, its cgroups and its namespaces (docs/security.md)."""
    identity = {
        "none": "the grader's user",
        "uid": "a uid of its own per process",
        "namespaces": "a uid of its own per process, seen as nobody in a user namespace",
    }[level]
    keyrings = "a session keyring of its own per process"
    if keyrings_refused():
        keyrings += "; keyring calls refused"
    ipc = "System V IPC and POSIX message queue calls refused" if keyrings_refused() else ""
    if level == "namespaces":
        ipc = "; ".join(filter(None, [ipc, "an IPC namespace of its own"]))
    elif level == "uid":
        ipc = "; ".join(filter(None, [ipc, "what its users left removed after it"]))
    cgroups = list(run_cgroups())
    namespaces = ["cgroup", "ipc", "mount", "network", "pid", "user", "uts"]
    return {
        "identity": identity,
        "keyrings": keyrings,
        "ipc": ipc or "as the machine gives it",
        "cgroups": cgroups,
        "namespaces": namespaces if level == "namespaces" else [],
    }
