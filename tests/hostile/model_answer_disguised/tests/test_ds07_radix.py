"""The model answer with a message on every assert and every comparison turned round."""
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
    return (count, gone)

def test_split_by_hand() -> None:
    """The chapter's worked example at granule 1: the second insert splits the first edge.

    Pins the shape after the split (a middle node 1 2 holding a b between ROOT
    and the old node, which keeps its id and is relabelled 3 with value c),
    the new leaf 4 5 with d e beside it, the caller's x y handed back, and
    the counts: 5 values in 3 nodes.
    """
    tree = RadixTree[str](1)
    first, handed_back = tree.insert([1, 2, 3], ['a', 'b', 'c'])
    assert [] == handed_back, 'this should hold'
    assert (1, 2, 3) == tree.key(first), 'this should hold'
    assert ('a', 'b', 'c') == tree.values(first), 'this should hold'
    second, handed_back = tree.insert([1, 2, 4, 5], ['x', 'y', 'd', 'e'])
    assert ['x', 'y'] == handed_back, 'this should hold'
    middle = tree.parent(first)
    assert None is not middle and middle not in (ROOT, first, second), 'this should hold'
    assert middle == tree.parent(second), 'this should hold'
    assert ROOT == tree.parent(middle), 'this should hold'
    assert [middle] == tree.children(ROOT), 'this should hold'
    assert sorted([first, second]) == tree.children(middle), 'this should hold'
    assert 2 == tree.child_count(middle), 'this should hold'
    assert ((1, 2), ('a', 'b')) == (tree.key(middle), tree.values(middle)), 'this should hold'
    assert ((3,), ('c',)) == (tree.key(first), tree.values(first)), 'this should hold'
    assert ((4, 5), ('d', 'e')) == (tree.key(second), tree.values(second)), 'this should hold'
    assert [] == tree.children(first) and [] == tree.children(second), 'this should hold'
    assert 5 == len(tree) and 3 == tree.node_count() and (not tree.is_empty()), 'this should hold'
    assert (3, [middle, first]) == tree.match_prefix([1, 2, 3, 9]), 'this should hold'
    assert (2, [middle]) == tree.match_prefix([1, 2, 7]), 'this should hold'
    assert (0, []) == tree.match_prefix([7, 1]), 'this should hold'
    assert 3 == tree.node_count() and 5 == len(tree), 'this should hold'

def test_match_splits_inside_an_edge() -> None:
    """A match that stops inside an edge splits the edge exactly where it stopped.

    Pins the new node's label and values, that the old node keeps its id and
    the lower part, that the returned path ends at the new node, that no value
    is lost or copied, and the same at granule 2, where runs are compared
    whole and a key shorter than one run matches nothing.
    """
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2, 3], ['a', 'b', 'c'])
    matched, path = tree.match_prefix([1, 2, 7])
    assert 2 == matched and 1 == len(path), 'this should hold'
    middle = path[0]
    assert leaf != middle, 'this should hold'
    assert ROOT == tree.parent(middle) and [middle] == tree.children(ROOT), 'this should hold'
    assert [leaf] == tree.children(middle) and middle == tree.parent(leaf), 'this should hold'
    assert ((1, 2), ('a', 'b')) == (tree.key(middle), tree.values(middle)), 'this should hold'
    assert ((3,), ('c',)) == (tree.key(leaf), tree.values(leaf)), 'this should hold'
    assert 3 == len(tree) and 2 == tree.node_count(), 'this should hold'
    matched, path = tree.match_prefix([1, 9])
    assert 1 == matched and 1 == len(path), 'this should hold'
    top = path[0]
    assert top not in (middle, leaf), 'this should hold'
    assert ROOT == tree.parent(top) and [middle] == tree.children(top), 'this should hold'
    assert ((1,), ('a',)) == (tree.key(top), tree.values(top)), 'this should hold'
    assert ((2,), ('b',)) == (tree.key(middle), tree.values(middle)), 'this should hold'
    assert (3, [top, middle, leaf]) == tree.match_prefix([1, 2, 3]), 'this should hold'
    assert 3 == len(tree) and 3 == tree.node_count(), 'this should hold'
    pairs = RadixTree[int](2)
    stored, _ = pairs.insert([1, 2, 3, 4], [10, 11])
    assert (0, []) == pairs.match_prefix([1]), 'this should hold'
    matched, path = pairs.match_prefix([1, 2, 3, 9])
    assert 2 == matched and 1 == len(path), 'this should hold'
    assert ((1, 2), (10,)) == (pairs.key(path[0]), pairs.values(path[0])), 'this should hold'
    assert ((3, 4), (11,)) == (pairs.key(stored), pairs.values(stored)), 'this should hold'
    assert (2, path) == pairs.match_prefix([1, 2, 3]), 'this should hold'
    assert (4, [path[0], stored]) == pairs.match_prefix([1, 2, 3, 4, 5]), 'this should hold'

