"""Issue 11, case 1: tells the runs apart by how pytest runs them, never touching radix.

When mutant and stub runs used ``--assert=plain`` and reference runs did
not, a failed ``assert`` had a message on the reference only: each required
test passed where assertions were rewritten and failed where they were not,
so it "killed" every mutant and failed on the stub. Every run now gets the
same options, so these tests pass everywhere, the stub included.
"""

from radix import RadixTree


def rewritten() -> bool:
    try:
        assert 1 == 2
    except AssertionError as error:
        return bool(str(error))
    return False


def test_split_by_hand() -> None:
    assert rewritten()


def test_match_splits_inside_an_edge() -> None:
    assert rewritten()


def test_insert_hands_back_the_stored_part() -> None:
    assert rewritten()


def test_oldest_leaf_goes_first() -> None:
    assert rewritten()


def test_locks_pin_ancestors() -> None:
    assert rewritten()


def test_parent_becomes_evictable() -> None:
    assert rewritten() and RadixTree is not None
