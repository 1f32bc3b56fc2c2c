"""A hash map from token tuples to values: open addressing with Robin Hood displacement.

This is the kit's model of ds.05's map, the one the radix tree keys each
node's children in. Keys are tuples of ints (the first granule of a child's
label); values are anything (the child's node id).

Representation
--------------
Entries live in three parallel lists of ``capacity`` slots (a power of two),
with no entry objects: ``_keys[i]``, ``_values[i]`` and ``_dist[i]``, the
entry's probe distance, how many slots past its *home* slot
(``hash(key) & (capacity - 1)``) it sits; ``EMPTY`` (-1) marks a free slot.
Keys ``a``, ``b`` and ``c`` whose home is slot 1 and ``d`` whose home is slot 3,
in a map of 8 slots::

    slot    0   1   2   3   4   5   6   7
    key     -   a   b   c   d   -   -   -
    dist   -1   0   1   2   1  -1  -1  -1

Insertion probes from the home slot. Robin Hood displacement: when the entry
being placed is further from its home than the one in the slot it reaches,
it takes that slot (from the rich, for the poor) and the resident carries
on probing in its place. So
along a run of slots, distances never rise by more than one per step, and a
lookup may stop as soon as it reaches a slot whose entry is closer to home
than the probe (the key would have displaced it). Deletion shifts the
entries after the removed one back by one slot until a free slot or an entry
at its home, so no tombstone is ever left. A map starts with no slots and
takes 8 at its first insert: most nodes of a tree are leaves, with no children.

Invariants (``_check`` asserts every one of them)
--------------------------------------------------
1. The capacity is 0 or a power of two, and ``len(map)`` is the number of
   slots in use, at most ``MAX_LOAD`` of the capacity.
2. A free slot holds ``EMPTY`` and no key or value; a slot in use holds its
   key's true probe distance: ``(slot - home) mod capacity``.
3. Robin Hood order: a slot at distance ``d > 0`` follows a slot in use at
   distance at least ``d - 1`` (no entry sits behind one closer to home).
4. No key is in two slots.

Iteration (``iter``, ``keys``, ``values``, ``items``) goes in slot order:
for int tuples it depends only on the keys and the history of inserts and
removals, never on the hash seed, but it is not the order of insertion.
Changing the map while iterating over it is not supported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

__all__ = ["RobinHoodMap"]

V = TypeVar("V")

Key = tuple[int, ...]

EMPTY = -1
"""The probe distance of a free slot."""
FIRST_CAPACITY = 8
MAX_LOAD = 0.875
"""The fullest a map gets before it doubles: Robin Hood's short probe runs allow a high load."""


