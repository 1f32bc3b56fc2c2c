"""The calls between a run's two processes: plain data, and every kind of message.

**Plain data.** Either end of the calls may be hostile (a student's test file
in one process, a student's implementation in the other), so nothing that
crosses may run code when it is read, and nothing but plain data may arrive:
``None``, ``bool``, ``int``, ``float``, ``str``, and tuples and lists of them
(tuples stay tuples, since a test may compare with either). Anything else, an
object with its own ``__eq__`` included, is refused with ``NotPlainData``
before it is sent, so no object of one process ever reaches the other. The
format is ``marshal``'s, version 2: the standard library's own C encoder and
decoder for exactly these types, several times faster than JSON on the small
messages a call makes; version 2 has no back-references, and writes and reads
a call's messages a fifth faster than the default version 4. Unlike
``pickle`` it cannot call anything while decoding; its decoder would build a
few more types (bytes, sets, dicts, code objects), so every value is checked
again after decoding, and a frame with anything but plain data is garbage.

**Messages.** Each is a list: its kind (a constant below, which names its
fields), then its fields. A call costs two of them and the course tests make
hundreds of thousands, so they stay lists on the wire and in memory, read
with ``match`` on the kinds; the rare records a failure brings back
(``ErrorRecord``, ``Hang``) are dataclasses, made from and into their lists here.
"""

from __future__ import annotations

import marshal
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from grader.sandbox.protocol.frames import FrameReader, WireError, frame, write_all

Plain: TypeAlias = bool | int | float | str | list["Plain"] | tuple["Plain", ...] | None
"""What may cross between the tests and the implementation."""
Message: TypeAlias = list[Any]
"""One call message: its kind, then its fields (plain data)."""

# ---------------------------------------------------------------- the kinds
# The test process asks (each field after the kind, in order):
LOAD: Final = "load"
"""``[LOAD]``: import the module now (the tests are collected); answered ``READY`` or
``IMPORT_FAILED``."""
CALL: Final = "call"
"""``[CALL, handle, member]`` (no arguments), or ``[CALL, handle, member, args, keywords,
places]``: call a member; keywords as ``[name, value]`` pairs, a callback's argument
``None`` and its place (index or keyword) in ``places``, as ``[place]`` if it is a
plain list's ``append``."""
NEW: Final = "new"
"""``[NEW, class, args, keywords, places]``: make an object; answered with its handle."""
GET: Final = "get"
"""``[GET, handle, attribute]``: read an attribute."""
COPY: Final = "copy"
"""``[COPY, handle, deep]``: a copy (``copy.deepcopy`` if ``deep``); answered with its handle."""
WALK: Final = "walk"
"""``[WALK, handle, start, via, each, once, check]``: a whole graph in one request
(``untrusted.implementation.walk``)."""
DROP: Final = "drop"
"""``[DROP, handles]``: the test process dropped these objects; no answer."""
RETURNED: Final = "returned"
"""``[RETURNED, value]``: a callback returned ``value``."""
RAISED: Final = "raised"
"""``[RAISED, key]``: a callback raised; the test process keeps the error under ``key``."""

# The implementation process answers:
READY: Final = "ready"
"""``[READY, offered]``: the module loaded; ``offered`` lists ``[name, kind, detail]``
(``class`` with its ``[member, kind]`` pairs, ``type``, ``value`` or ``opaque``)."""
IMPORT_FAILED: Final = "import-failed"
"""``[IMPORT_FAILED, *ErrorRecord]``: the module did not load."""
OK: Final = "ok"
"""``[OK, value]``: the request's result."""
RAISE: Final = "raise"
"""``[RAISE, *ErrorRecord]``: the request raised."""
NOT_PLAIN: Final = "not-plain"
"""``[NOT_PLAIN, text]``: the result cannot cross."""
CALLBACK: Final = "callback"
"""``[CALLBACK, place, args]``: call the callback passed at ``place``; answered
``RETURNED`` or ``RAISED``, or by a request the callback makes first."""
APPENDED: Final = "appended"
"""``[APPENDED, place, args]``: a list's ``append`` collected during the request, made
just before its answer is read."""
CALLBACK_FAILED: Final = "callback-failed"
"""``[CALLBACK_FAILED, key]``: the callback's error ``key`` (``RAISED``) ended the request."""
HUNG: Final = "hung"
"""``[HUNG, *Hang]``: the request passed its bound (``untrusted.bound.CallBound``)."""

DID_NOT_RETURN = "did not return from `"
"""What the stand-in's one line says of a call of the student's own tree that passed its
bound (``untrusted.proxy.ImplementationHung``), and the grader looks for in a test's report
(``RunResult.hung``) to tell a hung tree from a slow test."""


