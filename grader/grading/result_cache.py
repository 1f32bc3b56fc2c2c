"""Regrade only what changed: each phase's result kept under the content that decides it.

Its hashes are ``grader.inputs.provenance``'s (the one home of content hashes). The course tests
depend on the student's ``radix.py`` and the kit alone; the
validation of the student's tests and the mutants on the test file and the kit
alone. So ``check`` keys each phase's result by a hash of exactly those
inputs (the kit's version, the catalog, the chapter, the course tests, the
reference, every patch, the phase's file's bytes, the limits and the isolation
level the runs *got*) and, given a ``ResultCache``, reuses a stored result
instead of running it again. A resubmission that changed nothing returns
without starting a worker.

An entry is data to check, never an authority (docs/security.md): anyone with
the kit can compute a key, and at the level ``none`` a student's code runs as
the grader's own user. So the cache is the grader user's own folder (mode
0700, under ``$XDG_CACHE_HOME`` or ``~/.cache``, never inside a submission),
and each entry carries an HMAC-SHA256 over its key, its level and its body,
keyed by a secret made on first use (mode 0600) that no run at ``uid`` or
``namespaces`` can read. An entry is served only to a check whose runs get
the very level it was made at, with a valid MAC; anything else (absent,
unreadable, forged, another level, a folder or secret that is not the
grader user's alone) is a miss and the phase runs. Entries made at ``none``
can be forged by the code they graded, so they serve only checks at
``none`` (practice); and as root at ``none`` (where a run could read the
secret) nothing is read or written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import stat
import tempfile
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from grader import __version__
from grader.inputs.catalog import Chapter
from grader.inputs.provenance import canonical, kit_digests, mac, mac_matches, text_digest
from grader.sandbox.levels import IsolationLevel

CACHE_FORMAT = 2
"""Bumped whenever what a stored result holds changes (2: entries signed, keyed by level)."""
SECRET = "secret"
"""The file in the cache folder that holds the MAC key (made on first use, mode 0600)."""
SECRET_BYTES = 32
T = TypeVar("T")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ds07-grader`` or ``~/.cache/ds07-grader``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ds07-grader"


def kit_fingerprint(chapter: Chapter) -> str:
    """A digest of everything in the kit that decides a result: the grader's version and
    code, the catalog, the chapter's content files (``grader.inputs.provenance.kit_digests``) and
    the chapter's text."""
    text = text_digest(chapter.text.read_text(encoding="utf-8"))
    parts = [CACHE_FORMAT, __version__, *kit_digests(chapter), text]
    return text_digest(canonical(parts).decode())


def content_key(kit: str, phase: str, *parts: str | float | bool) -> str:
    """The key of ``phase``'s result for these inputs (file texts, limits, the level the runs
    get) within the kit whose ``kit_fingerprint`` is ``kit``."""
    return text_digest(canonical([kit, phase, *(repr(part) for part in parts)]).decode())


class ResultCache:
    """The phases' results as signed JSON files in ``folder``, one per key (module docstring)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_cache_dir()
        self.hits: set[str] = set()
        """The keys ``get`` found: what a check reused."""
        self._secret: bytes | None = None

    def get(self, key: str, kind: type[T], level: IsolationLevel) -> T | None:
        """The stored result of ``key`` as a ``kind``, if it was made by this grader user at
        ``level`` and is signed so; ``None`` otherwise (absent, unreadable, forged)."""
        secret = self._own_secret(level, make=False)
        if secret is None:
            return None
        try:
            with open(self.folder / f"{key}.json", "rb", opener=_no_follow) as entry:
                signature, _, body = entry.read().partition(b"\n")
            if not mac_matches(secret, body, signature.decode("ascii")):
                return None
            envelope = json.loads(body)
            if envelope["key"] != key or envelope["level"] != level:
                return None
            found: T = from_data(kind, envelope["result"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        if getattr(found, "isolation", level) != level:
            return None
        self.hits.add(key)
        return found

    def put(self, key: str, result: object, level: IsolationLevel) -> None:
        """Store ``result``, made by runs at ``level``, under ``key``, signed, whole or not at
        all; a cache that cannot be written is no error (the next check runs the phase)."""
        secret = self._own_secret(level, make=True)
        if secret is None:
            return
        envelope = {"key": key, "level": level, "result": dataclasses.asdict(result)}  # type: ignore[call-overload]
        body = json.dumps(envelope).encode()
        try:
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".part")
            with os.fdopen(handle, "wb") as out:
                out.write(mac(secret, body).encode("ascii") + b"\n" + body)
            os.replace(temporary, self.folder / f"{key}.json")
        except OSError:
            return

    def _own_secret(self, level: IsolationLevel, make: bool) -> bytes | None:
        """The MAC key, if the folder and the secret are this user's alone (made, with the
        folder, on first use when ``make``); ``None`` when the cache must not be used: a
        folder or secret another user owns or may read, or root at ``none``, where a run
        is root and could read the secret."""
        if level == "none" and os.geteuid() == 0:
            return None
        if self._secret is not None:
            return self._secret
        try:
            if make:
                self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not _private(os.lstat(self.folder), stat.S_ISDIR):
                return None
            path = self.folder / SECRET
            if make and not path.exists():
                with contextlib.suppress(FileExistsError):
                    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(descriptor, "wb") as out:
                        out.write(secrets.token_bytes(SECRET_BYTES))
            with open(path, "rb", opener=_no_follow) as stored:
                if not _private(os.fstat(stored.fileno()), stat.S_ISREG):
                    return None
                secret = stored.read()
        except OSError:
            return None
        if len(secret) != SECRET_BYTES:
            return None
        self._secret = secret
        return secret


def _no_follow(path: str, flags: int) -> int:
    """Open ``path`` without following a symbolic link in its last part."""
    return os.open(path, flags | os.O_NOFOLLOW)


def _private(status: os.stat_result, is_kind: Callable[[int], bool]) -> bool:
    """Whether a folder or file is of its kind, this user's, and nobody else's to read."""
    mode = status.st_mode
    return is_kind(mode) and status.st_uid == os.geteuid() and mode & 0o077 == 0


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
