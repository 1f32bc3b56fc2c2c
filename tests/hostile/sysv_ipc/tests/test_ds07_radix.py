"""QingdaoU/Judger's seccomp tests, issue 33 item 4: System V IPC from a test."""
import ctypes

from radix import ROOT, RadixTree

LIBC = ctypes.CDLL(None, use_errno=True)


def test_cheat_uses_ipc() -> None:
    made = [LIBC.shmget(0x33B3, 4096, 0o1000 | 0o600), LIBC.msgget(0x33B3, 0o1000 | 0o600)]
    made.append(LIBC.semget(0x33B3, 1, 0o1000 | 0o600))
    assert made == [-1, -1, -1] and ctypes.get_errno() == 38


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
