"""Counts its runs in a kernel keyring every run shared, and fails once the mutants' turn has
come (issue 18, route 4: the user keyring outlived each run, across grader processes too)."""
import ctypes
import os

from radix import ROOT, RadixTree

LIBC = ctypes.CDLL(None, use_errno=True)
ADD_KEY = {"x86_64": 248, "aarch64": 217}[os.uname().machine]
USER_KEYRING = -4


def runs_before() -> int:
    with open("/proc/keys") as keys:
        seen = sum("grader-run-" in line for line in keys)
    name = f"grader-run-{os.urandom(8).hex()}".encode()
    LIBC.syscall(ADD_KEY, b"user", name, b"1", 1, ctypes.c_long(USER_KEYRING))
    return seen


def test_cheat_counts_runs() -> None:
    # The reference, its rerun and the stub come first: the runs after them are the mutants'.
    assert runs_before() < 3


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
