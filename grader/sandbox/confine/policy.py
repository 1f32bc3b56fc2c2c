"""How a run's process is confined: its level, what its root holds, the identity it takes.

A ``Confinement`` is the whole policy ``contain.fork_confined`` carries out; a worker makes
one for its level (``confinement_for``) and gives each process of a run its own identity
(``as_identity``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from grader.sandbox.confine.user import UNTRUSTED_GID, UNTRUSTED_UID
from grader.sandbox.confine.view import View, run_view
from grader.sandbox.levels import IsolationLevel


@dataclass(frozen=True)
class Confinement:
    """How to confine a run's process: the level, what its root holds, the identity it takes."""

    level: IsolationLevel
    view: View = field(default_factory=View)
    identity: int | None = None
    """The uid and gid (one number) the process takes; ``None``: ``UNTRUSTED_UID``."""

    @property
    def uid(self) -> int | None:
        """The uid a run's process takes, or ``None`` where it keeps the grader's."""
        if self.level == "none":
            return None
        return UNTRUSTED_UID if self.identity is None else self.identity

    @property
    def gid(self) -> int | None:
        """The gid a run's process takes, or ``None`` where it keeps the grader's."""
        if self.level == "none":
            return None
        return UNTRUSTED_GID if self.identity is None else self.identity

    def as_identity(self, identity: int | None) -> Confinement:
        """This confinement for one process of a run that takes ``identity``."""
        return replace(self, identity=identity)


def pins_implementation(confinement: Confinement) -> bool:
    """Whether a run's implementation process is pinned to its worker's CPU: only where each
    process has a PID namespace of its own, so the test process cannot see it, nor read its
    placement; the test process's own placement is every run's."""
    return confinement.level == "namespaces"


def confinement_for(level: IsolationLevel, own: Iterable[str] = ()) -> Confinement:
    """How to confine runs at ``level`` from this process as it is now: at ``namespaces`` a
    root holding what it has imported (``run_view``), of the grader only ``own``."""
    return Confinement(level, run_view(own) if level == "namespaces" else View())
