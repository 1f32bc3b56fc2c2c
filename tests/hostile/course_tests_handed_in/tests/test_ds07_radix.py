"""My tests for the radix tree."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import pytest
from hypothesis import strategies as st
from radix import ROOT, RadixTree


# Quoted, so that nothing evaluates ``RadixTree[...]`` at run time: the interface
# asks for a Generic class, but a correct tree that is not one must not fail here.
Tree: TypeAlias = "RadixTree[Any]"
Shape: TypeAlias = dict[tuple[int, ...], tuple[tuple[Any, ...], "Shape"]]

# ----------------------------------------------------------------------
# Helpers. Containers are normalised (tuple or list) so that the tests pin
# behaviour, not whether an implementation returns a list or a tuple.


def check(tree: Tree) -> None:
    """Run the implementation's own invariant check, if it has one."""
    return None


def insert(tree: Tree, key: Sequence[int], values: Sequence[Any]) -> tuple[int, list[Any]]:
    """``tree.insert``: the node that ends ``key`` and the values handed back."""
    node, handed_back = tree.insert(key, values)
    return node, list(handed_back)


def match(tree: Tree, key: Sequence[int]) -> tuple[int, list[int]]:
    """``tree.match_prefix``: the tokens matched and the path below ROOT."""
    matched, path = tree.match_prefix(key)
    return matched, list(path)


def edge(tree: Tree, node: int | None) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """The label of the edge into ``node`` and its values."""
    assert node is not None
    return tuple(tree.key(node)), tuple(tree.values(node))


def lru(tree: Tree) -> list[int]:
    """The unlocked leaves, oldest first."""
    return list(tree.lru_order())


def shape(tree: Tree, node: int = ROOT) -> Shape:
    """The subtree below ``node`` as nested dicts: label -> (values, subtree)."""
    return {edge(tree, c)[0]: (edge(tree, c)[1], shape(tree, c)) for c in tree.children(node)}


def layout(tree: Tree) -> dict[int, tuple[Any, ...]]:
    """Every node reachable from ROOT, by id: label, values, parent, children, lock count."""
    nodes: dict[int, tuple[Any, ...]] = {}
    todo = [ROOT]
    while todo:
        node = todo.pop()
        children = list(tree.children(node))
        nodes[node] = (
            *edge(tree, node),
            tree.parent(node),
            children,
            tree.child_count(node),
            tree.lock_count(node),
        )
        todo.extend(children)
    return nodes


class TreeView:
    """What the public accessors showed of a whole tree at one moment, read in one request.

    The tree runs in another process during grading: reading it call by call
    after every step costs a round trip each, while ``read_whole`` makes the
    same calls there (the implementation's own check first, if asked) and
    brings back plain data. This answers the same accessors from that data;
    an id not reachable from ROOT raises KeyError, as the tree would.
    """

    NODE = ("key", "values", "parent", "children", "child_count", "lock_count")
    WHOLE = ("granule", "len", "is_empty", "node_count", "lru_order")

    def __init__(self, tree: Tree, own_check: bool = False) -> None:
        whole = [tree.granule, len(tree), tree.is_empty(), tree.node_count(), tree.lru_order()]
        nodes = []
        todo = [ROOT]
        while todo:
            node = todo.pop()
            row = [
                tree.key(node),
                tree.values(node),
                tree.parent(node),
                tree.children(node),
                tree.child_count(node),
                tree.lock_count(node),
            ]
            nodes.append([node, row])
            todo.extend(row[3])
        self.granule, self._len, self._is_empty, self._node_count, self._lru = whole
        self._nodes = {node: dict(zip(self.NODE, row, strict=True)) for node, row in nodes}

    def __len__(self) -> int:
        return int(self._len)

    def is_empty(self) -> bool:
        return bool(self._is_empty)

    def node_count(self) -> int:
        return int(self._node_count)

    def lru_order(self) -> list[int]:
        return list(self._lru)

    def _field(self, node: int, name: str) -> Any:
        if node not in self._nodes:
            raise KeyError(node)
        return self._nodes[node][name]

    def key(self, node: int) -> tuple[int, ...]:
        return tuple(self._field(node, "key"))

    def values(self, node: int) -> tuple[Any, ...]:
        return tuple(self._field(node, "values"))

    def parent(self, node: int) -> int | None:
        return self._field(node, "parent")  # type: ignore[no-any-return]

    def children(self, node: int) -> list[int]:
        return list(self._field(node, "children"))

    def child_count(self, node: int) -> int:
        return self._field(node, "child_count")  # type: ignore[no-any-return]

    def lock_count(self, node: int) -> int:
        return self._field(node, "lock_count")  # type: ignore[no-any-return]


