"""Model answer to the ds.07 own-tests assignment: the tests a student could write.

Every test reaches the tree only through its public interface and never
assumes which id a new node takes (an implementation may hand out freed slots
in any order), only that ids come back from the calls that make them.
"""

import pytest
from radix import ROOT, RadixTree


def evict_all(tree: RadixTree[str], n: int) -> tuple[int, list[str]]:
    """Run ``tree.evict(n, ...)``; return its count and the values it passed on, in order."""
    gone: list[str] = []
    count = tree.evict(n, gone.append)
    return count, gone


# ----------------------------------------------------------------------
# The six required tests.


def test_split_by_hand() -> None:
    """The chapter's worked example at granule 1: the second insert splits the first edge.

    Pins the shape after the split (a middle node 1 2 holding a b between ROOT
    and the old node, which keeps its id and is relabelled 3 with value c),
    the new leaf 4 5 with d e beside it, the caller's x y handed back, and
    the counts: 5 values in 3 nodes.
    """
    tree = RadixTree[str](1)
    first, handed_back = tree.insert([1, 2, 3], ["a", "b", "c"])
    assert handed_back == []
    assert tree.key(first) == (1, 2, 3)
    assert tree.values(first) == ("a", "b", "c")

    second, handed_back = tree.insert([1, 2, 4, 5], ["x", "y", "d", "e"])
    assert handed_back == ["x", "y"]
    middle = tree.parent(first)
    assert middle is not None and middle not in (ROOT, first, second)
    assert tree.parent(second) == middle
    assert tree.parent(middle) == ROOT
    assert tree.children(ROOT) == [middle]
    assert tree.children(middle) == sorted([first, second])
    assert tree.child_count(middle) == 2
    assert (tree.key(middle), tree.values(middle)) == ((1, 2), ("a", "b"))
    assert (tree.key(first), tree.values(first)) == ((3,), ("c",))
    assert (tree.key(second), tree.values(second)) == ((4, 5), ("d", "e"))
    assert tree.children(first) == [] and tree.children(second) == []
    assert len(tree) == 5 and tree.node_count() == 3 and not tree.is_empty()

    # Steps 3, 4 and 6 of the example: whole-node matches change nothing.
    assert tree.match_prefix([1, 2, 3, 9]) == (3, [middle, first])
    assert tree.match_prefix([1, 2, 7]) == (2, [middle])
    assert tree.match_prefix([7, 1]) == (0, [])
    assert tree.node_count() == 3 and len(tree) == 5


def test_match_splits_inside_an_edge() -> None:
    """A match that stops inside an edge splits the edge exactly where it stopped.

    Pins the new node's label and values, that the old node keeps its id and
    the lower part, that the returned path ends at the new node, that no value
    is lost or copied, and the same at granule 2, where runs are compared
    whole and a key shorter than one run matches nothing.
    """
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    matched, path = tree.match_prefix([1, 2, 7])
    assert matched == 2 and len(path) == 1
    middle = path[0]
    assert middle != leaf
    assert tree.parent(middle) == ROOT and tree.children(ROOT) == [middle]
    assert tree.children(middle) == [leaf] and tree.parent(leaf) == middle
    assert (tree.key(middle), tree.values(middle)) == ((1, 2), ("a", "b"))
    assert (tree.key(leaf), tree.values(leaf)) == ((3,), ("c",))
    assert len(tree) == 3 and tree.node_count() == 2

    # Step 5 of the example: a second split, higher up the same edge.
    matched, path = tree.match_prefix([1, 9])
    assert matched == 1 and len(path) == 1
    top = path[0]
    assert top not in (middle, leaf)
    assert tree.parent(top) == ROOT and tree.children(top) == [middle]
    assert (tree.key(top), tree.values(top)) == ((1,), ("a",))
    assert (tree.key(middle), tree.values(middle)) == ((2,), ("b",))
    assert tree.match_prefix([1, 2, 3]) == (3, [top, middle, leaf])
    assert len(tree) == 3 and tree.node_count() == 3

    # Granule 2: 1 2 3 9 shares one whole run with 1 2 3 4, not one and a half.
    pairs = RadixTree[int](2)
    stored, _ = pairs.insert([1, 2, 3, 4], [10, 11])
    assert pairs.match_prefix([1]) == (0, [])
    matched, path = pairs.match_prefix([1, 2, 3, 9])
    assert matched == 2 and len(path) == 1
    assert (pairs.key(path[0]), pairs.values(path[0])) == ((1, 2), (10,))
    assert (pairs.key(stored), pairs.values(stored)) == ((3, 4), (11,))
    assert pairs.match_prefix([1, 2, 3]) == (2, path)
    assert pairs.match_prefix([1, 2, 3, 4, 5]) == (4, [path[0], stored])


