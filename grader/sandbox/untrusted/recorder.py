"""The pytest plugin a sandboxed run reports through, one frame per event (``protocol.events``).

It writes to a channel the grader's warm worker reads as the run goes: the names of
the collected tests (or the collection errors), each test's start, each
test's final outcome with how long it took (setup and teardown included), and the end of
the session. A run whose record stops
early (``os._exit``, a crash, a kill) is therefore told apart from a run
that finished, whatever its exit status.

It also reseeds ``random`` before each test from the test's name alone, as
pytest-randomly does: a test that draws from the global generator draws the
same numbers in every run, whatever ran before it, so chance can neither
kill a mutant nor spare one.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Generator
from typing import Any

import pytest

from grader.sandbox.protocol import events, frames
from grader.sandbox.protocol.events import Event
from grader.sandbox.protocol.status import TestStatus

DETAIL_LIMIT = 6000

# Bound once at import: a test that replaces ``json.dumps`` or ``os.write``
# cannot change what the recorder reports (``protocol`` binds those it calls).
_frame = events.event_frame
_write_all = frames.write_all
_seed = random.seed
_clock = time.monotonic


class OutcomeRecorder:
    """Reports collection and per-test outcomes to the file descriptor ``events_fd``."""

    def __init__(
        self,
        events_fd: int,
        reverse: bool = False,
        stopped: type[BaseException] | None = None,
    ) -> None:
        self._fd = events_fd
        self._reverse = reverse
        self._stopped = stopped
        """The stand-in's error for an implementation that hung or is gone
        (``proxy.ImplementationStopped``): a test it ends is reported as its one line and the
        implementation's stack, not as the machinery it passed through (hypothesis's)."""
        self._status: dict[str, TestStatus] = {}
        self._detail: dict[str, str] = {}
        self._started: dict[str, float] = {}

    def _emit(self, event: Event) -> None:
        _write_all(self._fd, _frame(event))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self._reverse:
            items.reverse()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._emit({"event": "collection_error", "detail": _cut(str(report.longrepr))})

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        names = [short_name(item.nodeid) for item in session.items]
        self._emit({"event": "collected", "names": names})

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        _seed(f"grader:{short_name(nodeid)}")
        self._started[short_name(nodeid)] = _clock()
        self._emit({"event": "start", "name": short_name(nodeid)})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        error = call.excinfo.value if call.excinfo is not None else None
        if self._stopped is not None and isinstance(error, self._stopped):
            assert call.excinfo is not None
            report.longrepr = stopped_report(item, call.excinfo, error)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name = short_name(report.nodeid)
        if report.failed:
            self._status[name] = TestStatus.FAILED if report.when == "call" else TestStatus.ERROR
            self._detail.setdefault(name, _cut(report.longreprtext))
        elif report.skipped and name not in self._status:
            self._status[name] = TestStatus.SKIPPED
        elif report.passed and report.when == "call":
            self._status.setdefault(name, TestStatus.PASSED)

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        name = short_name(nodeid)
        self._emit(
            {
                "event": "outcome",
                "name": name,
                "status": self._status.get(name, TestStatus.ERROR),
                "detail": self._detail.get(name, ""),
                "seconds": round(_clock() - self._started.get(name, _clock()), 4),
            }
        )

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._emit({"event": "finished", "exitstatus": int(exitstatus)})


def stopped_report(
    item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException], error: Any
) -> str:
    """A test the implementation's hang or end stopped, as pytest would show it with only the
    frames that matter: the test file's (where the test was), then the implementation's own
    (``error.frames``: where it was), then the one line that says what happened."""
    lines = []
    for entry in excinfo.traceback:
        if entry.path != item.path:
            continue
        lines.append(f"{_relative(item)}:{entry.lineno + 1}: in {entry.name}")
        with contextlib.suppress(Exception):
            lines.append(f"    {str(entry.statement).strip()}")
    for number, function, text, file in getattr(error, "frames", ()):
        lines.append(f"{file}:{number}: in {function}")
        if text.strip():
            lines.append(f"    {text.strip()}")
    lines.append(f"E   {error.line}")
    return "\n".join(lines)


def _relative(item: pytest.Item) -> str:
    try:
        return str(item.path.relative_to(item.config.rootpath))
    except ValueError:
        return item.path.name


def short_name(nodeid: str) -> str:
    """A test's name within its file: ``test_x``, ``test_x[case]`` or ``TestClass::test_x``."""
    return nodeid.split("::", 1)[-1]


def _cut(text: str) -> str:
    """``text`` within ``DETAIL_LIMIT``, its middle cut out: the end is what a student needs
    most (the error, and hypothesis's shrunk program of calls, come last)."""
    if len(text) <= DETAIL_LIMIT:
        return text
    head = DETAIL_LIMIT // 4
    tail = DETAIL_LIMIT - head
    return f"{text[:head]}\n[cut: {len(text) - DETAIL_LIMIT} characters]\n{text[-tail:]}"