def snapshot(tree: Tree) -> dict[str, Any]:
    """Everything the public accessors show, to compare a tree before and after a call."""
    tree = TreeView(tree)
    return {
        "granule": tree.granule,
        "len": len(tree),
        "is_empty": tree.is_empty(),
        "node_count": tree.node_count(),
        "lru_order": lru(tree),
        "nodes": layout(tree),
    }


def evict(tree: Tree, n: int) -> tuple[int, list[Any]]:
    """``tree.evict(n, ...)``: the count it returns and the values it passed on, in order."""
    gone: list[Any] = []
    freed = tree.evict(n, gone.append)
    return freed, gone


def refused(tree: Tree, error: type[Exception], call: Callable[[], object]) -> None:
    """Check that ``call()`` raises ``error`` and leaves the tree exactly as it was.

    A stub's NotImplementedError does not count as the error.
    """
    before = snapshot(tree)
    with pytest.raises(error) as raised:
        call()
    assert not isinstance(raised.value, NotImplementedError)
    assert snapshot(tree) == before, "a call that raised changed the tree"


# ----------------------------------------------------------------------
# Unit tests: the chapter's scenarios, with every outcome pinned.


def test_split_by_hand() -> None:
    """Replay the chapter's hand-worked example at granule 1, checking the tree after each call.

    Pins how an insert splits an edge (the old node keeps its id and takes
    the lower half), which values an insert keeps and which it hands back,
    the paths a match returns, and the split a match makes when it stops in
    the middle of an edge.
    """
    tree: RadixTree[str] = RadixTree(1)

    # 1. One key is one node.
    abc, back = insert(tree, [1, 2, 3], ["a", "b", "c"])
    assert back == []
    assert shape(tree) == {(1, 2, 3): (("a", "b", "c"), {})}
    assert tree.parent(abc) == ROOT
    assert tree.parent(ROOT) is None and edge(tree, ROOT) == ((), ())
    assert (len(tree), tree.node_count()) == (3, 1)
    check(tree)

    # 2. 1 2 4 5 leaves the edge after 1 2: the edge splits, x y come back.
    de, back = insert(tree, [1, 2, 4, 5], ["x", "y", "d", "e"])
    assert back == ["x", "y"]
    mid = tree.parent(de)
    assert mid is not None and mid not in (ROOT, abc, de)
    assert edge(tree, mid) == ((1, 2), ("a", "b"))
    assert edge(tree, abc) == ((3,), ("c",))
    assert edge(tree, de) == ((4, 5), ("d", "e"))
    assert tree.parent(abc) == mid and tree.parent(mid) == ROOT
    assert tree.children(ROOT) == [mid]
    assert tree.children(mid) == sorted([abc, de])
    assert (len(tree), tree.node_count()) == (5, 3)
    check(tree)
    after_step_2 = layout(tree)

    # 3. A match that ends at a node changes nothing but recency.
    assert match(tree, [1, 2, 3, 9]) == (3, [mid, abc])
    assert [tree.values(n) for n in (mid, abc)] == [("a", "b"), ("c",)]
    assert layout(tree) == after_step_2

    # 4. Ending exactly at the middle node needs no split either.
    assert match(tree, [1, 2, 7]) == (2, [mid])
    assert layout(tree) == after_step_2
    check(tree)

    # 5. 1 9 stops inside the edge 1 2: a match splits it too.
    matched, path = match(tree, [1, 9])
    assert matched == 1 and len(path) == 1
    top = path[0]
    assert top not in (ROOT, abc, de, mid)
    assert edge(tree, top) == ((1,), ("a",))
    assert edge(tree, mid) == ((2,), ("b",))
    assert tree.parent(top) == ROOT and tree.parent(mid) == top
    assert tree.children(ROOT) == [top] and tree.children(top) == [mid]
    assert shape(tree) == {
        (1,): (("a",), {(2,): (("b",), {(3,): (("c",), {}), (4, 5): (("d", "e"), {})})}),
    }
    assert (len(tree), tree.node_count()) == (5, 4)
    check(tree)
    after_step_5 = layout(tree)

    # 6. No stored prefix starts with 7.
    assert match(tree, [7, 1]) == (0, [])
    assert layout(tree) == after_step_5
    check(tree)


