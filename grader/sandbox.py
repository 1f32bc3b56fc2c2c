"""Running one test file against one implementation, isolated, from warm workers.

A ``WorkerPool`` keeps a few zygote processes (see ``grader.zygote``) that have
imported pytest and hypothesis once; each run forks a fresh child from one of
them, so a run costs a fork, not an interpreter start. The pool turns each
child's event record into a ``RunResult`` here, in the grader's own process:
the verdict on a run never rests on what the child's exit status claims.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from grader.errors import GraderError

RunStatus = Literal["completed", "collection_error", "crashed", "timeout"]
TestStatus = Literal["passed", "failed", "error", "skipped", "timeout", "not run"]

FIXED_HASH_SEED = 0
OTHER_HASH_SEED = 12345


@dataclass(frozen=True)
class TestOutcome:
    """One test's final outcome in one run; ``detail`` is pytest's report of a failure."""

    name: str
    status: TestStatus
    detail: str = ""


@dataclass(frozen=True)
class RunResult:
    """What one run of a test file against one implementation showed.

    ``status`` is ``completed`` only when every collected test reported an
    outcome and the session reported its end; otherwise the run timed out,
    crashed (ended early, killed, out of memory or output) or failed to collect.
    """

    status: RunStatus
    outcomes: tuple[TestOutcome, ...]
    message: str
    output: str
    seconds: float

    def outcome(self, name: str) -> TestStatus:
        """The outcome of test ``name``; parametrized cases fold into their worst outcome."""
        statuses = [o.status for o in self.outcomes if _base_name(o.name) == name]
        if not statuses:
            return "not run"
        worst_first: tuple[TestStatus, ...] = ("timeout", "error", "failed", "not run", "skipped")
        return next((status for status in worst_first if status in statuses), "passed")

    def detail(self, name: str) -> str:
        return "\n".join(o.detail for o in self.outcomes if _base_name(o.name) == name and o.detail)

    def test_names(self) -> list[str]:
        return list(dict.fromkeys(_base_name(o.name) for o in self.outcomes))

    @property
    def all_passed(self) -> bool:
        return self.status == "completed" and all(o.status == "passed" for o in self.outcomes)

    def failing(self) -> list[str]:
        """Tests that failed, errored or timed out: the tests that tell this implementation apart."""
        return [n for n in self.test_names() if self.outcome(n) in ("failed", "error", "timeout")]


@dataclass(frozen=True)
class Job:
    """A test file and an implementation to run it against."""

    implementation: str
    test_name: str
    test_source: str
    time_limit: float
    reverse: bool = False
    hash_seed: int = FIXED_HASH_SEED


def _base_name(name: str) -> str:
    return name.split("[", 1)[0]


def interpret(record: dict[str, Any]) -> RunResult:
    """Turn a zygote's record of one run into a ``RunResult``."""
    events = record["events"]
    collected: list[str] = []
    collection_errors: list[str] = []
    outcomes: dict[str, TestOutcome] = {}
    running: str | None = None
    finished = False
    for event in events:
        kind = event.get("event")
        if kind == "collected":
            collected = list(event["names"])
        elif kind == "collection_error":
            collection_errors.append(event["detail"])
        elif kind == "start":
            running = event["name"]
        elif kind == "outcome":
            outcomes[event["name"]] = TestOutcome(event["name"], event["status"], event["detail"])
            running = None
        elif kind == "finished":
            finished = True
    seconds = float(record["seconds"])
    output = record["output"]
    if collection_errors:
        return RunResult(
            "collection_error",
            (),
            _first_line_of_error(collection_errors[0]),
            collection_errors[0],
            seconds,
        )
    missing = [name for name in collected if name not in outcomes]
    if record["timed_out"]:
        status: RunStatus = "timeout"
        message = f"stopped after its time limit while running {running or 'the tests'}"
    elif not finished or missing:
        status = "crashed"
        message = _crash_message(record.get("exit_code"), running)
    else:
        return RunResult("completed", tuple(outcomes[n] for n in collected), "", output, seconds)
    for name in missing:
        stopped: TestStatus = "timeout" if status == "timeout" and name == running else "not run"
        if status == "crashed" and name == running:
            stopped = "error"
        outcomes[name] = TestOutcome(name, stopped, message if name == running else "")
    ordered = tuple(outcomes[n] for n in collected) if collected else tuple(outcomes.values())
    return RunResult(status, ordered, message, output, seconds)


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


def _first_line_of_error(detail: str) -> str:
    """The most telling line of a collection error: the exception pytest shows last."""
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^E\s+\w+(Error|Exception)\b", line):
            return line.lstrip("E").strip()
    return lines[-1] if lines else "the test file could not be collected"


class _Zygote:
    """One warm worker process and the pid of the child it is running, if any."""

    def __init__(self, scratch: Path, hash_seed: int) -> None:
        self.hash_seed = hash_seed
        self.child_pid: int | None = None
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONHASHSEED": str(hash_seed),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "LANG": "C.UTF-8",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-s", "-P", "-m", "grader.zygote", str(scratch)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=scratch,
            start_new_session=True,
            text=True,
        )

    def run(self, job: Job) -> RunResult:
        stdin, stdout = self._pipes()
        message = {
            "implementation": job.implementation,
            "test_name": job.test_name,
            "test_source": job.test_source,
            "time_limit": job.time_limit,
            "reverse": job.reverse,
        }
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()
        self.child_pid = int(json.loads(self._read_line(stdout))["pid"])
        record = json.loads(self._read_line(stdout))
        self.child_pid = None
        return interpret(record)

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        return self.process.stdin, self.process.stdout

    def _read_line(self, stdout: IO[str]) -> str:
        line = stdout.readline()
        if not line:
            raise GraderError("the kit is broken: a grading worker stopped unexpectedly")
        return line

    def stop(self) -> None:
        """Kill the running child's whole group, then the worker itself."""
        if self.child_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.child_pid, signal.SIGKILL)
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class WorkerPool:
    """Warm workers sharing one scratch folder, removed with every trace when the pool closes.

    ``workers`` zygotes run with the fixed hash seed; one more runs with
    another seed, for the run that checks a test file does not depend on it.
    Safe to call ``run`` from several threads at once.
    """

    def __init__(self, workers: int = 2) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="grader-"))
        self._idle: dict[int, queue.Queue[_Zygote]] = {}
        self._all: list[_Zygote] = []
        self._lock = threading.Lock()
        try:
            for seed in [FIXED_HASH_SEED] * workers + [OTHER_HASH_SEED]:
                zygote = _Zygote(self.scratch, seed)
                self._all.append(zygote)
                self._idle.setdefault(seed, queue.Queue()).put(zygote)
        except BaseException:
            self.close()
            raise

    def run(self, job: Job) -> RunResult:
        zygote = self._idle[job.hash_seed].get()
        try:
            return zygote.run(job)
        finally:
            self._idle[job.hash_seed].put(zygote)

    def close(self) -> None:
        with self._lock:
            for zygote in self._all:
                zygote.stop()
            self._all.clear()
            shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
