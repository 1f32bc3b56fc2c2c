"""Run the grader as ``python -m grader`` (and as the ``grader`` command: ``run``).

A stop signal is caught from the first line on: SIGTERM and SIGHUP unwind the
command as Ctrl-C does (a signal ignored before, as under ``nohup``, stays
ignored), so one that arrives while the grader is still importing, or after
the command's own handlers are given back, still ends it with one line and
128 plus the signal's number, never a traceback or a kill.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

from grader.errors import STOP_SIGNALS, GraderStopped, stop_line


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise GraderStopped(signum)


def run() -> int:
    """The command line's ``main``, with every stop signal turned into its exit code."""
    for number in STOP_SIGNALS:
        if number != signal.SIGINT and signal.getsignal(number) == signal.SIG_DFL:
            signal.signal(number, _raise_stopped)
    try:
        from grader.cli import main

        return main()
    except KeyboardInterrupt as stopped:  # before main's own handling, or after it
        for number in STOP_SIGNALS:  # one more while this is said changes nothing
            if signal.getsignal(number) != signal.SIG_IGN:
                signal.signal(number, signal.SIG_IGN)
        line, code = stop_line(stopped)
        print(line, file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(run())
