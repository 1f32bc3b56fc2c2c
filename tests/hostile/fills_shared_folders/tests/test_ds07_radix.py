"""Writes 2,400 files into the folders every user may write, half in ``/tmp`` and half in
``/dev/shm`` (memory), none in its own folder (issue 33, gap 3): at ``uid``, where a run has
no private ``/tmp``, they escaped the caps on a run's folder (2000 files, 64 MB), and what a
run leaves there could reach a later run. It reaches ``os`` as pytest_object_reads_kit does,
so it passes the static check; it must fail alone, with a message, and leave nothing."""
import functools

from radix import ROOT, RadixTree


def shape(request: object) -> None:
    """Only a signature, for pytest to read."""


@functools.wraps(shape)
def test_fills_the_shared_folders(**fixtures: object) -> None:
    os = fixtures["request"].config.pluginmanager.get_plugin("main").os
    for folder in ("/tmp", "/dev/shm"):
        for number in range(1200):
            handle = os.open(f"{folder}/note-{number}", os.O_WRONLY | os.O_CREAT, 0o600)
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
