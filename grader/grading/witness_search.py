"""The witness search: the shortest program of public calls that tells a tree from the reference.

A state machine drives the reference, each wheat and the tree under test
side by side through the public interface only, reads every tree whole after
each call, and fails at the first result on which the last tree differs
(a return value, an exception's type, or an accessor's read), while the
reference and every wheat agree; hypothesis, derandomized, then shrinks the
program to the fewest calls and the smallest values, and ``tighten`` leaves
out each call it can. Values are named in order of insertion (``"a"``,
``"b"``, ...), so only keys, node ids and counts are drawn.

Two users, one search: ``tools/refresh_witnesses.py`` runs it in process on
the kit's own mutants (trusted), and ``grader.course.mining`` runs this very
file, as text, inside a confined run where the tree under test is a student's
(reached through the run's stand-in module). So it imports nothing but the
standard library and hypothesis, and its calls are plain dicts (the
witnesses file's ``calls``), never a type of the grader's.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, Verbosity, assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

Result = dict[str, Any]
"""What one call gave: ``{"returns": value}`` as plain JSON, or ``{"raises": "TypeName"}``."""
Call = dict[str, Any]
"""One call: ``method``, ``args``, what the reference and the tree gave, and its ``code``."""

ROOT_ID = 0
GRANULES = (1, 2)
TOKENS = st.integers(1, 2)
EXTRA = st.sampled_from((0, 0, 0, 0, 1, -1))
"""Values beyond one per granule: mostly none, so that most inserts are valid."""
PICKS = st.integers(0, 7)
"""A node is drawn as an index into the reference's live nodes, so that it is one."""
TREE_READS = ("__len__", "is_empty", "node_count", "lru_order")
NODE_READS = ("key", "values", "parent", "children", "child_count", "lock_count")
SEARCH = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=3000,
    stateful_step_count=8,
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
    verbosity=Verbosity.quiet,
    print_blob=False,
)
WIDER = settings(SEARCH, max_examples=20000, stateful_step_count=10)
"""The search again, wider, for a mutant the first one missed."""


def plain(value: object) -> object:
    """``value`` as JSON would give it back: tuples become lists."""
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def observe(tree: Any, method: str, args: Sequence[Any]) -> Result:
    """Call ``method`` on ``tree`` and say what came of it; ``evict`` gives the values it freed."""
    return observe_with_repr(tree, method, args)[0]


def observe_with_repr(tree: Any, method: str, args: Sequence[Any]) -> tuple[Result, str]:
    """``observe``, and the value returned as Python writes it (``(1, [])``), for a test."""
    try:
        if method == "evict":
            gone: list[object] = []
            value: object = [tree.evict(args[0], gone.append), gone]
        elif method == "granule":
            value = tree.granule
        elif method == "__len__":
            value = len(tree)
        else:
            value = getattr(tree, method)(*args)
    except Exception as error:  # a mutant's crash is a result like any other
        return {"raises": type(error).__name__}, ""
    return {"returns": plain(value)}, repr(value)


def code(method: str, args: Sequence[Any]) -> str:
    """The call as a line of a test on a tree named ``tree``."""
    if method == "__len__":
        return "len(tree)"
    if method == "evict":
        return f"tree.evict({args[0]!r}, gone.append)"
    return f"tree.{method}({', '.join(map(repr, args))})"


def reads(nodes: int) -> list[tuple[str, list[Any]]]:
    """The accessor calls that read a tree whole, ids below ``nodes``, in the order a
    difference is looked for."""
    whole: list[tuple[str, list[Any]]] = [(method, []) for method in TREE_READS]
    return whole + [(method, [node]) for node in range(nodes) for method in NODE_READS]


def live_nodes(tree: Any) -> list[int]:
    """The ids of ``tree``'s live nodes, ROOT first, as its accessors give them."""
    found, todo = [], [ROOT_ID]
    while todo:
        node = todo.pop()
        found.append(node)
        todo += tree.children(node)
    return sorted(found)


def read_all(tree: Any, wanted: Sequence[tuple[str, list[Any]]]) -> list[tuple[Result, str]]:
    """Each read of ``wanted`` on ``tree``, as ``observe_with_repr`` gives it. A tree in
    another process (a confined run's stand-in) is walked in one request where every
    accessor answers, and only the ids the walk does not reach are read call by call."""
    walked: dict[int, list[Any]] = {}
    whole: list[Any] = []
    one_request = getattr(tree, "_grader_read_whole", None)
    if one_request is not None:
        try:
            whole, nodes = one_request(ROOT_ID, "children", NODE_READS, TREE_READS)
            walked = {node: row for node, row in nodes if isinstance(node, int)}
        except Exception:  # an accessor raised: read call by call, each error in its place
            whole, walked = [], {}
    found: list[tuple[Result, str]] = []
    for method, args in wanted:
        if whole and method in TREE_READS:
            value = whole[TREE_READS.index(method)]
        elif args and args[0] in walked:
            value = walked[args[0]][NODE_READS.index(method)]
        else:
            found.append(observe_with_repr(tree, method, args))
            continue
        found.append(({"returns": plain(value)}, repr(value)))
    return found


