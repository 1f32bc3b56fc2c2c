"""Re-make the command reference (``docs/reference.md``) from the ``grader`` parser.

The page holds each command's ``--help`` between ``<!-- help: grader ... -->``
and ``<!-- end help -->`` markers, drawn at a fixed width, and between
``<!-- takes -->`` and ``<!-- end takes -->`` which commands take
``--submission`` and the chapter id; the prose around them is left as it is.
After a change to an option, run ``python tools/refresh_docs.py``; ``--check``
changes nothing and exits 1 if the page is out of date (the kit's tests run
it), so the reference cannot drift from the parser.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from grader.cli import build_parser

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference.md"
WIDTH = "100"
BLOCK = re.compile(r"(<!-- help: (grader[^>]*?) -->\n)(.*?)(<!-- end help -->)", re.S)
TAKES = re.compile(r"(<!-- takes -->\n)(.*?)(<!-- end takes -->)", re.S)


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: sub for action in subparsers for name, sub in action.choices.items()}


def takes_sentence() -> str:
    """Which commands take ``--submission DIR`` and which the chapter id, read off the parser."""
    commands = _commands()

    def listed(names: list[str]) -> str:
        return ", ".join(f"`{name}`" for name in names)

    submission = [
        name
        for name, sub in commands.items()
        if any("--submission" in action.option_strings for action in sub._actions)
    ]
    chapter = [
        name
        for name, sub in commands.items()
        if any(action.dest == "chapter" and not action.option_strings for action in sub._actions)
    ]
    without = [name for name in commands if name not in submission]
    others = [name for name in commands if name not in chapter]
    return (
        f"These take `--submission DIR` (default `submission/`): {listed(submission)}; "
        f"{listed(without)} do not. Every command but {listed(others)} takes the chapter id "
        "as an optional first argument (`grader check ds.07`).\n"
    )


def help_texts() -> dict[str, str]:
    """Every command's ``--help`` by its name (``grader``, ``grader check``, ...)."""
    parser = build_parser()
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    parsers = {"grader": parser} | {
        f"grader {name}": sub for action in subparsers for name, sub in action.choices.items()
    }
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH  # argparse wraps at the terminal's width
    try:
        return {name: each.format_help() for name, each in parsers.items()}
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def refreshed(page: str, texts: dict[str, str]) -> str:
    """``page`` with every help block drawn again, and a block added for a command it lacks."""
    seen: set[str] = set()

    def draw(match: re.Match[str]) -> str:
        seen.add(match[2])
        text = texts.get(match[2], f"{match[2]} is no longer a command\n")
        return f"{match[1]}```text\n{text}```\n{match[4]}"

    page = BLOCK.sub(draw, page)
    page = TAKES.sub(lambda match: f"{match[1]}{takes_sentence()}{match[3]}", page)
    for name in (name for name in texts if name not in seen):
        block = f"<!-- help: {name} -->\n```text\n{texts[name]}```\n<!-- end help -->\n"
        page += f"\n## `{name}`\n\n{block}"
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    new = refreshed(page, help_texts())
    if new == page:
        print(f"{PAGE.name}: up to date")
        return 0
    if args.check:
        print(f"{PAGE.name}: out of date; run python tools/refresh_docs.py")
        return 1
    PAGE.write_text(new, encoding="utf-8")
    print(f"{PAGE.name}: rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
