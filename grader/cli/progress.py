"""What the long commands show while they run, on stderr.

On a terminal, a progress bar, gone once done. Without one (``kubectl logs``,
an Actions log, ``nohup``), a bar draws nothing, so a command that goes
student by student (batch, merge, regrade, manifest) writes one line per
student as each is done, flushed at once: n/N, the student, what came of it,
the seconds it took, and an estimate of the time left.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from grader.results.batch import Step


def progress_bar() -> Progress:
    """A progress bar on stderr, drawn only on a terminal and gone once done."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),
    )


class StepLog:
    """The progress of a command that goes student by student: a bar on a terminal, else a
    line per student (``line``). Use it as a context manager and call it with each ``Step``."""

    def __init__(self, command: str, stream: TextIO | None = None) -> None:
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty()
        self.bar = progress_bar()
        self.task = self.bar.add_task(command, total=None)
        self.started = time.monotonic()
        self.ran = 0

    def __enter__(self) -> StepLog:
        self.started = time.monotonic()
        if self.terminal:
            self.bar.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.terminal:
            self.bar.__exit__(kind, error, traceback)

    def __call__(self, step: Step) -> None:
        if step.seconds is not None:
            self.ran += 1
        if self.terminal:
            self.bar.update(
                self.task,
                completed=step.done,
                total=step.total,
                description=f"{escape(step.student)}: {escape(step.outcome)}",
            )
            return
        elapsed = time.monotonic() - self.started
        self.stream.write(line(self.command, step, elapsed, self.ran) + "\n")
        self.stream.flush()


def line(command: str, step: Step, elapsed: float, ran: int) -> str:
    """One step as a log line: ``batch 3/41 alice: pass, 87.5 points (12.3 s); about 4 min
    left``. The time left is the time so far per student run, times the students left."""
    text = f"{command} {step.done}/{step.total} {_plain(step.student)}: {_plain(step.outcome)}"
    if step.seconds is not None:
        text += f" ({step.seconds:.1f} s)"
    left = step.total - step.done
    if left and ran:
        text += f"; about {_span(elapsed / ran * left)} left"
    elif not left:
        text += f"; all done in {_span(elapsed)}"
    return text


def _plain(text: str) -> str:
    """``text`` on one line: a name or a message with a line break or a control character
    (a folder named to forge a log line) has it escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _span(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
