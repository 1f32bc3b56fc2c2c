"""Re-make every planted mutant's witness: the shortest program of calls that tells it apart.

A witness is a tree's granule and a short list of public calls after which
one result of the mutant differs from the reference's (a return value, an
exception's type, or the tree as an accessor reads it), while the reference
and every wheat agree on every result. The search is hypothesis's stateful
testing, derandomized (``grader.grading.witness_search``, which ``grader mine``
runs on students' trees too): a state machine drives the reference, each
wheat and the mutant side by side through the public interface only, and
fails at the first result on which the mutant differs; hypothesis then
shrinks the program to the fewest calls and the smallest values.

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
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path

from grader.grading import witness_search
from grader.grading.witness import Call, Witness, read_witnesses, witnesses_json
from grader.grading.witness_search import Program, Result, observe
from grader.inputs.catalog import Chapter, kit_root, load_chapter
from grader.inputs.patching import apply_patch, mutant_sources

CLASS = "RadixTree"


def load_module(chapter: Chapter, source: str) -> types.ModuleType:
    """The kit implementation ``source`` as a module of its own (trusted kit content only)."""
    module = types.ModuleType(chapter.module)
    exec(compile(source, f"{chapter.module}.py", "exec"), module.__dict__)
    return module


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


def witness_of(chapter: Chapter, mutant_id: str, found: Program) -> Witness:
    """The witness a search found, with its skeleton test and set-up line."""
    calls = tuple(Call(**call) for call in found.calls)
    witness = Witness(mutant_id, found.granule, calls, len(calls) - 1)
    return dataclasses.replace(
        witness, test=skeleton(chapter, witness, found.shown), setup=setup(witness)
    )


def search(
    chapter: Chapter, mutant_id: str, sources: dict[str, str], correct: Sequence[str]
) -> Witness | None:
    """The shrunk witness that tells ``mutant_id`` from the reference, or ``None`` if none is
    found. ``correct`` holds the sources of the reference (first) and of every wheat."""
    modules = [load_module(chapter, source) for source in [*correct, sources[mutant_id]]]
    found = witness_search.search(modules)
    return None if found is None else witness_of(chapter, mutant_id, found)


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
