"""The ``grader`` command line: each subcommand parses, calls one library function, renders.

Failures the user can act on arrive as ``GraderError`` and leave as one line
on stderr with its exit code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from grader import __version__
from grader.catalog import CHAPTERS, DEFAULT_CHAPTER, Chapter, load_chapter
from grader.chapter_text import read_chapter_text
from grader.commands.audit import run_audit
from grader.commands.batch import grade_batch, student_names
from grader.commands.bundle import build_bundle
from grader.commands.check import CheckReport, Limits, check
from grader.commands.class_view import load_report
from grader.commands.diff import diff_against_reference
from grader.commands.gradebook import GRADEBOOK, read_gradebook, untext
from grader.commands.manifest import (
    Manifest,
    build_manifest,
    manifest_json,
    parse_shard,
    read_manifest,
    shard,
    stale_entries,
)
from grader.commands.merge import merge_outputs
from grader.commands.release import build_release
from grader.commands.replay import regrade_class, replay_report
from grader.commands.tdd import TIME_LIMIT as TDD_TIME_LIMIT
from grader.commands.tdd import run_tdd
from grader.errors import (
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_PASS,
    EXIT_USAGE,
    GraderError,
    GraderStopped,
)
from grader.output.audit import audit_mutation_report_json, audit_to_json
from grader.output.check_json import report_to_json
from grader.output.files import ReportFiles, with_mutant_titles, write_atomically, write_reports
from grader.output.summary import append_step_summary
from grader.output.terminal import (
    render_audit,
    render_batch,
    render_bundle,
    render_catalog,
    render_chapter,
    render_check,
    render_diff,
    render_manifest,
    render_merge,
    render_regrade,
    render_release,
    render_replay,
    render_rules,
    render_start,
    render_tdd,
)
from grader.output.wording import limits_sentence
from grader.regrade import ResultCache
from grader.roster import read_roster
from grader.sandbox.confine import ISOLATION_CHOICES
from grader.static_rules import RULES
from grader.submission import DEFAULT_FOLDER, start_submission
from grader.witness import TIERS, for_context

Command = Callable[[argparse.Namespace, Chapter, Console], int]


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


def cmd_start(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_start(console, chapter, start_submission(chapter, args.submission, force=args.force))
    return EXIT_PASS


def cmd_tests(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_catalog(console, for_context(chapter, "local"))
    return EXIT_PASS


def cmd_rules(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_rules(console, chapter, tuple(RULES.values()), args.examples)
    return EXIT_PASS


def cmd_chapter(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_chapter(console, read_chapter_text(chapter))
    return EXIT_PASS


def cmd_tdd(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    result = run_tdd(chapter, args.submission, args.stage, ref_deps=args.ref_deps)
    render_tdd(console, chapter, result)
    return EXIT_PASS if result.ok else EXIT_FAIL


def cmd_diff(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    diff = diff_against_reference(chapter, args.submission, ref_deps=args.ref_deps)
    render_diff(console, chapter, diff)
    return EXIT_PASS


def cmd_check(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    chapter = with_mutant_titles(for_context(chapter, "local", args.witness), args.mutant_titles)
    if args.witness and args.witness != chapter.witness_tier:
        console.print(
            f"note: --witness {args.witness} shows more than the catalog allows here; "
            f"survivors are shown at {chapter.witness_tier}"
        )
    limits = Limits(
        course_tests=args.time_limit,
        student_tests=args.tests_time_limit or args.time_limit,
        isolation=ISOLATION_CHOICES[args.isolation],
        ref_deps=args.ref_deps,
    )
    progress = progress_bar()
    with progress:
        task = progress.add_task("starting", total=None)
        report = check(
            chapter,
            args.submission,
            limits,
            progress=lambda phase, done, total: progress.update(
                task, description=phase, completed=done, total=total or None
            ),
            cache=None if args.no_cache else ResultCache(),
        )
    render_check(console, chapter, report)
    if args.json:
        write_atomically(args.json, report_to_json(report, chapter))
    files = ReportFiles(
        args.gradescope, args.junit, args.mutation_report, args.html, args.classroom
    )
    write_reports(chapter, report, files)
    append_step_summary(chapter, report)
    return EXIT_PASS if report.verdict == "pass" else EXIT_FAIL


def cmd_audit(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    if args.submission is not None and ISOLATION_CHOICES[args.isolation] != "none":
        raise GraderError(
            "grader audit --submission runs the submission's tests under mutmut, outside the "
            "sandbox, so it cannot confine them: it refuses any --isolation but best; audit "
            "only tests you trust"
        )
    progress = progress_bar()
    with progress:
        task = progress.add_task("audit", total=None)
        report = run_audit(
            chapter,
            None if args.course else args.submission,
            functions=args.function,
            jobs=args.jobs,
            progress=lambda phase, done, total: progress.update(
                task, description=phase, completed=done, total=total or None
            ),
        )
    render_audit(console, report)
    if args.json:
        write_atomically(args.json, audit_to_json(report))
    if args.mutation_report:
        write_atomically(args.mutation_report, audit_mutation_report_json(report))
    return EXIT_PASS if report.suite == "submission" or report.clean else EXIT_FAIL


def text_report(chapter: Chapter, report: CheckReport) -> str:
    """The report as ``grader check`` prints it, as plain text at 100 columns (batch writes it
    beside each student's JSON)."""
    console = Console(file=io.StringIO(), width=100, color_system=None, record=True)
    render_check(console, chapter, report)
    return console.export_text()


def _batch_limits(args: argparse.Namespace) -> Limits:
    return Limits(
        course_tests=args.time_limit,
        student_tests=args.time_limit,
        isolation=ISOLATION_CHOICES[args.isolation],
        ref_deps=getattr(args, "ref_deps", False),  # merge grades no student's code
    )


def _class_manifest(args: argparse.Namespace, chapter: Chapter) -> Manifest:
    """The class batch grades: the manifest given, or one made of the folders given."""
    if args.manifest is not None:
        if args.folders:
            raise GraderError("give the class as folders or as --manifest, not both")
        return read_manifest(args.manifest, chapter)
    if not args.folders:
        raise GraderError("give the submission folders, or --manifest FILE")
    return build_manifest(chapter, args.folders, student_names(args.folders))


def cmd_batch(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    limits = _batch_limits(args)
    chapter = for_context(chapter, "staff")
    if args.canvas is not None and args.roster is None:
        raise GraderError("--canvas needs --roster: the Canvas file names students by their ids")
    roster = read_roster(args.roster) if args.roster is not None else None
    if args.shard is None and args.manifest is None:
        if not args.folders:
            raise GraderError("give the submission folders, or --manifest FILE")
        folders, names = list(args.folders), student_names(args.folders)
    else:
        manifest = _class_manifest(args, chapter)
        entries = shard(manifest, *parse_shard(args.shard)) if args.shard else manifest.entries
        if args.manifest is not None:
            stale = stale_entries(chapter, entries)
            if stale:
                raise GraderError(
                    f"the manifest is stale: the files of {', '.join(stale)} changed since it "
                    "was written; write it again with grader manifest"
                )
        folders, names = [e.folder for e in entries], [e.student for e in entries]
    progress = progress_bar()
    with progress:
        task = progress.add_task("submissions", total=len(folders))
        result = grade_batch(
            chapter,
            folders,
            args.out,
            limits,
            args.jobs,
            progress=lambda student, done, total: progress.update(
                task, completed=done, description=f"graded {student}"
            ),
            roster=roster,
            canvas=args.canvas,
            assignment=args.canvas_assignment,
            names=names,
            text_report=text_report,
        )
    render_batch(console, result)
    return EXIT_PASS


def cmd_manifest(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    expected: dict[str, float] = {}
    if args.previous is not None:  # each student's seconds last time, to balance the shards
        for key, cells in read_gradebook(args.previous / GRADEBOOK).items():
            report = load_report(args.previous, cells)
            if report is not None and report.timings.get("total"):
                expected[untext(key)] = report.timings["total"]
    manifest = build_manifest(chapter, args.folders, student_names(args.folders), expected)
    write_atomically(args.output, manifest_json(manifest, args.output.parent))
    render_manifest(console, manifest, args.output)
    return EXIT_PASS


def cmd_merge(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    if args.canvas is not None and args.roster is None:
        raise GraderError("--canvas needs --roster: the Canvas file names students by their ids")
    roster = read_roster(args.roster) if args.roster is not None else None
    limits = _batch_limits(args)
    result = merge_outputs(
        chapter, args.out, args.shards, limits, roster, args.canvas, args.canvas_assignment
    )
    render_merge(console, result)
    return EXIT_FAIL if result.conflicts else EXIT_PASS


def cmd_replay(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    replay = replay_report(chapter, args.report, args.submission)
    render_replay(console, replay)
    return EXIT_PASS if replay.identical and not replay.key_changes else EXIT_FAIL


def cmd_regrade(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    regrade = regrade_class(chapter, args.out, args.jobs, ISOLATION_CHOICES[args.isolation])
    render_regrade(console, regrade)
    return EXIT_FAIL if regrade.changed else EXIT_PASS


def cmd_gradescope_bundle(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_bundle(console, build_bundle(args.output))
    return EXIT_PASS


def cmd_release(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_release(console, build_release("staff" if args.staff else "student", args.output))
    return EXIT_PASS


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


SubParsers = argparse._SubParsersAction  # the object ``add_subparsers`` returns
"""argparse's type for the subcommand table (a private name, the one typeshed exports)."""


def _add_command(
    subparsers: SubParsers[argparse.ArgumentParser], name: str, func: Command, help_text: str
) -> argparse.ArgumentParser:
    """A subcommand whose help line (in ``grader --help``) is also its description."""
    sub = subparsers.add_parser(name, help=help_text, description=help_text)
    sub.set_defaults(func=func)
    return sub


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
        help="best: confine student code as far as this machine allows (default); required: "
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


def _add_start(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_tests(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
    sub = _add_command(
        subparsers,
        "tests",
        cmd_tests,
        "list the course tests, the tests you must write, and the mutants",
    )
    _add_chapter(sub)
    _add_submission(sub)


def _add_rules(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_chapter_text(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
    sub = _add_command(
        subparsers,
        "chapter",
        cmd_chapter,
        "read the chapter: why the tree, how it works, a worked example, the interface, "
        "the tests and the pitfalls (Markdown when piped)",
    )
    _add_chapter(sub)


def _add_tdd(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_check(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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
        "docs/witnesses.md); never more",
    )
    _add_time_limit(sub, "time limit of the course tests and of your tests on the reference")
    _add_isolation(sub)
    sub.add_argument(
        "--no-cache",
        action="store_true",
        help="run every phase again, even those whose files and kit are unchanged since an "
        "earlier check (kept in the grader's own cache folder, never in the submission)",
    )
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


def _add_batch(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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
    _add_time_limit(
        sub, "time limit of the course tests and of each student's tests on the reference"
    )
    _add_roster_and_canvas(sub)


def _add_manifest(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_merge(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_replay(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_regrade(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_gradescope_bundle(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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


def _add_release(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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
        help="the student edition: leaves out what the catalog marks staff-only",
    )
    edition.add_argument("--staff", action="store_true", help="the staff edition: the whole kit")
    sub.add_argument(
        "--output",
        "-o",
        type=Path,
        default=Path("dist"),
        metavar="DIR",
        help="the folder to write the wheel and constraints.txt into (default dist)",
    )


def _add_diff(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
    sub = _add_command(
        subparsers,
        "diff",
        cmd_diff,
        "show your radix.py against the reference, once the course tests pass",
    )
    _add_chapter(sub)
    _add_submission(sub)
    _add_ref_deps(sub)


def _add_audit(subparsers: SubParsers[argparse.ArgumentParser]) -> None:
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
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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
        _add_replay,
        _add_regrade,
        _add_gradescope_bundle,
        _add_release,
        _add_diff,
        _add_audit,
    ):
        add(subparsers)
    return parser


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


def _stage_first(argv: list[str]) -> list[str]:
    """Let ``grader tdd red ds.07`` (the stage first, as ``tox -e red -- ds.07`` writes it)
    mean ``grader tdd ds.07 red``."""
    if "tdd" in argv:
        at = argv.index("tdd") + 1
        stage_then_word = len(argv) > at + 1 and argv[at] in ("red", "green")
        if stage_then_word and not argv[at + 1].startswith("-"):
            argv = [*argv[:at], argv[at + 1], argv[at], *argv[at + 2 :]]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(_stage_first(list(sys.argv[1:] if argv is None else argv)))
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
    except GraderStopped as stopped:
        name = signal.Signals(stopped.signum).name
        print(f"grader: stopped by {name}; no files were left behind", file=sys.stderr)
        return 128 + stopped.signum
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