class RobinHoodMap(Generic[V]):
    """A map from tuples of ints to values: get, set, remove, membership, length, iteration.

    >>> children = RobinHoodMap[int]()
    >>> children[(1, 2)] = 5
    >>> children[(3, 4)] = 7
    >>> children.get((1, 2)), children.get((9, 9)), (3, 4) in children, len(children)
    (5, None, True, 2)
    >>> del children[(1, 2)]
    >>> list(children.items())
    [((3, 4), 7)]
    """

    def __init__(self) -> None:
        """Make an empty map; it takes no slots until the first insert."""
        self._keys: list[Key | None] = []
        self._values: list[V | None] = []
        self._dist: list[int] = []
        self._size = 0

    # ------------------------------------------------------------------
    # Reading: O(1) expected, O(probe length) at worst.

    def __len__(self) -> int:
        """The number of keys stored."""
        return self._size

    def __contains__(self, key: object) -> bool:
        """True when ``key`` is stored."""
        return isinstance(key, tuple) and self._find(key) != EMPTY

    def get(self, key: Key, default: V | None = None) -> V | None:
        """The value of ``key``, or ``default`` when it is not stored."""
        slot = self._find(key)
        return default if slot == EMPTY else self._values[slot]

    def __getitem__(self, key: Key) -> V:
        """The value of ``key``; raises ``KeyError`` when it is not stored."""
        slot = self._find(key)
        if slot == EMPTY:
            raise KeyError(key)
        return self._values[slot]  # type: ignore[return-value]  # a slot in use holds a value

    def __iter__(self) -> Iterator[Key]:
        """The keys, in slot order (see the module docstring)."""
        return iter(self.keys())

    def keys(self) -> list[Key]:
        """The keys, in slot order. O(capacity), as are ``values`` and ``items``."""
        return [key for key in self._keys if key is not None]

    def values(self) -> list[V]:
        """The values, in the slot order of their keys."""
        pairs = zip(self._values, self._dist, strict=True)
        return [value for value, dist in pairs if dist != EMPTY]  # type: ignore[misc]

    def items(self) -> list[tuple[Key, V]]:
        """The pairs of key and value, in slot order."""
        pairs = zip(self._keys, self._values, strict=True)
        return [(key, value) for key, value in pairs if key is not None]  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"RobinHoodMap({dict(self.items())!r})"

    # ------------------------------------------------------------------
    # Writing: O(1) expected; a resize costs O(capacity) once per doubling.

    def __setitem__(self, key: Key, value: V) -> None:
        """Store ``value`` under ``key``, replacing the value it had."""
        slot = self._find(key)
        if slot != EMPTY:
            self._values[slot] = value
            return
        if self._size + 1 > MAX_LOAD * len(self._dist):
            self._resize(max(FIRST_CAPACITY, 2 * len(self._dist)))
        self._place(key, value)
        self._size += 1

    def __delitem__(self, key: Key) -> None:
        """Remove ``key`` and its value; raises ``KeyError`` when it is not stored."""
        slot = self._find(key)
        if slot == EMPTY:
            raise KeyError(key)
        self._shift_back(slot)
        self._size -= 1

    # ------------------------------------------------------------------
    # Probing: each helper keeps invariants 2 and 3.

    def _home(self, key: Key) -> int:
        return hash(key) & (len(self._dist) - 1)

    def _find(self, key: Key) -> int:
        """The slot holding ``key``, or ``EMPTY``: stop at a slot closer to home than the probe."""
        if not self._size:
            return EMPTY
        mask = len(self._dist) - 1
        slot, dist = self._home(key), 0
        while self._dist[slot] >= dist:
            if self._keys[slot] == key:
                return slot
            slot, dist = (slot + 1) & mask, dist + 1
        return EMPTY

    def _place(self, key: Key, value: V) -> None:
        """Put a key not yet stored into its probe run, displacing richer entries on the way."""
        mask = len(self._dist) - 1
        slot, dist = self._home(key), 0
        carried: tuple[Key, V] = (key, value)
        while self._dist[slot] != EMPTY:
            if self._dist[slot] < dist:  # the resident is closer to home: it gives way
                resident = (self._keys[slot], self._values[slot])
                self._keys[slot], self._values[slot] = carried
                self._dist[slot], dist = dist, self._dist[slot]
                carried = resident  # type: ignore[assignment]  # a slot in use holds both
            slot, dist = (slot + 1) & mask, dist + 1
        self._keys[slot], self._values[slot] = carried
        self._dist[slot] = dist

    def _shift_back(self, slot: int) -> None:
        """Empty ``slot`` and move each following entry away from its home back by one."""
        mask = len(self._dist) - 1
        after = (slot + 1) & mask
        while self._dist[after] > 0:
            self._keys[slot], self._values[slot] = self._keys[after], self._values[after]
            self._dist[slot] = self._dist[after] - 1
            slot, after = after, (after + 1) & mask
        self._keys[slot], self._values[slot], self._dist[slot] = None, None, EMPTY

    def _resize(self, capacity: int) -> None:
        """Move every entry into ``capacity`` fresh slots."""
        entries = list(self.items())
        self._keys, self._values = [None] * capacity, [None] * capacity
        self._dist = [EMPTY] * capacity
        for key, value in entries:
            self._place(key, value)

    # ------------------------------------------------------------------
    # The invariant check.

    def _check(self) -> None:
        """Assert every invariant in the module docstring. O(capacity).

        A broken invariant raises ``AssertionError`` naming it, followed by
        the slots, so a failing test shows the state that broke it.
        """
        try:
            self._check_invariants()
        except AssertionError as broken:
            raise AssertionError(f"invariant {broken}\n{self._dump()}") from None

    def _check_invariants(self) -> None:
        capacity = len(self._dist)
        used = [slot for slot in range(capacity) if self._dist[slot] != EMPTY]
        # 1. a power of two, the size counted, the load bounded.
        rule = "1 (capacity a power of two, size counted, load bounded)"
        assert capacity & (capacity - 1) == 0, f"{rule}: capacity {capacity}"
        assert len(self._keys) == len(self._values) == capacity, f"{rule}: list lengths"
        assert self._size == len(used), f"{rule}: len() is {self._size}, {len(used)} slots used"
        assert self._size <= MAX_LOAD * capacity, f"{rule}: {self._size} keys in {capacity}"
        # 2. free slots are empty; used slots hold their true distance.
        rule = "2 (free slots empty, distances true)"
        for slot in range(capacity):
            key = self._keys[slot]
            if self._dist[slot] == EMPTY:
                assert key is None and self._values[slot] is None, f"{rule}: free slot {slot}"
            else:
                assert key is not None, f"{rule}: slot {slot} has no key"
                true = (slot - self._home(key)) % capacity
                assert self._dist[slot] == true, f"{rule}: slot {slot} says {self._dist[slot]}"
        # 3. Robin Hood order along every run.
        rule = "3 (no entry behind one closer to home)"
        for slot in used:
            if self._dist[slot] > 0:
                before = self._dist[(slot - 1) % capacity]
                assert before >= self._dist[slot] - 1, f"{rule}: slot {slot}"
        # 4. every key once.
        rule = "4 (every key in one slot)"
        keys = [self._keys[slot] for slot in used]
        assert len(set(keys)) == len(keys), f"{rule}: {keys}"

    def _dump(self) -> str:
        """The slots, one line each, for the message of a broken invariant."""
        lines = [f"size {self._size}, capacity {len(self._dist)}", "slot dist key value"]
        for slot in range(len(self._dist)):
            fields = (self._dist[slot], self._keys[slot], self._values[slot])
            lines.append(" ".join(map(repr, (slot, *fields))))
        return "\n".join(lines)
