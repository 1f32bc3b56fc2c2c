"""The stand-in module a test imports: every call goes to the implementation's own process.

``install`` puts a finder on ``sys.meta_path`` for the chapter's module
name. ``import radix`` (say) then waits for the implementation process to
say what the real module offers (``untrusted.implementation``) and
builds a module with the same public names: each class of the interface
becomes a stand-in class whose instances are handles and whose members,
those the catalog lists, forward each call over the channel; a plain value
(``ROOT``) is copied; a built-in type (``NodeId = int``) is the type itself.
Every stand-in class is ``Generic``, so ``RadixTree[int]`` works whether or
not the real one is.

The implementation's code never enters this process: its source, bytecode,
loader and file are not here to be read, and what comes back is plain data
(``grader.sandbox.protocol.calls``), so an object whose ``__eq__`` always says yes
cannot cross. Errors come back by their nearest built-in type: the
contract's exceptions (and built-in subclasses of them, such as the stub's
``NotImplementedError``) as themselves with their arguments, everything
else as ``ImplementationError`` naming the type and message. A function
passed as an argument (``on_evict``) stays here and is called back, in
order, while the call runs; it may call the tree again. A plain list's
``append`` (``on_evict=gone.append``, as most tests pass it) runs no code of
the test's, so nothing can tell when it runs: the implementation collects
its calls and they are made here, in order, just before the call returns or
raises, in one message rather than a round trip each.

Every stand-in also answers ``_grader_read_whole``: a whole object graph
read in one round trip (``untrusted.implementation.walk``). The course
tests use it when it is there and walk the tree call by call when it is not,
so they need nothing of the grader under plain pytest.
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from grader.sandbox.protocol import calls
from grader.sandbox.protocol.calls import ErrorRecord, Hang, Message
from grader.sandbox.protocol.frames import WireError
from grader.sandbox.untrusted.raised import (
    FRAME_LIMIT,
    LINE_LIMIT,
    LINE_NUMBER_LIMIT,
    raise_through,
)

T = TypeVar("T")


class ImplementationError(Exception):
    """The implementation raised an error outside its contract, or returned what cannot cross."""


class ImplementationStopped(BaseException):
    """The implementation's process hung in a call or is gone: the test cannot go on.

    Not an ``Exception``, so hypothesis does not shrink or replay an example
    (which would only meet it again, or a process that no longer answers, and
    end in its own errors about flaky data), and a test's ``except Exception``
    does not catch it: the test ends here, and the recorder reports it as
    ``line`` under ``frames``, the implementation's own stack, outermost first
    (``recorder.stopped_report``)."""

    def __init__(self, line: str, module: str, frames: Sequence[Sequence[Any]] = ()) -> None:
        super().__init__(line)
        self.line = line
        self.module = f"{module}.py"
        self.frames = [
            (int(n), str(f), str(text)[:LINE_LIMIT], str(file)[:LINE_LIMIT])
            for n, f, text, file in frames
        ]
        """Each frame as (line, function, the line's text, its file: the module's own, or
        one it brought, such as the earlier chapter's map)."""


class ImplementationHung(ImplementationStopped):
    """A call of the implementation used its whole bound of CPU time without returning."""


class ImplementationGone(ImplementationStopped):
    """The implementation's process ended, or sent what is not a reply."""


class _Connection:
    """The test process's end of the channels to the implementation process."""

    def __init__(self, requests: int, replies: int, module: str, passed: tuple[str, ...]) -> None:
        self.requests = requests
        self.replies = calls.Calls(replies)
        self.module = module
        self.passed = tuple(getattr(builtins, name) for name in passed)
        self.dropped: list[int] = []
        self.gone: str | None = None
        self.callback_errors: dict[int, BaseException] = {}
        self.next_callback_error = 0

    def request(self, message: Message, callbacks: dict[int | str, Callable[..., Any]]) -> Any:
        """Send ``message``, answer callbacks while waiting, and return the result or raise."""
        if self.gone is not None:
            raise ImplementationGone(self.gone, self.module)
        try:
            if self.dropped:
                dropped, self.dropped = self.dropped, []
                calls.send(self.requests, [calls.DROP, dropped])
            calls.send(self.requests, message)
            while True:
                match self.replies.receive():
                    case [calls.OK, result]:
                        return result
                    case [calls.CALLBACK, place, args]:
                        self._call_back(callbacks, place, args)
                    case [calls.APPENDED, place, args]:
                        _append(callbacks, place, args)
                    case [calls.HUNG, *fields]:
                        raise self._hung(Hang.of(fields))
                    case [calls.RAISE, *fields]:
                        record = ErrorRecord.of(fields)
                        error = rebuild(record, self.passed, self.module)
                        raise_through(record.frames, error, self.module)
                    case reply:
                        raise_through([], self._error(reply), self.module)
        except WireError as error:
            self.gone = (
                f"your {self.module}.py's process ended during the call and answers no more "
                f"(it sent {error}): look for what ends it (os._exit, a crash, memory)"
            )
            raise ImplementationGone(self.gone, self.module) from None
        except OSError as error:
            self.gone = (
                f"your {self.module}.py's process ended before the call and answers no more "
                f"({error.strerror}): look for what ends it (os._exit, a crash, memory)"
            )
            raise ImplementationGone(self.gone, self.module) from None

    def _call_back(
        self, callbacks: dict[int | str, Callable[..., Any]], place: Any, args: list[Any]
    ) -> None:
        function = callbacks.get(place)
        try:
            if function is None:
                raise ImplementationError("a callback was asked for that the call did not pass")
            result = function(*args)
            calls.encode([calls.RETURNED, result])
        except BaseException as error:
            key = self.next_callback_error
            self.next_callback_error += 1
            self.callback_errors[key] = error  # raised here again if it ends the call
            calls.send(self.requests, [calls.RAISED, key])
            return
        calls.send(self.requests, [calls.RETURNED, result])

    def _hung(self, hang: Hang) -> ImplementationHung:
        """A call that did not return within its bound, said where it was."""
        member, seconds = hang.member, hang.seconds
        frames = [f for f in hang.frames[:FRAME_LIMIT] if 0 < int(f[0]) <= LINE_NUMBER_LIMIT]
        where = ""
        if frames:
            number, function, _, file = frames[-1]
            where = f"line {number}" if file == f"{self.module}.py" else f"{file} line {number}"
            if function != member:
                where += f", in `{function}`"
        why = (
            f"it waited {float(seconds):g} s without computing; look for a wait that never ends"
            if hang.waiting
            else f"stopped after {float(seconds):g} s of CPU time in that one call, many times "
            "the reference's slowest call; look for a loop that never ends"
        )
        line = (
            f"your {self.module}.py {calls.DID_NOT_RETURN}{member[:LINE_LIMIT]}`"
            f"{f' ({where})' if where else ''}: {why}"
        )
        return ImplementationHung(line, self.module, frames)

    def _error(self, reply: Any) -> BaseException:
        """The error of a reply that is neither a result nor a record of one."""
        match reply:
            case [calls.CALLBACK_FAILED, key, *_]:
                kept = self.callback_errors.pop(key, None) if type(key) is int else None
                return kept or ImplementationError("a callback failed")
            case [calls.NOT_PLAIN, text, *_]:
                return ImplementationError(f"{self.module} returned what cannot cross: {text}")
        return ImplementationError(f"the {self.module} process sent {reply[0]!r}")


def rebuild(record: ErrorRecord, passed: tuple[type, ...], module: str) -> BaseException:
    """The exception to raise here for an implementation's error record."""
    arguments: Any = record.arguments  # from the other process: a wrong shape raises here
    text = record.text
    found = getattr(builtins, record.base, None)
    if isinstance(found, type) and issubclass(found, passed) and issubclass(found, BaseException):
        base: type[BaseException] = found
        if issubclass(base, SyntaxError) and arguments:
            message, (filename, lineno, offset, line) = arguments
            return SyntaxError(message, (filename, lineno, offset, line))
        if arguments is not None:
            try:
                return base(*arguments)
            except Exception:
                pass
        return base(text)
    return ImplementationError(f"{module} raised {record.own_type}: {text}")


_PLAIN = (int, str, bool, float, type(None), tuple, list)


def _split_callables(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], list[list[Any]], dict[int | str, Callable[..., Any]]]:
    callbacks: dict[int | str, Callable[..., Any]] = {}
    plain_args = list(args)
    for index, arg in enumerate(args):
        if callable(arg) and not isinstance(arg, _PLAIN):
            callbacks[index] = arg
            plain_args[index] = None
    keywords = []
    for key, value in kwargs.items():
        if callable(value) and not isinstance(value, _PLAIN):
            callbacks[key] = value
            value = None
        keywords.append([key, value])
    return plain_args, keywords, callbacks


