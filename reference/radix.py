"""A radix tree over token ids, with an index-linked LRU list of its leaves.

The tree stores sequences of token ids (prompts) and one value per *granule*
of ``g`` tokens (for a prefix cache: one KV block per ``g`` tokens). Chains of
single children are merged into one edge, so a long prompt costs one node
until another prompt diverges from it. Matches, splits and labels all come in
whole runs of ``g`` tokens.

Representation
--------------
Nodes are integer ids into parallel Python lists (one list per field), so the
tree holds no node objects and no references between them: every link is an
index. With ``g = 1`` after ``insert((1, 2, 3))`` and ``insert((1, 2, 4, 5))``::

    ROOT 0 --(1 2)--> 2 --(3)---> 1        _label[1] == (3,)   _parent[1] == 2
                        \\--(4 5)-> 3        _children[2]: (3,) -> 1, (4,) -> 3

    LRU ring through _prev/_next, anchored at ROOT:  ROOT <-> 1 <-> 3 <-> ROOT
                                                          oldest    newest

The LRU list is a circular doubly linked list in the ``_prev`` and ``_next``
lists. ROOT is never a member, so its own two slots serve as the sentinel:
``_next[ROOT]`` is the oldest leaf and ``_prev[ROOT]`` the newest, and linking
or unlinking needs no special case for an empty list or an end. Freed ids go
on ``_free`` and are handed out again before the lists grow.

Each node's children are keyed in a ``RobinHoodMap``, the hash map of ds.05
(``robin_hood.py``), by the first ``g`` tokens of their labels: no two
children start alike, so each step of a walk is one lookup.

Invariants (``_check`` asserts every one of them)
----------------------------------------------------
1. Every live node but ROOT has a label of ``k * g`` tokens, ``k >= 1``, and
   exactly ``k`` values; ROOT has neither. ``len(tree)`` is the sum of ``k``.
2. ``_children[p]`` maps the first ``g`` tokens of each child's label to the
   child, and ``_parent[c] == p`` for each of them; no two children share a key.
3. ``_locks[n]`` is the number of ``lock`` calls on ``n`` or a descendant of
   ``n`` not yet matched by ``unlock``: a node's count is at least the sum of
   its children's. ROOT's count is always 0.
4. The LRU list holds exactly the live leaves (no children) whose count is 0,
   ordered by ``_stamp``, oldest first. Leaf stamps are distinct.
5. Each node's stamp is at most the clock, and an ancestor's stamp is at
   least its descendants' (a walk stamps the whole path from the root).
6. ``_free`` holds exactly the ids of the dead slots, each once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from robin_hood import RobinHoodMap

__all__ = ["ROOT", "NodeId", "RadixTree"]

V = TypeVar("V")

NodeId = int
"""A node's index in the tree's lists; stable for the node's whole life."""

ROOT: NodeId = 0
"""The root: it holds no label and no values and is never evicted."""

Key = tuple[int, ...]


