"""The ``grader`` command line: each subcommand parses, calls one library function, renders.

``parser`` builds the arguments, ``handlers`` holds one handler per subcommand
(parse, call, render), ``progress`` the progress bar. ``main`` runs one: failures
the user can act on arrive as ``GraderError`` and leave as one line on stderr with
its exit code; ``--debug`` shows the traceback instead."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from types import FrameType

from rich.console import Console

from grader.cli.parser import build_parser, staff_commands, stage_first
from grader.errors import EXIT_INTERNAL, EXIT_USAGE, GraderError, GraderStopped, stop_line
from grader.inputs.catalog import DEFAULT_CHAPTER, load_chapter

__all__ = ["build_parser", "main", "stop_on_signals"]


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP unwind the command as Ctrl-C does, so every
    cleanup runs; a signal ignored before (``nohup``) stays ignored. The handlers in place
    before come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP)}
    for number, handler in before.items():
        if handler == signal.SIG_DFL:
            signal.signal(number, _raise_stopped)
    try:
        yield
    finally:
        for number, handler in before.items():
            if handler == signal.SIG_DFL:
                signal.signal(number, handler)


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise GraderStopped(signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    arguments = stage_first(list(sys.argv[1:] if argv is None else argv))
    command = next((word for word in arguments if not word.startswith("-")), None)
    if command in staff_commands(parser):
        print(
            f"grader: grader {command} is a staff command, not part of the student edition; "
            "grader --help lists yours",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    console = Console()
    try:
        with stop_on_signals():
            chapter = load_chapter(args.chapter if "chapter" in args else DEFAULT_CHAPTER)
            code: int = args.func(args, chapter, console)
        return code
    except GraderError as error:
        if args.debug:
            traceback.print_exc()
        print(f"grader: {error.message}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as stopped:  # GraderStopped too
        line, exit_code = stop_line(stopped)
        print(line, file=sys.stderr)
        return exit_code
    except Exception:
        if args.debug:
            raise
        print(
            f"grader: internal error (a bug in the kit; rerun with --debug and report it): "
            f"{traceback.format_exc().splitlines()[-1]}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
