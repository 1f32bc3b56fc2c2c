"""The ``grader`` command line: each subcommand parses, calls one library function, renders.

Failures the user can act on arrive as ``GraderError`` and leave as one line
on stderr with its exit code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from grader import __version__
from grader.catalog import CHAPTERS, DEFAULT_CHAPTER, Chapter, load_chapter
from grader.diff import diff_against_reference
from grader.errors import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_PASS, EXIT_USAGE, GraderError
from grader.grading import Limits, check
from grader.render import render_catalog, render_check, render_diff, render_start, render_tdd
from grader.report import report_to_json, write_atomically
from grader.submission import DEFAULT_FOLDER, start_submission
from grader.tdd import run_tdd

Command = Callable[[argparse.Namespace, Chapter, Console], int]


def cmd_start(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_start(console, chapter, start_submission(chapter, args.submission, force=args.force))
    return EXIT_PASS


def cmd_tests(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_catalog(console, chapter)
    return EXIT_PASS


def cmd_tdd(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    result = run_tdd(chapter, args.submission, args.stage)
    render_tdd(console, result)
    return EXIT_PASS if result.ok else EXIT_FAIL


def cmd_diff(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_diff(console, diff_against_reference(chapter, args.submission))
    return EXIT_PASS


def cmd_check(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    limits = Limits(course_tests=args.time_limit, student_tests=args.time_limit)
    progress = Progress(
        TextColumn("mutants"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),
    )
    with progress:
        task = progress.add_task("mutants", total=len(chapter.mutants))
        report = check(
            chapter,
            args.submission,
            limits,
            progress=lambda phase, done, total: progress.update(task, completed=done),
        )
    render_check(console, chapter, report)
    if args.json:
        write_atomically(args.json, report_to_json(report))
    return EXIT_PASS if report.verdict == "pass" else EXIT_FAIL


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="grader",
        description="Grade a ds.07 submission: the course tests judge your code, "
        "planted mutants judge your tests.",
    )
    parser.add_argument("--version", action="version", version=f"grader {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks instead of one-line errors"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Command, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(func=func)
        return sub

    def chapter_and_folder(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "chapter",
            nargs="?",
            default=DEFAULT_CHAPTER,
            choices=sorted(CHAPTERS),
            help=f"the chapter id (default {DEFAULT_CHAPTER})",
        )
        sub.add_argument(
            "--submission",
            type=Path,
            default=DEFAULT_FOLDER,
            metavar="DIR",
            help=f"the submission folder (default {DEFAULT_FOLDER})",
        )

    start = add(
        "start", cmd_start, "create the submission folder from the stub and the test skeleton"
    )
    chapter_and_folder(start)
    start.add_argument(
        "--force",
        action="store_true",
        help="replace existing files, after saving them beside themselves",
    )

    tests = add(
        "tests", cmd_tests, "list the course tests, the tests you must write, and the mutants"
    )
    chapter_and_folder(tests)

    tdd = add(
        "tdd", cmd_tdd, "red: your tests must fail on the stub; green: they must pass on your code"
    )
    tdd.add_argument("stage", choices=["red", "green"], help="which stage to check")
    chapter_and_folder(tdd)

    checking = add(
        "check", cmd_check, "grade your code with the course tests and your tests with the mutants"
    )
    chapter_and_folder(checking)
    checking.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON")
    checking.add_argument(
        "--time-limit",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="time limit of the course tests and of your tests on the reference",
    )

    diff = add(
        "diff", cmd_diff, "show your radix.py against the reference, once the course tests pass"
    )
    chapter_and_folder(diff)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    console = Console()
    try:
        chapter = load_chapter(args.chapter if "chapter" in args else DEFAULT_CHAPTER)
        code: int = args.func(args, chapter, console)
        return code
    except GraderError as error:
        if args.debug:
            traceback.print_exc()
        print(f"grader: {error.message}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("grader: interrupted; no files were left behind", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:
        if args.debug:
            raise
        print(
            f"grader: internal error (a bug in the kit; rerun with --debug and report it): "
            f"{traceback.format_exc().splitlines()[-1]}",
            file=sys.stderr,
        )
        return EXIT_USAGE
