"""ds.07: a radix tree over token ids, with an index-linked LRU list of its leaves.

Your task: fill in every method of ``RadixTree`` below so that it behaves as
the chapter describes. Read it with ``grader chapter``: why a prefix cache
needs this tree, the representation, a worked example, and every rule of the
interface.
Each method's docstring below states the rules the course tests enforce for
it, the exceptions included. Keep the names, signatures and type hints
exactly as they are: the course tests and the grader's planted mutants import
this module as ``radix`` and rely on them. Add whatever private fields and
helpers (names starting with ``_``) you need. The class need not stay
``Generic``; the tests never subscript it.

Build in this order, getting each step's tests to pass before the next:

1. ``__init__`` (the chapter's ``new``) and the read-only accessors;
2. ``insert`` without splits (a key that shares no edge with a stored one);
3. ``match_prefix`` with splits (then ``insert`` reuses the same walk);
4. ``lock`` and ``unlock``;
5. the LRU list of unlocked leaves, then ``evict``.

Get the model-based test passing at granule 1 before granule 2: its two
cases are ``test_model_based_against_a_naive_map[granule1]`` and
``[granule2]``.

Commands, in order:

    grader chapter     # the chapter: the tree, the worked example, the interface
    grader tests       # the test catalog: what each course test checks, and why
    grader tdd red     # write tests/test_ds07_radix.py first: it must fail on this stub
    grader tdd green   # then write this file: your tests must pass on it
    grader check       # the verdict: course tests, then your tests graded by mutation
    grader diff        # your radix.py beside the reference, once the course tests pass
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["ROOT", "NodeId", "RadixTree"]

V = TypeVar("V")

NodeId = int
"""A node's index in the tree's lists; stable for the node's whole life."""

ROOT: NodeId = 0
"""The root: it holds no label and no values and is never evicted."""


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
        raise NotImplementedError("RadixTree.__init__: make an empty tree (step 1)")

    # ------------------------------------------------------------------
    # Read-only accessors.

    @property
    def granule(self) -> int:
        """The number of tokens per run: labels, matches and values come in these."""
        raise NotImplementedError("RadixTree.granule (step 1)")

    def __len__(self) -> int:
        """The number of values stored (one per granule of every label)."""
        raise NotImplementedError("RadixTree.__len__ (step 1)")

    def is_empty(self) -> bool:
        """True when the tree stores no value."""
        raise NotImplementedError("RadixTree.is_empty (step 1)")

    def node_count(self) -> int:
        """The number of live nodes, ROOT excluded."""
        raise NotImplementedError("RadixTree.node_count (step 1)")

    def key(self, node: NodeId) -> tuple[int, ...]:
        """The label of the edge into ``node``; ``()`` for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        raise NotImplementedError("RadixTree.key (step 1)")

    def values(self, node: NodeId) -> tuple[V, ...]:
        """The values of ``node``'s label, one per granule; ``()`` for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        raise NotImplementedError("RadixTree.values (step 1)")

    def parent(self, node: NodeId) -> NodeId | None:
        """The parent of ``node``, or ``None`` for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        raise NotImplementedError("RadixTree.parent (step 1)")

    def children(self, node: NodeId) -> list[NodeId]:
        """The children of ``node`` in increasing id order. O(children log children).

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        raise NotImplementedError("RadixTree.children (step 1)")

    def child_count(self, node: NodeId) -> int:
        """The number of children of ``node``.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        raise NotImplementedError("RadixTree.child_count (step 1)")

    def lock_count(self, node: NodeId) -> int:
        """How many locks pin ``node``: its own and its descendants'. Always 0 for ROOT.

        Raises ``KeyError`` for an id that is not a live node (never made, or evicted).
        """
        raise NotImplementedError("RadixTree.lock_count (step 4)")

    def lru_order(self) -> list[NodeId]:
        """The unlocked leaves, least recently used first. O(leaves)."""
        raise NotImplementedError("RadixTree.lru_order (step 5)")

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
        raise NotImplementedError("RadixTree.match_prefix (step 3)")

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
        raise NotImplementedError("RadixTree.insert (steps 2 and 3)")

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
        raise NotImplementedError("RadixTree.lock (step 4)")

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
        raise NotImplementedError("RadixTree.unlock (step 4)")

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
        raise NotImplementedError("RadixTree.evict (step 5)")
