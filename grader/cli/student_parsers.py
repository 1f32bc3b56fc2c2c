"""The subcommands a student runs: each ``add_<command>`` adds its options and the handler
it calls (``grader.cli.handlers``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.cli.handlers import (
    cmd_audit,
    cmd_chapter,
    cmd_check,
    cmd_diff,
    cmd_help,
    cmd_rules,
    cmd_start,
    cmd_tdd,
    cmd_tests,
)
from grader.cli.options import (
    SubParsers,
    add_chapter,
    add_command,
    add_isolation,
    add_jobs,
    add_json_and_mutation_report,
    add_no_cache,
    add_ref_deps,
    add_submission,
    add_time_limit,
    default_limits,
    positive_seconds,
    seed_count,
)
from grader.commands.tdd import TIME_LIMIT as TDD_TIME_LIMIT
from grader.grading.witness import TIERS
from grader.grading.wording import limits_sentence
from grader.inputs.catalog import help_topics


def add_start(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "start",
        cmd_start,
        "create the submission folder from the stub and the test skeleton",
    )
    add_chapter(sub)
    add_submission(sub)
    sub.add_argument(
        "--force",
        action="store_true",
        help="replace existing files, after saving them beside themselves",
    )


def add_chapter_text(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "chapter",
        cmd_chapter,
        "read the chapter: why the tree, how it works, a worked example, the interface, "
        "the tests and the pitfalls (Markdown when piped)",
    )
    add_chapter(sub)


def add_tests(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "tests",
        cmd_tests,
        "list the course tests, the tests you must write, and the mutants",
    )
    add_chapter(sub)
    add_submission(sub)


def add_rules(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "rules",
        cmd_rules,
        "list the static rules your test file must follow: each code, name and why",
    )
    add_chapter(sub)
    sub.add_argument(
        "--examples",
        action="store_true",
        help="also show, for each rule, a file that breaks it and one that keeps it",
    )


def add_tdd(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "tdd",
        cmd_tdd,
        "red: your tests must fail on the stub; green: they must pass on your code",
    )
    sub.epilog = (
        f"Each run of your tests may take {TDD_TIME_LIMIT:g} s; tdd names the slowest tests "
        "and warns of any slower than the chapter allows (grader tests says how slow)."
    )
    add_chapter(sub)
    sub.add_argument("stage", choices=["red", "green"], help="which stage to check")
    add_submission(sub)
    add_ref_deps(sub)


def add_kills(sub: argparse.ArgumentParser) -> None:
    """How far ``check`` looks at each kill: every killer, and further seeds."""
    sub.add_argument(
        "--every-kill",
        action="store_true",
        help="run every one of your tests on every mutant, not only up to the first that "
        "fails on it: slower, the same score, and each mutant then lists every test that kills "
        "it (the worth table shows which tests repeat another's kills)",
    )
    sub.add_argument(
        "--robustness",
        type=seed_count,
        default=0,
        metavar="K",
        help="rerun each kill made by a test that draws examples (hypothesis's @given, a state "
        "machine) with K further seeds, the same for everyone, and say on how many of the K+1 "
        "it holds: lucky kills and robust ones (the grade stays on the first seed; default 0)",
    )


def add_check(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "check",
        cmd_check,
        "grade your code with the course tests and your tests with the mutants",
    )
    sub.epilog = f"Default {limits_sentence(default_limits())}."
    add_chapter(sub)
    add_submission(sub)
    add_json_and_mutation_report(sub)
    add_ref_deps(sub)
    add_kills(sub)
    sub.add_argument(
        "--gradescope", type=Path, metavar="FILE", help="also write a Gradescope results.json"
    )
    sub.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML")
    sub.add_argument(
        "--classroom",
        type=Path,
        metavar="FILE",
        help="also write the points for GitHub Classroom's autograding reporter (base64 JSON)",
    )
    sub.add_argument(
        "--html", type=Path, metavar="FILE", help="also write the mutation report as a web page"
    )
    sub.add_argument(
        "--mutant-titles",
        choices=["catalog", "show", "hide"],
        default="catalog",
        help="show survivors' titles (the planted bug) in every report, hide them, or do as "
        "the catalog says (default)",
    )
    sub.add_argument(
        "--witness",
        choices=list(TIERS),
        metavar="TIER",
        help="show less of each survivor than the catalog's tier for your machine: "
        f"{', '.join(TIERS)} (each shows what the one before does, and more; see "
        "grader help witnesses); never more",
    )
    add_time_limit(sub, "time limit of the course tests and of your tests on the reference")
    add_isolation(sub)
    add_no_cache(sub)
    sub.add_argument(
        "--tests-time-limit",
        type=positive_seconds,
        metavar="SECONDS",
        help="time limit of your tests on the reference alone (default: --time-limit)",
    )


def add_diff(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "diff",
        cmd_diff,
        "show your radix.py against the reference, once the course tests pass",
    )
    add_chapter(sub)
    add_submission(sub)
    add_ref_deps(sub)
    add_no_cache(sub)


def add_audit(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "audit",
        cmd_audit,
        "mutmut's generated mutants of the reference against the course tests or your tests "
        "(slow; information only, never part of the grade)",
    )
    add_chapter(sub)
    suite = sub.add_mutually_exclusive_group(required=True)
    suite.add_argument("--course", action="store_true", help="staff: audit the course tests")
    suite.add_argument(
        "--submission", type=Path, metavar="DIR", help="audit the tests of this submission folder"
    )
    add_isolation(sub)
    add_json_and_mutation_report(sub)
    sub.add_argument(
        "--function",
        action="append",
        default=[],
        metavar="NAME",
        help="mutate only this function (RadixTree.insert or insert); repeat for more",
    )
    add_jobs(sub, None, "mutants tested at once (default: the CPUs)")


def add_help(subparsers: SubParsers) -> None:
    topics = help_topics()
    sub = add_command(
        subparsers,
        "help",
        cmd_help,
        "read a part of the kit's documentation, as the pointers in messages name it; "
        "with no TOPIC, the list of topics",
    )
    sub.add_argument(
        "topic",
        nargs="?",
        metavar="TOPIC",
        help=f"one of: {', '.join(topics)}" if topics else "a topic",
    )
