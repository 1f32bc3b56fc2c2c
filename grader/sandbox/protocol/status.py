"""Every status a result carries, and the rules that read them, each written once.

A test's outcome in one run (``TestStatus``) crosses the events channel from
inside a confined run, whose recorder may import nothing of the grader but
``protocol``: so the whole result vocabulary lives here, at the bottom, where the
sandbox, the results and the outputs all import it without loading any process
code. Each status is a ``StrEnum``: it is its own string in JSON and in every
comparison, so a stored report reads back as the same statuses.

A run of tests ends with a ``RunStatus``; a mutant's status is drawn from it by
``MUTANT_STATUS_OF_RUN`` (and, for a run that completed, whether a test failed).
``KILLS`` is the one kill rule: a mutant is detected when its status is in it.
"""

from __future__ import annotations

from enum import StrEnum


class TestStatus(StrEnum):
    """A test's outcome in one run."""

    __test__ = False  # not a test class, whatever its name says to pytest

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"
    NOT_RUN = "not run"


FAILING: frozenset[TestStatus] = frozenset({TestStatus.FAILED, TestStatus.ERROR})
"""The outcomes of a test that fails: the first such ends a run that stops at a failure."""
TELLS_APART: frozenset[TestStatus] = FAILING | {TestStatus.TIMEOUT}
"""The outcomes of a test that tells an implementation apart from one it passes on."""
WORST_FIRST: tuple[TestStatus, ...] = (
    TestStatus.TIMEOUT,
    TestStatus.ERROR,
    TestStatus.FAILED,
    TestStatus.NOT_RUN,
    TestStatus.SKIPPED,
)
"""The order in which the cases of one parametrized test fold into one outcome (then
``passed``)."""


class RunStatus(StrEnum):
    """How a run ended; ``stopped``: at its first failing test, where the job asked for that."""

    COMPLETED = "completed"
    STOPPED = "stopped"
    COLLECTION_ERROR = "collection_error"
    CRASHED = "crashed"
    TIMEOUT = "timeout"


class MutantStatus(StrEnum):
    """A mutant's status; ``error``: the run reported fewer outcomes than it collected, which
    is neither a kill nor a pass."""

    KILLED = "killed"
    SURVIVED = "survived"
    TIMEOUT = "timeout"
    ERROR = "error"


class Verdict(StrEnum):
    """A check's verdict: every course test passes, the tests are valid and kill enough."""

    PASS = "pass"
    FAIL = "fail"


KILLS: frozenset[MutantStatus] = frozenset({MutantStatus.KILLED, MutantStatus.TIMEOUT})
"""The statuses that count as a kill: a test failed or errored on the mutant, or the run
timed out twice (the second time alone: ``timeout (confirmed)``)."""

MUTANT_STATUS_OF_RUN: dict[RunStatus, MutantStatus | None] = {
    RunStatus.CRASHED: MutantStatus.ERROR,
    RunStatus.COLLECTION_ERROR: MutantStatus.ERROR,
    RunStatus.TIMEOUT: MutantStatus.TIMEOUT,
    RunStatus.STOPPED: MutantStatus.KILLED,
    RunStatus.COMPLETED: None,
}
"""A mutant's status from how the run of the student's tests on it ended; ``None``: the run
completed, and the mutant is ``killed`` if a test failed, else ``survived``. A run stopped
at its first failing test is a kill: the tests before it passed as in a whole run."""


def mutant_status(run: RunStatus, any_failed: bool) -> MutantStatus:
    """The status of a mutant whose run ended ``run``, some test failing if ``any_failed``."""
    status = MUTANT_STATUS_OF_RUN[run]
    if status is not None:
        return status
    return MutantStatus.KILLED if any_failed else MutantStatus.SURVIVED


def is_kill(status: MutantStatus) -> bool:
    """Whether a mutant of this status is detected (the kill rule, ``KILLS``)."""
    return status in KILLS


class AuditStatus(StrEnum):
    """A generated mutant's status in ``grader audit``, from mutmut's exit code."""

    KILLED = "killed"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    SURVIVED = "survived"
    NO_TESTS = "no tests"
    ERROR = "error"


AUDIT_DETECTED: frozenset[AuditStatus] = frozenset(
    {AuditStatus.KILLED, AuditStatus.TIMEOUT, AuditStatus.CRASHED}
)
"""The audit's kill rule: a crash counts too, since no student's file is being judged."""