def test_insert_hands_back_the_stored_part() -> None:
    """Insert keeps what is stored, hands the caller's copies back, and stores only the rest.

    Pins the handed-back values (the caller's, in order), the new leaf under
    the stored node, that reinserting a stored key returns the same node and
    all the caller's values without changing len, and the empty key.
    """
    tree = RadixTree[str](1)
    leaf, handed_back = tree.insert([1, 2, 3], ["a", "b", "c"])
    assert handed_back == [] and len(tree) == 3

    longer, handed_back = tree.insert([1, 2, 3, 4], ["p", "q", "r", "d"])
    assert handed_back == ["p", "q", "r"]
    assert tree.parent(longer) == leaf and tree.children(leaf) == [longer]
    assert (tree.key(longer), tree.values(longer)) == ((4,), ("d",))
    assert tree.values(leaf) == ("a", "b", "c")
    assert len(tree) == 4 and tree.node_count() == 2

    assert tree.insert([1, 2, 3], ["u", "v", "w"]) == (leaf, ["u", "v", "w"])
    assert tree.insert([1, 2, 3, 4], ["u", "v", "w", "z"]) == (longer, ["u", "v", "w", "z"])
    assert tree.values(leaf) == ("a", "b", "c") and tree.values(longer) == ("d",)
    assert len(tree) == 4 and tree.node_count() == 2

    # A stored prefix that ends inside an edge is handed back too, after a split.
    shorter, handed_back = tree.insert([1, 2], ["s", "t"])
    assert handed_back == ["s", "t"]
    assert tree.parent(leaf) == shorter
    assert (tree.key(shorter), tree.values(shorter)) == ((1, 2), ("a", "b"))
    assert len(tree) == 4 and tree.node_count() == 3

    assert tree.insert([], []) == (ROOT, [])
    assert len(tree) == 4 and tree.node_count() == 3


def test_oldest_leaf_goes_first() -> None:
    """Evict takes the least recently used leaf first, whole, and stops once enough went.

    Pins lru_order() after inserts and after a match that refreshes an old
    leaf, that evict passes every value of a leaf in label order and returns
    the number freed, that it stops as soon as n values are gone, and that
    evict(0) frees nothing.
    """
    tree = RadixTree[str](1)
    a, _ = tree.insert([1, 1], ["a1", "a2"])
    b, _ = tree.insert([2, 2], ["b1", "b2"])
    c, _ = tree.insert([3, 3], ["c1", "c2"])
    assert tree.lru_order() == [a, b, c]

    assert tree.match_prefix([1, 1, 9]) == (2, [a])
    assert tree.lru_order() == [b, c, a]
    assert evict_all(tree, 0) == (0, [])

    assert evict_all(tree, 1) == (2, ["b1", "b2"])
    assert tree.lru_order() == [c, a]
    assert len(tree) == 4 and tree.node_count() == 2
    assert tree.match_prefix([2, 2]) == (0, [])

    assert evict_all(tree, 2) == (2, ["c1", "c2"])
    assert tree.lru_order() == [a]
    assert evict_all(tree, 100) == (2, ["a1", "a2"])
    assert tree.lru_order() == [] and tree.is_empty() and tree.node_count() == 0


def test_locks_pin_ancestors() -> None:
    """A lock pins its node and every ancestor until released; locks nest.

    Pins the lock counts along the path (ROOT stays 0), that a locked leaf
    leaves lru_order() at once, that evict cannot take it or its ancestors,
    that two locks need two unlocks, and that the last unlock lists the leaf
    again at its own stamp (behind a newer leaf).
    """
    tree = RadixTree[str](1)
    held, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    other, _ = tree.insert([1, 2, 4], ["x", "y", "d"])
    middle = tree.parent(held)
    assert middle is not None and middle != ROOT

    tree.lock(held)
    assert held not in tree.lru_order()
    assert tree.lru_order() == [other]
    assert (tree.lock_count(held), tree.lock_count(middle)) == (1, 1)
    assert tree.lock_count(other) == 0 and tree.lock_count(ROOT) == 0

    tree.lock(held)
    assert (tree.lock_count(held), tree.lock_count(middle)) == (2, 2)
    assert evict_all(tree, 100) == (1, ["d"])
    assert tree.lru_order() == []
    assert tree.children(middle) == [held] and len(tree) == 3

    newer, _ = tree.insert([5], ["e"])
    tree.unlock(held)
    assert (tree.lock_count(held), tree.lock_count(middle)) == (1, 1)
    assert tree.lru_order() == [newer]
    tree.unlock(held)
    assert (tree.lock_count(held), tree.lock_count(middle)) == (0, 0)
    assert tree.lru_order() == [held, newer]

    assert evict_all(tree, 1) == (1, ["c"])
    assert tree.lru_order() == [middle, newer]
    with pytest.raises(RuntimeError):
        tree.unlock(middle)


