"""What descriptors a process forked for a run keeps: only those it was handed."""

from __future__ import annotations

import os
from collections.abc import Iterable


def close_descriptors_but(keep: Iterable[int]) -> None:
    """Close every descriptor of this process (below ``1 << 16``) but those in ``keep``: a
    process forked for a run holds nothing it was not handed."""
    low = 0
    for fd in sorted(set(keep)):
        if low < fd:  # closerange(n, n) would close every descriptor from n on
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
