"""The Gradescope autograder zip (``grader gradescope-bundle``).

The zip holds, at its root, ``setup.sh`` and ``run_autograder`` (from the
kit's ``deploy/gradescope/`` folder), ``constraints.txt``, which pins the
kit's dependencies at the versions of the environment that built the zip, so
the image grades with what staff tested, and two folders:

- ``kit/``: the kit's source as students may hold it, by the catalogs'
  ``[release] student`` allow-list (``grader.inputs.editions``), the witnesses cut to
  the students' tier, exactly what the student edition holds;
- ``staff/``: what only staff may hold (the model answer, the whole
  witnesses file with each mutant's killing test), at its path from the
  kit's root.

Gradescope runs ``setup.sh`` once to build its image: it installs ``kit/``
into ``/autograder/venv``, puts each file of ``staff/`` into the installed
kit readable by root alone (mode 0600), and makes ``/autograder/source``
root's alone, so no run of a student's code (another uid, or ``nobody`` in
namespaces) can read the staff material. It then runs ``run_autograder``
once per submission, which runs ``python -m grader.cli.autograder``. The zip is
read back before it is kept: an entry off these lists stops the build.

The root (``/autograder`` on Gradescope) comes from ``AUTOGRADER_ROOT``, so
the same scripts run in the kit's tests against a temporary folder.
"""

from __future__ import annotations

import importlib.metadata
import stat
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from grader import DISTRIBUTION
from grader.errors import GraderError
from grader.inputs import editions
from grader.inputs.catalog import kit_root
from grader.results.kit import Bundle

SCRIPTS = ("setup.sh", "run_autograder")
KIT = "kit/"
"""Where the zip keeps the kit's source as students may hold it."""
STAFF = "staff/"
"""Where the zip keeps what only staff may hold, which ``setup.sh`` installs for root alone."""
CONSTRAINTS = "constraints.txt"
GRADESCOPE = Path("deploy") / "gradescope"
"""Where the scripts lie in the kit's repository."""
BUILD_PARTS = ("pyproject.toml", "README.md", "grader")
"""What building the kit's wheel needs besides the content folders ``pyproject.toml``
force-includes (``kit_parts`` reads those, so a folder added there is carried too)."""
NEVER_BUNDLED = frozenset({"__pycache__", "kit"})
"""Folders left out besides hidden ones: caches, and the content a wheel build adds."""
EXECUTABLE = 0o755
CONSTRAINTS_HEADER = "# the kit's dependencies as installed where this bundle was built\n"


def build_bundle(output: Path, root: Path | None = None) -> Bundle:
    """Write the autograder zip to ``output`` from the kit's source checkout at ``root``."""
    root = root or kit_root()
    if not (root / "pyproject.toml").is_file() or not (root / GRADESCOPE).is_dir():
        raise GraderError(
            f"{root} is not the kit's source checkout: run gradescope-bundle from a clone of the "
            "course's kit repository (with pyproject.toml and deploy/gradescope/)"
        )
    constraints = pinned_dependencies()
    files = list(kit_files(root))
    audience = editions.students(root)
    kit = editions.student_files(root, files, audience)
    staff = editions.staff_material(root, files, audience)
    pins = "".join(f"{line}\n" for line in constraints)
    partial = output.with_name(f".{output.name}.partial")
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as bundle:
            for script in SCRIPTS:
                bundle.writestr(
                    _entry(script, EXECUTABLE), (root / GRADESCOPE / script).read_bytes()
                )
            for relative, data in kit.items():
                bundle.writestr(_entry(KIT + relative, 0o644), data)
            for relative, data in staff.items():
                bundle.writestr(_entry(STAFF + relative, 0o600), data)
            bundle.writestr(_entry(CONSTRAINTS, 0o644), CONSTRAINTS_HEADER + pins)
        names = _read_back(partial, audience, staff)
        partial.replace(output)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return Bundle(output, names, constraints)


def _read_back(path: Path, audience: editions.Audience, staff: dict[str, bytes]) -> tuple[str, ...]:
    """Every entry of the zip at ``path``, once each proven to be one the bundle may hold:
    the scripts and pins, ``kit/`` by the students' allow-list, ``staff/`` the staff material
    alone."""
    with zipfile.ZipFile(path) as bundle:
        names = tuple(bundle.namelist())
        entries = []
        for name in names:
            data = bundle.read(name)
            if name in (*SCRIPTS, CONSTRAINTS) and names.count(name) == 1:
                continue
            if name.startswith(STAFF) and staff.get(name.removeprefix(STAFF)) == data:
                continue
            relative = name.removeprefix(KIT) if name.startswith(KIT) else f"(outside kit/) {name}"
            entries.append((name, relative, data))
        editions.prove_contents(
            f"the Gradescope bundle {path.name}", entries, audience, staff.values()
        )
    return names


def kit_files(root: Path) -> Iterator[Path]:
    """The files of ``kit_parts``, without caches, hidden files or a bundled ``grader/kit``."""
    for part in kit_parts(root):
        path = root / part
        candidates = sorted(path.rglob("*")) if path.is_dir() else [path]
        for candidate in candidates:
            parts = candidate.relative_to(root).parts
            hidden = any(p.startswith(".") or p in NEVER_BUNDLED for p in parts)
            if candidate.is_file() and not hidden and candidate.suffix != ".pyc":
                yield candidate


def kit_parts(root: Path) -> tuple[str, ...]:
    """What of the kit's checkout a bundle or a release carries: ``BUILD_PARTS`` and every
    folder the wheel force-includes as course content."""
    try:
        config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        content = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as error:
        raise GraderError(
            f"the kit is broken: cannot read its wheel's content: {error!r}"
        ) from error
    return (*BUILD_PARTS, *content)


def _entry(name: str, mode: int) -> zipfile.ZipInfo:
    """A zip entry with a fixed date and Unix mode, so a bundle's bytes depend on its files only."""
    info = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def pinned_dependencies(distribution: str = DISTRIBUTION) -> tuple[str, ...]:
    """``name==version`` for the kit's runtime dependencies, all the way down, as installed."""
    pins: dict[str, str] = {}
    pending = _requirements(distribution)
    while pending:
        name = pending.pop()
        key = canonicalize_name(name)
        if key in pins or key == canonicalize_name(distribution):
            continue
        try:
            pins[key] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        pending += _requirements(name)
    return tuple(f"{name}=={version}" for name, version in sorted(pins.items()))


def _requirements(distribution: str) -> list[str]:
    """The names ``distribution`` requires on this Python, without any extra."""
    try:
        texts = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    requirements = [Requirement(text) for text in texts]
    return [r.name for r in requirements if r.marker is None or r.marker.evaluate({"extra": ""})]
