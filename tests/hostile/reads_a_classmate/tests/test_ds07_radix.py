"""Issue 33: classmates are strangers; look for another run's folder and read its files."""
import glob
import os

from radix import ROOT, RadixTree


def test_cheat_reads_a_classmate() -> None:
    found = []
    for pattern in ("/tmp/grader-*/run-*/tests/*.py", "/tmp/grader-*/run-*/implementation/*"):
        for path in glob.glob(pattern):
            try:
                with open(path, "rb") as file:
                    found.append((path, file.read(1)))
            except OSError:
                pass
    mine = os.getcwd() + "/"
    assert [path for path, _ in found if not path.startswith(mine)] == []


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