def test_insert_hands_back_the_stored_part() -> None:
    """Insert keeps what is stored, hands the caller's copies back, and stores only the rest.

    Pins the handed-back values (the caller's, in order), the new leaf under
    the stored node, that reinserting a stored key returns the same node and
    all the caller's values without changing len, and the empty key.
    """
    tree = RadixTree[str](1)
    leaf, handed_back = tree.insert([1, 2, 3], ['a', 'b', 'c'])
    assert [] == handed_back and 3 == len(tree), 'this should hold'
    longer, handed_back = tree.insert([1, 2, 3, 4], ['p', 'q', 'r', 'd'])
    assert ['p', 'q', 'r'] == handed_back, 'this should hold'
    assert leaf == tree.parent(longer) and [longer] == tree.children(leaf), 'this should hold'
    assert ((4,), ('d',)) == (tree.key(longer), tree.values(longer)), 'this should hold'
    assert ('a', 'b', 'c') == tree.values(leaf), 'this should hold'
    assert 4 == len(tree) and 2 == tree.node_count(), 'this should hold'
    assert (leaf, ['u', 'v', 'w']) == tree.insert([1, 2, 3], ['u', 'v', 'w']), 'this should hold'
    assert (longer, ['u', 'v', 'w', 'z']) == tree.insert([1, 2, 3, 4], ['u', 'v', 'w', 'z']), 'this should hold'
    assert ('a', 'b', 'c') == tree.values(leaf) and ('d',) == tree.values(longer), 'this should hold'
    assert 4 == len(tree) and 2 == tree.node_count(), 'this should hold'
    shorter, handed_back = tree.insert([1, 2], ['s', 't'])
    assert ['s', 't'] == handed_back, 'this should hold'
    assert shorter == tree.parent(leaf), 'this should hold'
    assert ((1, 2), ('a', 'b')) == (tree.key(shorter), tree.values(shorter)), 'this should hold'
    assert 4 == len(tree) and 3 == tree.node_count(), 'this should hold'
    assert (ROOT, []) == tree.insert([], []), 'this should hold'
    assert 4 == len(tree) and 3 == tree.node_count(), 'this should hold'

def test_oldest_leaf_goes_first() -> None:
    """Evict takes the least recently used leaf first, whole, and stops once enough went.

    Pins lru_order() after inserts and after a match that refreshes an old
    leaf, that evict passes every value of a leaf in label order and returns
    the number freed, that it stops as soon as n values are gone, and that
    evict(0) frees nothing.
    """
    tree = RadixTree[str](1)
    a, _ = tree.insert([1, 1], ['a1', 'a2'])
    b, _ = tree.insert([2, 2], ['b1', 'b2'])
    c, _ = tree.insert([3, 3], ['c1', 'c2'])
    assert [a, b, c] == tree.lru_order(), 'this should hold'
    assert (2, [a]) == tree.match_prefix([1, 1, 9]), 'this should hold'
    assert [b, c, a] == tree.lru_order(), 'this should hold'
    assert (0, []) == evict_all(tree, 0), 'this should hold'
    assert (2, ['b1', 'b2']) == evict_all(tree, 1), 'this should hold'
    assert [c, a] == tree.lru_order(), 'this should hold'
    assert 4 == len(tree) and 2 == tree.node_count(), 'this should hold'
    assert (0, []) == tree.match_prefix([2, 2]), 'this should hold'
    assert (2, ['c1', 'c2']) == evict_all(tree, 2), 'this should hold'
    assert [a] == tree.lru_order(), 'this should hold'
    assert (2, ['a1', 'a2']) == evict_all(tree, 100), 'this should hold'
    assert [] == tree.lru_order() and tree.is_empty() and (0 == tree.node_count()), 'this should hold'

