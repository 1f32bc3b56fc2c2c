"""``grader``'s argument parser: the subcommands of ``grader.cli.student_parsers`` and
``grader.cli.staff_parsers`` in the order help lists them, the staff ones left out of the
student edition."""

from __future__ import annotations

import argparse

from grader import __version__
from grader.cli import staff_parsers as staff
from grader.cli import student_parsers as students
from grader.cli.options import STAFF, SubParsers
from grader.inputs.catalog import DEFAULT_CHAPTER, is_student_edition


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


def build_parser() -> argparse.ArgumentParser:
    """``grader``'s parser: one ``add_<command>`` per subcommand, in the order help lists them."""
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
        students.add_start,
        students.add_chapter_text,
        students.add_tests,
        students.add_rules,
        students.add_tdd,
        students.add_check,
        staff.add_batch,
        staff.add_manifest,
        staff.add_merge,
        staff.add_mine,
        staff.add_override,
        staff.add_replay,
        staff.add_regrade,
        staff.add_gradescope_bundle,
        staff.add_release,
        students.add_diff,
        students.add_audit,
        students.add_help,
    ):
        add(student or subparsers)
    parser.staff_commands = tuple(student.staff) if student else ()  # type: ignore[attr-defined]
    return parser


def stage_first(argv: list[str]) -> list[str]:
    """Let ``grader tdd red ds.07`` (the stage first, as ``tox -e red -- ds.07`` writes it)
    mean ``grader tdd ds.07 red``."""
    if "tdd" in argv:
        at = argv.index("tdd") + 1
        stage_then_word = len(argv) > at + 1 and argv[at] in ("red", "green")
        if stage_then_word and not argv[at + 1].startswith("-"):
            argv = [*argv[:at], argv[at + 1], argv[at], *argv[at + 2 :]]
    return argv
