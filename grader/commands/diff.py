"""``diff``: the student's implementation beside the reference, once the course tests pass."""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

from grader.commands.check import course_tests_only
from grader.errors import EXIT_FAIL, GraderError
from grader.grading.jobs import Limits
from grader.grading.result_cache import ResultCache
from grader.inputs.catalog import Chapter
from grader.inputs.python_source import parse
from grader.inputs.submission import read_submission
from grader.results.kit import DiffResult, MethodDiff
from grader.sandbox.protocol.status import TestStatus


def diff_against_reference(
    chapter: Chapter,
    folder: Path,
    limits: Limits = Limits(),
    cache: ResultCache | None = None,
) -> str:
    """A unified diff from the student's ``radix.py`` to the reference: this chapter's file
    alone, never an earlier chapter's module beside it.

    Refuses (a ``GraderError`` with the fail exit code) until every course
    test passes on the student's code (run with the submission's own copy of
    each earlier chapter's module, or the kit's with ``limits.ref_deps``): the
    reference is the answer. The course tests' result is ``check``'s own,
    taken from ``cache`` when the last check graded the same ``radix.py``.
    """
    submission = read_submission(chapter, folder)
    if submission.implementation is None:
        raise GraderError(submission.implementation_problem or "no implementation", EXIT_FAIL)
    results = course_tests_only(chapter, folder, limits, cache).results
    failing = [name for name, status in results.items() if status != TestStatus.PASSED]
    if failing:
        raise GraderError(
            f"the diff is shown once every course test passes; still failing: {', '.join(failing)} "
            "(run `grader check` for details)",
            EXIT_FAIL,
        )
    reference = chapter.reference.read_text(encoding="utf-8")
    return "".join(
        difflib.unified_diff(
            submission.implementation.splitlines(keepends=True),
            reference.splitlines(keepends=True),
            fromfile=f"yours/{chapter.implementation}",
            tofile=f"reference/{chapter.implementation}",
        )
    )


def diff_with_summary(
    chapter: Chapter,
    folder: Path,
    limits: Limits = Limits(),
    cache: ResultCache | None = None,
) -> DiffResult:
    """``diff_against_reference``, with a summary first: which functions and methods
    differ, by how many lines, and which are the student's own helpers."""
    diff = diff_against_reference(chapter, folder, limits, cache)
    yours = (folder / chapter.implementation).read_text(encoding="utf-8")
    reference = chapter.reference.read_text(encoding="utf-8")
    return DiffResult(method_diffs(yours, reference) if diff else (), diff)


def method_diffs(yours: str, reference: str) -> tuple[MethodDiff, ...]:
    """Each function or method whose text differs between ``yours`` and ``reference``
    (docstrings and comments included: what the diff below shows), in ``yours``' order,
    then the reference's own."""
    mine, theirs = _functions(yours), _functions(reference)
    found = []
    for name, text in mine.items():
        if name not in theirs:
            found.append(MethodDiff(name, len(text), 0, "yours"))
        elif text != theirs[name]:
            removed, added = _changed(text, theirs[name])
            found.append(MethodDiff(name, removed, added, "both"))
    found += [
        MethodDiff(name, 0, len(text), "reference")
        for name, text in theirs.items()
        if name not in mine
    ]
    return tuple(found)


def _functions(source: str) -> dict[str, list[str]]:
    """The lines of each top-level function and each method (``Class.method``) of
    ``source``, decorators included; empty for a file that does not parse."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    lines = source.splitlines()
    found: dict[str, list[str]] = {}

    def add(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        found.setdefault(name, [line.rstrip() for line in lines[first - 1 : node.end_lineno]])

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            add(node.name, node)
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    add(f"{node.name}.{inner.name}", inner)
    return found


def _changed(yours: list[str], reference: list[str]) -> tuple[int, int]:
    """Lines of ``yours`` the reference lacks, and lines of ``reference`` yours lacks."""
    removed = added = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, yours, reference).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return removed, added
