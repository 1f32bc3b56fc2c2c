"""Every message that crosses between the sandbox's processes, and the one framing they share.

**Framing.** Every channel carries frames: a 4-byte big-endian length, then
that many bytes (``frame``, ``read_frame``, ``take_frame``); fixed-size numbers
(a pid, a wait status) are 4 bytes in the same byte order. ``write_all`` and
``read_exactly`` are the only loops over ``os.write`` and ``os.read``. A frame
longer than its channel's bound is refused before it is read, and a peer that
goes away mid-frame is a ``WireError``, never a hang or a crash.

**Channels and what they carry.**

- grader -> worker, its control socket: one ``JobMessage`` (JSON) per job,
  with the sources as descriptors beside it;
- worker -> grader, the worker's stdout: ``Started``, then the ``RunRecord``;
- worker -> a run's root (the fork server's child): ``SpawnMessage``; the
  root answers with its pid, then the run's wait status, as numbers;
- test process -> worker, the events channel: one ``Event`` per frame, JSON,
  written by the recorder inside the run and read with bounds on size and
  depth (``parse_events``), then checked field by field (``well_formed``);
- test process <-> implementation process: plain data (below).

**Plain data.** Either end of the calls between a run's two processes may be
hostile (a student's test file in one, a student's implementation in the
other), so nothing that crosses may run code when it is read, and nothing
but plain data may arrive: ``None``, ``bool``, ``int``, ``float``, ``str``,
and tuples and lists of them (tuples stay tuples, since a test may compare
with either). Anything else, an object with its own ``__eq__`` included, is
refused with ``NotPlainData`` before it is sent, so no object of one process
ever reaches the other. The format is ``marshal``'s, version 2: the standard
library's own C encoder and decoder for exactly these types, several times
faster than JSON on the small messages a call makes (a call's cost is mostly
this, and the course tests make hundreds of thousands); version 2 has no
back-references, and writes and reads a call's messages a fifth faster than
the default version 4. Unlike ``pickle`` it
cannot call anything while decoding: it builds values only. Its decoder
would also build a few more types (bytes, sets, dicts, code objects), so
every value is checked again after decoding, and a frame with anything but
plain data is refused as garbage.

**Sockets, not pipes.** Every channel a verdict travels on (jobs, records, a
run's events, the fork server's) is made by ``channel``: a Unix socket. A
process with ptrace rights over a holder of a pipe (root, or the same user
where the holder is dumpable) can open it again through ``/proc/PID/fd`` and
write into it, and so forge what the other end reads; ``/proc`` cannot open a
socket at all. The calls between a run's two processes stay on pipes, which
cost a fifth less per call: both ends are confined and not dumpable, so only
root could reach them.

The functions used inside a run are bound once at import, so a test that
replaces ``os.write`` or ``json.dumps`` cannot change what is sent.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import socket
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, get_args

LENGTH_BYTES = 4
NUMBER_BYTES = 4
BYTE_ORDER: Literal["big"] = "big"
MAX_FRAME_BYTES = 64 * 1024 * 1024
"""A frame longer than this is refused: a sign of a broken or hostile peer."""
MAX_DEPTH = 100
"""How deeply tuples and lists may nest in one value of plain data."""
MARSHAL_VERSION = 2
READ_AHEAD_BYTES = 64 * 1024
"""The most a call channel reads at once."""
MAX_JOB_BYTES = 1 << 20
"""The longest job message a worker takes on its control socket."""

_SCALARS = frozenset({int, str, bool, float, type(None)})
_dumps = marshal.dumps
_loads = marshal.loads
_json_dumps = json.dumps
_json_loads = json.loads
_read = os.read
_write = os.write


class WireError(Exception):
    """The other end sent something that is not a frame of what it should send, or went away.

    Its message says what came instead, to follow "the process sent".
    """


class NotPlainData(TypeError):
    """A value that cannot cross between the processes."""


def channel() -> tuple[int, int]:
    """A one-way channel between two processes, as ``os.pipe()`` gives one: (read end, write
    end), both closed on exec. Only processes handed an end can ever use it."""
    reading, writing = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    reading.shutdown(socket.SHUT_WR)
    writing.shutdown(socket.SHUT_RD)
    return reading.detach(), writing.detach()


# ---------------------------------------------------------------- framing


def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``, all of it (mostly in one call: a frame is written whole)."""
    written = _write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        view = view[_write(fd, view) :]


