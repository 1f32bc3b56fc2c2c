"""ioi/isolate's box, QingdaoU/Judger's write_file test: read and write outside the run."""
import os

from radix import ROOT, RadixTree


def test_cheat_reads_and_writes_the_machine() -> None:
    reached = []
    for path in ("/etc/shadow", "/root/.bash_history", "/root/.profile"):
        try:
            with open(path, "rb") as secret:
                reached.append((path, len(secret.read())))
        except OSError:
            pass
    try:  # what root's home holds beyond the way to Python (a pyenv), where the run may list
        reached += [("/root", name) for name in os.listdir("/root") if name != ".pyenv"]
    except OSError:
        pass
    try:
        with open("/etc/grader-was-here", "w") as note:
            note.write("x")
        reached.append("/etc/grader-was-here")
    except OSError:
        pass
    assert reached == []


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
