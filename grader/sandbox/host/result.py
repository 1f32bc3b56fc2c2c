"""A run's record turned into its result, in the grader's own process.

The worker reports what it saw of a run (``protocol.jobs.RunRecord``); ``interpret``
makes a ``RunResult`` of it here, so the verdict on a run never rests on what
the run's exit status claims, and an event the recorder could not have sent
crashes the run. ``failure_line`` is the one line every message quotes of a
pytest report.
"""

from __future__ import annotations

import math
import re
import signal
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from grader.sandbox.protocol.calls import DID_NOT_RETURN
from grader.sandbox.protocol.events import Event, well_formed
from grader.sandbox.protocol.status import FAILING, TELLS_APART, WORST_FIRST, RunStatus, TestStatus

PARENT_KILLED = "the test process killed its parent, the grader's worker"


@dataclass(frozen=True)
class TestOutcome:
    """One test's final outcome in one run; ``detail`` is pytest's report of a failure."""

    name: str
    status: TestStatus
    detail: str = ""
    seconds: float = field(default=0.0, compare=False)
    """How long the test took, as the test process measured it (information only: it never
    decides a verdict, and it is bounded by the run's own time)."""


@dataclass(frozen=True)
class RunResult:
    """What one run of a test file against one implementation showed.

    ``status`` is ``completed`` only when every collected test reported an
    outcome and the session reported its end, and ``stopped`` when the worker
    ended it at its first failing test; otherwise the run timed out, crashed
    (ended early, killed, out of memory or output) or failed to collect.
    """

    status: RunStatus
    outcomes: tuple[TestOutcome, ...]
    message: str
    output: str
    seconds: float
    cpu_seconds: float = 0.0
    """The CPU time the run's processes used, all of them together."""
    confirmed: bool = False
    """A timeout that happened again when the run was made once more, alone on the pool."""
    steps: Mapping[str, float] = field(default_factory=dict, compare=False)
    """Milliseconds per step of the run by the worker's clock (``worker.server.STEPS``), for
    ``benchmarks/run_steps.py``; nothing decides on them."""

    def outcome(self, name: str) -> TestStatus:
        """The outcome of test ``name``; parametrized cases fold into their worst outcome."""
        statuses = [o.status for o in self.outcomes if _base_name(o.name) == name]
        if not statuses:
            return TestStatus.NOT_RUN
        return next((status for status in WORST_FIRST if status in statuses), TestStatus.PASSED)

    def detail(self, name: str) -> str:
        return "\n".join(o.detail for o in self.outcomes if _base_name(o.name) == name and o.detail)

    def hung(self, name: str) -> bool:
        """Whether test ``name`` ended on a call of the student's own tree that passed its
        bound (``Job.call_limit``): the tree hung there, or the test asks too much of it."""
        return any(
            line.startswith("E   your ") and DID_NOT_RETURN in line
            for line in self.detail(name).splitlines()
        )

    def test_names(self) -> list[str]:
        return list(dict.fromkeys(_base_name(o.name) for o in self.outcomes))

    def durations(self) -> dict[str, float]:
        """Seconds per test that ran, parametrized cases summed, in the run's order."""
        seconds: dict[str, float] = {}
        for o in self.outcomes:
            if o.status == TestStatus.NOT_RUN:
                continue
            seconds[_base_name(o.name)] = seconds.get(_base_name(o.name), 0.0) + o.seconds
        return {name: round(value, 3) for name, value in seconds.items()}

    @property
    def all_passed(self) -> bool:
        return self.status == RunStatus.COMPLETED and all(
            o.status == TestStatus.PASSED for o in self.outcomes
        )

    def failing(self) -> list[str]:
        """Tests that failed, errored or timed out: those that tell this implementation apart."""
        return [n for n in self.test_names() if self.outcome(n) in TELLS_APART]


def merged_runs(runs: list[RunResult]) -> RunResult:
    """Runs of parts of one test file as one run: their outcomes in the order given, the
    status and message of the first that did not complete, the longest wall time (they went
    side by side) and all their CPU time."""
    unfinished = next((run for run in runs if run.status != RunStatus.COMPLETED), runs[0])
    return RunResult(
        unfinished.status,
        tuple(outcome for run in runs for outcome in run.outcomes),
        unfinished.message,
        "\n".join(run.output for run in runs if run.output),
        max(run.seconds for run in runs),
        sum(run.cpu_seconds for run in runs),
        any(run.confirmed for run in runs),
    )


