"""An implementation's error raised again in the test process, from where the student's file
raised it: one stand-in frame per frame the error brought back (``radix.py:58 in __init__``),
its lines put in ``linecache``, so that pytest's report shows them.
"""

from __future__ import annotations

import functools
import linecache
from collections.abc import Callable
from typing import Any

FRAME_LIMIT = 50
LINE_LIMIT = 300
LINE_NUMBER_LIMIT = 100_000
"""Bounds on the frames an implementation's error may bring back (they are its own to show)."""


def raise_through(frames: list[Any], error: BaseException, module: str) -> None:
    """Raise ``error`` from frames named as the implementation's were (``radix.py:58 in
    __init__``), so that a report shows where in the student's file it happened.

    ``frames`` come only from course-test runs, where the implementation is
    the student's own: its lines are put in ``linecache`` for the report.
    """
    __tracebackhide__ = True
    filename = f"{module}.py"
    try:
        raiser = _stand_in_frames(frames, error, filename)
    except Exception:
        raiser = None
    if raiser is None:
        raise error
    raiser()


def _stand_in_frames(
    frames: list[Any], error: BaseException, filename: str
) -> Callable[[], None] | None:
    """A function raising ``error`` through one stand-in frame per entry of ``frames``."""
    frames = [
        (int(frame[0]), str(frame[1]), str(frame[2])[:LINE_LIMIT], _frame_file(frame, filename))
        for frame in frames[:FRAME_LIMIT]
        if 0 < int(frame[0]) <= LINE_NUMBER_LIMIT
    ]
    if not frames:
        return None
    files: dict[str, list[str]] = {}
    raiser: Callable[[], None] | None = None
    for lineno, name, line, file in reversed(frames):
        if file not in files:
            entry = linecache.cache.get(file, ())
            files[file] = list(entry[2]) if len(entry) == 4 else []
        lines = files[file]
        while len(lines) < lineno:
            lines.append("\n")
        lines[lineno - 1] = f"{line}\n"  # the student's own line, shown back to them
        code = compile(_stand_in_line(lineno, line, raiser is None), file, "exec")
        namespace: dict[str, Any] = {}
        exec(code, namespace)
        function = namespace["_f"]
        function.__code__ = function.__code__.replace(co_name=name, co_qualname=name)
        raiser = functools.partial(function, error if raiser is None else raiser)
    for file, lines in files.items():
        linecache.cache[file] = (0, None, lines, file)
    return raiser


def _frame_file(frame: list[Any], own: str) -> str:
    """The file of one frame an error brought back: the implementation's own, or a module
    brought beside it (a fourth field, a bare ``name.py``); anything else is refused."""
    if len(frame) == 3:
        return own
    file = str(frame[3])
    if not (file.endswith(".py") and file[:-3].isidentifier() and len(file) <= 100):
        raise ValueError(f"not a module's file: {file[:100]!r}")
    return file


def _stand_in_line(lineno: int, line: str, raises: bool) -> str:
    """Source whose function ``_f`` raises ``_next`` (or calls it) on line ``lineno``, spanning
    the columns the real ``line`` spans there, so a report marks no part of it."""
    indent = len(line) - len(line.lstrip())
    width = len(line) - indent
    statement = "raise (_next)" if raises else "(_next)()"
    if width > len(statement):
        statement = statement[:-1] + " " * (width - len(statement)) + statement[-1]
    if lineno < 2 or indent == 0:
        return "\n" * (lineno - 1) + f"def _f(_next): {statement}\n"
    return "\n" * (lineno - 2) + f"def _f(_next):\n{' ' * indent}{statement}\n"
