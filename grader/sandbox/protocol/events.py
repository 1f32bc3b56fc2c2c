"""The events channel: each test's outcome, from the recorder inside a run to the worker.

One ``Event`` per frame, JSON, written by the recorder (``untrusted.recorder``)
and read with bounds on size and depth (``EventStream``), then checked field
by field (``well_formed``): the frames come from inside the run, so they may
hold anything.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, NotRequired, TypedDict

from grader.sandbox.protocol.frames import FrameReader, WireError, frame
from grader.sandbox.protocol.status import FAILING, TestStatus

_json_dumps = json.dumps
_json_loads = json.loads


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
_STATUSES = frozenset(TestStatus)


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
        self._frames = FrameReader(EVENT_LIMIT_BYTES)
        self._ended = False
        self._collected: frozenset[str] = frozenset()
        self._reported: set[str] = set()

    def feed(self, data: bytes) -> None:
        """Parse the whole frames ``data`` completes; keep the rest for the next call."""
        if self._ended:
            return
        self._frames.feed(data)
        while not self._ended:
            try:
                body = self._frames.next()
            except WireError:
                self._add(dict(GARBLED))
                self._ended = True
                break
            if body is None:
                break
            self._add(_event_of(body))

    def close(self) -> list[Any]:
        """Every event the stream carried; an incomplete last frame is ``GARBLED``."""
        if self._frames.pending and not self._ended:
            self._add(dict(GARBLED))
        self._ended = True
        self._frames = FrameReader(EVENT_LIMIT_BYTES)
        return self.events

    def _add(self, event: Any) -> None:
        self.events.append(event)
        if not well_formed([event]):
            return
        if event["event"] == "collected":
            self._collected = frozenset(event["names"])
        elif event["event"] == "outcome" and event["name"] not in self._reported:
            self._reported.add(event["name"])
            failing = event["status"] in FAILING and event["name"] in self._collected
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
        if event["event"] == "outcome" and event["status"] not in _STATUSES:
            continue
        kept.append(event)
    return kept
