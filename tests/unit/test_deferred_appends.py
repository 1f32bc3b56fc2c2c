"""A list's ``append`` passed as a callback costs no round trip per call, and nothing tells.

The implementation process collects each call of it and sends them, in order,
just before the call's reply; the stand-in makes them in the test process as it
reads them. Any other callback is called back while the call runs, as before.
"""

from __future__ import annotations

import os
import types
from typing import Any

from grader.sandbox.protocol import calls, frames
from grader.sandbox.untrusted import implementation, proxy


class Tree:
    """A tree-shaped stand-in for the module under test: ``evict`` calls ``on_evict``."""

    def evict(self, n: int, on_evict: Any) -> int:
        for value in range(n):
            on_evict(f"v{value}")
        if n == 3:
            raise KeyError("after three")
        return n


def frames_after(call: list[Any]) -> list[Any]:
    """What the implementation's server sends back for ``call``, frame by frame."""
    module = types.ModuleType("tree")
    module.Tree = Tree  # type: ignore[attr-defined]
    contract = implementation.Contract("tree", {"Tree": ["evict"]}, [])
    requests_read, requests_write = os.pipe()
    replies_read, replies_write = os.pipe()
    server = implementation.Server(module, contract, calls.Calls(requests_read), replies_write)
    server.keep(Tree(), "Tree")
    server.answer(call)
    os.close(replies_write)
    reader = calls.Calls(replies_read)
    sent = []
    while True:
        try:
            sent.append(reader.receive())
        except frames.WireError:
            break
    for fd in (requests_read, requests_write, replies_read):
        os.close(fd)
    return sent


def test_a_lists_append_is_collected_and_sent_before_the_reply() -> None:
    gone: list[str] = []
    places = proxy.callback_places({1: gone.append})
    assert places == [[1]]
    assert frames_after(["call", 1, "evict", [2, None], [], places]) == [
        ["appended", 1, ["v0"]],
        ["appended", 1, ["v1"]],
        ["ok", 2],
    ]
    raised = frames_after(["call", 1, "evict", [3, None], [], places])
    assert [frame[:2] for frame in raised[:3]] == [["appended", 1]] * 3
    assert raised[3][:2] == ["raise", "KeyError"]  # the appends made before it still count


def test_any_other_callback_is_called_back_as_the_call_runs() -> None:
    class Gone(list[str]):
        pass

    for function in (Gone().append, print, lambda value: None):
        assert proxy.callback_places({1: function}) == [1]
    assert proxy.callback_places({1: [].append, "other": print}) == [1, "other"]
