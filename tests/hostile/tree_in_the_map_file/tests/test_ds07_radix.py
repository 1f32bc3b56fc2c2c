"""A good test file with one blind spot: it never locks a leaf.

It locks only a node that has children, where "a locked leaf stays on the
eviction list" (the required mutant s11) changes nothing, so s11 survives
even though almost every other planted bug is caught.
"""

import pytest
from radix import ROOT, RadixTree


def evicted(tree: RadixTree[str], n: int) -> list[str]:
    """The values ``tree.evict(n, ...)`` passes on, in order."""
    gone: list[str] = []
    tree.evict(n, gone.append)
    return gone


def test_split_by_hand() -> None:
    """The worked example: the split's shape, labels, values and counts."""
    tree = RadixTree[str](1)
    first, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    second, handed_back = tree.insert([1, 2, 4, 5], ["x", "y", "d", "e"])
    assert handed_back == ["x", "y"]
    middle = tree.parent(first)
    assert middle is not None and tree.parent(middle) == ROOT
    assert tree.children(middle) == sorted([first, second])
    assert (tree.key(middle), tree.values(middle)) == ((1, 2), ("a", "b"))
    assert (tree.key(first), tree.values(first)) == ((3,), ("c",))
    assert len(tree) == 5 and tree.node_count() == 3


def test_match_splits_inside_an_edge() -> None:
    """A match splits the edge where it stops; at granule 2 runs compare whole."""
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    assert tree.match_prefix([1, 2, 7]) == (2, [tree.parent(leaf)])
    assert tree.key(leaf) == (3,)

    pairs = RadixTree[str](2)
    pairs.insert([1, 2, 3, 4], ["a", "b"])
    assert pairs.match_prefix([1]) == (0, [])
    matched, _ = pairs.match_prefix([1, 2, 3, 9])
    assert matched == 2


def test_insert_hands_back_the_stored_part() -> None:
    """Stored values stay, the caller's come back; a wrong value count is refused."""
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2], ["a", "b"])
    assert tree.insert([1, 2], ["c", "d"]) == (leaf, ["c", "d"])
    assert tree.values(leaf) == ("a", "b")
    with pytest.raises(ValueError):
        tree.insert([3, 4], ["e"])


def test_oldest_leaf_goes_first() -> None:
    """A match refreshes a leaf; evict takes the oldest, no more; slots are reused."""
    tree = RadixTree[str](1)
    a, _ = tree.insert([1], ["a"])
    b, _ = tree.insert([2], ["b"])
    tree.match_prefix([1])
    assert tree.lru_order() == [b, a]
    assert evicted(tree, 1) == ["b"]
    assert tree.children(ROOT) == [a]
    for round_ in range(3, 20):
        leaf, _ = tree.insert([round_], ["v"])
        assert leaf < 5
        tree.match_prefix([1])
        assert evicted(tree, 1) == ["v"]


def test_locks_pin_ancestors() -> None:
    """A lock on an inner node counts on its ancestors and survives a split above it."""
    tree = RadixTree[str](1)
    tree.insert([1, 2, 3, 4, 7], ["a", "b", "c", "d", "e"])
    tree.insert([1, 2, 3, 4, 8], ["a", "b", "c", "d", "f"])
    inner = tree.match_prefix([1, 2, 3, 4])[1][-1]
    tree.insert([1, 2, 5], ["a", "b", "g"])
    top = tree.parent(inner)
    assert top is not None
    tree.lock(inner)
    assert (tree.lock_count(inner), tree.lock_count(top)) == (1, 1)

    tree.match_prefix([1, 2, 3, 9])
    above = tree.parent(inner)
    assert above is not None and tree.lock_count(above) == 1
    assert sorted(evicted(tree, 100)) == ["e", "f", "g"]
    assert tree.lru_order() == []
    tree.unlock(inner)
    assert tree.lru_order() == [inner]
    with pytest.raises(RuntimeError):
        tree.unlock(inner)


def test_parent_becomes_evictable() -> None:
    """A parent left childless is listed at its own stamp, ahead of a newer leaf."""
    tree = RadixTree[str](1)
    child, _ = tree.insert([1, 2], ["a", "b"])
    parent, _ = tree.insert([1], ["a"])
    later, _ = tree.insert([5], ["e"])
    assert tree.parent(child) == parent
    assert evicted(tree, 1) == ["b"]
    assert tree.lru_order() == [parent, later]
