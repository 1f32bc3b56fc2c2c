"""The reason behind each ✗ a student reads about their own tests.

``tdd red``, ``tdd green`` and ``check`` each say that a test failed, is
missing or passes where it must fail; this module says *why*, from the test
file's text and pytest's report, in the same words for all three:

- a failure: the error, and the line of the student's own file it stopped at;
- a run's output over the limit (``OSError: [Errno 27] File too large``): said plainly;
- a missing required test: a method of a class pytest does not collect, or a
  near-miss of the name (``did you mean``), or simply not written;
- a test that passes on the stub: a ``try`` whose broad ``except`` swallows
  the failed ``assert``, when there is one.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable, Iterator

from grader.grading.tracebacks import STAND_IN_ERROR
from grader.inputs import python_source
from grader.sandbox.confine.limits import OUTPUT_LIMIT_BYTES
from grader.sandbox.host.result import failure_line

BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException", "AssertionError"})
"""Exceptions whose handler catches a failed ``assert`` (``pytest.fail`` too, for the last
two)."""
OUTPUT_TOO_LARGE = ("[Errno 27]", "File too large", "SIGXFSZ")
"""What a report shows when a run wrote past the output limit."""


def failure_reason(detail: str, test_file: str) -> str:
    """One line: what went wrong and where in ``test_file`` (the student's file) it stopped.

    ``assert (0, []) == (2, ['b1', 'b2']) at line 154: assert evict_all(tree, 1) == ...``
    """
    if output_too_large(detail):
        return too_much_output()
    headline = (failure_line(detail) or "no detail").replace(STAND_IN_ERROR, "ImplementationError")
    place = last_line_in(detail, test_file)
    if place is None:
        return headline
    number, source = place
    return f"{headline} (line {number}: {source})" if source else f"{headline} (line {number})"


def output_too_large(detail: str) -> bool:
    """Whether ``detail`` (a report or a run's message) says the output limit was reached."""
    return any(mark in detail for mark in OUTPUT_TOO_LARGE)


def too_much_output() -> str:
    """The plain sentence for a run that printed past the limit."""
    megabytes = OUTPUT_LIMIT_BYTES / (1024 * 1024)
    return (
        f"your tests printed more than {megabytes:g} MB, the limit on a run's output, so "
        "writing failed (OSError: File too large): print less"
    )


_FRAME = re.compile(r"^(?P<file>\S+?):(?P<line>\d+): in \S+$")


def last_line_in(detail: str, test_file: str) -> tuple[int, str] | None:
    """The last frame of ``detail`` in ``test_file`` (pytest's short tracebacks name it
    ``tests/test_x.py:154: in test_y`` and show the line under it): its number and text."""
    lines = detail.splitlines()
    found: tuple[int, str] | None = None
    for at, line in enumerate(lines):
        frame = _FRAME.match(line.strip())
        if frame and (frame["file"] == test_file or frame["file"].endswith("/" + test_file)):
            source = lines[at + 1].strip() if at + 1 < len(lines) else ""
            found = (int(frame["line"]), "" if source.startswith("E ") else source)
    return found


def missing_reason(name: str, source: str, defined: Iterable[str]) -> str:
    """Why the required test ``name`` is not among the tests pytest collects, in one line."""
    tree = _parse(source)
    if tree is not None:
        for cls in _uncollected_classes(tree):
            if any(_is_function(node, name) for node in cls.body):
                return (
                    f"{name} is missing: class {cls.name} is not collected, since pytest "
                    "collects only classes named Test... (or unittest.TestCase ones): rename "
                    f"it Test{cls.name.removeprefix('Test')}"
                )
    close = difflib.get_close_matches(name, sorted(set(defined)), n=1, cutoff=0.8)
    if close:
        return (
            f"{name} is missing; did you mean {close[0]}? The grader looks for the exact "
            "name, so rename it"
        )
    return f"{name} is missing: write it"


def swallowing_handler(source: str, test: str) -> str:
    """Where the test function ``test`` (``test_x`` or ``TestX::test_x``) catches every
    failure and goes on, so that it passes whatever the code does; ``""`` if it does not."""
    tree = _parse(source)
    if tree is None:
        return ""
    *classes, function = test.split("[", 1)[0].split("::")
    body: list[ast.stmt] = tree.body
    for cls in classes:
        body = next((n.body for n in body if isinstance(n, ast.ClassDef) and n.name == cls), [])
    for node in body:
        if _is_function(node, function):
            for handler in _swallowing(node):
                caught = f" {ast.unparse(handler.type)}" if handler.type is not None else ""
                return (
                    f"line {handler.lineno} (except{caught}:) catches the failed assert and "
                    "goes on, so the test cannot fail: catch only the exception you expect, "
                    "or use pytest.raises"
                )
    return ""


def _swallowing(function: ast.AST) -> Iterator[ast.ExceptHandler]:
    """The broad handlers in ``function`` that never raise again."""
    for node in ast.walk(function):
        if not isinstance(node, ast.Try | ast.TryStar):
            continue
        for handler in node.handlers:
            if _is_broad(handler.type) and not any(
                isinstance(inner, ast.Raise) for inner in ast.walk(handler)
            ):
                yield handler


def _is_broad(caught: ast.expr | None) -> bool:
    if caught is None:
        return True
    if isinstance(caught, ast.Tuple):
        return any(_is_broad(item) for item in caught.elts)
    name = caught.attr if isinstance(caught, ast.Attribute) else getattr(caught, "id", "")
    return name in BROAD_EXCEPTIONS


def _uncollected_classes(tree: ast.Module) -> Iterator[ast.ClassDef]:
    for node in tree.body:
        if (
            isinstance(node, ast.ClassDef)
            and not node.name.startswith("Test")
            and not any(ast.unparse(base).rpartition(".")[2] == "TestCase" for base in node.bases)
        ):
            yield node


def _is_function(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name


def _parse(source: str) -> ast.Module | None:
    try:
        module: ast.Module = python_source.parse(source)
        return module
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
