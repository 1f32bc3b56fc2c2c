"""The messages between the grader, a warm worker and a run's root: jobs, spawns, records.

Each is JSON in one frame (``frames.json_frame``): a job on the worker's control
socket with its sources beside it as descriptors, a spawn to a run's root, the
test process's pid and the run's record back to the grader.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

MAX_JOB_BYTES = 1 << 20
"""The longest job message a worker takes on its control socket."""


class Contract(TypedDict):
    """What the tests may reach of the module under test (``Interface`` as the worker reads
    it); ``names`` and ``members`` ``None``: every public one."""

    names: list[str] | None
    members: dict[str, list[str]] | None
    exceptions: list[str]
    private: list[str]
    frames: bool


class JobMessage(TypedDict):
    """A job, from the grader to a worker; the sources come beside it as descriptors
    (implementation, tests, then one per name in ``dependencies``)."""

    test_name: str
    time_limit: float
    module: str
    reverse: bool
    contract: Contract
    cpus: list[int]
    """Where the test process may run: the same CPUs in every run."""
    implementation_cpus: NotRequired[list[int]]
    """Where the implementation process runs (its worker's CPU, so that a call and its answer
    go on one CPU); the worker drops it from the test process's copy of the job."""
    kit_tests: bool
    """The test file is the kit's own: its process runs on ``implementation_cpus`` too."""
    dependencies: list[str]
    ceiling: float
    only: list[str]
    """The tests of the file to run (pytest node names within it); empty: all of them."""
    leave_out: list[str]
    """The tests of the file not to run."""
    stop_at_failure: bool
    """End the run as soon as a test fails (``EventStream.failed``): the worker's rule, which
    nothing inside the run can see."""
    wall: float
    call_limit: NotRequired[float]
    """The CPU seconds one call of the implementation may take before it counts as hung (the
    student's own tree only: ``untrusted.bound.CallBound``); absent or 0: no bound.
    The worker drops it from the test process's copy of the job."""
    heap_shift: int
    """The objects of each small size the test process keeps before its first test
    (``Job.heap_shift``)."""
    hypothesis_seed: NotRequired[int]
    """The seed hypothesis draws examples from (``Job.hypothesis_seed``); absent: the
    derandomized one, as every graded run."""


class RunJob(JobMessage):
    """A job as one of a run's two processes gets it: the run's folder, and which it is."""

    folder: str
    kind: Literal["implementation", "test"]


class SpawnMessage(TypedDict):
    """From the worker to a run's root: what to run, where, as whom, in which cgroups."""

    job: RunJob
    workdir: str
    identity: int | None
    cgroups: list[str]


class Started(TypedDict):
    """From the worker to the grader as a run starts: its test process's root."""

    pid: int


class RunRecord(TypedDict):
    """From the worker to the grader once a run is over: what it saw of the run."""

    events: list[Any]
    """What ``parse_events`` made of the events channel, not yet checked (``well_formed``)."""
    timed_out: bool
    stopped: bool
    """The worker ended the run at its first failing test (the job's ``stop_at_failure``)."""
    exit_code: int | None
    parent_killed: bool
    over_cap: str
    """Why the run's folder went over its caps (``confine.folders.folder_over_cap``), or empty: the
    run then failed, whatever its tests reported."""
    seconds: float
    cpu_seconds: float
    output: str
    steps: dict[str, float]
    """Milliseconds per step of the run, by the worker's clock (``worker.server.STEPS``)."""
