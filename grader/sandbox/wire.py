"""The wire between a test process and its implementation process: framing and plain data.

Either end may be hostile (a student's test file in one, a student's
implementation in the other), so nothing that crosses may run code when it
is read, and nothing but plain data may arrive: ``None``, ``bool``, ``int``,
``float``, ``str``, and tuples and lists of them (tuples stay tuples, since
a test may compare with either). Anything else, an object with its own
``__eq__`` included, is refused with ``NotPlainData`` before it is sent, so
no object of one process ever reaches the other.

The format is ``marshal``'s, version 4: the standard library's own C
encoder and decoder for exactly these types, several times faster than JSON
on the small messages a call makes (a call's cost is mostly this, and the
course tests make hundreds of thousands). Unlike ``pickle`` it cannot call
anything while decoding: it builds values only. Its decoder would also
build a few more types (bytes, sets, dicts, code objects), so every value
is checked again after decoding, before anything uses it, and a frame with
anything but plain data is refused as garbage.

A frame is a 4-byte big-endian length and that many bytes of marshal data.

Every channel a verdict travels on (jobs, records, a run's events, the fork
server's) is made by ``channel``: a Unix socket, not a pipe. A process with
ptrace rights over a holder of a pipe (root, or the same user where the
holder is dumpable) can open it again through ``/proc/PID/fd`` and write
into it, and so forge what the other end reads; ``/proc`` cannot open a
socket at all. The calls between a run's two processes stay on pipes, which
cost a fifth less per call: both ends are confined and not dumpable, so only
root could reach them.
"""

from __future__ import annotations

import marshal
import os
import socket
from typing import Any

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""A frame longer than this is refused: a sign of a broken or hostile peer."""
MAX_DEPTH = 100
"""How deeply tuples and lists may nest in one value."""
MARSHAL_VERSION = 4

_SCALARS = frozenset({int, str, bool, float, type(None)})
_dumps = marshal.dumps
_loads = marshal.loads
_read = os.read
_write = os.write


def channel() -> tuple[int, int]:
    """A one-way channel between two processes, as ``os.pipe()`` gives one: (read end, write
    end), both closed on exec. Only processes handed an end can ever use it."""
    reading, writing = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    reading.shutdown(socket.SHUT_WR)
    writing.shutdown(socket.SHUT_RD)
    return reading.detach(), writing.detach()


class NotPlainData(TypeError):
    """A value that cannot cross between the processes."""


class WireError(Exception):
    """The other end sent something that is not a frame of plain data, or went away.

    Its message says what came instead, to follow "the process sent".
    """


def check_plain(value: Any, depth: int = 0) -> None:
    """Raise ``NotPlainData`` unless ``value`` is plain data (see the module docstring)."""
    kind = type(value)
    if kind in _SCALARS:
        return
    if kind is not tuple and kind is not list:
        raise NotPlainData(
            f"a value of type {kind.__name__} cannot cross between the tests and the "
            "implementation: only None, bool, int, float, str, and tuples and lists of them can"
        )
    if depth >= MAX_DEPTH:
        raise NotPlainData(f"values nest deeper than {MAX_DEPTH} levels")
    for item in value:
        if type(item) not in _SCALARS:
            check_plain(item, depth + 1)


def encode(message: Any) -> bytes:
    """One frame holding ``message``; ``NotPlainData`` if it is not plain data."""
    check_plain(message)
    body = _dumps(message, MARSHAL_VERSION)
    return len(body).to_bytes(4, "big") + body


def send(fd: int, message: Any) -> None:
    """Write one frame holding ``message`` to ``fd``, all of it."""
    send_frame(fd, encode(message))


def send_frame(fd: int, frame: bytes) -> None:
    """Write ``frame`` to ``fd``, all of it."""
    data = memoryview(frame)
    while data:
        data = data[_write(fd, data) :]


def receive(fd: int) -> Any:
    """Read one frame from ``fd``; ``WireError`` if the peer is gone or sent garbage."""
    try:
        size = int.from_bytes(_read_exactly(fd, 4), "big")
        if size > MAX_FRAME_BYTES:
            raise WireError(f"garbage (a frame of {size} bytes, more than {MAX_FRAME_BYTES})")
        body = _read_exactly(fd, size)
    except OSError as error:
        raise WireError(f"nothing: the channel failed ({error.strerror})") from None
    try:
        message = _loads(body)
        check_plain(message)
    except (ValueError, EOFError, TypeError, RecursionError) as error:
        raise WireError(f"garbage (a frame that is not plain data: {error})") from None
    return message


def _read_exactly(fd: int, size: int) -> bytes:
    chunk = _read(fd, size)
    if len(chunk) == size:
        return chunk
    parts = [chunk]
    got = len(chunk)
    while got < size:
        if not chunk:
            raise WireError("nothing: it ended")
        chunk = _read(fd, size - got)
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)
