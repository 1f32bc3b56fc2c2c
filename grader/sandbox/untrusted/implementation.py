"""The implementation process: loads the module under test and answers the stand-in's calls.

A run's implementation (the reference, a wheat, the stub, a mutant or a
student's own) runs here, in a process of its own, and nowhere else: the
test process imports a stand-in (``untrusted.proxy``) that sends each
call of the interface over a channel and gets plain data back
(``grader.sandbox.protocol``). This process never holds the run's outcome channel,
so whatever the implementation does, it cannot report a test's outcome; and
the test process never holds the implementation's code, so no test can read
it.

The source arrives on a file descriptor after the fork (the warm worker
this process is forked from never reads any implementation), is compiled
under the module's plain file name and run as the module. The modules a job
brings beside it (an earlier chapter's, which the implementation imports)
arrive the same way and are run here too, under their own file names, when
the implementation first imports them: nothing of them reaches the test
process either. Objects stay
here; the test process names them by handles. An exception the
implementation raises goes back as its nearest built-in type and message;
the stand-in decides which types the tests see as themselves.

Where the job bounds each call (``call_limit``: the student's own tree, never a
mutant or the reference), a call that has used that much CPU time without
returning is a hang: a timer on this process's CPU time (``CallBound``) stops
the implementation's code where it is and sends its stack back, the frames
of its own files, as ``faulthandler`` would print them; the run goes on with
the next call. CPU time, not the wall clock, so a busy machine never makes a
call look hung.

``walk`` reads a whole object graph in one request (the course tests read
the whole tree after every step of their model-based test): it calls only
public members, plus the private ones the job allows (the course tests'
own invariant check), exactly as the test would one call at a time.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import dis
import importlib.abc
import importlib.machinery
import inspect
import linecache
import os
import signal
import sys
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

from grader.sandbox import protocol

WALK_LIMIT = 100_000
"""The most nodes ``walk`` visits: more is a cycle or a runaway tree."""
SOURCE_LIMIT_BYTES = 16 * 1024 * 1024
ANY_SPECIAL = ("__len__",)
"""The special methods a class offers beyond its public members when no interface is given."""


class CallbackFailed(Exception):
    """A callback the test passed (``on_evict``) raised in the test process."""


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

    def reply(self, frames: list[list[Any]], waiting: bool) -> list[Any]:
        """The ``hung`` reply: the member called (the outermost frame of the module's, where
        there is one), the bound, the frames, outermost first, and whether it waited."""
        member = str(frames[0][1]) if frames else self.member
        seconds = WAITING_SECONDS if waiting else self.seconds
        return ["hung", member, seconds, frames, waiting]

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
            protocol.write_all(self.replies, protocol.encode(self.reply(frames, waiting)))
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


class Contract:
    """What the tests may reach: the module's public names and each class's members."""

    def __init__(
        self,
        module: str,
        members: dict[str, list[str]] | None,
        private: list[str],
        frames: bool = False,
    ) -> None:
        self.module = module
        self.members = members
        self.private = private
        self.frames = frames
        """Whether an error brings the module's own frames back (course-test runs only, where
        the module is the student's own: a reference's or mutant's lines never leave)."""


def read_source(fd: int) -> bytes:
    """All of the source the worker's parent passed on ``fd``, which is then closed."""
    parts = []
    size = 0
    while chunk := os.read(fd, 1 << 16):
        parts.append(chunk)
        size += len(chunk)
        if size > SOURCE_LIMIT_BYTES:
            break
    os.close(fd)
    return b"".join(parts)


def brought_file(filename: str) -> bool:
    """Whether ``filename`` is one ``Compiled`` gives a module (``robin_hood.py``): a bare
    module name, where the standard library's and installed files have whole paths."""
    return filename.endswith(".py") and filename[:-3].isidentifier() and len(filename) <= 100


class Compiled:
    """A module's source, compiled as soon as it arrives, while the test process starts:
    compiling runs none of it, and the module runs only when the tests first import it."""

    def __init__(self, name: str, source: bytes) -> None:
        self.name = name
        self.filename = f"{name}.py"
        self.lines = source.decode("utf-8-sig", "replace").splitlines(keepends=True)
        self.size = len(source)
        self.code: types.CodeType | None = None
        self.error: BaseException | None = None
        try:
            self.code = compile(source, self.filename, "exec", dont_inherit=True)
        except BaseException as error:  # a syntax error, or source too deep to compile
            self.error = error

    def execute(self, module: types.ModuleType) -> None:
        """Run the module in ``module`` under its plain file name, its lines kept for reports
        (BOM and coding line honoured, as an import would); its compile error, if it had one."""
        module.__file__ = self.filename
        linecache.cache[self.filename] = (self.size, None, self.lines, self.filename)
        if self.code is None:
            raise self.error or SyntaxError(f"{self.filename} did not compile")
        exec(self.code, module.__dict__)

    def load(self) -> types.ModuleType:
        """Run it as the module of its name, as an import would."""
        module = types.ModuleType(self.name)
        sys.modules[self.name] = module
        self.execute(module)
        return module


