"""Allocates without bound, a gibibyte at a time.

Each block asks for as much address space as a run may have in all, so the
first one fails at once whatever the machine's speed: filling memory page by
page until the limit takes seconds on a busy machine and could meet the time
limit first, which made this case flaky."""
from radix import ROOT, RadixTree


def test_memory() -> None:
    blocks = []
    while True:
        blocks.append(bytearray(1024 * 1024 * 1024))


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