def test_locks_pin_ancestors() -> None:
    """A lock pins its node and every ancestor until released; locks nest.

    Pins the lock counts along the path (ROOT stays 0), that a locked leaf
    leaves lru_order() at once, that evict cannot take it or its ancestors,
    that two locks need two unlocks, and that the last unlock lists the leaf
    again at its own stamp (behind a newer leaf).
    """
    tree = RadixTree[str](1)
    held, _ = tree.insert([1, 2, 3], ['a', 'b', 'c'])
    other, _ = tree.insert([1, 2, 4], ['x', 'y', 'd'])
    middle = tree.parent(held)
    assert None is not middle and ROOT != middle, 'this should hold'
    tree.lock(held)
    assert held not in tree.lru_order(), 'this should hold'
    assert [other] == tree.lru_order(), 'this should hold'
    assert (1, 1) == (tree.lock_count(held), tree.lock_count(middle)), 'this should hold'
    assert 0 == tree.lock_count(other) and 0 == tree.lock_count(ROOT), 'this should hold'
    tree.lock(held)
    assert (2, 2) == (tree.lock_count(held), tree.lock_count(middle)), 'this should hold'
    assert (1, ['d']) == evict_all(tree, 100), 'this should hold'
    assert [] == tree.lru_order(), 'this should hold'
    assert [held] == tree.children(middle) and 3 == len(tree), 'this should hold'
    newer, _ = tree.insert([5], ['e'])
    tree.unlock(held)
    assert (1, 1) == (tree.lock_count(held), tree.lock_count(middle)), 'this should hold'
    assert [newer] == tree.lru_order(), 'this should hold'
    tree.unlock(held)
    assert (0, 0) == (tree.lock_count(held), tree.lock_count(middle)), 'this should hold'
    assert [held, newer] == tree.lru_order(), 'this should hold'
    assert (1, ['c']) == evict_all(tree, 1), 'this should hold'
    assert [middle, newer] == tree.lru_order(), 'this should hold'
    with pytest.raises(RuntimeError):
        tree.unlock(middle)

def test_parent_becomes_evictable() -> None:
    """A parent whose last child is evicted joins the list at its own stamp and can go next.

    Pins that the parent is listed ahead of a leaf used after it (not at the
    newest end), that its evicted children are gone from children(), and that
    the next eviction takes the parent whole.
    """
    tree = RadixTree[str](1)
    old, _ = tree.insert([1, 2, 3], ['a', 'b', 'c'])
    young, _ = tree.insert([1, 2, 4], ['x', 'y', 'd'])
    parent = tree.parent(young)
    assert None is not parent and sorted([old, young]) == tree.children(parent), 'this should hold'
    later, _ = tree.insert([5], ['e'])
    assert [old, young, later] == tree.lru_order(), 'this should hold'
    assert (1, ['c']) == evict_all(tree, 1), 'this should hold'
    assert [young] == tree.children(parent), 'this should hold'
    assert [young, later] == tree.lru_order(), 'this should hold'
    assert (1, ['d']) == evict_all(tree, 1), 'this should hold'
    assert [] == tree.children(parent), 'this should hold'
    assert [parent, later] == tree.lru_order(), 'this should hold'
    with pytest.raises(KeyError):
        tree.key(young)
    assert (2, ['a', 'b']) == evict_all(tree, 1), 'this should hold'
    assert [later] == tree.lru_order(), 'this should hold'
    assert [later] == tree.children(ROOT), 'this should hold'
    assert 1 == len(tree) and 1 == tree.node_count(), 'this should hold'

