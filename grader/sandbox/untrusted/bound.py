"""The bound on one call of the student's own tree: CPU time, or waiting without computing.

Where the job bounds each call (``call_limit``: the student's own tree, never
a mutant or the reference), a timer on the implementation process's CPU time
(``CallBound``) stops the code where it is and says where that was, each frame
as the outermost loop it is in, so the same tree gets the same report.
"""

from __future__ import annotations

import contextlib
import dis
import linecache
import os
import signal
import time
import types
from typing import Any

from grader.sandbox.protocol import calls
from grader.sandbox.protocol.calls import Hang
from grader.sandbox.protocol.frames import write_all


class Hung(BaseException):
    """Raised into the implementation's code where a call passed its bound (``CallBound``):
    not an ``Exception``, so an ``except Exception`` of the student's does not catch it."""

    def __init__(self, frames: list[list[Any]], waiting: bool) -> None:
        super().__init__("the call did not return within its bound")
        self.frames = frames
        self.waiting = waiting


TICK_SECONDS = 0.05
"""How often the call bound looks at the call in progress (``CallBound``)."""

WAITING_SECONDS = 5.0
WAITING_SHARE = 0.01
"""A call that has waited this long by the wall clock, using less than this share of it in
CPU time, waits for what never comes (a sleep, a lock, a read): a hang too. A call that
computes is never starved that far, however busy the machine."""


class CallBound:
    """A bound on the CPU time one call may use, and on how long it may wait doing nothing.

    A timer ticks every ``TICK_SECONDS`` of wall time; a tick that finds the
    same outermost call running as the tick before measures the CPU time this
    process has used since that first look (a callback's wait for the test
    process uses none). Past ``seconds`` of it, or waiting without computing
    (``WAITING_SECONDS``), the tick raises ``Hung`` where the code is; if the
    code swallows that and goes on, the next one sends the reply itself and
    ends the process. Nothing is done per call but counting it, so the bound
    costs a call nothing.

    Where the code is must be the same every run, for the same tree: from
    half the bound on, each tick takes the stack (``own_frames``: each frame
    at the loop it is in) and keeps what every look found alike, outermost
    first; that is what the reply names.
    """

    def __init__(self, seconds: float, files: frozenset[str], replies: int) -> None:
        self.seconds = seconds
        self.files = files
        self.replies = replies
        self.member = ""
        self.calls = 0
        self.running = False
        self.held = False
        """A callback's message is in transit, or the test process is running it: firing now
        would tear a message, and the wait is the test's, not the implementation's."""
        self.watched = -1
        self.fired = 0
        self.cpu_from = 0.0
        self.waiting_from: tuple[float, float] | None = None
        self.alike: list[list[Any]] | None = None
        signal.signal(signal.SIGALRM, self._tick)
        signal.setitimer(signal.ITIMER_REAL, TICK_SECONDS, TICK_SECONDS)

    def start(self, member: str) -> None:
        self.member = member
        self.calls += 1
        self.running = True

    def stop(self) -> None:
        self.running = False

    def hang(self, frames: list[list[Any]], waiting: bool) -> Hang:
        """Where the call was: the member called (the outermost frame of the module's, where
        there is one), the bound, the frames, outermost first, and whether it waited."""
        member = str(frames[0][1]) if frames else self.member
        seconds = WAITING_SECONDS if waiting else self.seconds
        return Hang(member, seconds, frames, waiting)

    def _tick(self, signum: int, frame: types.FrameType | None) -> None:
        if not self.running:
            return
        cpu, now = time.process_time(), time.monotonic()
        if self.watched != self.calls:  # the first look at this call
            self.watched, self.fired, self.cpu_from = self.calls, 0, cpu
            self.waiting_from, self.alike = None, None
        if self.held:
            self.waiting_from = None
            return
        if self.waiting_from is None:
            self.waiting_from = (now, cpu)
        waited, used = now - self.waiting_from[0], cpu - self.waiting_from[1]
        idle = used < WAITING_SHARE * waited
        busy = cpu - self.cpu_from
        if busy >= self.seconds / 2 or (idle and waited >= WAITING_SECONDS / 2):
            self._look(frame)
        waiting = idle and waited >= WAITING_SECONDS
        if busy < self.seconds and not waiting:
            return
        frames = self.alike or own_frames(frame, self.files)
        self.fired += 1
        self.cpu_from, self.waiting_from, self.alike = cpu, None, None
        if self.fired == 1:
            raise Hung(frames, waiting)
        with contextlib.suppress(BaseException):  # it swallowed the first and went on
            write_all(self.replies, calls.encode(self.hang(frames, waiting).message()))
        os._exit(0)

    def _look(self, frame: types.FrameType | None) -> None:
        """Keep what this look at the stack shares with every look before it."""
        frames = own_frames(frame, self.files)
        if self.alike is None:
            self.alike = frames
            return
        same = 0
        for kept, seen in zip(self.alike, frames, strict=False):
            if kept != seen:
                break
            same += 1
        self.alike = self.alike[:same]


FRAMES_KEPT = 50
"""The most frames a hang's stack brings back: the outermost one, and the innermost."""

_LOOPS: dict[types.CodeType, list[tuple[int, int, int]]] = {}


def loops(code: types.CodeType) -> list[tuple[int, int, int]]:
    """Each loop of ``code`` as the offsets it spans and the line of its ``while`` or ``for``,
    outermost first. A loop is a backward jump; its line is the lower of the jump's and its
    target's (a ``while`` line carries the jump, a ``for`` line the target)."""
    if code not in _LOOPS:
        lines = {i.offset: i.positions.lineno for i in dis.get_instructions(code) if i.positions}
        found = []
        for instruction in dis.get_instructions(code):
            target = instruction.argval
            if instruction.opcode not in dis.hasjrel or not isinstance(target, int):
                continue
            ends = [lines.get(target), lines.get(instruction.offset)]
            known = [line for line in ends if line is not None]
            if target <= instruction.offset and known:
                found.append((target, instruction.offset, min(known)))
        _LOOPS[code] = sorted(found, key=lambda loop: loop[0] - loop[1])
    return _LOOPS[code]


def where(frame: types.FrameType) -> int:
    """The line ``frame`` is at, said as the outermost loop it is in (a busy loop is at any of
    its lines, and in any loop within it, from one moment to the next, but always in that
    loop), else its own line."""
    at = frame.f_lasti
    for start, end, line in loops(frame.f_code):
        if start <= at <= end:
            return line
    return frame.f_lineno


def own_frames(frame: types.FrameType | None, files: frozenset[str]) -> list[list[Any]]:
    """The frames of ``files`` on the stack from ``frame`` out (line, function, the line's
    text, the file), outermost first: where the module's code was when it was stopped."""
    frames = []
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename in files:
            number = where(frame)
            line = linecache.getline(filename, number).rstrip()
            frames.append([number, frame.f_code.co_name, line, filename])
        frame = frame.f_back
    frames.reverse()
    if len(frames) > FRAMES_KEPT:
        frames = frames[:1] + frames[1 - FRAMES_KEPT :]
    return frames
