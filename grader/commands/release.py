"""``release``: the editions of the kit as wheels, one for students and one for staff.

The student edition is what staff hand to students (and what the GitHub
workflow template installs): the grader, the stub, the course tests, the
mutants, the wheats and the reference they need to grade their work locally,
and none of the files the catalogs mark ``staff_only`` (the model answer to
the students' own tests). The staff edition is the whole kit, as
``pip install .`` from the repository gives it.

The wheel is built in-process by hatchling, the kit's own build backend, from
a copy of the checkout without the staff-only files, so nothing in the
checkout changes. Its version carries the local label ``+student``, so the two
editions never share a file name. The built wheel is then read back: a
staff-only file found in it, by path or by content, stops the release.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

from grader.catalog import CHAPTERS, kit_root, load_chapter
from grader.commands.bundle import CONSTRAINTS_HEADER, kit_files, pinned_dependencies
from grader.errors import GraderError
from grader.results.kit import Edition, Release

STUDENT_LABEL = "student"
"""The local version label of the student edition: ``0.1.0+student``."""
WHEEL_KIT = "grader/kit/"
"""Where the wheel keeps the kit's content (``pyproject.toml``'s force-include)."""
CONSTRAINTS = "constraints.txt"
_VERSION_LINE = re.compile(r'^version = "([^"+]+)"$', re.MULTILINE)


def staff_only_patterns(root: Path) -> tuple[str, ...]:
    """The ``staff_only`` patterns of every chapter the kit ships."""
    patterns: list[str] = []
    for chapter_id in sorted(CHAPTERS):
        patterns += load_chapter(chapter_id, root).staff_only
    return tuple(patterns)


def is_staff_only(relative: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def build_release(edition: Edition, output: Path, root: Path | None = None) -> Release:
    """Build the ``edition`` wheel of the kit checked out at ``root`` into the folder ``output``."""
    root = root or kit_root()
    if not (root / "pyproject.toml").is_file():
        raise GraderError(
            f"{root} is not the kit's source checkout: run release from a clone of the course's "
            "kit repository (with pyproject.toml)"
        )
    try:
        from hatchling.builders.wheel import WheelBuilder
    except ImportError as error:
        raise GraderError(
            "building a release needs hatchling, the kit's build backend: "
            "pip install 'ds07-grader[release]'"
        ) from error
    patterns = staff_only_patterns(root) if edition == "student" else ()
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grader-release-") as temporary:
        staging, built = Path(temporary) / "kit", Path(temporary) / "dist"
        left_out = _stage(root, staging, patterns)
        if edition == "student":
            _label_version(staging / "pyproject.toml")
        names = list(WheelBuilder(str(staging)).build(directory=str(built), versions=["standard"]))
        wheel = Path(names[0])
        if edition == "student":
            _prove_left_out(wheel, root, left_out, patterns)
        target = output / wheel.name
        partial = output / f".{wheel.name}.partial"
        shutil.copyfile(wheel, partial)
        partial.replace(target)
    constraints = output / CONSTRAINTS
    pins = "".join(f"{line}\n" for line in pinned_dependencies())
    partial = output / f".{CONSTRAINTS}.partial"
    partial.write_text(CONSTRAINTS_HEADER + pins, encoding="utf-8")
    partial.replace(constraints)
    return Release(edition, target, constraints, left_out)


def _stage(root: Path, staging: Path, patterns: tuple[str, ...]) -> tuple[str, ...]:
    """Copy what building the wheel needs into ``staging``, except staff-only files."""
    left_out = []
    for path in kit_files(root):
        relative = path.relative_to(root).as_posix()
        if is_staff_only(relative, patterns):
            left_out.append(relative)
            continue
        target = staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return tuple(left_out)


def _label_version(pyproject: Path) -> None:
    text = pyproject.read_text(encoding="utf-8")
    labelled, count = _VERSION_LINE.subn(rf'version = "\1+{STUDENT_LABEL}"', text, count=1)
    if count != 1:
        raise GraderError(f"the kit is broken: no plain version line in {pyproject}")
    pyproject.write_text(labelled, encoding="utf-8")


def _prove_left_out(
    wheel: Path, root: Path, left_out: tuple[str, ...], patterns: tuple[str, ...]
) -> None:
    """Stop unless the wheel holds no staff-only file, under its own path or any other."""
    secrets = {(root / relative).read_bytes() for relative in left_out}
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            relative = name.removeprefix(WHEEL_KIT)
            if (name.startswith(WHEEL_KIT) and is_staff_only(relative, patterns)) or (
                archive.read(name) in secrets
            ):
                raise GraderError(
                    f"the kit is broken: the student edition would ship {name}, "
                    "which the catalog marks staff-only"
                )
