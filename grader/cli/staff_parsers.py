"""The staff's subcommands (their help lines begin ``staff:``, and the student edition
leaves them out): each ``add_<command>`` adds its options and the handler it calls."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from grader.cli.handlers import (
    cmd_batch,
    cmd_gradescope_bundle,
    cmd_manifest,
    cmd_merge,
    cmd_mine,
    cmd_override,
    cmd_regrade,
    cmd_release,
    cmd_replay,
)
from grader.cli.options import (
    SubParsers,
    add_chapter,
    add_command,
    add_isolation,
    add_jobs,
    add_ref_deps,
    add_time_limit,
)
from grader.grading.witness import TIERS
from grader.inputs.catalog import CHAPTERS, DEFAULT_CHAPTER


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


def add_batch(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "batch",
        cmd_batch,
        "staff: grade many submission folders (one per student) into a gradebook CSV",
    )
    add_chapter(sub, action=_ChapterOrFolder)
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
    add_jobs(sub, 2, "submissions graded at once (default 2)")
    add_isolation(sub)
    add_ref_deps(sub)
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
    add_time_limit(
        sub, "time limit of the course tests and of each student's tests on the reference"
    )
    _add_roster_and_canvas(sub)


def add_manifest(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "manifest",
        cmd_manifest,
        "staff: list a class (each folder, sorted by student, with its content hash) for "
        "grading in shards",
    )
    add_chapter(sub, action=_ChapterOrFolder)
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


def add_merge(subparsers: SubParsers) -> None:
    sub = add_command(
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
    add_isolation(sub)
    add_time_limit(sub, "time limit of the model answer's runs, if copy finding needs them")
    _add_roster_and_canvas(sub)


def add_mine(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "mine",
        cmd_mine,
        "staff: the class's own bugs as mutants: every valid test file of a graded class "
        "against every tree that fails a course test; writes mining.html and mining.json "
        "(never part of a grade)",
    )
    add_chapter(sub)
    sub.add_argument("out", type=Path, metavar="OUT", help="a batch's --out folder")
    sub.add_argument(
        "--names",
        action="store_true",
        help="name students on the page and in the JSON (default: anonymous ids student-NN)",
    )
    sub.add_argument(
        "--shard",
        metavar="K/N",
        help="make only shard K of N's runs (K from 0) into the result cache; a mine without "
        "--shard then takes them again and draws the page",
    )
    add_jobs(sub, 2, "runs at once (default 2)")
    add_isolation(sub)
    add_time_limit(sub, "time limit of each test file's run, as on the reference in batch")


def _grade(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a grade")
    return value


def add_override(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "override",
        cmd_override,
        "staff: set a student's grade by hand, with why; every later batch, merge and "
        "regrade keeps and shows it",
    )
    add_chapter(sub)
    sub.add_argument("out", type=Path, metavar="OUT", help="a batch's --out folder")
    sub.add_argument("student", metavar="STUDENT", help="the student's name in the gradebook")
    sub.add_argument("--grade", type=_grade, required=True, metavar="G", help="the grade of record")
    sub.add_argument(
        "--why", required=True, metavar="TEXT", help="why, in a line: the student is shown it"
    )
    add_isolation(sub)
    add_time_limit(sub, "time limit of the model answer's runs, if copy finding needs them")
    _add_roster_and_canvas(sub)


def add_replay(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "replay",
        cmd_replay,
        "staff: grade a report's submission again with the settings it records (exit 0 when "
        "verdict, grade and every kill are the same)",
    )
    add_chapter(sub)
    sub.add_argument("report", type=Path, metavar="REPORT", help="a student's JSON report")
    sub.add_argument(
        "--submission",
        type=Path,
        metavar="DIR",
        help="the folder graded (default: the copy batch keeps, OUT/submissions/NAME)",
    )
    add_isolation(sub)


def add_regrade(subparsers: SubParsers) -> None:
    sub = add_command(
        subparsers,
        "regrade",
        cmd_regrade,
        "staff: the release gate: regrade a graded class with the kit installed now and say "
        "whose verdict, grade or kills would change (exit 1 if any); writes nothing",
    )
    add_chapter(sub)
    sub.add_argument("out", type=Path, metavar="OUT", help="a batch's --out folder")
    add_jobs(sub, 2, "submissions regraded at once (default 2)")
    add_isolation(sub)
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


def add_gradescope_bundle(subparsers: SubParsers) -> None:
    sub = add_command(
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


def add_release(subparsers: SubParsers) -> None:
    sub = add_command(
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
