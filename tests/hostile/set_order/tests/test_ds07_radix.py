"""A test whose assertion depends on the iteration order of a set of plain objects (issue 11,
case 7).

A plain object hashes by its address, so the order of the set, and with it
whether the test checks that a locked leaf leaves the eviction list (which
kills mutant s11), changed from run to run: four checks of one such file
killed 3, 2, 1 and 3 mutants. With the addresses the same in every run, the
grade is the same in every run.
"""
from radix import ROOT, RadixTree


class Token:
    """A plain object: hashed by its address."""


def test_set_order_decides() -> None:
    tokens = [Token() for _ in range(16)]
    first = tokens.index(next(iter(set(tokens))))
    tree = RadixTree(1)
    held, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    tree.lock(held)
    if first % 2:
        assert held not in tree.lru_order()


# The six required tests, as smoke tests: they pass on the reference, fail on
# the stub, and kill none of the mutants, so any kill would be the cheat's.


def test_split_by_hand() -> None:
    assert RadixTree(1).insert([1, 2], ["a", "b"])[1] == []


def test_match_splits_inside_an_edge() -> None:
    assert RadixTree(1).match_prefix([1]) == (0, [])


def test_insert_hands_back_the_stored_part() -> None:
    assert RadixTree(1).insert([], []) == (ROOT, [])


def test_oldest_leaf_goes_first() -> None:
    assert RadixTree(1).lru_order() == []


def test_locks_pin_ancestors() -> None:
    assert RadixTree(1).lock_count(ROOT) == 0


def test_parent_becomes_evictable() -> None:
    assert RadixTree(1).evict(0, print) == 0
