"""The subcommands' handlers: each parses its arguments into a call of one library function
(a command of ``grader.commands``), then renders the result and names the exit code."""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable
from dataclasses import replace

from rich.console import Console

from grader.cli.progress import StepLog, progress_bar
from grader.commands.check import check
from grader.errors import (
    EXIT_FAIL,
    EXIT_PASS,
    EXIT_USAGE,
    GraderError,
)
from grader.grading.jobs import Limits
from grader.grading.result_cache import ResultCache
from grader.grading.witness import for_context
from grader.inputs.catalog import Chapter, help_topics
from grader.inputs.chapter_text import read_chapter_text
from grader.inputs.submission import start_submission
from grader.output.files import ReportFiles, with_mutant_titles, write_atomically, write_reports
from grader.output.terminal import (
    render_audit,
    render_batch,
    render_bundle,
    render_catalog,
    render_chapter,
    render_check,
    render_diff,
    render_help,
    render_help_topics,
    render_manifest,
    render_merge,
    render_mining,
    render_override,
    render_regrade,
    render_release,
    render_replay,
    render_rules,
    render_start,
    render_tdd,
)
from grader.results.batch import Manifest
from grader.results.check import CheckReport
from grader.results.kit import Edition
from grader.sandbox.levels import ISOLATION_CHOICES
from grader.sandbox.protocol.status import Verdict
from grader.static.rules import RULES

Command = Callable[[argparse.Namespace, Chapter, Console], int]


