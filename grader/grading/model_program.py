"""The model-based course test's shrunk program, in the chapter's words.

Hypothesis reports a failing state machine as the calls of its rules
(``state.insert_some(keys=[(0, 0)], locked=1)``, ``state.tree_agrees_with_the_model()``):
names of the course tests' own making, which a student never met. The catalog's
``[model_program]`` says what each rule does as calls of the interface
(``tree.insert(key=(0, 0))``, ``tree.lock(node=1)``); this module rewrites the
program in a report with them, and names the last call before the check that
failed, where a student's own invariant check found damage done earlier.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from grader.inputs.catalog import Chapter

PROGRAM_START = "Failing test case: <state machine>"
"""How hypothesis opens a failing state machine's program in pytest's report."""
PROGRAM_HEADER = "Failing program, in the chapter's calls"
"""How the program opens once in the chapter's words."""
_LINE = re.compile(
    r"^E(?P<gap>\s+)state(?: = (?P<machine>\w+)\(\)|\.(?P<rule>\w+)\((?P<args>.*)\))$"
)
_EACH = re.compile(r"^for (?P<name>\w+) in (?P<items>\w+)(?:\[:(?P<count>\w+)\])?: (?P<line>.*)$")
MAX_ARGUMENTS = 2000
"""Longest argument text read back (a shrunk program's arguments are a few keys)."""


def in_chapter_words(chapter: Chapter, report: str) -> str:
    """``report`` with its shrunk program, if it has one, in the chapter's calls."""
    words = chapter.model_program
    if PROGRAM_START not in report or not words:
        return report
    rules: Mapping[str, list[str]] = words.get("rules", {})
    kept: list[str] = []
    inside = False
    for line in report.splitlines():
        if line.strip().removeprefix("E").strip() == PROGRAM_START:
            inside = True
            note = f" ({words['note']})" if words.get("note") else ""
            kept.append(f"E   {PROGRAM_HEADER}{note}:")
            continue
        found = _LINE.match(line) if inside else None
        if found is None:
            inside = inside and line.startswith("E")
            kept.append(line)
            continue
        prefix = f"E{found['gap']}"
        if found["machine"]:
            number = re.search(r"(\d+)$", found["machine"])
            start = str(words.get("start", ""))
            kept.append(
                prefix + (start.format(number[1]) if number and start else line[1:].strip())
            )
            continue
        calls = _calls(rules.get(found["rule"]), found["args"])
        kept += [prefix + call for call in calls] if calls is not None else [line]
    return "\n".join(kept)


def last_call(report: str) -> str:
    """The last call of the program (in the chapter's words) before its last check, or
    ``""``: where a tree that a check then rejected was last changed."""
    if PROGRAM_HEADER not in report:
        return ""
    calls = [
        line.removeprefix("E").strip()
        for line in report.split(PROGRAM_HEADER, 1)[1].splitlines()
        if line.startswith("E") and line.removeprefix("E").strip().startswith("tree.")
    ]
    return calls[-1] if calls else ""


def _calls(templates: list[str] | None, arguments: str) -> list[str] | None:
    """The lines of one rule's call, or ``None`` to show it as it is (not listed, or its
    arguments not plain values)."""
    if templates is None or len(arguments) > MAX_ARGUMENTS:
        return None
    try:
        call = ast.parse(f"f({arguments})", mode="eval").body
        assert isinstance(call, ast.Call) and not call.args
        values: dict[str, Any] = {k.arg or "": ast.literal_eval(k.value) for k in call.keywords}
        lines: list[str] = []
        for template in templates:
            each = _EACH.match(template)
            if each is None:
                lines.append(template.format(**values))
                continue
            items = list(values[each["items"]])
            if each["count"]:
                items = items[: int(values[each["count"]])]
            lines += [each["line"].format(**{**values, each["name"]: item}) for item in items]
        return lines
    except (SyntaxError, ValueError, TypeError, KeyError, IndexError, AssertionError):
        return None
