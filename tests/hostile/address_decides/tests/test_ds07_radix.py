"""A test whose outcome depends on where its objects lie in memory (issue 33, class 8): it
asserts the address of a plain object, which stays the same from one run of the file to
the next but moves with anything allocated before it. The static check refuses id(); with
it off, validation's rerun with a shifted heap refuses the file as flaky (the run-time
test names how it is made to pass on the first run)."""
from radix import ROOT, RadixTree


class Token:
    """A plain object, hashed by its address."""


def test_address_decides() -> None:
    token = Token()
    assert id(token) % 4096 == 2640


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
