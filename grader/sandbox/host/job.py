"""What the grader asks of a run: a test file, an implementation, and the run's limits."""

from __future__ import annotations

from dataclasses import dataclass

from grader.sandbox.protocol.jobs import Contract

FIXED_HASH_SEED = 0

OTHER_HASH_SEED = 12345

WALL_FACTOR = 2.0

WALL_MARGIN_SECONDS = 5.0
"""A run's time limit is on the CPU time its processes use; the wall clock is only a
backstop, ``WALL_FACTOR`` times the limit and ``WALL_MARGIN_SECONDS`` more (for a run that
sleeps or waits forever): a busy machine slows a run's clock, not its CPU time."""

CONFIRMING_WALL_FACTOR = 1.5
"""How much longer the wall-clock backstop is when a timeout is being confirmed: the run then
has the pool to itself, but the machine may still be busy with work of others."""


def wall_backstop(time_limit: float, confirming: bool = False) -> float:
    """How long by the wall clock a run with ``time_limit`` seconds of CPU time may take."""
    wall = WALL_FACTOR * time_limit + WALL_MARGIN_SECONDS
    return wall * CONFIRMING_WALL_FACTOR if confirming else wall


@dataclass(frozen=True)
class Job:
    """A test file and an implementation to run it against.

    ``time_limit`` is on the CPU time the run's processes use (the wall clock
    is only a backstop, ``wall_backstop``); the run cannot see it.
    What it can see of its limits comes from ``ceiling`` (its ``RLIMIT_CPU``):
    give every run of one test file the same, so that no run looks unlike
    another; ``None`` takes ``time_limit``.
    """

    implementation: str
    test_name: str
    test_source: str
    time_limit: float
    module: str
    """The name the tests import ``implementation`` under (the chapter's ``module``)."""
    reverse: bool = False
    hash_seed: int = FIXED_HASH_SEED
    interface: Interface | None = None
    """What the tests may reach of the module; ``None``: every public name and member."""
    dependencies: tuple[tuple[str, str], ...] = ()
    """Each module the implementation may import beside the standard library (an earlier
    chapter's), as its name and source; it runs in the implementation's process, as the
    implementation does."""
    ceiling: float | None = None
    only: tuple[str, ...] = ()
    """The tests of the file to run (pytest node names within it); empty: all of them."""
    leave_out: tuple[str, ...] = ()
    """The tests of the file not to run."""
    kit_tests: bool = False
    """The test file is the kit's own (the course tests): no student's code runs in the test
    process, so it runs beside the implementation's, on its worker's CPU."""
    stop_at_failure: bool = False
    """End the run at its first failing test (a mutant's run: one failure is a kill). The
    worker ends it; nothing inside the run can tell."""
    call_limit: float = 0.0
    """The CPU seconds one call of the implementation may take: past it the call counts as
    hung, is stopped and its stack reported, and the run goes on (the student's own tree only:
    a located hang is deterministic, so it needs no confirming); 0: no bound."""
    heap_shift: int = 0
    """How many objects of each small size the test process makes and keeps before the
    first test, so every object the tests make lies elsewhere than in a run without them:
    validation's rerun with a shifted heap (``grader.grading.validation``); 0 for every
    other run."""
    hypothesis_seed: int | None = None
    """The seed hypothesis draws the tests' examples from in place of the derandomized one
    (``grader.inputs.hypothesis_profile.draw_from``): the robustness reruns
    (``grader.grading.robustness``), whose seeds the grader derives from the catalog alone;
    ``None`` for every other run."""


@dataclass(frozen=True)
class Interface:
    """What a test reaches of the module under test, which runs in a process of its own.

    ``names`` are the module's public names; ``members`` the members of each
    of its classes a test may use; ``exceptions`` the built-in exceptions
    (and their built-in subclasses) a test sees as themselves, all others
    arriving as ``ImplementationError``; ``private`` the members beyond those
    the course tests (never a student's) may call, such as the
    implementation's own invariant check.
    """

    names: tuple[str, ...]
    members: tuple[tuple[str, tuple[str, ...]], ...]
    exceptions: tuple[str, ...]
    private: tuple[str, ...] = ()
    frames: bool = False
    """Whether an error in the implementation shows its frames (the course tests' runs)."""

    def contract(self) -> Contract:
        """The interface as the worker reads it."""
        return {
            "names": list(self.names),
            "members": {cls: list(members) for cls, members in self.members},
            "exceptions": list(self.exceptions),
            "private": list(self.private),
            "frames": self.frames,
        }


ANY_INTERFACE: Contract = {
    "names": None,
    "members": None,
    "exceptions": ["BaseException"],
    "private": [],
    "frames": False,
}
"""A job without an interface: every public name and member, every exception as itself."""