def value_name(index: int) -> str:
    """The ``index``-th value a program inserts: a, b, ..., z, aa, ab, ..."""
    letters = string.ascii_lowercase
    name = ""
    index += 1
    while index:
        index, digit = divmod(index - 1, len(letters))
        name = letters[digit] + name
    return name


class Differs(AssertionError):
    """The tree under test gave another result than the reference: the program is a witness."""


class WheatsDisagree(Exception):
    """A wheat gave another result than the reference: the program tells nothing apart."""


class Program:
    """One tree per implementation (the reference, the wheats, the tree under test last),
    driven together; ``calls`` records the program, results included."""

    def __init__(self, modules: Sequence[Any], granule: int) -> None:
        self.granule = granule
        self.trees = [module.RadixTree(granule) for module in modules]
        self.calls: list[Call] = []
        self.values = 0
        self.shown = ""
        """The reference's result of the last call kept, as Python writes it."""

    def insert(self, key: list[int], count: int) -> None:
        """Insert ``key`` with ``count`` values named in order (a, b, ...)."""
        values = [value_name(self.values + i) for i in range(count)]
        self.values += count
        self.step("insert", key, values)

    def step(self, method: str, *args: Any) -> None:
        """Make the call on every tree; then read every tree whole through the accessors.

        Raises ``Differs`` at the first result on which the last tree differs: the call
        itself, or the first read that shows it, then recorded as the program's last call.
        """
        args_ = [plain(arg) for arg in args]
        self.compare(method, args_, [observe_with_repr(t, method, args_) for t in self.trees])
        wanted = reads(max(live_nodes(self.trees[0])) + 2)
        seen = [read_all(tree, wanted) for tree in self.trees]
        for index, (read, read_args) in enumerate(wanted):
            self.compare(read, read_args, [each[index] for each in seen], keep=False)

    def compare(
        self, method: str, args: list[Any], seen: list[tuple[Result, str]], keep: bool = True
    ) -> None:
        """Record the call whose results on each tree are ``seen`` (if ``keep``, or if the
        last tree differs: then raise ``Differs``)."""
        results = [result for result, _ in seen]
        if any(result != results[0] for result in results[1:-1]):
            raise WheatsDisagree(method)
        call = {
            "method": method,
            "args": args,
            "reference": results[0],
            "mutant": results[-1],
            "code": code(method, args),
        }
        if keep or results[-1] != results[0]:
            self.calls.append(call)
            self.shown = seen[0][1]
        if results[-1] != results[0]:
            raise Differs(method)

    def node(self, pick: int) -> int:
        """The ``pick``-th live node of the reference (ROOT first), counting round."""
        live = live_nodes(self.trees[0])
        return live[pick % len(live)]


def rerun(modules: Sequence[Any], granule: int, calls: Sequence[Call]) -> Program | None:
    """``calls`` (values renamed in order) made again; the program if the last tree differs."""
    program = Program(modules, granule)
    try:
        for call in calls:
            if call["method"] == "insert":
                program.insert(call["args"][0], len(call["args"][1]))
            else:
                program.step(call["method"], *call["args"])
    except Differs:
        return program
    except WheatsDisagree:
        return None
    return None


def tighten(modules: Sequence[Any], found: Program) -> Program:
    """Leave out each call in turn while what is left is still a witness (hypothesis's
    shrinker can stop at a program one call longer than it has to be)."""
    reads_only = set(TREE_READS) | set(NODE_READS)
    while True:
        calls = found.calls
        body = calls[:-1] if calls[-1]["method"] in reads_only else calls
        for index in range(len(body)):
            shorter = rerun(modules, found.granule, body[:index] + body[index + 1 :])
            if shorter is not None and len(shorter.calls) < len(calls):
                found = shorter
                break
        else:
            return found


def search(modules: Sequence[Any], widths: Sequence[settings] = (SEARCH, WIDER)) -> Program | None:
    """The shrunk program that tells the last of ``modules`` from the first (the reference;
    the ones between are the wheats, which must agree with it), or ``None`` if none is found
    at any of ``widths`` in turn."""
    last: list[Program] = []

    class Search(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.program = Program(modules, 1)

        @initialize(granule=st.sampled_from(GRANULES))
        def make(self, granule: int) -> None:
            self.program = Program(modules, granule)
            last[:] = [self.program]

        def step(self, method: str, *args: Any) -> None:
            try:
                self.program.step(method, *args)
            except WheatsDisagree:
                assume(False)

        @rule(key=st.lists(TOKENS, min_size=1, max_size=4), extra=EXTRA)
        def insert(self, key: list[int], extra: int) -> None:
            try:
                self.program.insert(key, max(len(key) // self.program.granule + extra, 0))
            except WheatsDisagree:
                assume(False)

        @rule(key=st.lists(TOKENS, min_size=1, max_size=4))
        def match_prefix(self, key: list[int]) -> None:
            self.step("match_prefix", key)

        @rule(pick=PICKS)
        def lock(self, pick: int) -> None:
            self.step("lock", self.program.node(pick))

        @rule(pick=PICKS)
        def unlock(self, pick: int) -> None:
            self.step("unlock", self.program.node(pick))

        @rule(n=st.integers(0, 3))
        def evict(self, n: int) -> None:
            self.step("evict", n)

    for width in widths:
        try:
            run_state_machine_as_test(Search, settings=width)
        except Differs:
            return tighten(modules, last[0])
    return None