def test_parent_becomes_evictable() -> None:
    """A parent whose last child is evicted joins the list at its own stamp and can go next.

    Pins that the parent is listed ahead of a leaf used after it (not at the
    newest end), that its evicted children are gone from children(), and that
    the next eviction takes the parent whole.
    """
    tree = RadixTree[str](1)
    old, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    young, _ = tree.insert([1, 2, 4], ["x", "y", "d"])
    parent = tree.parent(young)
    assert parent is not None and tree.children(parent) == sorted([old, young])
    later, _ = tree.insert([5], ["e"])
    assert tree.lru_order() == [old, young, later]

    assert evict_all(tree, 1) == (1, ["c"])
    assert tree.children(parent) == [young]
    assert tree.lru_order() == [young, later]

    assert evict_all(tree, 1) == (1, ["d"])
    assert tree.children(parent) == []
    assert tree.lru_order() == [parent, later]
    with pytest.raises(KeyError):
        tree.key(young)

    assert evict_all(tree, 1) == (2, ["a", "b"])
    assert tree.lru_order() == [later]
    assert tree.children(ROOT) == [later]
    assert len(tree) == 1 and tree.node_count() == 1


# ----------------------------------------------------------------------
# More tests: the corners the six above leave open.


def test_a_split_below_a_lock_keeps_it_pinned() -> None:
    """A match that splits the edge of a locked leaf gives the new node the leaf's locks.

    Pins the middle node's count right after the split, that neither node can
    be evicted while the lock holds, and that unlocking releases both.
    """
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    tree.lock(leaf)
    assert tree.lru_order() == []
    matched, path = tree.match_prefix([1, 2, 9])
    assert matched == 2 and len(path) == 1
    middle = path[0]
    assert tree.lock_count(middle) == 1 and tree.lock_count(leaf) == 1
    assert evict_all(tree, 100) == (0, [])

    tree.unlock(leaf)
    assert tree.lock_count(middle) == 0 and tree.lock_count(leaf) == 0
    assert tree.lru_order() == [leaf]
    assert evict_all(tree, 100) == (3, ["c", "a", "b"])
    assert tree.is_empty()


def test_an_unlocked_leaf_rejoins_by_its_stamp() -> None:
    """A leaf whose last lock is released goes back to the place its last use gives it.

    Pins the place for a leaf used before some listed leaves and after others,
    for the most recently used leaf and for the least recently used one.
    """
    tree = RadixTree[str](1)
    a, b, c, d = (tree.insert([token], [str(token)])[0] for token in (1, 2, 3, 4))
    assert tree.lru_order() == [a, b, c, d]
    for leaf in (b, c, d, a):
        tree.lock(leaf)
        assert leaf not in tree.lru_order()
        tree.unlock(leaf)
        assert tree.lru_order() == [a, b, c, d]


def test_unlock_without_a_lock_raises() -> None:
    """Unlocking a node that holds no lock raises RuntimeError and changes nothing.

    Pins the error on a never-locked leaf and on one unlocked once too often,
    and that lock and unlock of ROOT do nothing.
    """
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2], ["a", "b"])
    with pytest.raises(RuntimeError):
        tree.unlock(leaf)
    assert tree.lock_count(leaf) == 0 and tree.lru_order() == [leaf]

    tree.lock(leaf)
    assert tree.lru_order() == []
    tree.unlock(leaf)
    with pytest.raises(RuntimeError):
        tree.unlock(leaf)
    assert tree.lock_count(leaf) == 0 and tree.lru_order() == [leaf]

    tree.lock(ROOT)
    tree.unlock(ROOT)
    assert tree.lock_count(ROOT) == 0 and tree.lru_order() == [leaf]


def test_insert_needs_one_value_per_granule() -> None:
    """Insert with too many or too few values raises ValueError and stores nothing.

    Pins the check at granule 1 and 2, including a key that is not a whole
    number of runs, and that the tree is unchanged afterwards.
    """
    tree = RadixTree[str](1)
    for key, values in [([1, 2], ["a"]), ([1, 2], ["a", "b", "c"]), ([], ["a"])]:
        with pytest.raises(ValueError):
            tree.insert(key, values)
    assert tree.is_empty() and tree.node_count() == 0

    pairs = RadixTree[str](2)
    for key, values in [([1, 2, 3, 4], ["a"]), ([1, 2], ["a", "b"]), ([1, 2, 3], ["a"])]:
        with pytest.raises(ValueError):
            pairs.insert(key, values)
    assert pairs.is_empty() and pairs.node_count() == 0 and pairs.granule == 2
    with pytest.raises(ValueError):
        RadixTree[str](0)


def test_freed_slots_are_reused() -> None:
    """Rounds of insert then evict keep node ids small and node_count exact.

    Pins that an evicted node's slot is handed out again (whichever one), so
    the arena does not grow with the number of inserts, and that an evicted
    id is no longer a live node.
    """
    tree = RadixTree[str](1)
    keep, _ = tree.insert([0], ["k"])
    for round_ in range(1, 200):
        leaf, _ = tree.insert([round_, round_], ["v", "w"])
        assert leaf < 5
        assert tree.node_count() == 2
        tree.match_prefix([0])
        assert evict_all(tree, 1) == (2, ["v", "w"])
        assert tree.node_count() == 1 and len(tree) == 1
        with pytest.raises(KeyError):
            tree.values(leaf)
    assert tree.children(ROOT) == [keep]