class RadixTree(Generic[V]):
    """A radix tree of token sequences with one value per granule of tokens.

    >>> tree = RadixTree[str](granule=1)
    >>> leaf, handed_back = tree.insert([1, 2, 3], ["a", "b", "c"])
    >>> tree.match_prefix([1, 2, 3, 9])
    (3, [1])
    >>> len(tree), tree.node_count()
    (3, 1)
    """

    def __init__(self, granule: int) -> None:
        """Make an empty tree that compares, splits and stores in runs of ``granule`` tokens.

        Raises ``ValueError`` when ``granule`` is less than 1.
        """
        if granule < 1:
            raise ValueError(f"granule must be at least 1, got {granule}")
        self._granule = granule
        self._size = 0
        self._clock = 0
        # One entry per slot; slot ROOT is the root and the LRU ring's anchor.
        self._label: list[Key] = [()]
        self._values: list[list[V]] = [[]]
        self._parent: list[NodeId] = [ROOT]
        self._children: list[RobinHoodMap[NodeId]] = [RobinHoodMap()]
        self._locks: list[int] = [0]
        self._stamp: list[int] = [0]
        self._prev: list[NodeId] = [ROOT]
        self._next: list[NodeId] = [ROOT]
        self._live: list[bool] = [True]
        self._free: list[NodeId] = []

    # ------------------------------------------------------------------
    # Read-only accessors: O(1) unless stated.

    @property
    def granule(self) -> int:
        """The number of tokens per run: labels, matches and values come in these."""
        return self._granule

    def __len__(self) -> int:
        """The number of values stored (one per granule of every label)."""
        return self._size

    def is_empty(self) -> bool:
        """True when the tree stores no value."""
        return self._size == 0

    def node_count(self) -> int:
        """The number of live nodes, ROOT excluded."""
        return len(self._live) - len(self._free) - 1

    def key(self, node: NodeId) -> tuple[int, ...]:
        """The label of the edge into ``node``; ``()`` for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        return self._label[self._require(node)]

    def values(self, node: NodeId) -> tuple[V, ...]:
        """The values of ``node``'s label, one per granule; ``()`` for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        return tuple(self._values[self._require(node)])

    def parent(self, node: NodeId) -> NodeId | None:
        """The parent of ``node``, or ``None`` for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        return None if self._require(node) == ROOT else self._parent[node]

    def children(self, node: NodeId) -> list[NodeId]:
        """The children of ``node`` in increasing id order. O(children log children).

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        return sorted(self._children[self._require(node)].values())

    def child_count(self, node: NodeId) -> int:
        """The number of children of ``node``.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        return len(self._children[self._require(node)])

    def lock_count(self, node: NodeId) -> int:
        """How many locks pin ``node``: its own and its descendants'. Always 0 for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        return self._locks[self._require(node)]

    def lru_order(self) -> list[NodeId]:
        """The unlocked leaves, least recently used first. O(leaves)."""
        order = []
        node = self._next[ROOT]
        while node != ROOT:
            order.append(node)
            node = self._next[node]
        return order

    # ------------------------------------------------------------------
    # Matching and inserting: O(len(key) + nodes on the path).

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[NodeId]]:
        """Find the longest stored prefix of ``key`` in whole granules.

        Returns the number of tokens matched and the path from ROOT's child to
        the node where the match ends. A match that ends inside an edge splits
        it, so the path always ends at a node. Tokens after the last whole
        granule are ignored, so a key shorter than one granule matches
        nothing: ``(0, [])``. Advances the clock, even when nothing matches,
        and stamps every node on the path.

        >>> tree = RadixTree[str](granule=1)
        >>> _ = tree.insert([1, 2, 3], ["a", "b", "c"])
        >>> tree.match_prefix([1, 2, 7])
        (2, [2])
        >>> tree.key(2), tree.key(1)
        ((1, 2), (3,))
        """
        return self._walk(tuple(key))

    def insert(self, key: Sequence[int], values: Sequence[V]) -> tuple[NodeId, list[V]]:
        """Store ``key`` with one value per granule; return its node and the values handed back.

        The part of ``key`` already stored keeps the values it has, and the
        caller's values for that part are handed back; the rest becomes a new
        leaf. A key stored whole returns its node and all of the caller's
        values; the empty key returns ``(ROOT, [])`` and stores nothing.
        Advances the clock and stamps the path, as ``match_prefix`` does.
        Raises ``ValueError`` (and changes nothing) unless
        ``len(values) * granule == len(key)``.

        >>> tree = RadixTree[str](granule=1)
        >>> _ = tree.insert([1, 2, 3], ["a", "b", "c"])
        >>> tree.insert([1, 2, 4, 5], ["x", "y", "d", "e"])
        (3, ['x', 'y'])
        """
        tokens, new_values = tuple(key), list(values)
        if len(new_values) * self._granule != len(tokens):
            raise ValueError(
                f"{len(tokens)} tokens need {len(tokens) // self._granule} values "
                f"at granule {self._granule}, got {len(new_values)}"
            )
        matched, path = self._walk(tokens)
        end = path[-1] if path else ROOT
        stored = matched // self._granule
        if matched == len(tokens):
            return end, new_values[:stored]
        leaf = self._add_leaf(end, tokens[matched:], new_values[stored:])
        return leaf, new_values[:stored]

    # ------------------------------------------------------------------
    # Locks: O(depth of the node).

    def lock(self, node: NodeId) -> None:
        """Pin ``node`` and its ancestors so that no eviction can take them. Locks nest.

        Each lock adds one to the count of ``node`` and of every ancestor below
        ROOT, and takes a listed leaf off the LRU list. ``lock(ROOT)`` does
        nothing. Raises ``KeyError`` for an id that is not a live node
        (never made, or evicted).

        >>> tree = RadixTree[str](granule=1)
        >>> leaf, _ = tree.insert([1, 2], ["a", "b"])
        >>> tree.lock(leaf)
        >>> tree.lock_count(leaf), tree.lru_order()
        (1, [])
        """
        if self._require(node) == ROOT:
            return
        if self._locks[node] == 0 and self._is_leaf(node):
            self._unlink(node)
        for pinned in self._path_to_root(node):
            self._locks[pinned] += 1

    def unlock(self, node: NodeId) -> None:
        """Release one lock taken by ``lock(node)``.

        Subtracts one from the count of ``node`` and of every ancestor below
        ROOT; a leaf whose count reaches 0 rejoins the LRU list at its own
        stamp. ``unlock(ROOT)`` does nothing. Raises ``KeyError`` for an id
        that is not a live node (never made, or evicted).

        Raises ``RuntimeError``, and changes nothing, when ``node`` holds no
        lock of its own: when its count is 0, and also when a descendant's
        lock alone pins it. Releasing that lock here would unpin a prefix
        that someone else holds.

        >>> tree = RadixTree[str](granule=1)
        >>> leaf, _ = tree.insert([1, 2], ["a", "b"])
        >>> tree.lock(leaf)
        >>> tree.unlock(leaf)
        >>> tree.lock_count(leaf), tree.lru_order()
        (0, [1])
        >>> tree.unlock(leaf)
        Traceback (most recent call last):
            ...
        RuntimeError: unlock of node 1, which holds no lock of its own
        """
        if self._require(node) == ROOT:
            return
        if self._own_locks(node) == 0:
            raise RuntimeError(f"unlock of node {node}, which holds no lock of its own")
        for pinned in self._path_to_root(node):
            self._locks[pinned] -= 1
        if self._locks[node] == 0 and self._is_leaf(node):
            self._link_by_stamp(node)

    # ------------------------------------------------------------------
    # Eviction: O(values freed + leaves passed while relisting parents).

    def evict(self, n: int, on_evict: Callable[[V], object]) -> int:
        """Free at least ``n`` values, least recently used leaf first; return how many went.

        Each evicted value is passed to ``on_evict`` in label order. Leaves go
        whole, so more than ``n`` may go; fewer go only when no unlocked leaf
        is left. A parent left childless and unlocked joins the list at its
        own stamp and may go in the same call. ``n`` counts values, not
        leaves; ``evict(0, f)`` frees nothing and returns 0.

        >>> tree = RadixTree[str](granule=1)
        >>> _ = tree.insert([1, 2], ["a", "b"])
        >>> _ = tree.insert([7], ["z"])
        >>> gone = []
        >>> tree.evict(1, gone.append), gone
        (2, ['a', 'b'])
        """
        freed = 0
        while freed < n and self._next[ROOT] != ROOT:
            leaf = self._next[ROOT]
            for value in self._values[leaf]:
                on_evict(value)
            freed += len(self._values[leaf])
            self._remove_leaf(leaf)
        return freed

    # ------------------------------------------------------------------
    # The walk and the split.

    def _walk(self, key: Key) -> tuple[int, list[NodeId]]:
        """Match ``key`` from ROOT, splitting the edge where the match ends; stamp the path."""
        self._clock += 1
        g = self._granule
        node, matched, path = ROOT, 0, []
        while len(key) - matched >= g:
            child = self._children[node].get(key[matched : matched + g])
            if child is None:
                break
            label = self._label[child]
            if key[matched : matched + len(label)] != label:  # the match ends inside this edge
                runs = self._matching_runs(label, key, matched)
                path.append(self._split(child, runs))
                matched += runs * g
                break
            node = child
            matched += len(label)
            path.append(node)
        self._touch(path)
        return matched, path

    def _matching_runs(self, label: Key, key: Key, start: int) -> int:
        """How many whole granules of ``label`` equal ``key`` from ``start`` on."""
        g = self._granule
        runs = 0
        for offset in range(0, len(label), g):
            if label[offset : offset + g] != key[start + offset : start + offset + g]:
                break
            runs += 1
        return runs

    def _split(self, child: NodeId, runs: int) -> NodeId:
        """Cut ``child``'s edge after ``runs`` granules and return the new middle node.

        The middle node takes the upper part of the label and values and every
        lock that passes through ``child``; ``child`` keeps its id, its stamp,
        its place in the LRU list and the lower part.
        """
        cut = runs * self._granule
        label, values = self._label[child], self._values[child]
        middle = self._new_node(self._parent[child], label[:cut], values[:runs])
        self._locks[middle] = self._locks[child]
        self._label[child], self._values[child] = label[cut:], values[runs:]
        self._parent[child] = middle
        self._children[middle][label[cut : cut + self._granule]] = child
        return middle

    # ------------------------------------------------------------------
    # Making and removing nodes.

    def _new_node(self, parent: NodeId, label: Key, values: list[V]) -> NodeId:
        """Take a free slot (or a new one) for a node under ``parent``, outside the LRU list."""
        if self._free:
            node = self._free.pop()
            self._label[node], self._values[node] = label, values
            self._parent[node], self._children[node] = parent, RobinHoodMap()
            self._locks[node] = self._stamp[node] = 0
            self._prev[node] = self._next[node] = node
            self._live[node] = True
        else:
            node = len(self._live)
            self._label.append(label)
            self._values.append(values)
            self._parent.append(parent)
            self._children.append(RobinHoodMap())
            self._locks.append(0)
            self._stamp.append(0)
            self._prev.append(node)
            self._next.append(node)
            self._live.append(True)
        self._children[parent][label[: self._granule]] = node
        return node

    def _add_leaf(self, parent: NodeId, label: Key, values: list[V]) -> NodeId:
        """Hang a new leaf under ``parent``, stamped now and listed as the newest leaf."""
        if parent != ROOT and self._locks[parent] == 0 and self._is_leaf(parent):
            self._unlink(parent)
        leaf = self._new_node(parent, label, values)
        self._stamp[leaf] = self._clock
        self._link_newest(leaf)
        self._size += len(values)
        return leaf

    def _remove_leaf(self, leaf: NodeId) -> None:
        """Free an unlocked leaf's slot; a parent left an unlocked leaf joins the list."""
        self._unlink(leaf)
        parent = self._parent[leaf]
        del self._children[parent][self._label[leaf][: self._granule]]
        self._size -= len(self._values[leaf])
        self._label[leaf], self._values[leaf], self._children[leaf] = (), [], RobinHoodMap()
        self._live[leaf] = False
        self._free.append(leaf)
        if parent != ROOT and self._locks[parent] == 0 and self._is_leaf(parent):
            self._link_by_stamp(parent)

    # ------------------------------------------------------------------
    # The LRU ring: each helper keeps invariant 4 for one node.

    def _touch(self, path: list[NodeId]) -> None:
        """Stamp the nodes of ``path`` with the clock; a listed leaf at its end becomes the newest.

        Only the last node of a path can be a leaf: each other one has the next as a child.
        """
        for node in path:
            self._stamp[node] = self._clock
        if path and self._locks[path[-1]] == 0 and self._is_leaf(path[-1]):
            self._unlink(path[-1])
            self._link_newest(path[-1])

    def _unlink(self, node: NodeId) -> None:
        """Take ``node`` out of the ring."""
        prev, nxt = self._prev[node], self._next[node]
        self._next[prev], self._prev[nxt] = nxt, prev
        self._prev[node] = self._next[node] = node

    def _link_after(self, anchor: NodeId, node: NodeId) -> None:
        """Put ``node`` into the ring right after ``anchor`` (ROOT: at the oldest end)."""
        nxt = self._next[anchor]
        self._prev[node], self._next[node] = anchor, nxt
        self._next[anchor] = self._prev[nxt] = node

    def _link_newest(self, node: NodeId) -> None:
        """Put ``node`` at the newest end of the ring."""
        self._link_after(self._prev[ROOT], node)

    def _link_by_stamp(self, node: NodeId) -> None:
        """Put ``node`` where its stamp belongs, searching from both ends of the ring at once.

        A parent relisted by ``evict`` belongs near the oldest end, a leaf released by
        ``unlock`` usually near the newest: the search costs the shorter of the two walks.
        """
        stamp = self._stamp[node]
        older, newer = self._next[ROOT], self._prev[ROOT]
        while True:
            if older == ROOT or self._stamp[older] > stamp:
                self._link_after(self._prev[older], node)
                return
            if self._stamp[newer] < stamp:
                self._link_after(newer, node)
                return
            older, newer = self._next[older], self._prev[newer]

    # ------------------------------------------------------------------
    # Small queries.

    def _require(self, node: NodeId) -> NodeId:
        """Return ``node`` if it is live; raise ``KeyError`` otherwise."""
        if not (isinstance(node, int) and 0 <= node < len(self._live) and self._live[node]):
            raise KeyError(node)
        return node

    def _is_leaf(self, node: NodeId) -> bool:
        return not self._children[node]

    def _path_to_root(self, node: NodeId) -> list[NodeId]:
        """``node`` and its ancestors, ROOT excluded."""
        path = []
        while node != ROOT:
            path.append(node)
            node = self._parent[node]
        return path

    def _own_locks(self, node: NodeId) -> int:
        """The locks taken on ``node`` itself: its count less its children's."""
        return self._locks[node] - sum(self._locks[c] for c in self._children[node].values())

    def _check(self) -> None:
        """Assert every invariant in the module docstring. O(nodes + tokens).

        A broken invariant raises ``AssertionError`` naming it, followed by
        the tree's lists slot by slot, so a failing test shows the state that
        broke it (as ``sortedcontainers``' ``_check`` prints its lists).
        """
        try:
            self._check_invariants()
        except AssertionError as broken:
            raise AssertionError(f"invariant {broken}\n{self._dump()}") from None

    def _check_invariants(self) -> None:
        g = self._granule
        live = [n for n in range(len(self._live)) if self._live[n]]
        # 1. labels come in whole granules, one value each; the size adds up.
        rule = "1 (labels of whole granules, one value each)"
        assert self._label[ROOT] == () and self._values[ROOT] == [], f"{rule}: ROOT has a label"
        for n in live[1:]:
            assert len(self._label[n]) >= g and len(self._label[n]) % g == 0, f"{rule}: node {n}"
            assert len(self._values[n]) * g == len(self._label[n]), f"{rule}: node {n}'s values"
        stored = sum(len(self._values[n]) for n in live)
        assert self._size == stored, f"{rule}: len() is {self._size}, the nodes hold {stored}"
        # 2. children are keyed by their first granule and point back.
        rule = "2 (children keyed by their first granule, pointing back)"
        for p in live:
            for first, c in self._children[p].items():
                assert self._live[c] and self._parent[c] == p, f"{rule}: node {p}'s child {c}"
                assert self._label[c][:g] == first, f"{rule}: node {p}'s key {first} for {c}"
        edges = sum(len(self._children[p]) for p in live)
        assert edges == len(live) - 1, f"{rule}: {edges} edges join {len(live)} live nodes"
        # 3. lock counts cover the counts below them; ROOT holds none.
        rule = "3 (a lock count covers its children's)"
        assert self._locks[ROOT] == 0, f"{rule}: ROOT's count is {self._locks[ROOT]}"
        for n in live[1:]:
            below = sum(self._locks[c] for c in self._children[n].values())
            assert self._locks[n] >= below, f"{rule}: node {n} counts {self._locks[n]} < {below}"
        # 4. the ring holds exactly the unlocked leaves, by increasing stamp.
        rule = "4 (the LRU ring is the unlocked leaves, oldest first)"
        order = self.lru_order()
        free_leaves = [n for n in live[1:] if self._is_leaf(n) and not self._locks[n]]
        assert sorted(order) == free_leaves, f"{rule}: ring {order}, unlocked leaves {free_leaves}"
        stamps = [self._stamp[n] for n in order]
        assert stamps == sorted(set(stamps)), f"{rule}: stamps along the ring {stamps}"
        for n in order:
            assert self._next[self._prev[n]] == n, f"{rule}: node {n}'s prev does not lead back"
        # 5. stamps never exceed the clock and never grow going down.
        rule = "5 (stamps at most the clock, ancestors' at least their descendants')"
        for n in live[1:]:
            assert self._stamp[n] <= self._clock, f"{rule}: node {n}"
            if self._parent[n] != ROOT:
                assert self._stamp[self._parent[n]] >= self._stamp[n], f"{rule}: node {n}"
        # 6. the free list holds exactly the dead slots.
        rule = "6 (the free list is the dead slots, each once)"
        dead = [n for n in range(len(self._live)) if not self._live[n]]
        assert sorted(self._free) == dead, f"{rule}: free {self._free}, dead {dead}"

    def _dump(self) -> str:
        """The tree's lists, one line per slot, for the message of a broken invariant."""
        lines = [
            f"clock {self._clock}, len {self._size}, granule {self._granule}, free {self._free}",
            "slot live label values parent children locks stamp prev next",
        ]
        for n in range(len(self._live)):
            fields = (
                self._live[n],
                self._label[n],
                self._values[n],
                self._parent[n],
                self._children[n],
                self._locks[n],
                self._stamp[n],
                self._prev[n],
                self._next[n],
            )
            lines.append(" ".join(map(repr, (n, *fields))))
        return "\n".join(lines)
