"""Re-make every planted mutant's witness: the shortest program of calls that tells it apart.

A witness is a tree's granule and a short list of public calls after which
one result of the mutant differs from the reference's (a return value, an
exception's type, or the tree as an accessor reads it), while the reference
and every wheat agree on every result. The search is hypothesis's stateful
testing, derandomized: a state machine drives the reference, each wheat and
the mutant side by side through the public interface only, and fails at the
first result on which the mutant differs; hypothesis then shrinks the program
to the fewest calls and the smallest values. Values are named in order of
insertion (``"a"``, ``"b"``, ...), so only keys, node ids and counts are drawn.

The implementations are the kit's own (the reference, its patched mutants and
wheats), trusted, so they run in this process; a student's code never does.
Run ``python tools/refresh_witnesses.py`` after a change of behaviour (a new
mutant, a changed reference) and commit the file it writes (the catalog's
``[witnesses] file``). ``--check`` searches nothing: it replays every stored
witness and exits 1 unless each still holds (the kit's tests run it).
"""

from __future__ import annotations

import argparse
import dataclasses
import string
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Verbosity, assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from grader.grading.witness import Call, Witness, read_witnesses, witnesses_json
from grader.inputs.catalog import Chapter, kit_root, load_chapter
from grader.inputs.patching import apply_patch, mutant_sources

Result = dict[str, Any]
"""What one call gave: ``{"returns": value}`` as plain JSON, or ``{"raises": "TypeName"}``."""

CLASS = "RadixTree"
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


def load_module(chapter: Chapter, source: str) -> types.ModuleType:
    """The kit implementation ``source`` as a module of its own (trusted kit content only)."""
    module = types.ModuleType(chapter.module)
    exec(compile(source, f"{chapter.module}.py", "exec"), module.__dict__)
    return module


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


def setup(witness: Witness) -> str:
    """The line that makes the tree (and the list ``evict``'s callback fills) for the calls."""
    line = f"tree = {CLASS}({witness.granule})"
    return line + "; gone = []" if any(c.method == "evict" for c in witness.calls) else line


def skeleton(chapter: Chapter, witness: Witness, shown: str) -> str:
    """A test that passes on the reference and fails on the mutant: the witness's calls, and
    an assertion on the reference's result of the last (``shown``: that result in Python)."""
    lines = [
        f"from {chapter.module} import {CLASS}",
        "",
        "",
        f"def test_what_{witness.mutant}_breaks() -> None:",
        '    """TODO: say in your own words what this pins down."""',
        f"    tree = {CLASS}[str]({witness.granule})",
    ]
    if any(call.method == "evict" for call in witness.calls):
        lines.append("    gone: list[str] = []")
    for index, call in enumerate(witness.calls):
        raised = call.reference.get("raises")
        last = index == witness.differs_at
        if raised:
            lines += [f"    with pytest.raises({raised}):", f"        {call.code}"]
        elif not last:
            lines.append(f"    {call.code}")
        elif call.method == "evict":
            freed, gone = call.reference["returns"]
            lines.append(f"    assert {call.code} == {freed!r} and gone == {gone!r}")
        else:
            lines.append(f"    assert {call.code} == {shown}")
    if any(call.reference.get("raises") for call in witness.calls):
        lines[0:0] = ["import pytest", ""]
    mutant = witness.calls[witness.differs_at].mutant
    said = f"raises {mutant['raises']}" if "raises" in mutant else f"gives {mutant['returns']!r}"
    lines.append(f"    # the mutant {said} there")
    return "\n".join(lines) + "\n"


def replay(module: types.ModuleType, granule: int, calls: Sequence[Call]) -> list[Result]:
    """Each call's result on a fresh tree of ``module`` at ``granule``."""
    tree = module.RadixTree(granule)
    return [observe(tree, call.method, call.args) for call in calls]


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