def test_match_splits_inside_an_edge() -> None:
    """At granule 2, compare, split and look up children by whole runs of two tokens.

    Pins that a run equal in its first token only does not match, that the
    split falls between runs, that a key shorter than one run (or the tail
    of a key after its last whole run) matches nothing, and that a granule
    below 1 is refused.
    """
    with pytest.raises(ValueError):
        RadixTree(0)
    tree: RadixTree[int] = RadixTree(2)
    assert tree.granule == 2

    leaf, back = insert(tree, [1, 2, 3, 4], [10, 11])
    assert back == []

    # Less than one run matches nothing and changes nothing.
    before = layout(tree)
    assert match(tree, [1]) == (0, [])
    assert layout(tree) == before

    # 3 9 differs from 3 4 in its second token only: the match stops after 1 2.
    matched, path = match(tree, [1, 2, 3, 9])
    assert matched == 2 and len(path) == 1
    mid = path[0]
    assert mid not in (ROOT, leaf)
    assert edge(tree, mid) == ((1, 2), (10,))
    assert edge(tree, leaf) == ((3, 4), (11,))
    assert tree.parent(leaf) == mid and tree.parent(mid) == ROOT
    check(tree)

    # Tokens after the last whole run are ignored.
    assert match(tree, [1, 2, 3]) == (2, [mid])
    assert match(tree, [1, 2, 3, 4, 5]) == (4, [mid, leaf])

    # A second child whose first run shares only its first token with the first child.
    other, back = insert(tree, [1, 2, 3, 9], [20, 21])
    assert back == [20]
    assert edge(tree, other) == ((3, 9), (21,))
    assert tree.children(mid) == sorted([leaf, other])

    # At ROOT too, 1 3 is not the run 1 2.
    beside, back = insert(tree, [1, 3], [30])
    assert back == []
    assert tree.parent(beside) == ROOT
    assert tree.children(ROOT) == sorted([mid, beside])
    assert shape(tree) == {
        (1, 2): ((10,), {(3, 4): ((11,), {}), (3, 9): ((21,), {})}),
        (1, 3): ((30,), {}),
    }
    assert (len(tree), tree.node_count()) == (4, 4)
    check(tree)


def test_insert_hands_back_the_stored_part() -> None:
    """Insert keys that are already stored, whole or as a prefix of a stored key.

    Pins that the stored values stay, that every one of the caller's values
    comes back, that the node returned is the one ending the key (made by a
    split if the key ends inside an edge), and that nothing is stored twice.
    """
    tree: RadixTree[str] = RadixTree(1)
    leaf, _ = insert(tree, [1, 2, 3], ["a", "b", "c"])

    # The same key again: same node, all three values back, nothing added.
    before = layout(tree)
    assert insert(tree, [1, 2, 3], ["x", "y", "z"]) == (leaf, ["x", "y", "z"])
    assert layout(tree) == before
    assert (len(tree), tree.node_count()) == (3, 1)

    # A stored prefix that ends inside the edge: split, and both values back.
    mid, back = insert(tree, [1, 2], ["p", "q"])
    assert back == ["p", "q"]
    assert mid not in (ROOT, leaf)
    assert edge(tree, mid) == ((1, 2), ("a", "b"))
    assert edge(tree, leaf) == ((3,), ("c",))
    assert tree.parent(leaf) == mid
    assert (len(tree), tree.node_count()) == (3, 2)
    check(tree)

    # Both keys once more: same nodes, caller's values back, tree as it was.
    before = layout(tree)
    assert insert(tree, [1, 2], ["r", "s"]) == (mid, ["r", "s"])
    assert insert(tree, [1, 2, 3], ["t", "u", "v"]) == (leaf, ["t", "u", "v"])
    assert layout(tree) == before
    assert len(tree) == 3
    check(tree)

    # The empty key is stored trivially: ROOT, nothing back, nothing changed.
    assert insert(tree, [], []) == (ROOT, [])
    assert layout(tree) == before


