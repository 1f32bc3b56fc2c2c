"""Regrade only what changed: each phase's result kept under the content that decides it.

Its hashes are ``grader.provenance``'s (the one home of content hashes). The course tests
depend on the student's ``radix.py`` and the kit alone; the
validation of the student's tests and the mutants on the test file and the kit
alone. So ``check`` keys each phase's result by a hash of exactly those
inputs (the kit's version, the catalog, the chapter, the course tests, the
reference, every patch, the phase's file's bytes and the limits) and, given
a ``ResultCache``, reuses a stored result instead of running it again. A
resubmission that changed nothing returns without starting a worker.

The cache is the grader's own: a folder under the user's cache directory
(``$XDG_CACHE_HOME`` or ``~/.cache``), never inside a submission, written
only here, one file per key, atomically. A file that cannot be read as a
result is ignored and the phase runs. Staff commands (``batch``, the
Gradescope autograder) pass no cache at all, so nothing a submission's code
could write there is ever read back as a grade.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

from grader import __version__
from grader.catalog import Chapter
from grader.provenance import canonical, kit_digests, text_digest

CACHE_FORMAT = 1
"""Bumped whenever what a stored result holds changes."""
T = TypeVar("T")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ds07-grader`` or ``~/.cache/ds07-grader``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ds07-grader"


def kit_fingerprint(chapter: Chapter) -> str:
    """A digest of everything in the kit that decides a result: the grader's version and
    code, the catalog, the chapter's content files (``grader.provenance.kit_digests``) and
    the chapter's text."""
    text = text_digest(chapter.text.read_text(encoding="utf-8"))
    parts = [CACHE_FORMAT, __version__, *kit_digests(chapter), text]
    return text_digest(canonical(parts).decode())


def content_key(kit: str, phase: str, *parts: str | float | bool) -> str:
    """The key of ``phase``'s result for these inputs (file texts, limits) within the kit
    whose ``kit_fingerprint`` is ``kit``."""
    return text_digest(canonical([kit, phase, *(repr(part) for part in parts)]).decode())


class ResultCache:
    """The phases' results as JSON files in ``folder``, one per key."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_cache_dir()
        self.hits: set[str] = set()
        """The keys ``get`` found: what a check reused."""

    def get(self, key: str, kind: type[T]) -> T | None:
        """The stored result of ``key`` as a ``kind``, or ``None`` (absent or unreadable)."""
        try:
            data = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
            found: T = from_data(kind, data)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        self.hits.add(key)
        return found

    def put(self, key: str, result: object) -> None:
        """Store ``result`` under ``key``, whole or not at all; a cache that cannot be
        written is no error (the next check runs the phase again)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".part")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(dataclasses.asdict(result), out)  # type: ignore[call-overload]
            os.replace(temporary, self.folder / f"{key}.json")
        except OSError:
            return


def from_data(kind: Any, data: Any) -> Any:
    """``data`` (plain JSON) as a value of type ``kind``: dataclasses, tuples and dicts of
    them rebuilt field by field from the type hints; anything else must already match."""
    origin = typing.get_origin(kind)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        hints = typing.get_type_hints(kind)
        fields = {f.name for f in dataclasses.fields(kind)}
        return kind(**{name: from_data(hints[name], data[name]) for name in fields})
    if origin is tuple:
        (item, *_) = typing.get_args(kind)
        return tuple(from_data(item, value) for value in data)
    if origin is dict:
        _, item = typing.get_args(kind)
        if not isinstance(data, dict):
            raise TypeError("a mapping was expected")
        return {str(k): from_data(item, v) for k, v in data.items()}
    if origin in (typing.Union, types.UnionType):
        options = [option for option in typing.get_args(kind) if option is not type(None)]
        if data is None or len(options) != 1:
            return data
        return from_data(options[0], data)
    if kind is float:
        if not isinstance(data, int | float):
            raise TypeError("a number was expected")
        return float(data)
    return data
