"""A student's submission folder: finding, reading and starting one, and nothing else.

Reading never follows a link out of the folder and never writes; every
problem becomes a one-line ``SubmissionProblem`` saying what is wrong and
what to do, so a broken submission is graded as a fail, not a crash.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError
from grader.inputs.catalog import Chapter
from grader.inputs.python_source import SourceProblem, decode

DEFAULT_FOLDER = Path("submission")
START_HINT = " (see `grader start`)"
START_POINT_HINT = " (`grader start` gives a starting point)"
START_RUN_HINT = ": run `grader start` to create it"
INSIDE_HINT = ": run grader from the folder above it, or pass --submission ."
LOCAL_HINTS = (START_HINT, START_POINT_HINT, START_RUN_HINT, INSIDE_HINT)
"""Advice in the problems below that only a student with the kit installed can follow; a
report read elsewhere (Gradescope) leaves it out."""
MAX_FILE_BYTES = 1024 * 1024


class SubmissionProblem(Exception):
    """A file of the submission that cannot be used, with what to do about it."""


@dataclass(frozen=True)
class Submission:
    folder: Path
    implementation: str | None
    tests: str | None
    implementation_problem: str | None
    tests_problem: str | None


def read_submission(chapter: Chapter, folder: Path) -> Submission:
    """Read the implementation and the tests in ``folder``; problems are recorded, not raised."""
    if not folder.exists():
        problem = inside_the_submission(chapter, folder) or (
            f"the submission folder {folder} does not exist{START_RUN_HINT}"
        )
        return Submission(folder, None, None, problem, problem)
    if not folder.is_dir():
        problem = (
            f"{folder} is a file, not a folder: pass the folder holding {chapter.implementation}"
        )
        return Submission(folder, None, None, problem, problem)
    implementation, implementation_problem = _read(folder, chapter.implementation)
    tests, tests_problem = _read(folder, chapter.student_tests)
    return Submission(folder, implementation, tests, implementation_problem, tests_problem)


def inside_the_submission(chapter: Chapter, folder: Path) -> str | None:
    """The sentence for a student who runs grader from inside their submission folder: the
    relative ``folder`` is missing, but the current folder holds the implementation. Starting
    a new stub there would nest one (``submission/submission/``), so it is never advised."""
    if folder.is_absolute() or folder.exists():
        return None
    here = Path.cwd()
    if not (here / chapter.implementation).is_file():
        return None
    return (
        f"there is no folder {folder} here, but {chapter.implementation} is in the current "
        f"folder, so this looks like your submission folder itself{INSIDE_HINT}"
    )


def _read(folder: Path, relative: str) -> tuple[str | None, str | None]:
    path = folder / relative
    try:
        return read_text_inside(folder, path), None
    except SubmissionProblem as problem:
        return None, str(problem)


def read_text_inside(folder: Path, path: Path) -> str:
    """The UTF-8 text of ``path``, which must be a regular file inside ``folder``.

    A byte order mark at the start is dropped, as Python itself drops it; a
    declaration of another encoding is refused (``grader.inputs.python_source``).
    """
    shown = path.relative_to(folder).as_posix()
    if not path.exists() and not path.is_symlink():
        raise SubmissionProblem(f"{shown} is missing from {folder}: create it{START_HINT}")
    try:
        inside = path.resolve(strict=True).is_relative_to(folder.resolve(strict=True))
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop, before 3.13
        raise SubmissionProblem(
            f"{shown} is a symbolic link that leads nowhere or loops: put the file itself "
            f"in {folder}"
        ) from error
    if not inside:
        raise SubmissionProblem(
            f"{shown} links to a file outside the submission: put the file itself in {folder}"
        )
    if not path.is_file():
        raise SubmissionProblem(f"{shown} is not a regular file: replace it with a Python file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise SubmissionProblem(
            f"{shown} is larger than {MAX_FILE_BYTES // 1024} KiB: is it the right file?"
        )
    try:
        text = decode(path.read_bytes())
    except SourceProblem as problem:
        raise SubmissionProblem(f"{shown} cannot be graded: {problem}") from problem
    except UnicodeDecodeError as error:
        raise SubmissionProblem(
            f"{shown} is not UTF-8 text (byte {error.start}): save it as UTF-8"
        ) from error
    except OSError as error:
        raise SubmissionProblem(f"{shown} cannot be read: {error.strerror}") from error
    if not text.strip():
        raise SubmissionProblem(f"{shown} is empty: fill it in{START_POINT_HINT}")
    return text


@dataclass(frozen=True)
class StartResult:
    folder: Path
    created: tuple[str, ...]
    kept: tuple[str, ...]
    saved: tuple[str, ...]


def start_submission(chapter: Chapter, folder: Path, force: bool = False) -> StartResult:
    """Copy the stub and the test skeleton into ``folder``, never losing a student's file.

    Existing files are left alone; with ``force`` they are first saved beside
    themselves under a timestamped name, then replaced.
    """
    if folder.exists() and not folder.is_dir():
        raise GraderError(f"{folder} is a file: choose another --submission folder", exit_code=1)
    inside = inside_the_submission(chapter, folder)
    if inside is not None:  # a new stub here would nest one: submission/submission/
        raise GraderError(f"{inside}; start wrote nothing", exit_code=1)
    created, kept, saved = [], [], []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for source, relative in (
        (chapter.stub, chapter.implementation),
        (chapter.stub_tests, chapter.student_tests),
    ):
        target = folder / relative
        if target.exists() or target.is_symlink():
            if not force:
                kept.append(relative)
                continue
            backup = target.with_name(f"{target.name}.{stamp}.bak")
            n = 1
            while backup.exists():
                backup = target.with_name(f"{target.name}.{stamp}-{n}.bak")
                n += 1
            target.rename(backup)
            saved.append(backup.relative_to(folder).as_posix())
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        shutil.copyfile(source, partial)
        partial.replace(target)
        created.append(relative)
    return StartResult(folder, tuple(created), tuple(kept), tuple(saved))
