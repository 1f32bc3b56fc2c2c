"""Tells the runs apart by the CPU it runs on: the implementation process is pinned to its
worker's CPU and draws the test after it, so a test could tell which worker runs it (issue 25)."""

import os

from radix import ROOT, RadixTree


def _cpu() -> int:
    with open("/proc/self/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[36])


def test_cheat_cpu() -> None:
    if os.getuid() != 65534:  # below the namespaces level nothing is pinned: nothing to read
        return
    for _ in range(2000):  # calls draw this process to its implementation's CPU
        RadixTree(1).node_count()
    # Fails on one worker's runs only. The reference and the correct variant start side by
    # side on both workers, so one of them fails: the file is not valid on any machine.
    assert _cpu() != 0


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
