"""Rules a student's test file must follow, checked on its syntax tree before anything runs.

Tests earn kills only by observing behaviour through the public interface.
The wall that enforces it is the process boundary (the implementation under
test runs in a process of its own, and each run is confined by the operating
system: see docs/security.md). This check is the layer that
*explains*: it reads the file first and names, by line, rule and code, what
would reach beyond the interface, change how pytest or hypothesis judge a
test, or make a grade depend on chance, so an honest student learns the rules
from the grader's message rather than from a puzzling run. A rule that stops
no cheating has no place here: an honest, idiomatic test file must pass.

The rules themselves are registered in ``grader.static.rules`` (``grader
rules`` lists them) and read the lists of ``grader.static.lists``. This module
reads the file as Python will (the bytes, with their coding declaration:
``grader.inputs.python_source``) and runs the walk (``grader.static.walk``), which
visits its tree once, hands each node to the rules registered for its type, and
answers the rules' questions about names, each worked out once per scope or node
(``grader.static.scopes``), so the check's cost is linear in the file.
A size limit and a time budget bound it whatever the file holds.

Settings the grader overrides at run time (``deadline``, health checks) are no
error: ``overridden_settings`` names them, and the report carries one note.
"""

from __future__ import annotations

import ast
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

from grader.inputs import python_source
from grader.inputs.hypothesis_profile import GRADER_SETTINGS, OVERRIDDEN_SETTINGS
from grader.inputs.python_source import encoding_problem
from grader.static.rules import DEPTH, ENCODING, SIZE, SYNTAX, TIME, Limits, Rule
from grader.static.walk import Checker, OverBudget, Violation

MAX_SOURCE_BYTES = 1024 * 1024
"""The largest test file the check reads (a submission's files are capped the same)."""
TIME_BUDGET_SECONDS = 10.0
"""The longest the check may take on one file; a linear check needs well under a second for
any honest file (``benchmarks/static_check.py``)."""
LIMITS = Limits(MAX_SOURCE_BYTES, TIME_BUDGET_SECONDS)
RECURSION_LIMIT = 20_000
"""Deep enough for the deepest expression Python itself parses (about 3,000 levels)."""
UNREAD = frozenset({SYNTAX.code, ENCODING.code, SIZE.code})
"""Codes of a file the check could not read as Python: it names no tests."""


@dataclass(frozen=True)
class Override:
    """A hypothesis setting the file sets and the grader replaces with its own value."""

    line: int
    setting: str


def check_test_source(
    source: str, module: str, interface: frozenset[str], limits: Limits = LIMITS
) -> tuple[list[Violation], list[str]]:
    """Return the rule violations of a test file and the names of the tests it defines.

    ``module`` is the name the tests import the implementation under and
    ``interface`` its public names (the chapter's ``module`` and ``interface``).
    The file is checked as the bytes a run writes (its text in UTF-8), parsed
    as Python parses them.

    A test's name is the one pytest reports: ``test_x`` at the top level,
    ``TestGroup::test_x`` in a test class. A file that cannot be read as
    Python yields one violation saying why (a code of ``UNREAD``), and no names.
    """
    started = time.monotonic()
    data = source.encode("utf-8", "surrogateescape")
    if len(data) > limits.max_bytes:
        message = (
            f"the file is {len(data) // 1024} KiB, larger than the {limits.max_bytes // 1024} KiB "
            "the check reads: is it the right file?"
        )
        return [Violation(0, message, SIZE.code)], []
    tree, error = _parse(data)
    if tree is None:
        return [error or Violation(0, "the file cannot be read as Python", SYNTAX.code)], []
    checker = Checker(tree, module, interface, started + limits.seconds)
    try:
        checker.visit(tree)
    except RecursionError:
        checker.violations.append(
            Violation(
                checker.last_line,
                "this expression is nested too deeply to check: split it into smaller steps",
                DEPTH.code,
            )
        )
    except OverBudget:
        checker.violations.append(
            Violation(
                checker.last_line,
                f"checking the file took longer than its time budget of {limits.seconds:g} "
                "seconds: split it or make it smaller",
                TIME.code,
            )
        )
    violations = sorted(set(checker.violations), key=lambda v: (v.line, v.code, v.rule))
    return violations, list(_test_names(tree.body, ""))


def check_example(rule: Rule, text: str, module: str, interface: frozenset[str]) -> list[str]:
    """The codes the check gives ``text``, one of ``rule``'s examples, under its limits."""
    source = rule.example(text, module, interface)
    found, _ = check_test_source(source, module, interface, rule.example_limits or LIMITS)
    return [v.code for v in found]


def overridden_settings(source: str) -> list[Override]:
    """The hypothesis settings the file sets that the grader overrides, one per keyword."""
    tree, _ = _parse(source.encode("utf-8", "surrogateescape"))
    if tree is None:
        return []
    found = {
        Override(node.value.lineno, node.arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword)
        and node.arg in OVERRIDDEN_SETTINGS
        and not _equals_grader_value(node.arg, node.value)
    }
    return sorted(found, key=lambda o: (o.line, o.setting))


def _equals_grader_value(setting: str, value: ast.expr) -> bool:
    """``deadline=None`` changes nothing: the grader's own value, written out."""
    chosen = GRADER_SETTINGS[setting]
    return isinstance(value, ast.Constant) and not isinstance(chosen, str) and value.value == chosen


def describe_overrides(overrides: list[Override]) -> str | None:
    """The one note a report carries for ``overrides``, or ``None`` when there are none."""
    if not overrides:
        return None
    where = ", ".join(f"{o.setting} (line {o.line})" for o in overrides)
    grader = ", ".join(_shown(name) for name in sorted(OVERRIDDEN_SETTINGS))
    return (
        f"hypothesis settings the grader sets itself were overridden: {where}; every run "
        f"uses {grader}, so that the grade does not depend on the machine's speed"
    )


def _shown(setting: str) -> str:
    value = GRADER_SETTINGS[setting]
    return f"{setting}: {value}" if isinstance(value, str) else f"{setting}={value!r}"


def function_name(test: str) -> str:
    """The test function's own name in a reported name: ``TestX::test_y[1]`` gives ``test_y``."""
    return test.split("::")[-1].split("[", 1)[0]


def _parse(data: bytes) -> tuple[ast.Module | None, Violation | None]:
    """The tree Python builds from ``data``, or the violation that says why there is none."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    problem = encoding_problem(data)
    if problem is not None:
        return None, Violation(1, problem, ENCODING.code)
    try:
        return python_source.parse(data), None
    except SyntaxError as error:
        rule = f"syntax error: {error.msg}; fix it and run again"
        return None, Violation(error.lineno or 0, rule, SYNTAX.code)
    except (ValueError, RecursionError, MemoryError) as error:
        what = str(error) if isinstance(error, ValueError) else "it is nested too deeply"
        return None, Violation(
            0, f"the file cannot be parsed: {what}; fix it and run again", SYNTAX.code
        )


def _test_names(body: list[ast.stmt], prefix: str) -> Iterator[str]:
    """Tests as pytest names them: functions ``test*``, and methods of classes ``Test*``."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield prefix + node.name
        elif isinstance(node, ast.ClassDef) and (
            node.name.startswith("Test") or any(_is_test_case(base) for base in node.bases)
        ):
            yield from _test_names(node.body, f"{prefix}{node.name}::")


def _is_test_case(base: ast.expr) -> bool:
    return (isinstance(base, ast.Name) and base.id == "TestCase") or (
        isinstance(base, ast.Attribute) and base.attr == "TestCase"
    )
