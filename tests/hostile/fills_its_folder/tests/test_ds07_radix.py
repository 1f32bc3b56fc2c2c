"""Writes 240 MB in 20,000 files into its own folder (issue 33, class 6): with no cap, one
such run fills the disk every concurrent run of every student writes to. It reaches
``os`` as pytest_object_reads_kit does, so it passes the static check; it must fail
alone, with a message, and leave the machine as it was."""
import functools

from radix import ROOT, RadixTree


def shape(request: object) -> None:
    """Only a signature, for pytest to read."""


@functools.wraps(shape)
def test_fills_the_disk(**fixtures: object) -> None:
    os = fixtures["request"].config.pluginmanager.get_plugin("main").os
    block = b"x" * 12_000
    os.mkdir("filler")
    for number in range(20_000):
        handle = os.open(f"filler/{number}", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.write(handle, block)
        finally:
            os.close(handle)


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