@dataclass(frozen=True)
class ErrorRecord:
    """An exception of the implementation as plain data (``RAISE``, ``IMPORT_FAILED``)."""

    base: str
    """Its nearest built-in type's name."""
    arguments: Plain
    """Its arguments, if plain data (a ``SyntaxError``'s as ``[msg, [file, line, offset,
    text]]``), else ``None``."""
    text: str
    own_type: str
    frames: list[Any]
    """The frames it passed through, outermost first: ``[line, function, text]`` in the
    module's own file, ``[line, function, text, file]`` in a module brought beside it."""

    def message(self, kind: str) -> Message:
        return [kind, self.base, self.arguments, self.text, self.own_type, self.frames]

    @classmethod
    def of(cls, fields: list[Any]) -> ErrorRecord:
        """The record a message's fields after its kind hold; ``WireError`` if they cannot."""
        if len(fields) != 5 or not isinstance(fields[4], list):
            raise WireError("garbage (an error record of another shape)")
        base, arguments, text, own_type, frames = fields
        return cls(str(base), arguments, str(text), str(own_type), frames)


@dataclass(frozen=True)
class Hang:
    """Where a call that passed its bound was (``HUNG``)."""

    member: str
    """The member called: the outermost frame of the module's own, where there is one."""
    seconds: float
    """The bound it passed: CPU seconds, or the seconds it waited without computing."""
    frames: list[Any]
    """``[line, function, text, file]`` of each frame of the module's files, outermost first."""
    waiting: bool

    def message(self) -> Message:
        return [HUNG, self.member, self.seconds, self.frames, self.waiting]

    @classmethod
    def of(cls, fields: list[Any]) -> Hang:
        if len(fields) != 4 or not isinstance(fields[2], list):
            raise WireError("garbage (a hang of another shape)")
        member, seconds, frames, waiting = fields
        return cls(str(member), float(seconds), frames, bool(waiting))


# ---------------------------------------------------------------- plain data

MAX_DEPTH = 100
"""How deeply tuples and lists may nest in one value of plain data."""
MARSHAL_VERSION = 2

_SCALARS = frozenset({int, str, bool, float, type(None)})
_dumps = marshal.dumps
_loads = marshal.loads


class NotPlainData(TypeError):
    """A value that cannot cross between the processes."""


def check_plain(value: Any, depth: int = 0) -> None:
    """Raise ``NotPlainData`` unless ``value`` is plain data (see the module docstring).

    Every call's arguments and answer pass here, so each call looks two levels deep (a
    list of lists is what the calls mostly carry): half the Python calls of one per level."""
    kind = type(value)
    if kind in _SCALARS:
        return
    if kind is not tuple and kind is not list:
        raise _not_plain(kind)
    if depth >= MAX_DEPTH:
        raise _too_deep()
    for item in value:
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is not tuple and kind is not list:
            raise _not_plain(kind)
        if depth + 1 >= MAX_DEPTH:
            raise _too_deep()
        for inner in item:
            if type(inner) not in _SCALARS:
                check_plain(inner, depth + 2)


def _not_plain(kind: type) -> NotPlainData:
    return NotPlainData(
        f"a value of type {kind.__name__} cannot cross between the tests and the "
        "implementation: only None, bool, int, float, str, and tuples and lists of them can"
    )


def _too_deep() -> NotPlainData:
    return NotPlainData(f"values nest deeper than {MAX_DEPTH} levels")


def encode(message: object) -> bytes:
    """One frame holding ``message``; ``NotPlainData`` if it is not plain data."""
    check_plain(message)
    return frame(_dumps(message, MARSHAL_VERSION))  # type: ignore[arg-type]  # plain: checked


def send(fd: int, message: object) -> None:
    """Write one frame holding ``message`` to ``fd``, all of it."""
    write_all(fd, encode(message))


class Calls:
    """The reading end of a call channel: one message per frame, checked to be plain data.

    A peer writes each frame whole, so one read mostly brings one frame (or
    more: the reader keeps what follows), not two reads of header and body.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._frames = FrameReader()

    def receive(self) -> Message:
        """The next message; ``WireError`` if the peer is gone or sent anything but a
        message of plain data."""
        body = self._frames.read(self.fd)
        try:
            message: Message = _loads(body)
            check_plain(message)
        except (ValueError, EOFError, TypeError, RecursionError) as error:
            raise WireError(f"garbage (a frame that is not plain data: {error})") from None
        return message  # a list from a well-behaved peer: readers match it against the kinds