def _value_name(index: int) -> str:
    """The ``index``-th value a program inserts: a, b, ..., z, aa, ab, ..."""
    letters = string.ascii_lowercase
    name = ""
    index += 1
    while index:
        index, digit = divmod(index - 1, len(letters))
        name = letters[digit] + name
    return name


class Differs(AssertionError):
    """The mutant gave another result than the reference: the program so far is a witness."""


class Program:
    """One tree per implementation (the reference, the wheats, the mutant last), driven
    together; ``calls`` records the program, results included."""

    def __init__(self, modules: Sequence[types.ModuleType], granule: int) -> None:
        self.granule = granule
        self.trees = [module.RadixTree(granule) for module in modules]
        self.calls: list[Call] = []
        self.values = 0
        self.shown = ""

    def insert(self, key: list[int], count: int) -> None:
        """Insert ``key`` with ``count`` values named in order (a, b, ...)."""
        values = [_value_name(self.values + i) for i in range(count)]
        self.values += count
        self.step("insert", key, values)

    def step(self, method: str, *args: Any) -> None:
        """Make the call on every tree; then read every tree whole through the accessors.

        Raises ``Differs`` at the first result on which the mutant differs: the call
        itself, or the first read that shows it, then recorded as the program's last call.
        """
        self.run(method, [plain(arg) for arg in args])
        for read, read_args in reads(max(live_nodes(self.trees[0])) + 2):
            self.run(read, read_args, keep=False)

    def run(self, method: str, args: list[Any], keep: bool = True) -> None:
        seen = [observe_with_repr(tree, method, args) for tree in self.trees]
        results = [result for result, _ in seen]
        if any(result != results[0] for result in results[1:-1]):
            raise WheatsDisagree(method)
        call = Call(method, args, results[0], results[-1], code(method, args))
        if keep or results[-1] != results[0]:
            self.calls.append(call)
            self.shown = seen[0][1]
        if results[-1] != results[0]:
            raise Differs(method)

    def node(self, pick: int) -> int:
        """The ``pick``-th live node of the reference (ROOT first), counting round."""
        live = live_nodes(self.trees[0])
        return live[pick % len(live)]

    def witness(self, chapter: Chapter, mutant_id: str) -> Witness:
        found = Witness(mutant_id, self.granule, tuple(self.calls), len(self.calls) - 1)
        return dataclasses.replace(
            found, test=skeleton(chapter, found, self.shown), setup=setup(found)
        )


class WheatsDisagree(Exception):
    """A wheat gave another result than the reference: the program tells nothing apart."""


def rerun(
    modules: Sequence[types.ModuleType], granule: int, calls: Sequence[Call]
) -> Program | None:
    """``calls`` (values renamed in order) made again; the program if the mutant differs."""
    program = Program(modules, granule)
    try:
        for call in calls:
            if call.method == "insert":
                program.insert(call.args[0], len(call.args[1]))
            else:
                program.step(call.method, *call.args)
    except Differs:
        return program
    except WheatsDisagree:
        return None
    return None


def tighten(modules: Sequence[types.ModuleType], found: Program) -> Program:
    """Leave out each call in turn while what is left is still a witness (hypothesis's
    shrinker can stop at a program one call longer than it has to be)."""
    while True:
        calls = found.calls
        reads_only = {method for method, _ in reads(1)} | set(NODE_READS)
        body = calls[:-1] if calls[-1].method in reads_only else calls
        for index in range(len(body)):
            shorter = rerun(modules, found.granule, body[:index] + body[index + 1 :])
            if shorter is not None and len(shorter.calls) < len(calls):
                found = shorter
                break
        else:
            return found