class Dependencies(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the modules a job brought beside the implementation, by name, among the sources
    this process read; first on ``sys.meta_path``, so no file of that name can stand in."""

    def __init__(self, modules: dict[str, Compiled]) -> None:
        self.modules = modules

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=f"{fullname}.py")

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        self.modules[module.__name__].execute(module)


def describe(
    module: types.ModuleType, names: list[str] | None, contract: Contract
) -> dict[str, Any]:
    """What the stand-in module must offer: per public name a class, a value or a type.

    Without ``names`` (and ``members``), every public name and member counts.
    """
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
    if contract.members is None:
        contract.members = {
            name: [m for m in dir(value) if not m.startswith("_") or m in ANY_SPECIAL]
            for name in names
            if isinstance(value := getattr(module, name, None), type)
            and value.__module__ == module.__name__
        }
    found: dict[str, Any] = {}
    for name in names:
        if not hasattr(module, name):
            continue
        value = getattr(module, name)
        if isinstance(value, type) and name in contract.members:
            reachable = [*contract.members[name], *contract.private]
            found[name] = ["class", _member_kinds(value, reachable)]
        elif isinstance(value, type) and value.__module__ == "builtins":
            found[name] = ["type", value.__name__]
        elif isinstance(getattr(value, "__supertype__", None), type):  # typing.NewType
            found[name] = ["type", value.__supertype__.__name__]
        else:
            try:
                protocol.check_plain(value)
            except protocol.NotPlainData:
                found[name] = ["opaque", type(value).__name__]
            else:
                found[name] = ["value", value]
    return found


def _member_kinds(cls: type, members: list[str]) -> list[list[str]]:
    kinds = []
    for member in members:
        try:
            attribute = inspect.getattr_static(cls, member)
        except AttributeError:
            continue
        kinds.append([member, "method" if callable(attribute) else "attribute"])
    return kinds


def exception_record(error: BaseException, frames_of: str | None = None) -> list[Any]:
    """``error`` as plain data: its nearest built-in type, its arguments if plain, its text,
    its own type's name, and the frames of file ``frames_of`` it passed through (line,
    function, the line's text), outermost first; with ``frames_of``, the frames of the
    modules brought beside it (``robin_hood.py``: a bare file name, as ``Compiled`` names
    them) too, each with its file name as a fourth field."""
    base = next(c for c in type(error).__mro__ if getattr(builtins, c.__name__, None) is c)
    arguments: Any = list(error.args)
    try:
        protocol.check_plain(arguments)
    except protocol.NotPlainData:
        arguments = None
    if isinstance(error, SyntaxError):
        arguments = [error.msg, [error.filename, error.lineno, error.offset, error.text]]
    try:
        text = str(error)
    except Exception:
        text = "(its message could not be read)"
    frames = []
    for frame, lineno in traceback.walk_tb(error.__traceback__) if frames_of else ():
        filename = frame.f_code.co_filename
        if filename == frames_of:
            line = linecache.getline(frames_of, lineno).rstrip()
            frames.append([lineno, frame.f_code.co_name, line])
        elif brought_file(filename):
            line = linecache.getline(filename, lineno).rstrip()
            frames.append([lineno, frame.f_code.co_name, line, filename])
    return [base.__name__, arguments, text, type(error).__name__, frames]


class Server:
    """Answers one test process's requests about one loaded module."""

    def __init__(
        self,
        module: types.ModuleType,
        contract: Contract,
        requests: protocol.Calls,
        replies: int,
        bound: CallBound | None = None,
    ) -> None:
        self.module = module
        self.contract = contract
        self.requests = requests
        self.replies = replies
        self.bound = bound
        self.depth = 0
        """How many requests are being answered: more than one while a callback calls back."""
        self.objects: dict[int, Any] = {}
        self.classes: dict[int, str] = {}
        self.next_handle = 1
        self.reachable = {
            name: frozenset((*listed, *contract.private))
            for name, listed in (contract.members or {}).items()
        }
        """Each class's members the tests may reach, the private ones included (``describe``
        has filled in the members by now where the job listed none)."""

    def serve(self) -> None:
        """Answer requests until the test process goes away."""
        receive, answer = self.requests.receive, self.answer
        while True:
            try:
                message = receive()
            except protocol.WireError:
                return
            answer(message)

    def answer(self, message: Any) -> None:
        """Carry out one request and send its reply (``drop`` has none)."""
        try:
            kind = message[0]
            if kind == "drop":
                for handle in message[1]:
                    self.objects.pop(handle, None)
                    self.classes.pop(handle, None)
                return
            appended: list[list[Any]] = []
            frame = protocol.encode(["ok", self.bounded(kind, message, appended)])
        except Hung as hung:
            if self.depth or self.bound is None:  # a call the callback made: the outer one hung
                raise
            frame = protocol.encode(self.bound.reply(hung.frames, hung.waiting))
        except CallbackFailed as failed:
            frame = protocol.encode(["callback-failed", failed.args[0]])
        except protocol.NotPlainData as error:
            frame = protocol.encode(["not-plain", str(error)])
        except BaseException as error:
            own = f"{self.contract.module}.py" if self.contract.frames else None
            frame = protocol.encode(["raise", *exception_record(error, own)])
        if appended:  # made in the test process before the reply is read, as if made in turn
            frame = b"".join(protocol.encode(["appended", *call]) for call in appended) + frame
        protocol.write_all(self.replies, frame)

    def bounded(self, kind: str, message: list[Any], appended: list[list[Any]]) -> Any:
        """``carry_out`` under the call bound, if the job sets one: the outermost request
        arms it, and it is off again before the reply goes."""
        bound = self.bound
        if bound is None or self.depth:
            self.depth += 1
            try:
                return self.carry_out(kind, message, appended)
            finally:
                self.depth -= 1
        self.depth += 1
        bound.start(str(message[2]) if kind in ("call", "get") else kind)
        try:
            return self.carry_out(kind, message, appended)
        finally:
            bound.stop()
            self.depth -= 1

    def carry_out(self, kind: str, message: list[Any], appended: list[list[Any]]) -> Any:
        """One request's result; the ``append`` calls it collected go into ``appended``."""
        if kind == "call":
            if len(message) == 3:  # no arguments
                return self.member(message[1], message[2])()
            _, handle, member, arguments, keywords, callbacks = message
            args, kwargs = self.arguments(arguments, keywords, callbacks, appended)
            return self.member(handle, member)(*args, **kwargs)
        if kind == "new":
            _, class_name, arguments, keywords, callbacks = message
            if class_name not in (self.contract.members or {}):
                raise protocol.WireError(f"no class {class_name}")
            cls = getattr(self.module, class_name)
            args, kwargs = self.arguments(arguments, keywords, callbacks, appended)
            return self.keep(cls(*args, **kwargs), class_name)
        if kind == "get":
            _, handle, member = message
            return self.member(handle, member)
        if kind == "copy":
            _, handle, deep = message
            original = self.objects[handle]
            duplicate = copy.deepcopy(original) if deep else copy.copy(original)
            return self.keep(duplicate, self.classes[handle])
        if kind == "walk":
            _, handle, start, via, each, once, check = message
            obj = self.objects[handle]
            for name in (*each, *once):
                self.allowed(handle, name)
            if check is not None:
                self.allowed(handle, check)
            return walk(obj, start, via, each, once, check)
        raise protocol.WireError(f"unknown request {kind!r}")

    def keep(self, obj: Any, class_name: str) -> int:
        handle = self.next_handle
        self.next_handle += 1
        self.objects[handle] = obj
        self.classes[handle] = class_name
        return handle

    def allowed(self, handle: int, member: str) -> None:
        class_name = self.classes[handle]
        if member not in self.reachable.get(class_name, self.contract.private):
            raise AttributeError(f"{class_name} has no member {member!r} the tests may use")

    def member(self, handle: int, member: str) -> Any:
        self.allowed(handle, member)
        return getattr(self.objects[handle], member)

    def arguments(
        self,
        arguments: list[Any],
        keywords: list[list[Any]],
        callbacks: list[Any],
        appended: list[list[Any]],
    ) -> tuple[list[Any], dict[str, Any]]:
        if not keywords and not callbacks:
            return arguments, {}
        args = list(arguments)
        kwargs = {str(key): value for key, value in keywords}
        for given in callbacks:
            if type(given) is list:  # [place]: a list's append, collected here and made there
                place, stand_in = given[0], self.collector(given[0], appended)
            else:
                place, stand_in = given, self.callback(given)
            if isinstance(place, int):
                args[place] = stand_in
            else:
                kwargs[place] = stand_in
        return args, kwargs

    def collector(self, place: int | str, appended: list[list[Any]]) -> Callable[..., Any]:
        """A stand-in for a list's ``append`` in the test process: each call is kept, in order,
        its argument checked as a callback's is when sent; a call ``append`` would refuse
        (not one argument) goes to the test process, to fail there as it would."""
        refused = self.callback(place)

        def append(*args: Any, **kwargs: Any) -> Any:
            if kwargs or len(args) != 1:
                return refused(*args, **kwargs)
            protocol.check_plain(["callback", place, list(args)])
            appended.append([place, list(args)])
            return None

        return append

    def callback(self, place: int | str) -> Callable[..., Any]:
        """A function that calls the test's own callback in the test process and waits."""

        def call_back(*args: Any) -> Any:
            bound = self.bound
            if bound is not None:
                bound.held = True
            try:
                protocol.send(self.replies, ["callback", place, list(args)])
                while True:
                    message = self.requests.receive()
                    if message[0] == "returned":
                        return message[1]
                    if message[0] == "raised":
                        raise CallbackFailed(message[1])
                    if bound is not None:
                        bound.held = False
                    self.answer(message)  # the callback called back into the tree
                    if bound is not None:
                        bound.held = True
            finally:
                if bound is not None:
                    bound.held = False

        return call_back


def walk(
    obj: Any,
    start: Any,
    via: str,
    each: list[str],
    once: list[str],
    check: str | None,
) -> list[Any]:
    """Everything ``each`` shows of every node reachable from ``start`` by ``via``, and ``once``.

    Runs ``check`` first if ``obj`` has it. The result is ``[once values,
    [[node, each values], ...]]``, nodes in the order a depth-first walk
    (last child first) meets them.
    """
    if check is not None:
        own_check = getattr(obj, check, None)
        if callable(own_check):
            own_check()
    whole = [_read(obj, name) for name in once]
    nodes: list[Any] = []
    seen: set[Any] = set()
    todo = [start]
    while todo:
        node = todo.pop()
        if node in seen or len(seen) >= WALK_LIMIT:
            raise RuntimeError(f"{via}() reaches node {node!r} twice: the graph has a cycle")
        seen.add(node)
        row = [getattr(obj, name)(node) for name in each]
        nodes.append([node, row])
        todo.extend(row[each.index(via)])
    return [whole, nodes]


def _read(obj: Any, name: str) -> Any:
    value = getattr(obj, name)
    return value() if callable(value) else value


def _import_hung(module: str, hung: Hung, bound: CallBound | None) -> list[Any]:
    """The error record of an import that passed the call bound: a ``RuntimeError`` saying
    where the module's own code was, with its frames."""
    own = [frame[:3] for frame in hung.frames if frame[3] == f"{module}.py"]
    where = f" (line {own[-1][0]})" if own else ""
    seconds = WAITING_SECONDS if hung.waiting else bound.seconds if bound else 0.0
    text = (
        f"your {module}.py did not finish importing{where}: stopped after {seconds:g} s "
        "of its own code running at import; look for a loop that never ends"
    )
    return ["RuntimeError", [text], text, "RuntimeError", own]


def run(
    source_fd: int,
    requests: int,
    replies: int,
    contract: Contract,
    names: list[str] | None,
    dependencies: dict[str, int] | None = None,
    call_limit: float = 0.0,
) -> None:
    """The implementation process's whole life: load the module, say what it offers, serve.

    ``dependencies`` maps each module the implementation may import to the descriptor of
    its source; ``call_limit``, if not 0, the CPU seconds a call may take (``CallBound``)."""
    compiled = Compiled(contract.module, read_source(source_fd))
    brought = {name: Compiled(name, read_source(fd)) for name, fd in (dependencies or {}).items()}
    sys.meta_path.insert(0, Dependencies(brought))
    calls = protocol.Calls(requests)
    try:
        calls.receive()  # nothing of the module runs before the tests are collected
    except protocol.WireError:
        return
    files = frozenset((compiled.filename, *(each.filename for each in brought.values())))
    bound = CallBound(call_limit, files, replies) if call_limit > 0 else None
    try:
        if bound is not None:
            bound.start("import")  # a module whose own code never ends is a hang too
        module = compiled.load()
        offered = describe(module, names, contract)
    except Hung as hung:
        protocol.send(replies, ["import-failed", *_import_hung(contract.module, hung, bound)])
        return
    except BaseException as error:
        own = f"{contract.module}.py" if contract.frames else None
        protocol.send(replies, ["import-failed", *exception_record(error, own)])
        return
    finally:
        if bound is not None:
            bound.stop()
    del compiled
    protocol.send(replies, ["ready", [[name, *what] for name, what in offered.items()]])
    Server(module, contract, calls, replies, bound).serve()
