"""The reaper kills a process chosen by its pid through a pidfd, by number only without one.

``kill_running_from`` finds its processes in ``/proc`` by command line; it must signal each
through a pidfd (a pid reused meanwhile is never hit), and spare a process that no longer
holds the marker once opened. Only a kernel without pidfds sends the kill by pid number.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import procfs, reaper

SLEEPER = "import time; time.sleep(60)"
Sleepers = tuple[bytes, subprocess.Popen[bytes], subprocess.Popen[bytes]]
"""A marker, a process whose command line holds it, and one whose command line does not."""


@pytest.fixture
def sleepers(
    tmp_path: Path,
) -> Iterator[tuple[bytes, subprocess.Popen[bytes], subprocess.Popen[bytes]]]:
    """A marker, a process whose command line holds it, and one whose command line does not."""
    marker = str(tmp_path / "scratch").encode()
    marked = subprocess.Popen([sys.executable, "-c", SLEEPER, marker])
    other = subprocess.Popen([sys.executable, "-c", SLEEPER, marker + b"-not"])
    try:
        yield marker, marked, other
    finally:
        for process in (marked, other):
            process.kill()
            process.wait()


def _killed(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` had been sent SIGKILL: a SIGTERM sent now ends it otherwise (a
    SIGKILL sent earlier has already put it on its way out, so it wins whatever the timing)."""
    if process.poll() is None:
        process.terminate()
    return process.wait() == -9


def test_kill_running_from_signals_through_a_pidfd_only(
    sleepers: Sleepers,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marker, marked, other = sleepers
    assert procfs.runs_from(marked.pid, marker) and not procfs.runs_from(other.pid, marker)

    def by_number(pid: int, number: int) -> None:
        raise AssertionError(f"kill({pid}, {number}) by pid number")

    monkeypatch.setattr(os, "kill", by_number)
    reaper.kill_running_from(marker)
    monkeypatch.undo()
    assert _killed(marked)
    assert not _killed(other)


def test_a_process_that_no_longer_holds_the_marker_once_opened_is_spared(
    sleepers: Sleepers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check runs again on the process the pidfd holds: here the scan of ``/proc`` is made
    to have found ``other``'s pid as if it held the marker then (a pid since reused)."""
    marker, marked, other = sleepers
    monkeypatch.setattr(procfs, "running_from", lambda _: [other.pid])
    reaper.kill_running_from(marker)
    monkeypatch.undo()
    assert not _killed(other)
    assert not _killed(marked)


def test_without_pidfds_the_kill_goes_by_number_and_still_asks_the_mark(
    sleepers: Sleepers,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marker, marked, other = sleepers

    def no_pidfds(pid: int, *flags: int) -> int:
        raise OSError(errno.ENOSYS, "pidfd_open")

    monkeypatch.setattr(os, "pidfd_open", no_pidfds)
    reaper.kill_by_pidfd(other.pid, lambda pid: False)
    reaper.kill_by_pidfd(marked.pid, lambda pid: procfs.runs_from(pid, marker))
    monkeypatch.undo()
    assert _killed(marked)
    assert not _killed(other)