def status_phrase(status: TestStatus) -> str:
    """How a message says what a test did: ``fails``, ``fails with an error``, ``is skipped``."""
    phrases = {TestStatus.FAILED: "fails", TestStatus.ERROR: "fails with an error"}
    return phrases.get(status, f"is {status}")


def _without_addresses(text: str) -> str:
    """``text`` with memory addresses (``<Tree object at 0x7f...>``) masked: they change
    from run to run, and a report must be the same bytes for the same submission."""
    return re.sub(r" at 0x[0-9a-fA-F]+\b", " at 0x…", text)


def _base_name(name: str) -> str:
    return name.split("[", 1)[0]


MALFORMED = "the test process sent a malformed event on the outcome channel"


def interpret(record: Mapping[str, Any]) -> RunResult:
    """Turn a worker's record of one run (a ``protocol.RunRecord``, read defensively: any
    field may be missing or of another type) into a ``RunResult``; a run whose channel
    carried anything but the recorder's events is crashed, with one line saying so."""
    steps = record.get("steps")
    timed = steps if isinstance(steps, dict) else {}
    return replace(_interpret(record), steps={str(k): float(v) for k, v in timed.items()})


def _interpret(record: Mapping[str, Any]) -> RunResult:
    raw = record["events"] if isinstance(record.get("events"), list) else []
    events = well_formed(raw)
    seconds = float(record.get("seconds", 0.0))
    cpu_seconds = float(record.get("cpu_seconds", 0.0))
    refused = _refusal(raw, events)
    if refused is not None:
        return RunResult(RunStatus.CRASHED, (), refused, "", seconds, cpu_seconds)
    seen = _Seen.of(events, seconds)
    output = record["output"]
    if seen.collection_errors:
        first = seen.collection_errors[0]
        line = failure_line(first) or "the test file could not be collected"
        return RunResult(RunStatus.COLLECTION_ERROR, (), line, first, seconds, cpu_seconds)
    collected, outcomes, running = seen.collected, seen.outcomes, seen.running
    # Fewer outcomes than collected tests is never a pass, whatever the exit status said.
    missing = [name for name in collected if name not in outcomes]
    over_cap = record.get("over_cap")
    if isinstance(over_cap, str) and over_cap:
        status = RunStatus.CRASHED
        message = f"{over_cap}: it was stopped, and fails"
    elif record["timed_out"]:
        status = RunStatus.TIMEOUT
        message = f"stopped after its time limit while running {running or 'the tests'}"
    elif record.get("stopped") is True:
        status = RunStatus.STOPPED
        failing = (o.name for o in reversed(outcomes.values()) if o.status in FAILING)
        message = f"stopped at its first failing test, {next(failing, 'a test')}"
    elif not seen.finished or missing:
        status = RunStatus.CRASHED
        message = (
            PARENT_KILLED
            if record.get("parent_killed") is True
            else _crash_message(record.get("exit_code"), running)
        )
    else:
        ordered = tuple(outcomes[n] for n in collected)
        return RunResult(RunStatus.COMPLETED, ordered, "", output, seconds, cpu_seconds)
    for name in missing:
        ended = TestStatus.NOT_RUN
        if name == running and status in (RunStatus.TIMEOUT, RunStatus.CRASHED):
            ended = TestStatus.TIMEOUT if status == RunStatus.TIMEOUT else TestStatus.ERROR
        outcomes[name] = TestOutcome(name, ended, message if ended != TestStatus.NOT_RUN else "")
    ordered = tuple(outcomes[n] for n in collected) if collected else tuple(outcomes.values())
    return RunResult(status, ordered, message, output, seconds, cpu_seconds)


