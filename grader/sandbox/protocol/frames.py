"""The one framing of every channel: a 4-byte big-endian length, then that many bytes.

``frame`` and ``write_all`` are the one writer, ``FrameReader`` the one reader:
whether the bytes arrive by a blocking read (``read``) or as a select loop hands
them over (``feed``, then ``next``), one parser takes each frame out. A frame
longer than its channel's bound is refused before it is read, and a peer that
goes away mid-frame is a ``WireError``, never a hang or a crash. Fixed-size
numbers (a pid, a wait status) are 4 bytes in the same byte order.

The functions used inside a run are bound once at import, so a test that
replaces ``os.write`` or ``json.dumps`` cannot change what is sent.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from typing import Any, Final, Literal

LENGTH_BYTES: Final = 4
NUMBER_BYTES: Final = 4
BYTE_ORDER: Literal["big"] = "big"
MAX_FRAME_BYTES = 64 * 1024 * 1024
"""A frame longer than this is refused: a sign of a broken or hostile peer."""
READ_AHEAD_BYTES = 64 * 1024
"""The most a buffered reader (``FrameReader``) reads at once."""

_json_dumps = json.dumps
_json_loads = json.loads
_read = os.read
_write = os.write


class WireError(Exception):
    """The other end sent something that is not a frame of what it should send, or went away.

    Its message says what came instead, to follow "the process sent".
    """


def channel() -> tuple[int, int]:
    """A one-way channel between two processes, as ``os.pipe()`` gives one: (read end, write
    end), both closed on exec. Only processes handed an end can ever use it."""
    reading, writing = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    reading.shutdown(socket.SHUT_WR)
    writing.shutdown(socket.SHUT_RD)
    return reading.detach(), writing.detach()


# ---------------------------------------------------------------- the writer


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``, all of it (mostly in one call: a frame is written whole)."""
    written = _write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        view = view[_write(fd, view) :]


def frame(body: bytes) -> bytes:
    """``body`` as one frame: its length first."""
    return len(body).to_bytes(LENGTH_BYTES, BYTE_ORDER) + body


# ---------------------------------------------------------------- the reader


class FrameReader:
    """The frames of one channel, however its bytes arrive: the one parser of the framing.

    ``read`` blocks on a descriptor until a whole frame is there; reading
    ``ahead`` bytes at once, one read mostly brings one frame (or more: what
    follows stays for the next), and with ``ahead`` 0 it reads no byte past
    the frame, for a channel that carries something else after it. ``feed``
    and ``next`` serve a caller that reads the bytes itself (a select loop).
    """

    def __init__(self, limit: int = MAX_FRAME_BYTES, ahead: int = READ_AHEAD_BYTES) -> None:
        self.limit = limit
        self.ahead = ahead
        self._buffer = b""
        self._start = 0

    @property
    def pending(self) -> int:
        """How many bytes have arrived that no whole frame took yet."""
        return len(self._buffer) - self._start

    def feed(self, data: bytes) -> None:
        """Keep ``data``, which follows whatever came before."""
        kept = self._buffer[self._start :] if self._start < len(self._buffer) else b""
        self._buffer = kept + data if kept else data
        self._start = 0

    def next(self) -> bytes | None:
        """The body of the next whole frame, or ``None`` while it is incomplete; ``WireError``
        if it announces more than ``limit`` bytes."""
        buffer, start = self._buffer, self._start
        if len(buffer) - start < LENGTH_BYTES:
            return None
        body = start + LENGTH_BYTES
        end = body + _frame_size(buffer[start:body], self.limit)
        if len(buffer) < end:
            return None
        self._start = end
        return buffer[body:end]

    def read(self, fd: int) -> bytes:
        """The body of the next frame on ``fd``, waiting for it; ``WireError`` if the peer is
        gone first or announces more than ``limit`` bytes.

        ``next``'s parse with the reads between, kept lean: a call is two frames and the
        course tests make hundreds of thousands."""
        buffer = self._buffer[self._start :] if self._start else self._buffer
        self._start = 0
        try:
            while len(buffer) < LENGTH_BYTES:
                chunk = _read(fd, self.ahead or LENGTH_BYTES - len(buffer))
                if not chunk:
                    raise WireError("nothing: it ended")
                buffer = buffer + chunk if buffer else chunk
            end = LENGTH_BYTES + _frame_size(buffer[:LENGTH_BYTES], self.limit)
            while len(buffer) < end:
                chunk = _read(fd, max(self.ahead, end - len(buffer)))
                if not chunk:
                    raise WireError("nothing: it ended")
                buffer += chunk
        except OSError as error:
            raise WireError(f"nothing: the channel failed ({error.strerror})") from None
        self._buffer = buffer[end:] if len(buffer) > end else b""
        return buffer[LENGTH_BYTES:end]


def _frame_size(header: bytes, limit: int) -> int:
    """The body size a frame's ``header`` announces; ``WireError`` past ``limit``."""
    size = int.from_bytes(header, BYTE_ORDER)
    if size > limit:
        raise WireError(f"garbage (a frame of {size} bytes, more than {limit})")
    return size


def read_frame(fd: int, limit: int = MAX_FRAME_BYTES) -> bytes:
    """The body of the next frame on ``fd``, reading nothing past it."""
    return FrameReader(limit, ahead=0).read(fd)


def one_frame(data: bytes, limit: int = MAX_FRAME_BYTES) -> bytes:
    """The body of ``data``, which must be exactly one frame (a datagram's)."""
    reader = FrameReader(limit)
    reader.feed(data)
    body = reader.next()
    if body is None or reader.pending:
        raise WireError("garbage (not one whole frame)")
    return body


# ---------------------------------------------------------------- numbers and JSON


def send_number(fd: int, number: int) -> None:
    """Write ``number`` (a pid, a wait status) as a fixed-size signed number."""
    write_all(fd, number.to_bytes(NUMBER_BYTES, BYTE_ORDER, signed=True))


def receive_number(fd: int) -> int | None:
    """The number ``send_number`` wrote; ``None`` if the writer ended first."""
    data = b""
    try:
        while len(data) < NUMBER_BYTES and (chunk := _read(fd, NUMBER_BYTES - len(data))):
            data += chunk
    except OSError:
        return None
    return int.from_bytes(data, BYTE_ORDER, signed=True) if len(data) == NUMBER_BYTES else None


def json_frame(message: Mapping[str, Any]) -> bytes:
    """``message`` as one frame of JSON."""
    return frame(_json_dumps(message).encode())


def send_json(fd: int, message: Mapping[str, Any]) -> None:
    write_all(fd, json_frame(message))


def decode_json(body: bytes) -> Any:
    """The JSON value a frame's ``body`` holds; ``WireError`` if it holds none."""
    try:
        return _json_loads(body)
    except (ValueError, RecursionError) as error:
        raise WireError(f"garbage (a frame that is not JSON: {error})") from None


def receive_json(fd: int, limit: int = MAX_FRAME_BYTES) -> Any:
    """The JSON value of the next frame on ``fd``; ``WireError`` if there is none."""
    return decode_json(read_frame(fd, limit))


def json_of_frame(data: bytes, limit: int = MAX_FRAME_BYTES) -> Any:
    """The JSON value of ``data``, which must be exactly one frame (a datagram's)."""
    return decode_json(one_frame(data, limit))
