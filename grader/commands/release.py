"""``release``: the editions of the kit as wheels, one for students and one for staff.

The student edition is what staff hand to students (and what the GitHub
workflow template installs): built from the allow-list of the catalogs'
``[release] student`` (``grader.inputs.editions``): the grader, the stub, the course
tests, the mutants, the wheats and the reference students need to grade their
work locally, the witnesses cut to the tier students see before the due date
(``--after-due``: the after-due tier, where staff ask for it), and never a
file the catalogs mark ``staff_only`` (the model answer to the students' own
tests). The staff edition is the whole kit, as ``pip install .`` from the
repository gives it.

The wheel is built in-process by hatchling, the kit's own build backend, from
a copy of the checkout holding only what the edition may hold, so nothing in
the checkout changes. Its version carries the local label ``+student``, so the
two editions never share a file name. The built wheel is then read back
(``editions.prove_contents``): a file off the list, a staff-only file under
any name or a witness beyond its tier stops the release.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import zipfile
from pathlib import Path

from grader.commands.bundle import CONSTRAINTS_HEADER, kit_files, pinned_dependencies
from grader.errors import GraderError
from grader.inputs import editions
from grader.inputs.catalog import STUDENT_LABEL, kit_root
from grader.results.kit import Edition, Release

WHEEL_KIT = "grader/kit/"
"""Where the wheel keeps the kit's content (``pyproject.toml``'s force-include)."""
CONSTRAINTS = "constraints.txt"
_VERSION_LINE = re.compile(r'^version = "([^"+]+)"$', re.MULTILINE)
_METADATA = re.compile(r"^[^/]+\.dist-info/[^/]+$")
"""The wheel's own metadata (``METADATA``, ``RECORD``...): the build's, not the kit's."""


def kit_path(name: str) -> str | None:
    """The path from the kit's root of the wheel entry ``name``; ``None`` for the wheel's own
    metadata."""
    if _METADATA.match(name):
        return None
    return name.removeprefix(WHEEL_KIT) if name.startswith(WHEEL_KIT) else name


def build_release(
    edition: Edition, output: Path, root: Path | None = None, after_due: bool = False
) -> Release:
    """Build the ``edition`` wheel of the kit checked out at ``root`` into the folder ``output``
    (a student edition with ``after_due``: the witnesses at the after-due tier)."""
    root = root or kit_root()
    if not (root / "pyproject.toml").is_file():
        raise GraderError(
            "grader release builds from the kit's source checkout, and this grader is "
            "installed from a wheel: clone the course's kit repository and install it with "
            "pip install -e . (an editable install), then run release there"
        )
    try:
        from hatchling.builders.wheel import WheelBuilder
    except ImportError as error:
        raise GraderError(
            "building a release needs hatchling, the kit's build backend: "
            "pip install 'ds07-grader[release]'"
        ) from error
    files = list(kit_files(root))
    every = {path.relative_to(root).as_posix(): path.read_bytes() for path in files}
    audience = editions.students(root, after_due) if edition == "student" else None
    kept = every if audience is None else editions.student_files(root, files, audience)
    left_out = tuple(relative for relative in every if relative not in kept)
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grader-release-") as temporary:
        staging, built = Path(temporary) / "kit", Path(temporary) / "dist"
        for relative, data in kept.items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if edition == "student":
            _label_version(staging / "pyproject.toml")
        names = list(WheelBuilder(str(staging)).build(directory=str(built), versions=["standard"]))
        wheel = Path(names[0])
        with zipfile.ZipFile(wheel) as archive:
            contents = tuple(sorted(archive.namelist()))
            if audience is not None:
                secrets = editions.staff_material(root, files, audience).values()
                entries = ((n, kit_path(n), archive.read(n)) for n in contents)
                editions.prove_contents(
                    f"the student edition {wheel.name}", entries, audience, secrets
                )
        target = output / wheel.name
        partial = output / f".{wheel.name}.partial"
        shutil.copyfile(wheel, partial)
        partial.replace(target)
    constraints = output / CONSTRAINTS
    pins = "".join(f"{line}\n" for line in pinned_dependencies())
    partial = output / f".{CONSTRAINTS}.partial"
    partial.write_text(CONSTRAINTS_HEADER + pins, encoding="utf-8")
    partial.replace(constraints)
    return Release(edition, target, constraints, left_out, contents)


def _label_version(pyproject: Path) -> None:
    text = pyproject.read_text(encoding="utf-8")
    labelled, count = _VERSION_LINE.subn(rf'version = "\1+{STUDENT_LABEL}"', text, count=1)
    if count != 1:
        raise GraderError(f"the kit is broken: no plain version line in {pyproject}")
    pyproject.write_text(labelled, encoding="utf-8")
