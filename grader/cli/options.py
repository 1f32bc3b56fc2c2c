"""The options and argument types several ``grader`` subcommands share, and how a
subcommand is added (``grader.cli.parser`` puts the commands together)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Protocol

from grader.cli.handlers import Command
from grader.grading.jobs import Limits
from grader.inputs.catalog import CHAPTERS, DEFAULT_CHAPTER
from grader.inputs.submission import DEFAULT_FOLDER
from grader.sandbox.levels import ISOLATION_CHOICES


def positive_seconds(text: str) -> float:
    """A time limit: a positive number of seconds."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return seconds


MOST_SEEDS = 20
"""``--robustness``'s ceiling: each further seed reruns every kill by a test that draws
examples once more."""


def seed_count(text: str) -> int:
    """A number of further seeds: a whole number from 0 to ``MOST_SEEDS``."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if not 0 <= count <= MOST_SEEDS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seeds from 0 to {MOST_SEEDS}"
        )
    return count


def positive_count(text: str) -> int:
    """A number of things done at once: a whole number, at least 1."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return count


class SubParsers(Protocol):
    """What the parser's subcommand table (the object ``add_subparsers`` returns) does here:
    add one subcommand's parser. A protocol, since argparse names that type privately."""

    def add_parser(self, name: str, *, help: str, description: str) -> argparse.ArgumentParser: ...


def add_command(
    subparsers: SubParsers, name: str, func: Command, help_text: str
) -> argparse.ArgumentParser:
    """A subcommand whose help line (in ``grader --help``) is also its description."""
    sub = subparsers.add_parser(name, help=help_text, description=help_text)
    sub.set_defaults(func=func)
    return sub


STAFF = "staff:"
"""How a staff command's help line begins: the student edition leaves those commands out."""


def add_chapter(sub: argparse.ArgumentParser, action: type[argparse.Action] | None = None) -> None:
    """The chapter id: every command's optional first positional argument."""
    sub.add_argument(
        "chapter",
        nargs="?",
        default=DEFAULT_CHAPTER,
        choices=None if action else sorted(CHAPTERS),
        action=action or "store",
        metavar="CHAPTER",
        help=f"the chapter id: {', '.join(sorted(CHAPTERS))} (default {DEFAULT_CHAPTER})",
    )


def add_submission(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--submission",
        type=Path,
        default=DEFAULT_FOLDER,
        metavar="DIR",
        help=f"the submission folder (default {DEFAULT_FOLDER})",
    )


DEFAULT_TIME_LIMIT = 120.0
"""``--time-limit``'s default, in seconds."""


def add_time_limit(sub: argparse.ArgumentParser, help_text: str) -> None:
    sub.add_argument(
        "--time-limit",
        type=positive_seconds,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help=f"{help_text} (default {DEFAULT_TIME_LIMIT:g})",
    )


def default_limits() -> Limits:
    """The limits of a check run with no option: what ``--help`` and the chapter state."""
    return Limits(course_tests=DEFAULT_TIME_LIMIT, student_tests=DEFAULT_TIME_LIMIT)


def add_jobs(sub: argparse.ArgumentParser, default: int | None, help_text: str) -> None:
    sub.add_argument("--jobs", type=positive_count, default=default, metavar="N", help=help_text)


def add_isolation(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--isolation",
        choices=list(ISOLATION_CHOICES),
        default="best",
        help="best: confine student code as far as this machine allows (default; as root, "
        "at least as another user, else exit 2 saying what is missing; as an ordinary user, "
        "a practice check); required: "
        "exit 2 without grading unless student code runs as another user (the grader must "
        "be root); namespaces: also require its own PID, network and mount namespaces",
    )


def add_ref_deps(sub: argparse.ArgumentParser) -> None:
    """``--ref-deps``, where a student's implementation runs: the kit's copy of what it needs."""
    sub.add_argument(
        "--ref-deps",
        action="store_true",
        help="run the implementation with the kit's copy of each earlier chapter's module it "
        "needs (`grader tests` names them), not the submission's own",
    )


def add_json_and_mutation_report(sub: argparse.ArgumentParser) -> None:
    """The two report files ``check`` and ``audit`` both write."""
    sub.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON")
    sub.add_argument(
        "--mutation-report",
        type=Path,
        metavar="FILE",
        help="also write the mutation testing report (Stryker's format, schemaVersion 2)",
    )


def add_no_cache(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--no-cache",
        action="store_true",
        help="run every phase again, even those whose files and kit are unchanged since an "
        "earlier check (kept in the grader's own cache folder, never in the submission)",
    )