def read_exactly(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd``; ``WireError`` if the channel ends first."""
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


def frame(body: bytes) -> bytes:
    """``body`` as one frame: its length first."""
    return len(body).to_bytes(LENGTH_BYTES, BYTE_ORDER) + body


def read_frame(fd: int, limit: int = MAX_FRAME_BYTES) -> bytes:
    """The body of the next frame on ``fd``; ``WireError`` if the peer is gone or announces
    more than ``limit`` bytes."""
    try:
        return read_exactly(fd, _frame_size(read_exactly(fd, LENGTH_BYTES), limit))
    except OSError as error:
        raise WireError(f"nothing: the channel failed ({error.strerror})") from None


def take_frame(buffer: bytes, limit: int = MAX_FRAME_BYTES) -> tuple[bytes | None, bytes]:
    """The body of the first whole frame in ``buffer`` and what follows it, or ``None`` and
    ``buffer`` while the frame is incomplete; ``WireError`` if it announces more than
    ``limit`` bytes."""
    if len(buffer) < LENGTH_BYTES:
        return None, buffer
    end = LENGTH_BYTES + _frame_size(buffer[:LENGTH_BYTES], limit)
    if len(buffer) < end:
        return None, buffer
    return buffer[LENGTH_BYTES:end], buffer[end:]


def _frame_size(header: bytes, limit: int) -> int:
    """The body size a frame's ``header`` announces; ``WireError`` past ``limit``."""
    size = int.from_bytes(header, BYTE_ORDER)
    if size > limit:
        raise WireError(f"garbage (a frame of {size} bytes, more than {limit})")
    return size


def send_number(fd: int, number: int) -> None:
    """Write ``number`` (a pid, a wait status) as a fixed-size signed number."""
    write_all(fd, number.to_bytes(NUMBER_BYTES, BYTE_ORDER, signed=True))


def receive_number(fd: int) -> int | None:
    """The number ``send_number`` wrote; ``None`` if the writer ended first."""
    try:
        data = read_exactly(fd, NUMBER_BYTES)
    except (WireError, OSError):
        return None
    return int.from_bytes(data, BYTE_ORDER, signed=True)


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
    body, rest = take_frame(data, limit)
    if body is None or rest:
        raise WireError("garbage (not one whole frame)")
    return decode_json(body)


# ---------------------------------------------------------------- grader, worker, run root


class Contract(TypedDict):
    """What the tests may reach of the module under test (``Interface`` as the worker reads
    it); ``names`` and ``members`` ``None``: every public one."""

    names: list[str] | None
    members: dict[str, list[str]] | None
    exceptions: list[str]
    private: list[str]
    frames: bool


class JobMessage(TypedDict):
    """A job, from the grader to a worker; the sources come beside it as descriptors
    (implementation, tests, then one per name in ``dependencies``)."""

    test_name: str
    time_limit: float
    module: str
    reverse: bool
    contract: Contract
    cpus: list[int]
    """Where the test process may run: the same CPUs in every run."""
    implementation_cpus: NotRequired[list[int]]
    """Where the implementation process runs (its worker's CPU, so that a call and its answer
    go on one CPU); the worker drops it from the test process's copy of the job."""
    kit_tests: bool
    """The test file is the kit's own: its process runs on ``implementation_cpus`` too."""
    dependencies: list[str]
    ceiling: float
    only: list[str]
    """The tests of the file to run (pytest node names within it); empty: all of them."""
    leave_out: list[str]
    """The tests of the file not to run."""
    stop_at_failure: bool
    """End the run as soon as a test fails (``EventStream.failed``): the worker's rule, which
    nothing inside the run can see."""
    wall: float
    call_limit: NotRequired[float]
    """The CPU seconds one call of the implementation may take before it counts as hung (the
    student's own tree only: ``untrusted.implementation.CallBound``); absent or 0: no bound.
    The worker drops it from the test process's copy of the job."""
    heap_shift: int
    """The objects of each small size the test process keeps before its first test
    (``Job.heap_shift``)."""
    hypothesis_seed: NotRequired[int]
    """The seed hypothesis draws examples from (``Job.hypothesis_seed``); absent: the
    derandomized one, as every graded run."""


class RunJob(JobMessage):
    """A job as one of a run's two processes gets it: the run's folder, and which it is."""

    folder: str
    kind: Literal["implementation", "test"]


class SpawnMessage(TypedDict):
    """From the worker to a run's root: what to run, where, as whom, in which cgroups."""

    job: RunJob
    workdir: str
    identity: int | None
    cgroups: list[str]


class Started(TypedDict):
    """From the worker to the grader as a run starts: its test process's root."""

    pid: int


class RunRecord(TypedDict):
    """From the worker to the grader once a run is over: what it saw of the run."""

    events: list[Any]
    """What ``parse_events`` made of the events channel, not yet checked (``well_formed``)."""
    timed_out: bool
    stopped: bool
    """The worker ended the run at its first failing test (the job's ``stop_at_failure``)."""
    exit_code: int | None
    parent_killed: bool
    over_cap: str
    """Why the run's folder went over its caps (``confine.folders.folder_over_cap``), or empty: the
    run then failed, whatever its tests reported."""
    seconds: float
    cpu_seconds: float
    output: str
    steps: dict[str, float]
    """Milliseconds per step of the run, by the worker's clock (``worker.server.STEPS``)."""


# ---------------------------------------------------------------- the events of a run

TestStatus = Literal["passed", "failed", "error", "skipped", "timeout", "not run"]
"""A test's outcome in one run."""
STATUSES = frozenset(get_args(TestStatus))

HUNG = "did not return from `"
"""What the stand-in's one line says of a call of the student's own tree that passed its
bound (``untrusted.proxy.ImplementationHung``), and the grader looks for in a test's report
(``RunResult.hung``) to tell a hung tree from a slow test."""


class CollectedEvent(TypedDict):
    event: Literal["collected"]
    names: list[str]


class CollectionErrorEvent(TypedDict):
    event: Literal["collection_error"]
    detail: str


class StartEvent(TypedDict):
    event: Literal["start"]
    name: str


class OutcomeEvent(TypedDict):
    event: Literal["outcome"]
    name: str
    status: TestStatus
    detail: str
    seconds: NotRequired[float]
    """How long the test took, as the test process measured it: anything, till bounded."""


class FinishedEvent(TypedDict):
    event: Literal["finished"]
    exitstatus: NotRequired[int]


Event = CollectedEvent | CollectionErrorEvent | StartEvent | OutcomeEvent | FinishedEvent

EVENT_FIELDS: dict[str, dict[str, type]] = {
    "collected": {"names": list},
    "collection_error": {"detail": str},
    "start": {"name": str},
    "outcome": {"name": str, "status": str, "detail": str},
    "finished": {},
}
"""Each event the recorder sends and the type of each field an event must have."""
EVENT_LIMIT_BYTES = 64 * 1024
"""The longest event frame the worker parses; the recorder's longest, a failure's detail cut
at ``recorder.DETAIL_LIMIT`` characters, stays well below it."""
EVENT_DEPTH_LIMIT = 4
"""How deeply brackets may nest in one event: an event is an object of strings, numbers and
one list of strings, two levels."""
GARBLED: dict[str, Any] = {"event": "garbled"}
"""What ``parse_events`` puts where a frame is no event; no such event is well formed."""


def event_frame(event: Event) -> bytes:
    """``event`` as the recorder sends it: one frame of JSON."""
    return frame(_json_dumps(event).encode())


def parse_events(buffer: bytes) -> list[Any]:
    """The events in ``buffer`` (``EventStream``, given it all at once)."""
    stream = EventStream()
    stream.feed(buffer)
    return stream.close()


class EventStream:
    """A run's events parsed as their bytes arrive, one JSON frame each.

    A frame that is too long, too deeply nested or no JSON at all becomes
    ``GARBLED``, which fails the run, and so does an incomplete last frame;
    after a frame too long the rest cannot be told apart, so the stream ends.
    The frames come from inside the run: a frame of 100,000 ``[`` would make
    the JSON parser recurse until the worker itself died, so depth is measured
    before anything parses it. Each byte is parsed once, however the writer
    splits its frames.

    ``failed`` names the first test whose first outcome failed or errored, among
    the tests collected (the tests ``interpret`` reads outcomes for). A stream
    ``until_failure`` ends there: what the run sent after it, which depends on
    how fast the run went on before it was stopped, is not kept.
    """

    def __init__(self, until_failure: bool = False) -> None:
        self.until_failure = until_failure
        self.events: list[Any] = []
        self.failed: str | None = None
        self._pending = bytearray()
        self._ended = False
        self._collected: frozenset[str] = frozenset()
        self._reported: set[str] = set()

    def feed(self, data: bytes) -> None:
        """Parse the whole frames ``data`` completes; keep the rest for the next call."""
        if self._ended:
            return
        self._pending += data
        start = 0
        while not self._ended and len(self._pending) - start >= LENGTH_BYTES:
            try:
                header = bytes(self._pending[start : start + LENGTH_BYTES])
                end = start + LENGTH_BYTES + _frame_size(header, EVENT_LIMIT_BYTES)
            except WireError:
                self._add(dict(GARBLED))
                self._ended = True
                continue
            if len(self._pending) < end:
                break
            self._add(_event_of(bytes(self._pending[start + LENGTH_BYTES : end])))
            start = end
        del self._pending[: len(self._pending) if self._ended else start]

    def close(self) -> list[Any]:
        """Every event the stream carried; an incomplete last frame is ``GARBLED``."""
        if self._pending and not self._ended:
            self._add(dict(GARBLED))
        self._ended = True
        self._pending.clear()
        return self.events

    def _add(self, event: Any) -> None:
        self.events.append(event)
        if not well_formed([event]):
            return
        if event["event"] == "collected":
            self._collected = frozenset(event["names"])
        elif event["event"] == "outcome" and event["name"] not in self._reported:
            self._reported.add(event["name"])
            failing = event["status"] in ("failed", "error") and event["name"] in self._collected
            if failing and self.failed is None:
                self.failed = event["name"]
                self._ended = self.until_failure


def _event_of(body: bytes) -> Any:
    """One event frame's body as JSON, or ``GARBLED``, its depth bounded before parsing."""
    if _depth(body) > EVENT_DEPTH_LIMIT:
        return dict(GARBLED)
    try:
        return _json_loads(body)
    except (ValueError, RecursionError):
        return dict(GARBLED)


def _depth(text: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in the JSON ``text``, outside strings (a bound
    from above where it is malformed)."""
    outside = re.sub(rb'"(?:[^"\\]|\\.)*"', b"", text)
    depth = deepest = 0
    for byte in outside:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth -= 1
    return deepest


def well_formed(events: Any) -> list[Event]:
    """The events of a record that the recorder could have sent; anything else is dropped.

    The channel is written from inside the run, so a frame may hold anything JSON can
    (``1``, a list, a field of the wrong type): such a frame is no event, and the run
    it belongs to ends as crashed, with no outcome forged from it.
    """
    kept: list[Any] = []
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict):
            continue
        fields = EVENT_FIELDS.get(str(event.get("event")))
        if fields is None or not all(isinstance(event.get(k), t) for k, t in fields.items()):
            continue
        if event["event"] == "collected" and not all(isinstance(n, str) for n in event["names"]):
            continue
        if event["event"] == "outcome" and event["status"] not in STATUSES:
            continue
        kept.append(event)
    return kept


# ---------------------------------------------------------------- plain data


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


def encode(message: Any) -> bytes:
    """One frame holding ``message``; ``NotPlainData`` if it is not plain data."""
    check_plain(message)
    return frame(_dumps(message, MARSHAL_VERSION))


def send(fd: int, message: Any) -> None:
    """Write one frame holding ``message`` to ``fd``, all of it."""
    write_all(fd, encode(message))


class Calls:
    """The reading end of a call channel: plain data, frame by frame.

    A peer writes each frame whole, so one read mostly brings one frame (or
    more: what follows stays here for the next), not two reads of header and
    body; a call is two frames, and there are hundreds of thousands.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""

    def receive(self) -> Any:
        """The next frame's plain data; ``WireError`` if the peer is gone or sent garbage."""
        buffer = self._buffer
        try:
            while len(buffer) < LENGTH_BYTES:
                chunk = _read(self.fd, READ_AHEAD_BYTES)
                if not chunk:
                    raise WireError("nothing: it ended")
                buffer = buffer + chunk if buffer else chunk
            end = LENGTH_BYTES + _frame_size(buffer[:LENGTH_BYTES], MAX_FRAME_BYTES)
            if len(buffer) < end:
                buffer += read_exactly(self.fd, end - len(buffer))
        except OSError as error:
            raise WireError(f"nothing: the channel failed ({error.strerror})") from None
        self._buffer = buffer[end:] if len(buffer) > end else b""
        try:
            message = _loads(memoryview(buffer)[LENGTH_BYTES:end])  # marshal reads it in place
            check_plain(message)
        except (ValueError, EOFError, TypeError, RecursionError) as error:
            raise WireError(f"garbage (a frame that is not plain data: {error})") from None
        return message
