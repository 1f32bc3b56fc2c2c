"""The allow-list of a run's root at ``namespaces``: what of the machine it holds (``View``).

Read from the warm worker after its warm-up (``run_view``): what it has mapped and
imported, and of the grader only the modules a run runs. ``mounts`` builds the root from it.
"""

from __future__ import annotations

import os
import struct
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox import procfs

GRADER_PACKAGE = Path(__file__).resolve().parents[2]
"""The grader's own package folder: no run's root holds it, but for the modules a run runs."""


@dataclass(frozen=True)
class View:
    """What a run's root holds at the ``namespaces`` level besides its folder, ``/proc`` and
    ``mounts.DEVICES``, each at its own path: an allow-list, made by ``run_view``.

    ``binds`` are files and folders of the machine, bound read-only, parents
    before children; ``empty`` are folders inside one of them that show
    nothing but what ``binds`` puts in them (a site-packages below the standard
    library); ``links`` are the symbolic links on the way to them, as the
    machine has them; ``listed`` the folders made on the way that a run may
    list (those ``sys.path`` names, where imports look): every other one may
    only be passed through (``/root``, holding a pyenv, shows nothing).
    """

    binds: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    listed: tuple[str, ...] = ()


def run_view(own: Iterable[str] = ()) -> View:
    """The allow-list of a run's root, read from this process (a warm worker, after its
    warm-up): the files it has mapped (the interpreter, its libraries, extension modules),
    the standard library's folder, and of each other folder on ``sys.path`` only the
    top-level packages and modules its loaded modules come from. The grader's own package,
    and the checkout it runs from where that is no site-packages (an editable install, which
    holds the kit), are left out but for the files and folders ``own`` names (the modules a
    run runs).

    The folder of a package is bound whole, so what it imports lazily is there too; a
    package that nothing imported before the fork is not."""
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    grader = str(GRADER_PACKAGE)
    entries = {os.path.realpath(entry) for entry in sys.path if entry and os.path.isdir(entry)}
    empty = [f"{stdlib}/{name}" for name in _SITE_NAMES if os.path.isdir(f"{stdlib}/{name}")]
    # The checkout an editable install runs the grader from holds the kit: not a site.
    checkout = os.path.dirname(grader)
    entries -= {checkout} if not os.path.isdir(os.path.join(checkout, "_pytest")) else set()
    sites = sorted(e for e in entries if not _within(stdlib, e) or e in empty)
    chosen: set[str] = set()
    for module in list(sys.modules.values()):
        for file in _module_files(module):
            site = max((entry for entry in sites if _within(entry, file)), key=len, default=None)
            if site is not None and file != site:
                top = os.path.join(site, os.path.relpath(file, site).split(os.sep)[0])
                if top != grader:
                    chosen.add(top)
    links: dict[str, str] = {}
    wanted = [stdlib, *sorted(chosen), *own]
    wanted += [path for path in procfs.mapped_files() if os.path.isfile(path)]
    # The interpreter as a run may start it again: by its path, through its ELF interpreter,
    # with its virtual environment's settings.
    interpreter = _elf_interpreter(os.path.realpath(sys.executable))
    config = os.path.join(sys.prefix, "pyvenv.cfg")
    wanted += [p for p in (sys.executable, interpreter, config) if p and os.path.isfile(p)]
    binds = {_route(path, links) for path in wanted}

    def covered(path: str) -> bool:
        return any(
            _below(bind, path) and not any(_below(bind, e) and _within(e, path) for e in empty)
            for bind in binds
        )

    binds = {path for path in binds if not covered(path)}
    listed = sorted(site for site in sites if any(_below(site, path) for path in binds))
    return View(tuple(sorted(binds)), tuple(empty), tuple(sorted(links.items())), tuple(listed))


_SITE_NAMES = ("site-packages", "dist-packages")
"""The folders of installed packages that an installation keeps below its standard library:
a run's root shows them empty but for the packages chosen from them."""


def _elf_interpreter(executable: str) -> str | None:
    """The program loader an ELF ``executable`` names (``PT_INTERP``), if it names one."""
    try:
        with open(executable, "rb") as file:
            head = file.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit only
                return None
            order = "<" if head[5] == 1 else ">"
            offset, size, count = (
                struct.unpack_from(f"{order}Q", head, 0x20)[0],
                *struct.unpack_from(f"{order}HH", head, 0x36),
            )
            for index in range(count):
                file.seek(offset + index * size)
                header = file.read(size)
                if struct.unpack_from(f"{order}I", header, 0)[0] == 3:  # PT_INTERP
                    where, length = (
                        struct.unpack_from(f"{order}Q", header, 8)[0],
                        struct.unpack_from(f"{order}Q", header, 32)[0],
                    )
                    file.seek(where)
                    return file.read(length).rstrip(b"\0").decode()
    except (OSError, struct.error, UnicodeDecodeError):
        return None
    return None


def _module_files(module: object) -> list[str]:
    """Where a loaded module comes from: its file, else (a namespace package) its folders."""
    file = getattr(module, "__file__", None)
    if isinstance(file, str) and os.path.isabs(file):
        return [os.path.realpath(file)]
    folders = getattr(module, "__path__", None)
    if file is None and folders is not None and not isinstance(folders, str):
        return [os.path.realpath(folder) for folder in list(folders) if isinstance(folder, str)]
    return []


def _within(folder: str, path: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _below(folder: str, path: str) -> bool:
    """Whether ``path`` lies below ``folder`` (not ``folder`` itself)."""
    return path != folder and _within(folder, path)


def _route(path: str, links: dict[str, str], depth: int = 0) -> str:
    """``path`` with every symbolic link on the way resolved, each noted in ``links`` (its
    path and its target), so the run's root can hold the same way to the same file."""
    if depth > 16:
        raise OSError(f"too many symbolic links on the way to {path}")
    current = "/"
    for part in Path(os.path.normpath(path)).parts[1:]:
        step = os.path.join(current, part)
        if os.path.islink(step):
            target = os.readlink(step)
            links[step] = target
            current = _route(os.path.normpath(os.path.join(current, target)), links, depth + 1)
        else:
            current = step
    return current