def test_oldest_leaf_goes_first() -> None:
    """Refresh leaves by matching and inserting them, then evict in that order.

    Pins that a match or an insert moves the leaves it walks to the newest
    end, that evict takes the oldest unlocked leaf first and whole (even past
    the number asked for), passes its values in label order, removes it from
    the tree, and stops once enough values went or nothing is left.
    """
    tree: RadixTree[str] = RadixTree(1)
    a, _ = insert(tree, [1, 1], ["a1", "a2"])
    b, _ = insert(tree, [2], ["b"])
    c, _ = insert(tree, [3, 3, 3], ["c1", "c2", "c3"])
    assert lru(tree) == [a, b, c]

    assert match(tree, [1, 1, 7]) == (2, [a])
    assert lru(tree) == [b, c, a]
    assert insert(tree, [2], ["again"]) == (b, ["again"])
    assert lru(tree) == [c, a, b]
    check(tree)

    assert evict(tree, 0) == (0, [])
    assert lru(tree) == [c, a, b]

    # The oldest leaf goes whole although one value was asked for.
    assert evict(tree, 1) == (3, ["c1", "c2", "c3"])
    assert lru(tree) == [a, b]
    assert tree.children(ROOT) == sorted([a, b])
    assert (len(tree), tree.node_count()) == (3, 2)
    with pytest.raises(KeyError):
        tree.key(c)
    check(tree)

    # Ids never made are refused the same way, by every method that takes an id
    # (on a fresh tree, where every id but ROOT is one, whichever slots are used).
    fresh: RadixTree[str] = RadixTree(1)
    takes_an_id = (fresh.key, fresh.values, fresh.parent, fresh.children, fresh.child_count)
    for method in (*takes_an_id, fresh.lock_count, fresh.lock, fresh.unlock):
        for never_made in (-1, 1, 1000):
            with pytest.raises(KeyError):
                method(never_made)

    assert evict(tree, 1) == (2, ["a1", "a2"])
    assert lru(tree) == [b]
    assert evict(tree, 5) == (1, ["b"])
    assert lru(tree) == []
    assert (len(tree), tree.node_count(), tree.is_empty()) == (0, 0, True)
    assert evict(tree, 1) == (0, [])
    check(tree)


def test_parent_becomes_evictable() -> None:
    """Evict both children of a node that a match refreshed in between.

    Pins that once its last child is gone the parent joins the list at the
    place its own stamp gives it (here between an older and a newer leaf,
    not at either end), that a parent with a child left stays off the list,
    and that evict stops as soon as enough values went.
    """
    tree: RadixTree[str] = RadixTree(1)
    x, _ = insert(tree, [1, 2, 3], ["a", "b", "c"])
    y, _ = insert(tree, [1, 2, 4], ["a", "b", "d"])
    parent = tree.parent(y)
    assert parent is not None and tree.parent(x) == parent
    older, _ = insert(tree, [5], ["e"])
    assert match(tree, [1, 2]) == (2, [parent])  # refreshes the parent, not its children
    newer, _ = insert(tree, [7], ["g"])
    assert lru(tree) == [x, y, older, newer]
    check(tree)

    assert evict(tree, 1) == (1, ["c"])
    assert tree.children(parent) == [y]
    assert lru(tree) == [y, older, newer]
    check(tree)

    assert evict(tree, 1) == (1, ["d"])
    assert tree.child_count(parent) == 0 and tree.children(parent) == []
    assert lru(tree) == [older, parent, newer]
    check(tree)

    # The parent goes whole, its values in label order, right after the older leaf.
    assert evict(tree, 2) == (3, ["e", "a", "b"])
    assert lru(tree) == [newer]
    assert tree.children(ROOT) == [newer]
    assert (len(tree), tree.node_count()) == (1, 1)
    check(tree)