@dataclass
class _Seen:
    """What a run's well-formed events say: the tests collected, each outcome, the test that
    started last without an outcome, and whether the session reported its end."""

    collected: list[str] = field(default_factory=list)
    collection_errors: list[str] = field(default_factory=list)
    outcomes: dict[str, TestOutcome] = field(default_factory=dict)
    running: str | None = None
    finished: bool = False

    @classmethod
    def of(cls, events: list[Event], run_seconds: float) -> _Seen:
        seen = cls()
        for event in events:
            if event["event"] == "collected":
                seen.collected = list(event["names"])
            elif event["event"] == "collection_error":
                seen.collection_errors.append(_without_addresses(event["detail"]))
            elif event["event"] == "start":
                seen.running = event["name"]
            elif event["event"] == "outcome":
                detail = _without_addresses(event["detail"])
                took = _bounded_seconds(event.get("seconds"), run_seconds)
                name = event["name"]
                seen.outcomes[name] = TestOutcome(name, TestStatus(event["status"]), detail, took)
                seen.running = None
            elif event["event"] == "finished":
                seen.finished = True
        return seen


def _refusal(raw: list[Any], events: list[Event]) -> str | None:
    """Why a run's events cannot be the recorder's, if they cannot: one is malformed, or a
    test's outcome comes twice. The recorder reports each test once, so a second outcome is
    forged; letting either stand would make a run that stops at its first failure read
    unlike one that goes on."""
    if len(events) != len(raw):
        return MALFORMED
    counts = Counter(event["name"] for event in events if event["event"] == "outcome")
    twice = [name for name, count in counts.items() if count > 1]
    return f"the test process reported the outcome of {twice[0]} twice" if twice else None


def _bounded_seconds(value: object, run_seconds: float) -> float:
    """A test's reported seconds, if a finite number, kept within the run's own length: the
    test process reports it, so it may be anything."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return 0.0
    return min(max(float(value), 0.0), run_seconds)


def _crash_message(exit_code: int | None, running: str | None) -> str:
    where = f"while running {running}" if running else "before reporting every test"
    if exit_code is not None and exit_code < 0:
        name = signal.Signals(-exit_code).name if -exit_code in signal.valid_signals() else "?"
        hint = {
            "SIGXFSZ": " (too much output)",
            "SIGXCPU": " (CPU time limit)",
            "SIGKILL": " (killed, often for memory)",
            "SIGSEGV": " (segmentation fault)",
        }.get(name, "")
        return f"the test process died of {name}{hint} {where}"
    return f"the test process ended early (exit status {exit_code}) {where}"


LINE_LIMIT = 300
"""Longest line ``failure_line`` returns; pytest's own lines can be megabytes."""

_EXCEPTION_LINE = re.compile(r"[\w.]*(Error|Exception|Exit|Interrupt|Failed|Failure|Group)(:|$)")


def failure_line(report: str) -> str:
    """The one line of a pytest report that says what went wrong; ``""`` for an empty report.

    pytest marks an exception's lines with ``E``, and shows a chained exception's
    cause before it, so the last run of ``E`` lines is the exception the test
    (or the collection) ended with. Its headline is its exception line
    (``KeyError: 5``, ``Failed: DID NOT RAISE``), else its first line (``assert
    3 == 4``); a syntax error gets the file and line its run names. A report
    with no ``E`` line (pytest's own message) gives its last line.
    """
    lines = [line.strip() for line in report.splitlines() if line.strip()]
    runs: list[list[str]] = []
    in_run = False
    for line in lines:
        marked = line == "E" or line.startswith("E ")
        if marked and not in_run:
            runs.append([])
        if marked and line[1:].strip():
            runs[-1].append(line[1:].strip())
        in_run = marked
    last = runs[-1] if runs and runs[-1] else None
    if last is None:
        headline = lines[-1] if lines else ""
    else:
        headline = next((line for line in last if _EXCEPTION_LINE.match(line)), last[0])
        places = [place for line in last if (place := re.match(r'File "(.+)", line (\d+)', line))]
        if headline.startswith(("SyntaxError", "IndentationError", "TabError")) and places:
            headline += f" ({places[-1][1]}, line {places[-1][2]})"
    return headline if len(headline) <= LINE_LIMIT else f"{headline[:LINE_LIMIT]} [cut]"