def search(
    chapter: Chapter, mutant_id: str, sources: dict[str, str], correct: Sequence[str]
) -> Witness | None:
    """The shrunk witness that tells ``mutant_id`` from the reference, or ``None`` if none is
    found. ``correct`` holds the sources of the reference (first) and of every wheat."""
    modules = [load_module(chapter, source) for source in [*correct, sources[mutant_id]]]
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

    for search_settings in (SEARCH, WIDER):
        try:
            run_state_machine_as_test(Search, settings=search_settings)
        except Differs:
            return tighten(modules, last[0]).witness(chapter, mutant_id)
    return None


def correct_sources(chapter: Chapter) -> list[str]:
    """The reference's source, then each wheat's."""
    reference = chapter.reference.read_text(encoding="utf-8")
    return [reference, *(apply_patch(reference, w.patch) for w in chapter.wheats)]


def problems(chapter: Chapter, witness: Witness, sources: dict[str, str]) -> list[str]:
    """Why ``witness`` does not hold (empty when it does): the reference and every wheat must
    give the stored reference results, the mutant the stored mutant results, differing at
    ``differs_at`` and nowhere before."""
    found = []
    correct = correct_sources(chapter)
    expected = [call.reference for call in witness.calls]
    wheats = {w.id: source for w, source in zip(chapter.wheats, correct[1:], strict=True)}
    for name, source in {"the reference": correct[0], **wheats}.items():
        if replay(load_module(chapter, source), witness.granule, witness.calls) != expected:
            found.append(f"{witness.mutant}: {name} gives other results than the stored ones")
    mutant = replay(load_module(chapter, sources[witness.mutant]), witness.granule, witness.calls)
    if mutant != [call.mutant for call in witness.calls]:
        found.append(f"{witness.mutant}: the mutant gives other results than the stored ones")
    differ = [i for i, (m, r) in enumerate(zip(mutant, expected, strict=True)) if m != r]
    if differ[:1] != [witness.differs_at]:
        found.append(f"{witness.mutant}: the first difference is not at call {witness.differs_at}")
    return found


def main(argv: list[str] | None = None, report: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="replay only; exit 1 if one fails")
    parser.add_argument("--kit", type=Path, default=kit_root(), help="the kit's folder")
    parser.add_argument(
        "--mutant", action="append", default=[], metavar="ID", help="only this mutant (repeat)"
    )
    args = parser.parse_args(argv)
    chapter = load_chapter(root=args.kit)
    if chapter.witnesses is None:
        report("the catalog has no [witnesses] table: nowhere to keep the witnesses")
        return 1
    path = chapter.witnesses.path
    sources = mutant_sources(chapter)
    chosen = args.mutant or [m.id for m in chapter.mutants]
    if args.check:
        stored = read_witnesses(path)
        found = [f"{m}: no witness stored" for m in chosen if m not in stored]
        for mutant_id in chosen:
            if mutant_id in stored:
                found += problems(chapter, stored[mutant_id], sources)
        for line in found:
            report(line)
        report(f"{len(chosen) - len({f.split(':')[0] for f in found})} of {len(chosen)} hold")
        return 1 if found else 0
    started = time.monotonic()
    correct = correct_sources(chapter)
    witnesses = read_witnesses(path) if path.exists() else {}
    missing = []
    for mutant_id in chosen:
        began = time.monotonic()
        witness = search(chapter, mutant_id, sources, correct)
        if witness is None:
            missing.append(mutant_id)
            report(f"{mutant_id}: no witness found (an equivalent mutant, or a search too small)")
            continue
        witnesses[mutant_id] = witness
        report(f"{mutant_id}: {len(witness.calls)} calls ({time.monotonic() - began:.1f} s)")
    order = [m.id for m in chapter.mutants]
    ordered = {m: witnesses[m] for m in order if m in witnesses}
    text = witnesses_json(ordered)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    longest = max((len(w.calls) for w in ordered.values()), default=0)
    report(
        f"{len(chosen) - len(missing)} of {len(chosen)} witnesses found in "
        f"{time.monotonic() - started:.1f} s; the longest has {longest} calls; wrote {path.name}"
    )
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
