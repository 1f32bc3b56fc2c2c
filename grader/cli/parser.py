"""``grader``'s argument parser: one ``_add_<command>`` per subcommand, each with its
options and the handler it calls (``grader.cli.handlers``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from grader import __version__
from grader.cli.handlers import (
    Command,
    cmd_audit,
    cmd_batch,
    cmd_chapter,
    cmd_check,
    cmd_diff,
    cmd_gradescope_bundle,
    cmd_help,
    cmd_manifest,
    cmd_merge,
    cmd_override,
    cmd_regrade,
    cmd_release,
    cmd_replay,
    cmd_rules,
    cmd_start,
    cmd_tdd,
    cmd_tests,
)
from grader.commands.tdd import TIME_LIMIT as TDD_TIME_LIMIT
from grader.grading.jobs import Limits
from grader.grading.witness import TIERS
from grader.grading.wording import limits_sentence
from grader.inputs.catalog import CHAPTERS, DEFAULT_CHAPTER, help_topics, is_student_edition
from grader.inputs.submission import DEFAULT_FOLDER
from grader.sandbox.confine import ISOLATION_CHOICES


def _seconds(text: str) -> float:
    """A time limit: a positive number of seconds."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return seconds


def _count(text: str) -> int:
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


def _add_command(
    subparsers: SubParsers, name: str, func: Command, help_text: str
) -> argparse.ArgumentParser:
    """A subcommand whose help line (in ``grader --help``) is also its description."""
    sub = subparsers.add_parser(name, help=help_text, description=help_text)
    sub.set_defaults(func=func)
    return sub


STAFF = "staff:"
"""How a staff command's help line begins: the student edition leaves those commands out."""


class _StudentEdition:
    """The subcommand table of the student edition: staff commands are not added to it (their
    options go to a parser no one reaches), only their names kept, to say what they are."""

    def __init__(self, subparsers: SubParsers) -> None:
        self.subparsers = subparsers
        self.staff: list[str] = []

    def add_parser(self, name: str, *, help: str, description: str) -> argparse.ArgumentParser:
        if help.startswith(STAFF):
            self.staff.append(name)
            return argparse.ArgumentParser(prog=f"grader {name}", add_help=False)
        return self.subparsers.add_parser(name, help=help, description=description)


