"""The one exception type the command line turns into a message and an exit code."""

from __future__ import annotations

import signal

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
"""The command cannot run: bad arguments, a broken kit, isolation not reached."""
EXIT_INTERNAL = 2
"""A bug in the kit: an exception no command expected. The same number as ``EXIT_USAGE``
(the grader could not do its job, never the student's fail), under its own name."""
EXIT_INTERRUPTED = 130


class GraderError(Exception):
    """A failure the user can act on: printed as one line, never as a traceback.

    ``exit_code`` is ``EXIT_USAGE`` when the command itself cannot run (bad
    arguments, a broken kit) and ``EXIT_FAIL`` when the submission is at fault.
    """

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def describe(error: Exception) -> str:
    """One line on ``error``: a ``GraderError``'s own message, else what the exception is."""
    return error.message if isinstance(error, GraderError) else repr(error)


class GraderStopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP stopped the grader; it cleans up exactly as for Ctrl-C and exits with
    128 plus the signal's number, as a shell reports such a stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each stops the grader the same way: every worker and run killed, every file removed, exit
128 plus its number (130 for Ctrl-C)."""


def stop_line(stopped: KeyboardInterrupt) -> tuple[str, int]:
    """The one line and the exit code of a command a stop signal ended (Ctrl-C is a plain
    ``KeyboardInterrupt``, SIGTERM and SIGHUP a ``GraderStopped``)."""
    if isinstance(stopped, GraderStopped):
        name = signal.Signals(stopped.signum).name
        return f"grader: stopped by {name}; no files were left behind", 128 + stopped.signum
    return "grader: interrupted; no files were left behind", EXIT_INTERRUPTED
