"""Tells the mutant runs by their CPU limit: once lower than the reference runs' (issue 18)."""
import resource

from radix import ROOT, RadixTree


def test_cheat_limits() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_CPU)
    # The validation runs of the hostile suite's checks see 5 s + 2; the mutant runs saw less.
    assert soft >= 7


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