def test_locks_pin_ancestors() -> None:
    """Lock leaves and an inner node, evict around them, then unlock.

    Pins that a lock counts on the node and every ancestor below ROOT, that
    locks nest, that locked leaves are off the list and survive any evict,
    that an unlock making a childless node free puts it back at its own
    stamp, that a locked inner node stays when its children go, and that
    locking or unlocking ROOT does nothing.
    """
    tree: RadixTree[str] = RadixTree(1)
    x, _ = insert(tree, [1, 2, 3], ["a", "b", "c"])
    y, _ = insert(tree, [1, 2, 4], ["a", "b", "d"])
    parent = tree.parent(y)
    assert parent is not None
    z, _ = insert(tree, [9], ["z"])
    assert lru(tree) == [x, y, z]

    tree.lock(x)
    assert [tree.lock_count(n) for n in (x, y, parent, z, ROOT)] == [1, 0, 1, 0, 0]
    assert lru(tree) == [y, z]
    tree.lock(y)
    tree.lock(x)
    assert [tree.lock_count(n) for n in (x, y, parent, z, ROOT)] == [2, 1, 3, 0, 0]
    assert lru(tree) == [z]
    check(tree)

    # Only the unlocked leaf can go, however many values are asked for.
    assert evict(tree, 10) == (1, ["z"])
    assert shape(tree) == {(1, 2): (("a", "b"), {(3,): (("c",), {}), (4,): (("d",), {})})}
    assert lru(tree) == []
    check(tree)

    tree.unlock(x)
    assert [tree.lock_count(n) for n in (x, y, parent)] == [1, 1, 2]
    assert lru(tree) == []
    tree.unlock(y)
    assert [tree.lock_count(n) for n in (x, y, parent)] == [1, 0, 1]
    assert lru(tree) == [y]
    tree.unlock(x)
    assert [tree.lock_count(n) for n in (x, y, parent)] == [0, 0, 0]
    assert lru(tree) == [x, y]  # x rejoins by its stamp, before the newer y
    check(tree)

    tree.lock(ROOT)
    tree.unlock(ROOT)
    tree.unlock(ROOT)
    assert tree.lock_count(ROOT) == 0

    # A locked inner node outlives its children and joins the list on unlock.
    tree.lock(parent)
    assert [tree.lock_count(n) for n in (x, y, parent)] == [0, 0, 1]
    assert lru(tree) == [x, y]
    assert evict(tree, 10) == (2, ["c", "d"])
    assert edge(tree, parent) == ((1, 2), ("a", "b"))
    assert tree.child_count(parent) == 0 and lru(tree) == []
    check(tree)
    tree.unlock(parent)
    assert lru(tree) == [parent]
    assert evict(tree, 10) == (2, ["a", "b"])
    assert tree.is_empty() and tree.node_count() == 0
    check(tree)


# ----------------------------------------------------------------------
# The model-based test.

Runs: TypeAlias = tuple[tuple[int, ...], ...]
"""A stored prefix in the model, as a tuple of whole granules."""


def flatten(runs: Runs) -> tuple[int, ...]:
    return tuple(token for run in runs for token in run)


def drawn_key(whole_runs: bool) -> st.SearchStrategy[tuple[int, ...]]:
    """A key the running machine makes from drawn numbers (see ``make_key``).

    Drawing plain numbers and mapping them keeps the strategy fixed and the
    draws few (fast), while the machine can still start the key with part of
    a stored key, which makes splits common. Reports show the key itself.
    """
    head = st.integers(0, 63)
    tail = st.lists(st.integers(0, 11), min_size=2 if whole_runs else 0, max_size=4)
    parts = st.tuples(st.runner(), head, tail)
    return parts.map(lambda p: p[0].make_key(p[1], p[2], whole_runs=whole_runs))


def drawn_node(
    groups: Callable[[TreeAgainstNaiveMap], list[list[int]]],
) -> st.SearchStrategy[int]:
    """A node id from one of the groups that ``groups`` lists for the running machine.

    A group is drawn first (empty ones skipped), then a node in it, so each
    non-empty group is about equally likely however large it is.
    """

    def pick(parts: tuple[TreeAgainstNaiveMap, int, int]) -> int:
        machine, group_index, node_index = parts
        nonempty = [group for group in groups(machine) if group]
        group = nonempty[group_index % len(nonempty)]
        return group[node_index % len(group)]

    return st.tuples(st.runner(), st.integers(0, 7), st.integers(0, 63)).map(pick)