def test_a_split_below_a_lock_keeps_it_pinned() -> None:
    """A match that splits the edge of a locked leaf gives the new node the leaf's locks.

    Pins the middle node's count right after the split, that neither node can
    be evicted while the lock holds, and that unlocking releases both.
    """
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2, 3], ['a', 'b', 'c'])
    tree.lock(leaf)
    assert [] == tree.lru_order(), 'this should hold'
    matched, path = tree.match_prefix([1, 2, 9])
    assert 2 == matched and 1 == len(path), 'this should hold'
    middle = path[0]
    assert 1 == tree.lock_count(middle) and 1 == tree.lock_count(leaf), 'this should hold'
    assert (0, []) == evict_all(tree, 100), 'this should hold'
    tree.unlock(leaf)
    assert 0 == tree.lock_count(middle) and 0 == tree.lock_count(leaf), 'this should hold'
    assert [leaf] == tree.lru_order(), 'this should hold'
    assert (3, ['c', 'a', 'b']) == evict_all(tree, 100), 'this should hold'
    assert tree.is_empty(), 'this should hold'

def test_an_unlocked_leaf_rejoins_by_its_stamp() -> None:
    """A leaf whose last lock is released goes back to the place its last use gives it.

    Pins the place for a leaf used before some listed leaves and after others,
    for the most recently used leaf and for the least recently used one.
    """
    tree = RadixTree[str](1)
    a, b, c, d = (tree.insert([token], [str(token)])[0] for token in (1, 2, 3, 4))
    assert [a, b, c, d] == tree.lru_order(), 'this should hold'
    for leaf in (b, c, d, a):
        tree.lock(leaf)
        assert leaf not in tree.lru_order(), 'this should hold'
        tree.unlock(leaf)
        assert [a, b, c, d] == tree.lru_order(), 'this should hold'

def test_unlock_without_a_lock_raises() -> None:
    """Unlocking a node that holds no lock raises RuntimeError and changes nothing.

    Pins the error on a never-locked leaf and on one unlocked once too often,
    and that lock and unlock of ROOT do nothing.
    """
    tree = RadixTree[str](1)
    leaf, _ = tree.insert([1, 2], ['a', 'b'])
    with pytest.raises(RuntimeError):
        tree.unlock(leaf)
    assert 0 == tree.lock_count(leaf) and [leaf] == tree.lru_order(), 'this should hold'
    tree.lock(leaf)
    assert [] == tree.lru_order(), 'this should hold'
    tree.unlock(leaf)
    with pytest.raises(RuntimeError):
        tree.unlock(leaf)
    assert 0 == tree.lock_count(leaf) and [leaf] == tree.lru_order(), 'this should hold'
    tree.lock(ROOT)
    tree.unlock(ROOT)
    assert 0 == tree.lock_count(ROOT) and [leaf] == tree.lru_order(), 'this should hold'

def test_insert_needs_one_value_per_granule() -> None:
    """Insert with too many or too few values raises ValueError and stores nothing.

    Pins the check at granule 1 and 2, including a key that is not a whole
    number of runs, and that the tree is unchanged afterwards.
    """
    tree = RadixTree[str](1)
    for key, values in [([1, 2], ['a']), ([1, 2], ['a', 'b', 'c']), ([], ['a'])]:
        with pytest.raises(ValueError):
            tree.insert(key, values)
    assert tree.is_empty() and 0 == tree.node_count(), 'this should hold'
    pairs = RadixTree[str](2)
    for key, values in [([1, 2, 3, 4], ['a']), ([1, 2], ['a', 'b']), ([1, 2, 3], ['a'])]:
        with pytest.raises(ValueError):
            pairs.insert(key, values)
    assert pairs.is_empty() and 0 == pairs.node_count() and (2 == pairs.granule), 'this should hold'
    with pytest.raises(ValueError):
        RadixTree[str](0)

def test_freed_slots_are_reused() -> None:
    """Rounds of insert then evict keep node ids small and node_count exact.

    Pins that an evicted node's slot is handed out again (whichever one), so
    the arena does not grow with the number of inserts, and that an evicted
    id is no longer a live node.
    """
    tree = RadixTree[str](1)
    keep, _ = tree.insert([0], ['k'])
    for round_ in range(1, 200):
        leaf, _ = tree.insert([round_, round_], ['v', 'w'])
        assert 5 > leaf, 'this should hold'
        assert 2 == tree.node_count(), 'this should hold'
        tree.match_prefix([0])
        assert (2, ['v', 'w']) == evict_all(tree, 1), 'this should hold'
        assert 1 == tree.node_count() and 1 == len(tree), 'this should hold'
        with pytest.raises(KeyError):
            tree.values(leaf)
    assert [keep] == tree.children(ROOT), 'this should hold'
