"""The reference and two of its mutants, read as a student reads them.

The reference's docstring examples run as doctests (``lock``, ``unlock`` and
``evict`` have one each), and ``_check`` says which invariant broke, with the
tree's lists. Two planted mutants are shown to plant exactly the chapter's
pitfall and nothing else: ``m02`` stops reusing freed slots and keeps
``node_count()`` right; ``s14`` clamps lock counts at zero, so an unlock
without a lock releases a lock another caller holds on a shared ancestor.
"""

from __future__ import annotations

import doctest
import re
from types import ModuleType
from typing import Any

import pytest

from grader.inputs.catalog import load_chapter
from grader.inputs.patching import mutant_sources

CHAPTER = load_chapter()


def module_from(source: str, name: str) -> ModuleType:
    """Execute ``source`` as a module named ``name``, outside ``sys.modules``."""
    module = ModuleType(name)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


REFERENCE = module_from(CHAPTER.reference.read_text(encoding="utf-8"), "reference_radix")
MUTANTS = mutant_sources(CHAPTER)


def test_the_docstring_examples_pass() -> None:
    finder = doctest.DocTestFinder()
    tests = {t.name.rsplit(".", 1)[-1]: t for t in finder.find(REFERENCE) if t.examples}
    for method in ("lock", "unlock", "evict", "insert", "match_prefix", "RadixTree"):
        assert method in tests, f"{method} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests.values():
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def two_leaves(module: ModuleType) -> tuple[Any, int, int, int]:
    """A tree holding 1 2 3 and 1 2 4 (granule 1): the tree, the two leaves, their parent."""
    tree = module.RadixTree(1)
    x, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    y, _ = tree.insert([1, 2, 4], ["a", "b", "d"])
    return tree, x, y, tree.parent(y)


@pytest.mark.parametrize(
    ("breakage", "invariant"),
    [
        (lambda t, x, y, p: t._values[x].append("z"), "invariant 1 "),
        (lambda t, x, y, p: t._parent.__setitem__(x, 0), "invariant 2 "),
        (lambda t, x, y, p: t._locks.__setitem__(x, 2), "invariant 3 "),
        (lambda t, x, y, p: t._unlink(x), "invariant 4 "),
        (lambda t, x, y, p: t._stamp.__setitem__(p, 0), "invariant 5 "),
        (lambda t, x, y, p: t._free.append(x), "invariant 6 "),
    ],
    ids=[f"invariant{n}" for n in range(1, 7)],
)
def test_check_names_the_broken_invariant_and_shows_the_lists(
    breakage: Any, invariant: str
) -> None:
    tree, x, y, parent = two_leaves(REFERENCE)
    tree._check()
    breakage(tree, x, y, parent)
    with pytest.raises(AssertionError) as broken:
        tree._check()
    message = str(broken.value)
    assert message.startswith(invariant), message
    lines = message.splitlines()
    assert "slot live label values parent children locks stamp prev next" in lines
    assert any(re.match(rf"{x} True \(3,\) \['c'", line) for line in lines), message


def test_m02_breaks_only_the_reuse_of_freed_slots() -> None:
    """On m02 every count stays right; only the ids grow, where the reference reuses them."""
    mutant = module_from(MUTANTS["m02"], "m02_radix")
    ids: dict[str, set[int]] = {}
    for name, module in (("reference", REFERENCE), ("m02", mutant)):
        tree = module.RadixTree(1)
        seen = ids.setdefault(name, set())
        for round_ in range(20):
            leaf, _ = tree.insert([1, 2, round_ % 3], ["a", "b", "c"])
            seen.add(leaf)
            assert (tree.node_count(), len(tree)) == (1, 3)
            assert tree.evict(5, lambda value: None) == 3
            assert (tree.node_count(), len(tree), tree.is_empty()) == (0, 0, True)
            tree._check()
    assert ids["reference"] == {1}
    assert ids["m02"] == set(range(1, 21))


def test_s14_releases_a_lock_another_caller_holds() -> None:
    """A request holds the prefix 1 2 (a lock on the parent); an unlock of the leaf 1 2 3,
    which nobody locked, must be refused. On s14 it goes through, clamped at zero on the
    leaf, and spends the request's lock on the parent: the held prefix is then evicted."""
    tree, x, _, parent = two_leaves(REFERENCE)
    tree.lock(parent)
    with pytest.raises(RuntimeError):
        tree.unlock(x)
    gone: list[str] = []
    tree.evict(10, gone.append)
    assert gone == ["c", "d"] and tree.lock_count(parent) == 1

    tree, x, _, parent = two_leaves(module_from(MUTANTS["s14"], "s14_radix"))
    tree.lock(parent)
    tree.unlock(x)
    assert [tree.lock_count(n) for n in (x, parent)] == [0, 0]
    tree._check()  # the tree is consistent: only the request's lock is gone
    gone = []
    tree.evict(10, gone.append)
    assert gone == ["c", "d", "a", "b"], "on s14 the request's prefix 1 2 is evicted"
    assert tree.is_empty()
