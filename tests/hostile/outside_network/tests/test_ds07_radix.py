"""google/nsjail's connect.cfg and network namespace: reach the network from a test."""
import socket

from radix import ROOT, RadixTree


def test_cheat_reaches_the_network() -> None:
    reached = []
    for address in (("1.1.1.1", 53), ("8.8.8.8", 443), ("127.0.0.1", 22)):
        try:
            with socket.create_connection(address, timeout=2):
                reached.append(address)
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