def cmd_start(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_start(console, chapter, start_submission(chapter, args.submission, force=args.force))
    return EXIT_PASS


def cmd_tests(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_catalog(console, for_context(chapter, "local"))
    return EXIT_PASS


def cmd_rules(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_rules(console, chapter, tuple(RULES.values()), args.examples)
    return EXIT_PASS


def cmd_help(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    topics = help_topics()
    if args.topic is None:
        render_help_topics(
            console, {topic: path.read_text("utf-8") for topic, path in topics.items()}
        )
        return EXIT_PASS
    if args.topic not in topics:
        raise GraderError(
            f"no help on {args.topic!r}: the topics are {', '.join(topics)}", exit_code=EXIT_USAGE
        )
    render_help(console, topics[args.topic].read_text(encoding="utf-8"), tuple(topics))
    return EXIT_PASS


def cmd_chapter(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    render_chapter(console, read_chapter_text(chapter))
    return EXIT_PASS


def cmd_tdd(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.tdd import run_tdd

    result = run_tdd(chapter, args.submission, args.stage, ref_deps=args.ref_deps)
    render_tdd(console, chapter, result)
    return EXIT_PASS if result.ok else EXIT_FAIL


def cmd_diff(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.diff import diff_with_summary

    limits = Limits(ref_deps=args.ref_deps)
    cache = None if args.no_cache else ResultCache()
    render_diff(console, chapter, diff_with_summary(chapter, args.submission, limits, cache))
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
        every_kill=args.every_kill,
        robustness=args.robustness,
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
    files = ReportFiles(
        args.gradescope,
        args.junit,
        args.mutation_report,
        args.html,
        args.classroom,
        json=args.json,
        step_summary=True,
    )
    write_reports(chapter, report, files)
    return EXIT_PASS if report.verdict == Verdict.PASS else EXIT_FAIL


def cmd_audit(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands import audit

    if args.submission is not None and ISOLATION_CHOICES[args.isolation] != "none":
        raise GraderError(
            "grader audit --submission runs the submission's tests under mutmut, outside the "
            "sandbox, so it cannot confine them: it refuses any --isolation but best; audit "
            "only tests you trust"
        )
    progress = progress_bar()
    with progress:
        task = progress.add_task("audit", total=None)
        report = audit.run_audit(
            chapter,
            None if args.course else args.submission,
            functions=args.function,
            jobs=args.jobs,
            progress=lambda phase, done, total: progress.update(
                task, description=phase, completed=done, total=total or None
            ),
        )
    render_audit(console, report)
    write_reports(
        chapter, report, ReportFiles(json=args.json, mutation_report=args.mutation_report)
    )
    return EXIT_PASS if report.suite == "submission" or report.clean else EXIT_FAIL


def cmd_batch(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.batch import grade_batch, student_names
    from grader.commands.manifest import parse_shard, shard, stale_entries
    from grader.course.roster import read_roster

    limits = _batch_limits(args, chapter)
    chapter = replace(for_context(chapter, "staff"), hand_back_tier=args.tier or "")
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
    with StepLog("batch") as log:
        result = grade_batch(
            chapter,
            folders,
            args.out,
            limits,
            args.jobs,
            progress=log,
            roster=roster,
            canvas=args.canvas,
            assignment=args.canvas_assignment,
            names=names,
            text_report=text_report,
            resume=not args.no_resume,
        )
    render_batch(console, result)
    return EXIT_PASS


def cmd_manifest(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.batch import student_names
    from grader.commands.manifest import build_manifest, manifest_json
    from grader.course.class_view import load_report
    from grader.course.gradebook import GRADEBOOK, read_gradebook, untext

    expected: dict[str, float] = {}
    if args.previous is not None:  # each student's seconds last time, to balance the shards
        for key, cells in read_gradebook(args.previous / GRADEBOOK).items():
            report = load_report(args.previous, cells)
            if report is not None and report.timings.get("total"):
                expected[untext(key)] = report.timings["total"]
    with StepLog("manifest") as log:
        names = student_names(args.folders)
        manifest = build_manifest(chapter, args.folders, names, expected, progress=log)
    write_atomically(args.output, manifest_json(manifest, args.output.parent))
    render_manifest(console, manifest, args.output)
    return EXIT_PASS


def cmd_merge(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.merge import merge_outputs
    from grader.course.roster import read_roster

    if args.canvas is not None and args.roster is None:
        raise GraderError("--canvas needs --roster: the Canvas file names students by their ids")
    roster = read_roster(args.roster) if args.roster is not None else None
    limits = _batch_limits(args, chapter)
    with StepLog("merge") as log:
        result = merge_outputs(
            chapter,
            args.out,
            args.shards,
            limits,
            roster,
            args.canvas,
            args.canvas_assignment,
            progress=log,
        )
    render_merge(console, result)
    return EXIT_FAIL if result.conflicts or result.refused else EXIT_PASS


def cmd_mine(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.manifest import parse_shard
    from grader.commands.mine import mine

    part = parse_shard(args.shard) if args.shard else None
    # mining asks which tests catch which bugs, with the graded seed alone
    limits = replace(_batch_limits(args, chapter), every_kill=False, robustness=0)
    with StepLog("mine") as log:
        result = mine(chapter, args.out, limits, args.jobs, args.names, part, progress=log)
    render_mining(console, result)
    return EXIT_PASS


def cmd_override(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.override import override_grade
    from grader.course.roster import read_roster

    if args.canvas is not None and args.roster is None:
        raise GraderError("--canvas needs --roster: the Canvas file names students by their ids")
    roster = read_roster(args.roster) if args.roster is not None else None
    result = override_grade(
        chapter,
        args.out,
        args.student,
        args.grade,
        args.why,
        _batch_limits(args, chapter),
        roster,
        args.canvas,
        args.canvas_assignment,
    )
    render_override(console, result)
    return EXIT_PASS


def cmd_replay(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.replay import replay_report

    isolation = ISOLATION_CHOICES[args.isolation]
    replay = replay_report(chapter, args.report, args.submission, isolation)
    render_replay(console, replay)
    return EXIT_PASS if replay.identical and not replay.key_changes else EXIT_FAIL


def cmd_regrade(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.replay import regrade_class
    from grader.course.overrides import read_overrides
    from grader.output.regrade_json import regrade_json

    with StepLog("regrade") as log:
        regrade = regrade_class(
            chapter, args.out, args.jobs, ISOLATION_CHOICES[args.isolation], progress=log
        )
    overrides = read_overrides(args.out, chapter.grade_scale)
    render_regrade(console, regrade, args.details, overrides)
    if args.json is not None:
        write_atomically(args.json, regrade_json(regrade, overrides))
    return EXIT_FAIL if regrade.changed else EXIT_PASS


def cmd_gradescope_bundle(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.bundle import build_bundle

    render_bundle(console, build_bundle(args.output))
    return EXIT_PASS


def cmd_release(args: argparse.Namespace, chapter: Chapter, console: Console) -> int:
    from grader.commands.release import build_release

    if args.after_due and args.staff:
        raise GraderError("--after-due is for the student edition: the staff edition has it all")
    edition: Edition = "staff" if args.staff else "student"
    render_release(console, build_release(edition, args.output, after_due=args.after_due))
    return EXIT_PASS


def text_report(chapter: Chapter, report: CheckReport) -> str:
    """The report as ``grader check`` prints it, as plain text at 100 columns (batch writes it
    beside each student's JSON)."""
    console = Console(file=io.StringIO(), width=100, color_system=None, record=True)
    render_check(console, chapter, report)
    return console.export_text()


def _batch_limits(args: argparse.Namespace, chapter: Chapter) -> Limits:
    return Limits(
        course_tests=args.time_limit,
        student_tests=args.time_limit,
        isolation=ISOLATION_CHOICES[args.isolation],
        ref_deps=getattr(args, "ref_deps", False),  # merge grades no student's code
        # copy detection compares what each test kills: a class is graded on every kill
        every_kill=not getattr(args, "first_kills", False),
        # the catalog's further seeds: every student's kills rerun with the same ones
        robustness=chapter.robustness.seeds,
    )


def _class_manifest(args: argparse.Namespace, chapter: Chapter) -> Manifest:
    """The class batch grades: the manifest given, or one made of the folders given."""
    from grader.commands.batch import student_names
    from grader.commands.manifest import build_manifest, read_manifest

    if args.manifest is not None:
        if args.folders:
            raise GraderError("give the class as folders or as --manifest, not both")
        return read_manifest(args.manifest, chapter)
    if not args.folders:
        raise GraderError("give the submission folders, or --manifest FILE")
    return build_manifest(chapter, args.folders, student_names(args.folders))
