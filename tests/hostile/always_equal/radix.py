"""A tree that does nothing and answers with objects equal to anything.

In the test's process, ``tree.key(n) == (1, 2)`` would be true for any
expected value and the course tests would pass without a tree. Only plain
data crosses from the implementation's process, so such an answer is an
error there, never an object here.
"""

from typing import Any

ROOT = 0
NodeId = int


class Anything(tuple):  # a tuple, so that unpacking it works too
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0

    def __iter__(self) -> Any:
        return iter((Anything(), Anything()))

    def __len__(self) -> int:
        return 2

    def __bool__(self) -> bool:
        return True


class RadixTree:
    def __init__(self, granule: int) -> None:
        if granule < 1:
            raise ValueError("granule must be at least 1")

    @property
    def granule(self) -> Any:
        return Anything()

    def __len__(self) -> int:
        return 0

    def answer(self, *args: Any) -> Any:
        return Anything()

    is_empty = node_count = key = values = parent = children = child_count = answer
    lock_count = lru_order = match_prefix = insert = lock = unlock = evict = answer
