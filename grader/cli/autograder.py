"""The Gradescope autograder's entry point: ``python -m grader.cli.autograder --root /autograder``.

Gradescope runs ``setup.sh`` once to build its image, then ``run_autograder``
once per submission, which runs this module. It finds the submission's files,
grades them, prints the check to the autograder's log and writes
``results/results.json``. The root comes from ``--root`` (``AUTOGRADER_ROOT``
in the scripts), so the kit's tests run the same code against a temporary folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from grader.commands.check import check
from grader.course.gradescope_history import read_metadata, submission_tier
from grader.errors import describe
from grader.grading.jobs import Limits
from grader.grading.witness import at_tier
from grader.inputs.catalog import DEFAULT_CHAPTER, Chapter, load_chapter
from grader.inputs.dependencies import REF_DEPS_HINT, DependencyProblem
from grader.inputs.locate import RefusedSubmission, locate
from grader.output.files import ReportFiles, write_atomically, write_reports
from grader.output.gradescope import not_graded_json, refused_json
from grader.output.terminal import render_check
from grader.sandbox.levels import ISOLATION_CHOICES


def run_autograder(root: Path, chapter: Chapter, limits: Limits | None = None) -> bool:
    """Grade ``root/submission`` into ``root/results/results.json``; ``False`` if it could not.

    Survivors are shown at the witness tier the submission's history gives
    (``grader.course.gradescope_history``, from ``root/submission_metadata.json``).
    The submission's files may lie anywhere in it (``grader.inputs.locate``). Whatever
    happens, a results file is written: when the kit itself fails, it scores
    0 and says so, and staff see the error in the autograder's output.
    """
    results = root / "results" / "results.json"
    submission = root / "submission"
    console = Console(width=100)
    shown = submission_tier(chapter.witnesses, read_metadata(root / "submission_metadata.json"))
    chapter = at_tier(chapter, shown.tier)
    console.print(f"survivors shown at witness tier {shown.tier} ({shown.why})")
    try:
        located = locate(chapter, submission)
    except RefusedSubmission as refused:  # the student's to fix: say so, as a fail
        console.print(f"grader: {refused.message}")
        write_atomically(results, refused_json(refused.message))
        return True
    try:
        report = check(located, submission, limits or Limits(), compare_copies=True)
    except DependencyProblem as problem:  # the student's to fix (or staff's: --ref-deps)
        console.print(f"grader: {problem.message}")
        write_atomically(results, refused_json(problem.message.replace(REF_DEPS_HINT, "")))
        return True
    except Exception as error:  # the student still gets a results file that explains
        message = describe(error)
        console.print(f"grader: could not grade the submission: {message}")
        write_atomically(results, not_graded_json(message))
        return False
    render_check(console, chapter, report)
    extra = shown.extra_data(valid=report.mutation is not None)
    write_reports(chapter, report, ReportFiles(gradescope=results, gradescope_extra=extra))
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m grader.cli.autograder --root /autograder``: what ``run_autograder`` runs."""
    parser = argparse.ArgumentParser(prog="python -m grader.cli.autograder", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("/autograder"))
    parser.add_argument(
        "--isolation",
        choices=list(ISOLATION_CHOICES),
        default="best",
        help="as for grader check: below it, no grade, and results.json says why",
    )
    parser.add_argument(
        "--ref-deps",
        action="store_true",
        help="as for grader check: the kit's copy of each earlier chapter's module",
    )
    args = parser.parse_args(argv)
    limits = Limits(isolation=ISOLATION_CHOICES[args.isolation], ref_deps=args.ref_deps)
    graded = run_autograder(args.root, load_chapter(DEFAULT_CHAPTER), limits)
    return 0 if graded else 1


if __name__ == "__main__":
    sys.exit(main())