def staff_commands(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    """The staff commands ``build_parser`` left out of this edition (none in the staff one)."""
    return tuple(getattr(parser, "staff_commands", ()))


def _add_chapter(sub: argparse.ArgumentParser, action: type[argparse.Action] | None = None) -> None:
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


def _add_submission(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--submission",
        type=Path,
        default=DEFAULT_FOLDER,
        metavar="DIR",
        help=f"the submission folder (default {DEFAULT_FOLDER})",
    )


DEFAULT_TIME_LIMIT = 120.0
"""``--time-limit``'s default, in seconds."""


def _add_time_limit(sub: argparse.ArgumentParser, help_text: str) -> None:
    sub.add_argument(
        "--time-limit",
        type=_seconds,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help=f"{help_text} (default {DEFAULT_TIME_LIMIT:g})",
    )


def default_limits() -> Limits:
    """The limits of a check run with no option: what ``--help`` and the chapter state."""
    return Limits(course_tests=DEFAULT_TIME_LIMIT, student_tests=DEFAULT_TIME_LIMIT)


def _add_jobs(sub: argparse.ArgumentParser, default: int | None, help_text: str) -> None:
    sub.add_argument("--jobs", type=_count, default=default, metavar="N", help=help_text)


def _add_isolation(sub: argparse.ArgumentParser) -> None:
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


def _add_ref_deps(sub: argparse.ArgumentParser) -> None:
    """``--ref-deps``, where a student's implementation runs: the kit's copy of what it needs."""
    sub.add_argument(
        "--ref-deps",
        action="store_true",
        help="run the implementation with the kit's copy of each earlier chapter's module it "
        "needs (`grader tests` names them), not the submission's own",
    )


def _add_json_and_mutation_report(sub: argparse.ArgumentParser) -> None:
    """The two report files ``check`` and ``audit`` both write."""
    sub.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON")
    sub.add_argument(
        "--mutation-report",
        type=Path,
        metavar="FILE",
        help="also write the mutation testing report (Stryker's format, schemaVersion 2)",
    )


def _add_start(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "start",
        cmd_start,
        "create the submission folder from the stub and the test skeleton",
    )
    _add_chapter(sub)
    _add_submission(sub)
    sub.add_argument(
        "--force",
        action="store_true",
        help="replace existing files, after saving them beside themselves",
    )


def _add_tests(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "tests",
        cmd_tests,
        "list the course tests, the tests you must write, and the mutants",
    )
    _add_chapter(sub)
    _add_submission(sub)


def _add_rules(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "rules",
        cmd_rules,
        "list the static rules your test file must follow: each code, name and why",
    )
    _add_chapter(sub)
    sub.add_argument(
        "--examples",
        action="store_true",
        help="also show, for each rule, a file that breaks it and one that keeps it",
    )


def _add_chapter_text(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "chapter",
        cmd_chapter,
        "read the chapter: why the tree, how it works, a worked example, the interface, "
        "the tests and the pitfalls (Markdown when piped)",
    )
    _add_chapter(sub)


def _add_tdd(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "tdd",
        cmd_tdd,
        "red: your tests must fail on the stub; green: they must pass on your code",
    )
    sub.epilog = (
        f"Each run of your tests may take {TDD_TIME_LIMIT:g} s; tdd names the slowest tests "
        "and warns of any slower than the chapter allows (grader tests says how slow)."
    )
    _add_chapter(sub)
    sub.add_argument("stage", choices=["red", "green"], help="which stage to check")
    _add_submission(sub)
    _add_ref_deps(sub)


def _add_check(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "check",
        cmd_check,
        "grade your code with the course tests and your tests with the mutants",
    )
    sub.epilog = f"Default {limits_sentence(default_limits())}."
    _add_chapter(sub)
    _add_submission(sub)
    _add_json_and_mutation_report(sub)
    _add_ref_deps(sub)
    sub.add_argument(
        "--every-kill",
        action="store_true",
        help="run every one of your tests on every mutant, not only up to the first that "
        "fails on it: slower, the same score, and each mutant then lists every test that kills "
        "it (the worth table shows which tests repeat another's kills)",
    )
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
    _add_time_limit(sub, "time limit of the course tests and of your tests on the reference")
    _add_isolation(sub)
    _add_no_cache(sub)
    sub.add_argument(
        "--tests-time-limit",
        type=_seconds,
        metavar="SECONDS",
        help="time limit of your tests on the reference alone (default: --time-limit)",
    )


class _ChapterOrFolder(argparse.Action):
    """``batch``'s optional chapter id before its folders.

    Given two words or more, argparse hands the first to the optional chapter
    argument; when that word is not a chapter id it is the first folder.
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        if values in CHAPTERS:
            namespace.chapter = values
        else:
            namespace.chapter = DEFAULT_CHAPTER
            namespace.folders = [Path(str(values))]


def _add_roster_and_canvas(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--roster",
        type=Path,
        metavar="FILE",
        help="CSV mapping submission folders to student ids (columns submission and id; "
        "Canvas's gradebook export with a submission column added will do)",
    )
    sub.add_argument(
        "--canvas",
        type=Path,
        metavar="FILE",
        help="also write Canvas's grade-import CSV (needs --roster)",
    )
    sub.add_argument(
        "--canvas-assignment",
        metavar="NAME",
        help="the assignment's column in the Canvas file, as Canvas names it, e.g. "
        "'Radix tree (12345)' (default: the chapter id)",
    )


def _add_batch(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "batch",
        cmd_batch,
        "staff: grade many submission folders (one per student) into a gradebook CSV",
    )
    _add_chapter(sub, action=_ChapterOrFolder)
    sub.add_argument(
        "folders", nargs="*", action="extend", type=Path, metavar="DIR", help="submission folders"
    )
    sub.add_argument(
        "--out",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="where to write gradebook.csv, students/NAME.json, .txt and .html, submissions/, "
        "similarity.csv and .html, class.html and .json (default reports)",
    )
    sub.add_argument(
        "--tier",
        choices=TIERS,
        help="how much of each survivor the reports to hand back (students/NAME.txt and "
        ".html) show (docs/witnesses.md); default: the most the catalog shows students before "
        "the due date; NAME.staff-only.txt and NAME.json show the staff's tier",
    )
    sub.add_argument(
        "--manifest",
        type=Path,
        metavar="FILE",
        help="the class as grader manifest listed it, instead of folders",
    )
    sub.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only shard K of N (K from 0, as JOB_COMPLETION_INDEX and a matrix index "
        "count), a fixed slice of the class balanced by expected time",
    )
    _add_jobs(sub, 2, "submissions graded at once (default 2)")
    _add_isolation(sub)
    _add_ref_deps(sub)
    sub.add_argument(
        "--first-kills",
        action="store_true",
        help="stop each mutant's run at the first test that fails on it, as check does: "
        "faster, the same grades, but copy detection then compares only each mutant's first "
        "killer, so a copy with its tests reordered looks less alike",
    )
    sub.add_argument(
        "--no-resume",
        action="store_true",
        help="grade every student again; by default a student whose row in --out was graded "
        "from the same files, kit and settings, at this isolation or a stronger one, is kept",
    )
    _add_time_limit(
        sub, "time limit of the course tests and of each student's tests on the reference"
    )
    _add_roster_and_canvas(sub)


def _add_manifest(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "manifest",
        cmd_manifest,
        "staff: list a class (each folder, sorted by student, with its content hash) for "
        "grading in shards",
    )
    _add_chapter(sub, action=_ChapterOrFolder)
    sub.add_argument(
        "folders", nargs="+", action="extend", type=Path, metavar="DIR", help="submission folders"
    )
    sub.add_argument(
        "--output",
        "-o",
        type=Path,
        default=Path("manifest.json"),
        metavar="FILE",
        help="the manifest to write (default manifest.json); its folders are relative to it",
    )
    sub.add_argument(
        "--previous",
        type=Path,
        metavar="DIR",
        help="an earlier batch's --out: each student's time there balances the shards",
    )


def _add_merge(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "merge",
        cmd_merge,
        "staff: merge the --out folders of shards into one graded class (exit 1 when two "
        "copies of a row disagree)",
    )
    sub.add_argument("out", type=Path, metavar="OUT", help="the class to merge into")
    sub.add_argument(
        "shards", nargs="+", type=Path, metavar="SHARD_OUT", help="the --out folders of shards"
    )
    _add_isolation(sub)
    _add_time_limit(sub, "time limit of the model answer's runs, if copy finding needs them")
    _add_roster_and_canvas(sub)


def _grade(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a grade")
    return value


def _add_override(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "override",
        cmd_override,
        "staff: set a student's grade by hand, with why; every later batch, merge and "
        "regrade keeps and shows it",
    )
    _add_chapter(sub)
    sub.add_argument("out", type=Path, metavar="OUT", help="a batch's --out folder")
    sub.add_argument("student", metavar="STUDENT", help="the student's name in the gradebook")
    sub.add_argument("--grade", type=_grade, required=True, metavar="G", help="the grade of record")
    sub.add_argument(
        "--why", required=True, metavar="TEXT", help="why, in a line: the student is shown it"
    )
    _add_isolation(sub)
    _add_time_limit(sub, "time limit of the model answer's runs, if copy finding needs them")
    _add_roster_and_canvas(sub)


def _add_replay(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "replay",
        cmd_replay,
        "staff: grade a report's submission again with the settings it records (exit 0 when "
        "verdict, grade and every kill are the same)",
    )
    _add_chapter(sub)
    sub.add_argument("report", type=Path, metavar="REPORT", help="a student's JSON report")
    sub.add_argument(
        "--submission",
        type=Path,
        metavar="DIR",
        help="the folder graded (default: the copy batch keeps, OUT/submissions/NAME)",
    )
    _add_isolation(sub)


def _add_regrade(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "regrade",
        cmd_regrade,
        "staff: the release gate: regrade a graded class with the kit installed now and say "
        "whose verdict, grade or kills would change (exit 1 if any); writes nothing",
    )
    _add_chapter(sub)
    sub.add_argument("out", type=Path, metavar="OUT", help="a batch's --out folder")
    _add_jobs(sub, 2, "submissions regraded at once (default 2)")
    _add_isolation(sub)
    sub.add_argument(
        "--details",
        action="store_true",
        help="below the table, every change of every row, whole (default: the rows whose "
        "verdict, grade or kills moved, each value on one line)",
    )
    sub.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write the table and every change as JSON (its schema: "
        "grader/output/schemas/regrade.schema.json)",
    )


def _add_gradescope_bundle(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "gradescope-bundle",
        cmd_gradescope_bundle,
        "staff: build the Gradescope autograder zip from this checkout of the kit",
    )
    sub.add_argument(
        "--output",
        "-o",
        type=Path,
        default=Path("reports/gradescope-autograder.zip"),
        metavar="FILE",
        help="the zip to write (default reports/gradescope-autograder.zip)",
    )


def _add_release(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "release",
        cmd_release,
        "staff: build the kit's wheel for students (no model answer) or for staff (everything)",
    )
    edition = sub.add_mutually_exclusive_group(required=True)
    edition.add_argument(
        "--student",
        action="store_true",
        help="the student edition: only what the catalog's [release] student list allows, "
        "the witnesses at the tier students see before the due date",
    )
    edition.add_argument("--staff", action="store_true", help="the staff edition: the whole kit")
    sub.add_argument(
        "--after-due",
        action="store_true",
        help="with --student: the witnesses at the catalog's after-due tier (a test that "
        "would kill each mutant, at full), for students once the due date has passed",
    )
    sub.add_argument(
        "--output",
        "-o",
        type=Path,
        default=Path("dist"),
        metavar="DIR",
        help="the folder to write the wheel and constraints.txt into (default dist)",
    )


def _add_diff(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "diff",
        cmd_diff,
        "show your radix.py against the reference, once the course tests pass",
    )
    _add_chapter(sub)
    _add_submission(sub)
    _add_ref_deps(sub)
    _add_no_cache(sub)


def _add_no_cache(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--no-cache",
        action="store_true",
        help="run every phase again, even those whose files and kit are unchanged since an "
        "earlier check (kept in the grader's own cache folder, never in the submission)",
    )


def _add_audit(subparsers: SubParsers) -> None:
    sub = _add_command(
        subparsers,
        "audit",
        cmd_audit,
        "mutmut's generated mutants of the reference against the course tests or your tests "
        "(slow; information only, never part of the grade)",
    )
    _add_chapter(sub)
    suite = sub.add_mutually_exclusive_group(required=True)
    suite.add_argument("--course", action="store_true", help="staff: audit the course tests")
    suite.add_argument(
        "--submission", type=Path, metavar="DIR", help="audit the tests of this submission folder"
    )
    _add_isolation(sub)
    _add_json_and_mutation_report(sub)
    sub.add_argument(
        "--function",
        action="append",
        default=[],
        metavar="NAME",
        help="mutate only this function (RadixTree.insert or insert); repeat for more",
    )
    _add_jobs(sub, None, "mutants tested at once (default: the CPUs)")


def build_parser() -> argparse.ArgumentParser:
    """``grader``'s parser: one ``_add_<command>`` per subcommand, in the order help lists them."""
    parser = argparse.ArgumentParser(
        prog="grader",
        description=f"Grade a {DEFAULT_CHAPTER} submission: the course tests judge your code, "
        "planted mutants judge your tests.",
    )
    parser.add_argument("--version", action="version", version=f"grader {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks instead of one-line errors"
    )
    subparsers: SubParsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    student = _StudentEdition(subparsers) if is_student_edition() else None
    for add in (
        _add_start,
        _add_chapter_text,
        _add_tests,
        _add_rules,
        _add_tdd,
        _add_check,
        _add_batch,
        _add_manifest,
        _add_merge,
        _add_override,
        _add_replay,
        _add_regrade,
        _add_gradescope_bundle,
        _add_release,
        _add_diff,
        _add_audit,
        _add_help,
    ):
        add(student or subparsers)
    parser.staff_commands = tuple(student.staff) if student else ()  # type: ignore[attr-defined]
    return parser


def _add_help(subparsers: SubParsers) -> None:
    topics = help_topics()
    sub = _add_command(
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


def stage_first(argv: list[str]) -> list[str]:
    """Let ``grader tdd red ds.07`` (the stage first, as ``tox -e red -- ds.07`` writes it)
    mean ``grader tdd ds.07 red``."""
    if "tdd" in argv:
        at = argv.index("tdd") + 1
        stage_then_word = len(argv) > at + 1 and argv[at] in ("red", "green")
        if stage_then_word and not argv[at + 1].startswith("-"):
            argv = [*argv[:at], argv[at + 1], argv[at], *argv[at + 2 :]]
    return argv
