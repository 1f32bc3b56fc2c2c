"""The statuses a result carries, and the rules that read them, each in one place.

A run of tests ends with a ``RunStatus`` (``grader.sandbox.host.result``); a mutant's status is
drawn from it by ``MUTANT_STATUS_OF_RUN`` (and, for a run that completed, whether a test
failed). ``KILLS`` is the one kill rule: a mutant is detected when its status is in it.
"""

from __future__ import annotations

from typing import Literal

from grader.sandbox.host.result import RunStatus

MutantStatus = Literal["killed", "survived", "timeout", "error"]
"""``error``: the run reported fewer outcomes than it collected; it is neither a kill nor a pass."""
Verdict = Literal["pass", "fail"]
"""A check's verdict: every course test passes, the tests are valid and kill enough."""

KILLS: frozenset[MutantStatus] = frozenset({"killed", "timeout"})
"""The statuses that count as a kill: a test failed or errored on the mutant, or the run
timed out twice (the second time alone: ``timeout (confirmed)``)."""

MUTANT_STATUS_OF_RUN: dict[RunStatus, MutantStatus | None] = {
    "crashed": "error",
    "collection_error": "error",
    "timeout": "timeout",
    "stopped": "killed",
    "completed": None,
}
"""A mutant's status from how the run of the student's tests on it ended; ``None``: the run
completed, and the mutant is ``killed`` if a test failed, else ``survived``. A run stopped
at its first failing test is a kill: the tests before it passed as in a whole run."""


def mutant_status(run: RunStatus, any_failed: bool) -> MutantStatus:
    """The status of a mutant whose run ended ``run``, some test failing if ``any_failed``."""
    status = MUTANT_STATUS_OF_RUN[run]
    if status is not None:
        return status
    return "killed" if any_failed else "survived"


def is_kill(status: MutantStatus) -> bool:
    """Whether a mutant of this status is detected (the kill rule, ``KILLS``)."""
    return status in KILLS


AuditStatus = Literal["killed", "timeout", "crashed", "survived", "no tests", "error"]
"""A generated mutant's status in ``grader audit``, from mutmut's exit code."""
AUDIT_DETECTED: frozenset[AuditStatus] = frozenset({"killed", "timeout", "crashed"})
"""The audit's kill rule: a crash counts too, since no student's file is being judged."""