def callback_places(callbacks: dict[int | str, Callable[..., Any]]) -> list[Any]:
    """The places of a call's callbacks as the implementation gets them: where every one is
    a plain list's ``append``, each as ``[place]``, for the implementation to collect."""
    if callbacks and all(_is_list_append(function) for function in callbacks.values()):
        return [[place] for place in callbacks]
    return list(callbacks)


def _is_list_append(function: Callable[..., Any]) -> bool:
    """Whether ``function`` is the ``append`` of a list (not of a subclass): it runs no code
    of the test's."""
    owner = getattr(function, "__self__", None)
    return (
        type(function) is types.BuiltinMethodType
        and type(owner) is list
        and function.__name__ == "append"
    )


def _append(callbacks: dict[int | str, Callable[..., Any]], place: Any, args: list[Any]) -> None:
    """Make one ``append`` call the implementation collected; any other is garbage, and the
    implementation's process is taken for gone."""
    function = callbacks.get(place)
    if function is None or not _is_list_append(function) or len(args) != 1:
        raise WireError("an append for a callback the call did not pass as one")
    function(*args)


class Proxy:
    """Base of every stand-in class: an instance is a handle on an object in the other process."""

    _grader_connection: _Connection
    _grader_class: str

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        connection = type(self)._grader_connection
        plain, keywords, callbacks = _split_callables(args, kwargs)
        message = [calls.NEW, type(self)._grader_class, plain, keywords, callback_places(callbacks)]
        self._grader_handle = connection.request(message, callbacks)

    def __del__(self) -> None:
        handle = self.__dict__.get("_grader_handle")
        if handle is not None:
            type(self)._grader_connection.dropped.append(handle)

    def __copy__(self) -> Proxy:
        return self._duplicate(deep=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> Proxy:
        return self._duplicate(deep=True)

    def _grader_read_whole(
        self,
        start: Any,
        via: str,
        each: Sequence[str],
        once: Sequence[str] = (),
        check: str | None = None,
    ) -> list[Any]:
        """The whole graph behind this handle in one request: see ``implementation.walk``."""
        message = [calls.WALK, self._grader_handle, start, via, list(each), list(once), check]
        result: list[Any] = type(self)._grader_connection.request(message, {})
        return result

    def _duplicate(self, deep: bool) -> Proxy:
        cls = type(self)
        duplicate = cls.__new__(cls)
        message = [calls.COPY, self._grader_handle, deep]
        duplicate._grader_handle = cls._grader_connection.request(message, {})
        return duplicate


def _method(name: str) -> Callable[..., Any]:
    def forward(self: Proxy, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs:  # most calls of a test read the tree: a shorter message
            return type(self)._grader_connection.request(
                [calls.CALL, self._grader_handle, name], {}
            )
        plain, keywords, callbacks = _split_callables(args, kwargs)
        places = callback_places(callbacks)
        message = [calls.CALL, self._grader_handle, name, plain, keywords, places]
        return type(self)._grader_connection.request(message, callbacks)

    forward.__name__ = forward.__qualname__ = name
    return forward


def _attribute(name: str) -> property:
    def read(self: Proxy) -> Any:
        return type(self)._grader_connection.request([calls.GET, self._grader_handle, name], {})

    return property(read)


def stand_in_class(
    connection: _Connection, module: str, name: str, members: Sequence[Sequence[str]]
) -> type:
    """A ``Generic`` class named ``name`` whose listed members forward to the real class."""
    namespace: dict[str, Any] = {"__module__": module, "__qualname__": name}
    for member, kind in members:
        namespace[member] = _method(member) if kind == "method" else _attribute(member)
    namespace["_grader_connection"] = connection
    namespace["_grader_class"] = name
    bases = (Proxy, Generic[T])  # type: ignore[index]
    return types.new_class(name, bases, {}, lambda ns: ns.update(namespace))


class _Loader(importlib.abc.Loader):
    def __init__(self, finder: _Finder) -> None:
        self.finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        for name, value in self.finder.offered().items():
            setattr(module, name, value)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the chapter's module name and nothing else; the first import waits for the peer."""

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self.names: dict[str, Any] | None = None
        self.failure: ErrorRecord | None = None

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.connection.module:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(self), origin=None)

    def offered(self) -> dict[str, Any]:
        """The module's names, from the implementation's first message (read once)."""
        if self.names is None and self.failure is None:
            try:
                calls.send(self.connection.requests, [calls.LOAD])
                self._hello(self.connection.replies.receive())
            except (WireError, OSError) as error:
                raise ImportError(f"the {self.connection.module} process sent {error}") from None
        if self.failure is not None:
            failed = rebuild(self.failure, (BaseException,), self.connection.module)
            raise_through(self.failure.frames, failed, self.connection.module)
        assert self.names is not None
        return self.names

    def _hello(self, hello: Message) -> None:
        """Take the implementation's first message: what the module offers, or why not."""
        match hello:
            case [calls.IMPORT_FAILED, *fields]:
                self.failure = ErrorRecord.of(fields)
            case [calls.HUNG, *fields]:  # the module swallowed the first stop of its import
                hang = Hang.of(fields)
                line = self.connection._hung(hang).line
                own = [f[:3] for f in hang.frames if f[3] == f"{self.connection.module}.py"]
                self.failure = ErrorRecord("RuntimeError", [line], line, "RuntimeError", own)
            case _:  # READY
                self.names = self._build(hello[1])

    def _build(self, offered: list[list[Any]]) -> dict[str, Any]:
        names: dict[str, Any] = {}
        module = self.connection.module
        for name, kind, detail in offered:
            if kind == "class":
                names[name] = stand_in_class(self.connection, module, name, detail)
            elif kind == "type":
                names[name] = getattr(builtins, detail)
            elif kind == "value":
                names[name] = detail
        return names


def install(requests: int, replies: int, module: str, passed: Sequence[str]) -> None:
    """Make ``import MODULE`` in this process reach the implementation process on these channels.

    ``passed`` names the built-in exceptions the tests see as themselves.
    """
    connection = _Connection(requests, replies, module, tuple(passed))
    sys.meta_path.insert(0, _Finder(connection))
