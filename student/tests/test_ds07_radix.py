# Your own tests for ds.07, graded by mutation: the grader plants known bugs in
# the reference and counts how many of them these tests catch (threshold 0.70;
# the bug "a locked leaf stays on the eviction list", s11, must be caught).
#
# Rules (`grader check` explains each one it finds broken, by line):
# - Reach the tree only through its public interface, via `import radix` /
#   `from radix import ...`: the grader decides which radix.py that is.
# - Import only radix, pytest, hypothesis (with hypothesis.strategies and
#   hypothesis.stateful) and the standard modules collections,
#   collections.abc, copy, dataclasses, enum, functools, itertools, math,
#   operator, random, re, string, typing and unittest (its TestCase).
# - Use no attribute or method whose name starts with `_`, except
#   `super().__init__()` and `self._x` in your own classes and state machines;
#   no `open`, `eval`, `getattr` and the like; no skips, xfails or `pytest.exit`.
# - Be deterministic: no wall clock, no unseeded randomness (random.Random(SEED)
#   or hypothesis), no test that depends on another test having run. The grader
#   runs hypothesis derandomized with no database and no deadline.
# - Write each required test as a function at the top level or as a method
#   of a class named Test... (a unittest.TestCase too): both count, and each
#   must fail on the stub.
#
# Workflow: write these first and run `grader tdd red` (each required test must
# fail on the stub, for the right reason); then implement radix.py, run
# `grader tdd green` (your tests pass on your tree) and `grader check` (the
# verdict). More tests than the required ones are welcome: each must pass on the
# reference and on every correct variant, and every one of them counts for kills.

import pytest
import radix  # noqa: F401  (the tests you write use these names)
from radix import ROOT, RadixTree  # noqa: F401


def test_split_by_hand() -> None:
    """The chapter's worked example (section 3) at granule 1, step by step.

    Pin: insert (1, 2, 3) with values a b c, then (1, 2, 4, 5) with x y d e:
    the second insert hands back x y and the stored a b stay; the edge splits
    into a middle node (1, 2) with values a b whose children are the old node,
    relabelled (3,) with value c and the same id, and a new leaf (4, 5) with
    d e. The middle node's parent is ROOT; len(tree) is 5 and node_count() 3.
    """
    pytest.fail("write this test")


def test_match_splits_inside_an_edge() -> None:
    """A match that stops inside an edge splits it there.

    Pin: with (1, 2, 3) stored, match_prefix((1, 2, 7)) returns 2 tokens and a
    path that ends at a new node labelled (1, 2) under ROOT; the old node keeps
    its id, becomes that node's child and keeps the lower part (3,) and its
    value. Also pin the granule: at granule 2, a match compares whole runs
    (1 2 3 9 against 1 2 3 4 matches 2 tokens) and a key shorter than one run
    matches nothing.
    """
    pytest.fail("write this test")


def test_insert_hands_back_the_stored_part() -> None:
    """Insert keeps the values already stored and returns the caller's for that part.

    Pin: inserting a key whose prefix is stored hands back exactly the caller's
    values for the stored prefix (in order) and stores only the rest as a new
    leaf; inserting a stored key again returns the same node and every one of
    the caller's values, and len(tree) does not change.
    """
    pytest.fail("write this test")


def test_oldest_leaf_goes_first() -> None:
    """Evict takes the least recently used unlocked leaf, whole.

    Pin: insert several disjoint keys, then match one of the older ones:
    lru_order() moves it to the newest end; evict(1, ...) removes the oldest
    leaf with all its values (passed to the callback in label order) and
    returns how many went, which may be more than 1.
    """
    pytest.fail("write this test")


def test_locks_pin_ancestors() -> None:
    """A lock keeps the node and every ancestor off the eviction list until released.

    Pin: lock a leaf below a split: lock_count is 1 on it and on each ancestor
    (0 on ROOT), the leaf leaves lru_order(), and evict cannot take it or its
    ancestors even when asked for everything. Locks nest (two locks need two
    unlocks); after the last unlock the leaf is evictable again; an unlock
    with no lock raises RuntimeError.
    """
    pytest.fail("write this test")


def test_parent_becomes_evictable() -> None:
    """Once its last child is evicted, a parent is listed at its own stamp and can go too.

    Pin: build a parent with one or two children, touch some other leaf after
    the parent so that it is newer, and evict the parent's children: the
    parent appears in lru_order() before the newer leaf (its own stamp, not the
    newest end), and the next eviction takes it.
    """
    pytest.fail("write this test")
