"""The implementation process: loads the module under test and answers the stand-in's calls.

A run's implementation (the reference, a wheat, the stub, a mutant or a
student's own) runs here, in a process of its own, and nowhere else: the
test process imports a stand-in (``untrusted.proxy``) that sends each
call of the interface over a channel and gets plain data back
(``grader.sandbox.protocol.calls``). This process never holds the run's outcome channel,
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
import copy
import inspect
import linecache
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from grader.sandbox.protocol import calls
from grader.sandbox.protocol.calls import ErrorRecord, Message, Plain
from grader.sandbox.protocol.frames import WireError, write_all
from grader.sandbox.untrusted.bound import WAITING_SECONDS, CallBound, Hung
from grader.sandbox.untrusted.loading import Compiled, Dependencies, brought_file, read_source

WALK_LIMIT = 100_000
"""The most nodes ``walk`` visits: more is a cycle or a runaway tree."""
ANY_SPECIAL = ("__len__",)
"""The special methods a class offers beyond its public members when no interface is given."""


class CallbackFailed(Exception):
    """A callback the test passed (``on_evict``) raised in the test process."""


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
                calls.check_plain(value)
            except calls.NotPlainData:
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


def exception_record(error: BaseException, frames_of: str | None = None) -> ErrorRecord:
    """``error`` as plain data: its nearest built-in type, its arguments if plain, its text,
    its own type's name, and the frames of file ``frames_of`` it passed through (line,
    function, the line's text), outermost first; with ``frames_of``, the frames of the
    modules brought beside it (``robin_hood.py``: a bare file name, as ``Compiled`` names
    them) too, each with its file name as a fourth field."""
    base = next(c for c in type(error).__mro__ if getattr(builtins, c.__name__, None) is c)
    arguments: Plain = list(error.args)
    try:
        calls.check_plain(arguments)
    except calls.NotPlainData:
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
    return ErrorRecord(base.__name__, arguments, text, type(error).__name__, frames)


class Server:
    """Answers one test process's requests about one loaded module."""

    def __init__(
        self,
        module: types.ModuleType,
        contract: Contract,
        requests: calls.Calls,
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
            except WireError:
                return
            answer(message)

    def answer(self, message: Message) -> None:
        """Carry out one request and send its reply (``DROP`` has none)."""
        try:
            kind = message[0]
            if kind == calls.DROP:
                for handle in message[1]:
                    self.objects.pop(handle, None)
                    self.classes.pop(handle, None)
                return
            appended: list[list[Any]] = []
            frame = calls.encode([calls.OK, self.bounded(kind, message, appended)])
        except Hung as hung:
            if self.depth or self.bound is None:  # a call the callback made: the outer one hung
                raise
            frame = calls.encode(self.bound.hang(hung.frames, hung.waiting).message())
        except CallbackFailed as failed:
            frame = calls.encode([calls.CALLBACK_FAILED, failed.args[0]])
        except calls.NotPlainData as error:
            frame = calls.encode([calls.NOT_PLAIN, str(error)])
        except BaseException as error:
            own = f"{self.contract.module}.py" if self.contract.frames else None
            frame = calls.encode(exception_record(error, own).message(calls.RAISE))
        if appended:  # made in the test process before the reply is read, as if made in turn
            frame = b"".join(calls.encode([calls.APPENDED, *call]) for call in appended) + frame
        write_all(self.replies, frame)

    def bounded(self, kind: str, message: Message, appended: list[list[Any]]) -> Any:
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
        bound.start(str(message[2]) if kind in (calls.CALL, calls.GET) else kind)
        try:
            return self.carry_out(kind, message, appended)
        finally:
            bound.stop()
            self.depth -= 1

    def carry_out(self, kind: str, message: Message, appended: list[list[Any]]) -> Any:
        """One request's result; the ``append`` calls it collected go into ``appended``."""
        match message:
            case [calls.CALL, handle, member]:  # no arguments
                return self.member(handle, member)()
            case [calls.CALL, handle, member, arguments, keywords, callbacks]:
                args, kwargs = self.arguments(arguments, keywords, callbacks, appended)
                return self.member(handle, member)(*args, **kwargs)
            case [calls.NEW, class_name, arguments, keywords, callbacks]:
                if class_name not in (self.contract.members or {}):
                    raise WireError(f"no class {class_name}")
                cls = getattr(self.module, class_name)
                args, kwargs = self.arguments(arguments, keywords, callbacks, appended)
                return self.keep(cls(*args, **kwargs), class_name)
            case [calls.GET, handle, member]:
                return self.member(handle, member)
            case [calls.COPY, handle, deep]:
                original = self.objects[handle]
                duplicate = copy.deepcopy(original) if deep else copy.copy(original)
                return self.keep(duplicate, self.classes[handle])
            case [calls.WALK, handle, start, via, each, once, check]:
                obj = self.objects[handle]
                for name in (*each, *once):
                    self.allowed(handle, name)
                if check is not None:
                    self.allowed(handle, check)
                return walk(obj, start, via, each, once, check)
        raise WireError(f"unknown request {kind!r}")

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
            calls.check_plain([calls.CALLBACK, place, list(args)])
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
                calls.send(self.replies, [calls.CALLBACK, place, list(args)])
                while True:
                    message = self.requests.receive()
                    match message:
                        case [calls.RETURNED, result, *_]:
                            return result
                        case [calls.RAISED, key, *_]:
                            raise CallbackFailed(key)
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


def _import_hung(module: str, hung: Hung, bound: CallBound | None) -> ErrorRecord:
    """The error record of an import that passed the call bound: a ``RuntimeError`` saying
    where the module's own code was, with its frames."""
    own = [frame[:3] for frame in hung.frames if frame[3] == f"{module}.py"]
    where = f" (line {own[-1][0]})" if own else ""
    seconds = WAITING_SECONDS if hung.waiting else bound.seconds if bound else 0.0
    text = (
        f"your {module}.py did not finish importing{where}: stopped after {seconds:g} s "
        "of its own code running at import; look for a loop that never ends"
    )
    return ErrorRecord("RuntimeError", [text], text, "RuntimeError", own)


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
    asked = calls.Calls(requests)
    try:
        asked.receive()  # LOAD: nothing of the module runs before the tests are collected
    except WireError:
        return
    files = frozenset((compiled.filename, *(each.filename for each in brought.values())))
    bound = CallBound(call_limit, files, replies) if call_limit > 0 else None
    try:
        if bound is not None:
            bound.start("import")  # a module whose own code never ends is a hang too
        module = compiled.load()
        offered = describe(module, names, contract)
    except Hung as hung:
        record = _import_hung(contract.module, hung, bound)
        calls.send(replies, record.message(calls.IMPORT_FAILED))
        return
    except BaseException as error:
        own = f"{contract.module}.py" if contract.frames else None
        calls.send(replies, exception_record(error, own).message(calls.IMPORT_FAILED))
        return
    finally:
        if bound is not None:
            bound.stop()
    del compiled
    calls.send(replies, [calls.READY, [[name, *what] for name, what in offered.items()]])
    Server(module, contract, asked, replies, bound).serve()
