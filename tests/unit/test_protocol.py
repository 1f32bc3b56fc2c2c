"""The one framing every sandbox channel uses, and the bounded reading of a run's events."""

from __future__ import annotations

import json
import os

import pytest

from grader.sandbox.protocol import calls, frames
from grader.sandbox.protocol import events as wire_events
from grader.sandbox.protocol.events import GARBLED
from grader.sandbox.protocol.frames import WireError
from grader.sandbox.protocol.status import TestStatus


def test_a_frame_is_its_big_endian_length_then_its_body() -> None:
    assert frames.frame(b"abc") == b"\x00\x00\x00\x03abc"
    reader = frames.FrameReader()
    reader.feed(frames.frame(b"abc") + b"\x00")
    assert (reader.next(), reader.pending) == (b"abc", 1)  # the rest waits for its frame


def test_an_incomplete_frame_waits_and_a_long_one_is_refused() -> None:
    whole = frames.frame(b"abcdef")
    for cut in range(len(whole)):
        reader = frames.FrameReader()
        reader.feed(whole[:cut])
        assert (reader.next(), reader.pending) == (None, cut)
    reader = frames.FrameReader(limit=5)
    reader.feed(whole)
    with pytest.raises(WireError, match="more than 5"):
        reader.next()


def test_numbers_cross_signed_in_the_same_byte_order() -> None:
    read_end, write_end = os.pipe()
    for number in (0, 1, 4_194_304, -9, 0x7FFF_FFFF):
        frames.send_number(write_end, number)
        assert frames.receive_number(read_end) == number
    os.write(write_end, b"\x00\x01")
    os.close(write_end)
    assert frames.receive_number(read_end) is None  # the writer ended mid-number
    os.close(read_end)


def test_a_json_message_crosses_in_one_frame() -> None:
    read_end, write_end = os.pipe()
    frames.send_json(write_end, {"pid": 7})
    assert frames.receive_json(read_end) == {"pid": 7}
    os.close(write_end)
    with pytest.raises(WireError, match="it ended"):
        frames.receive_json(read_end)
    os.close(read_end)
    assert frames.json_of_frame(frames.json_frame({"a": [1]})) == {"a": [1]}
    with pytest.raises(WireError, match="not one whole frame"):
        frames.json_of_frame(frames.json_frame({"a": 1}) + b"x")


def test_the_recorder_s_events_parse_back() -> None:
    events: list[wire_events.Event] = [
        {"event": "collected", "names": ["test_a"]},
        {"event": "start", "name": "test_a"},
        {
            "event": "outcome",
            "name": "test_a",
            "status": TestStatus.PASSED,
            "detail": "",
            "seconds": 0.1,
        },
        {"event": "finished", "exitstatus": 0},
    ]
    buffer = b"".join(wire_events.event_frame(event) for event in events)
    parsed = wire_events.parse_events(buffer)
    assert parsed == events
    assert wire_events.well_formed(parsed) == events


@pytest.mark.parametrize(
    "garbage",
    [
        frames.frame(b"[" * 100_000),  # deep: the parser would recurse until the worker died
        frames.frame(b'{"event": "start", "name": "x"'),  # not JSON
        frames.frame(b"x" * (wire_events.EVENT_LIMIT_BYTES + 1)),  # too long
        b"[" * 100_000 + b"\n",  # a raw line: its first bytes read as a huge length
        wire_events.event_frame({"event": "start", "name": "x"})[:-1],  # cut short
    ],
    ids=["deep", "not-json", "too-long", "raw-line", "cut-short"],
)
def test_a_bad_event_frame_is_garbled_never_an_error(garbage: bytes) -> None:
    good = wire_events.event_frame({"event": "collected", "names": []})
    parsed = wire_events.parse_events(good + garbage)
    assert parsed[0] == {"event": "collected", "names": []}
    assert GARBLED in parsed[1:]
    assert len(wire_events.well_formed(parsed)) < len(parsed)  # so the run is crashed


def test_the_event_schema_refuses_fields_of_the_wrong_type() -> None:
    forged = [1, {"event": "outcome", "name": "t", "status": "won", "detail": ""}]
    forged += [{"event": "collected", "names": [1]}, {"event": "start", "name": 5}]
    assert wire_events.well_formed(json.loads(json.dumps(forged))) == []


