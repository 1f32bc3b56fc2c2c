"""Tracebacks as a student reads them: no path of the grading machine in them.

pytest names the sandbox's own files relatively (``radix.py:58``,
``tests/test_ds07.py:136``), but a frame inside an installed library carries
the grading machine's absolute path (``/home/ta/.venv/lib/python3.11/
site-packages/hypothesis/stateful.py``): it says nothing to a student, differs
from machine to machine, and would make the same submission's report differ
between graders. ``without_machine_paths`` shortens each such path to the part
that names the file: ``site-packages/…`` for libraries, ``python/…`` for the
standard library, and the path inside the kit for the kit's own files.
"""

from __future__ import annotations

import re
import sysconfig
from functools import cache

from grader.inputs.catalog import kit_root


@cache
def _prefixes() -> tuple[tuple[str, str], ...]:
    """Each machine folder and what it is shown as, longest first (a venv inside the kit)."""
    paths = sysconfig.get_paths()
    shown = {
        paths["purelib"]: "site-packages",
        paths["platlib"]: "site-packages",
        paths["stdlib"]: "python",
        paths["platstdlib"]: "python",
        str(kit_root()): "",
    }
    ordered = sorted(shown.items(), key=lambda item: len(item[0]), reverse=True)
    return tuple((folder.rstrip("/") + "/", name + "/" if name else "") for folder, name in ordered)


def without_machine_paths(text: str) -> str:
    """``text`` with every path under a machine folder shortened (see the module docstring)."""
    for folder, name in _prefixes():
        text = text.replace(folder, name)
    return text


_FRAME = re.compile(r"^(?P<file>\S+?):(?P<line>\d+): in \S+")
GRADER_FRAMES = ("grader/sandbox/",)
"""Frames of the grader's own machinery (the stand-in module and its wire): a student can do
nothing with them, and the frame below them (their ``radix.py``) is the one that matters."""
STAND_IN_ERROR = "grader.sandbox.untrusted.proxy.ImplementationError"
"""How pytest names the stand-in module's error; a student reads it as ``ImplementationError``."""
NO_ADVICE = ("Use -v to get more diff", "Use -vv to get more diff")
"""pytest's advice to rerun with options a graded run does not take."""


def for_students(text: str) -> str:
    """A pytest report as a student reads it: machine paths shortened, the grader's own frames
    (each a location line and the source lines under it) left out, and no advice to pass
    options the student cannot pass."""
    kept: list[str] = []
    skipping = False
    for line in without_machine_paths(text).splitlines():
        frame = _FRAME.match(line)
        if frame:
            skipping = any(part in frame["file"] for part in GRADER_FRAMES)
        elif skipping and not line.startswith(("E ", "E\t")) and line != "E":
            continue
        else:
            skipping = False
        if skipping or line.strip().removeprefix("E").strip() in NO_ADVICE:
            continue
        kept.append(line.replace(STAND_IN_ERROR, "ImplementationError"))
    return "\n".join(kept)
