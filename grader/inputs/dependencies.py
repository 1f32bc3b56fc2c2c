"""The earlier chapters an implementation builds on, and which copy of each a run gets.

A chapter's catalog names what it needs (``[[needs]]``): a module of an
earlier chapter the implementation may import. The student's implementation
runs with the student's own file of it, kept beside the implementation in
the submission, or, with ``--ref-deps``, with the kit's reference of it. A
run of the student's tests (on the reference, the wheats, the stub, the
mutants) always gets the kit's: the reference was written against it.
Either way the module runs in the implementation's process, confined as the
implementation is, and never in the test process.

An implementation that imports a module it needs, in a submission that has
no file of it, stops the check with one line saying what to do.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from grader.errors import EXIT_FAIL, GraderError
from grader.inputs import python_source
from grader.inputs.catalog import Chapter, Dependency
from grader.inputs.submission import SubmissionProblem, read_text_inside

DependencySource = Literal["submission", "kit", "none"]
"""Which copy a run of the student's implementation got: the student's own file, the kit's
(``--ref-deps``), or none (the submission has no file, and the implementation does not
import the module)."""

REF_DEPS_HINT = ", or pass --ref-deps"
"""Advice only a student with the kit installed can follow; the autograder's results leave it
out."""
Sources = tuple[tuple[str, str], ...]
"""Modules for the implementation's process, as (name, source): a ``Job``'s dependencies."""


class DependencyProblem(GraderError):
    """The student's implementation needs a module the submission cannot give it: a fail."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=EXIT_FAIL)


@dataclass(frozen=True)
class DependencyUse:
    """Which copy of one dependency the student's implementation ran with."""

    id: str
    module: str
    used: DependencySource
    file: str | None
    """The student's file, relative to the submission folder, where ``used`` is ``submission``."""


@dataclass(frozen=True)
class Resolved:
    """The modules a run of the student's implementation gets, and where each came from."""

    sources: Sources
    uses: tuple[DependencyUse, ...]


def kit_sources(chapter: Chapter) -> Sources:
    """The kit's reference of every module the chapter needs."""
    return tuple((n.module, n.reference.read_text(encoding="utf-8")) for n in chapter.needs)


def student_file(chapter: Chapter, need: Dependency) -> str:
    """Where a submission keeps its own copy of ``need``: beside the implementation."""
    return (PurePosixPath(chapter.implementation).parent / need.implementation).as_posix()


def resolve(chapter: Chapter, folder: Path, implementation: str | None, ref_deps: bool) -> Resolved:
    """The modules the student's ``implementation`` (its text) runs with.

    Raises ``DependencyProblem`` when it imports a module it needs that the
    submission does not hold (and ``ref_deps`` is off), or when the
    submission's file of it cannot be read.
    """
    sources: list[tuple[str, str]] = []
    uses: list[DependencyUse] = []
    for need in chapter.needs:
        relative = student_file(chapter, need)
        path = folder / relative
        if ref_deps:
            sources.append((need.module, need.reference.read_text(encoding="utf-8")))
            uses.append(DependencyUse(need.id, need.module, "kit", None))
        elif path.exists() or path.is_symlink():
            try:
                sources.append((need.module, read_text_inside(folder, path)))
            except SubmissionProblem as problem:
                raise DependencyProblem(str(problem)) from None
            uses.append(DependencyUse(need.id, need.module, "submission", relative))
        elif implementation is not None and imports(implementation, need.module):
            raise DependencyProblem(missing_message(chapter, need))
        else:
            uses.append(DependencyUse(need.id, need.module, "none", None))
    return Resolved(tuple(sources), tuple(uses))


def missing_message(chapter: Chapter, need: Dependency) -> str:
    """The one line for an implementation that imports ``need`` with no file of it."""
    return (
        f"{PurePosixPath(chapter.implementation).name} needs {need.implementation} ({need.id}): "
        f"add yours{REF_DEPS_HINT}"
    )


def imports(source: str, module: str) -> bool:
    """Whether ``source`` imports ``module`` (or a submodule of it) anywhere, by a statement.

    A file that does not parse imports nothing here: its own run reports the error.
    """
    try:
        tree = python_source.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(name == module or name.startswith(f"{module}.") for name in names):
            return True
    return False
