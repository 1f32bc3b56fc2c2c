"""The shifted-heap rerun moves what a test makes by an odd number of blocks in every size
class (issue 33): a plain object's id hash, by which a small set of them is ordered, then
has its low bit flipped wherever the heap hands out blocks in order."""

from __future__ import annotations

import subprocess
import sys

MEASURE = """
import gc, sys
from grader.sandbox.worker import child

gc.disable()
child._shift_heap(0)  # the function's own first-call allocations out of the count
sys._debugmallocstats()
child._shift_heap(COUNT)
sys._debugmallocstats()
"""


def blocks_in_use(table: str) -> dict[int, int]:
    """Blocks in use by size class, from one table of ``sys._debugmallocstats``."""
    found = {}
    for line in table.splitlines():
        cells = line.split()
        if len(cells) == 5 and all(cell.isdigit() for cell in cells):
            found[int(cells[1])] = int(cells[3])
    return found


def test_the_shift_keeps_an_odd_count_of_plain_objects_blocks() -> None:
    """``count`` blocks more in use in the size class of a plain object, and at least that in
    every size class from 16 to 512 bytes: before, a plain object and a 31-byte ``bytes``
    both took a 64-byte block, so plain objects moved by an even number of blocks, which
    left a small set's order as it was."""
    plain = (sys.getsizeof(Plain()) + 15) // 16 * 16
    for count in (1, 3):
        done = subprocess.run(
            [sys.executable, "-c", MEASURE.replace("COUNT", str(count))],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        tables = done.stderr.split("Small block threshold")[1:]
        before, after = (blocks_in_use(table) for table in tables)
        grown = {size: after.get(size, 0) - before.get(size, 0) for size in range(16, 513, 16)}
        assert grown[plain] == count, grown
        assert min(grown.values()) >= count, grown


class Plain:
    """A plain object, as a test's own are."""