RUN: list[wire_events.Event] = [
    {"event": "collected", "names": ["test_a", "test_b", "test_c"]},
    {"event": "start", "name": "test_a"},
    {"event": "outcome", "name": "test_a", "status": TestStatus.PASSED, "detail": ""},
    {"event": "start", "name": "test_b"},
    {
        "event": "outcome",
        "name": "test_b",
        "status": TestStatus.FAILED,
        "detail": "E   assert 1 == 2",
    },
    {"event": "start", "name": "test_c"},
    {
        "event": "outcome",
        "name": "test_c",
        "status": TestStatus.FAILED,
        "detail": "E   assert 3 == 4",
    },
    {"event": "finished", "exitstatus": 1},
]
"""A run's events as the recorder sends them: one pass, then two failures."""


def test_a_stream_parses_the_same_however_its_bytes_arrive() -> None:
    """Fed a byte at a time, the stream makes the events ``parse_events`` makes at once, and
    names the first failing test; an incomplete last frame is garbled either way."""
    buffer = b"".join(wire_events.event_frame(event) for event in RUN) + b"\x00\x00"
    stream = wire_events.EventStream()
    for index in range(len(buffer)):
        stream.feed(buffer[index : index + 1])
    assert stream.failed == "test_b"
    assert stream.close() == wire_events.parse_events(buffer) == [*RUN, GARBLED]


def test_a_stream_until_failure_keeps_nothing_after_it() -> None:
    """A run that stops at its first failure keeps the same events whatever the run sent on
    before the worker stopped it: here, all of it in one chunk."""
    stream = wire_events.EventStream(until_failure=True)
    stream.feed(b"".join(wire_events.event_frame(event) for event in RUN))
    stream.feed(wire_events.event_frame({"event": "finished"}))
    assert stream.failed == "test_b"
    assert stream.close() == RUN[:5]


@pytest.mark.parametrize(
    "forged",
    [
        {"event": "outcome", "name": "test_z", "status": "failed", "detail": ""},  # not collected
        {"event": "outcome", "name": "test_a", "status": "failed", "detail": ""},  # reported
        {"event": "outcome", "name": "test_b", "status": "won", "detail": ""},  # malformed
        {"event": "outcome", "name": "test_b", "status": "skipped", "detail": ""},
    ],
    ids=["not-collected", "second-outcome", "malformed", "skipped"],
)
def test_only_a_first_failure_of_a_collected_test_stops_a_stream(forged: dict[str, str]) -> None:
    """What stops a run is what ``interpret`` would read as a failure: not an outcome for a
    test never collected, nor a second one for a test already reported."""
    stream = wire_events.EventStream(until_failure=True)
    stream.feed(b"".join(wire_events.event_frame(event) for event in RUN[:3]))
    stream.feed(frames.frame(json.dumps(forged).encode()))
    assert stream.failed is None


def test_a_blocking_read_without_read_ahead_leaves_what_follows_the_frame() -> None:
    """``read_frame`` reads no byte past its frame: the fork server's channel carries a
    number after it, which the next reader must find whole."""
    read_end, write_end = os.pipe()
    os.write(write_end, frames.frame(b"job") + (7).to_bytes(4, "big"))
    os.close(write_end)
    assert frames.read_frame(read_end) == b"job"
    assert frames.receive_number(read_end) == 7
    os.close(read_end)


def test_a_failure_record_crosses_as_its_list_and_refuses_another_shape() -> None:
    record = calls.ErrorRecord("KeyError", [5], "5", "KeyError", [[3, "f", "x = d[5]"]])
    message = record.message(calls.RAISE)
    assert message[0] == calls.RAISE
    assert calls.ErrorRecord.of(message[1:]) == record
    hang = calls.Hang("evict", 1.5, [[9, "evict", "while True:", "radix.py"]], False)
    assert calls.Hang.of(hang.message()[1:]) == hang
    for garbage in ([], ["KeyError", None, "5", "KeyError"], ["KeyError", None, "5", "K", "x"]):
        with pytest.raises(WireError, match="another shape"):
            calls.ErrorRecord.of(garbage)
