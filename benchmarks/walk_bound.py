"""How near the floor a radix tree can come when every request walks it twice.

``prefix_cache.py`` asks the reference to stay within 2.5x of the floor at
granule 16, where each request calls ``match_prefix`` and then ``insert`` of
the same sequence. Each of the two calls has to find where the stored prefix
ends: look up each child by the first granule of its label (the chapter's
representation) and compare the label with the request. This script measures
the least such a walk does, on the very trees the trace builds:

bare walk
    From ROOT, one dict lookup and one slice comparison per edge until the
    request and the tree part. No clock, no stamps, no LRU list, no split, no
    values, nothing returned but the number of tokens matched.

floor
    The comparison ``prefix_cache.py``'s floor makes for the same request.

The trace is replayed through the reference at granule 16 (as in
``prefix_cache.py``, evicting over the same capacity). Before each request,
two bare walks are timed on the tree as it stands, where the reference's
``match_prefix`` and ``insert`` would run; the reference's own calls that
follow are not timed. The floor is ``prefix_cache.py``'s own replay. Each
figure is the best of ``--repeat`` replays, taken in turns. The script prints
``two bare walks / floor``: a tree of this shape doing ``match_prefix`` and
``insert`` stays above it, whatever else it does. Run from the repository
root::

    /work/venv/bin/python benchmarks/walk_bound.py
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Sequence

from prefix_cache import (
    FLOOR_RATIO_TARGET,
    REFERENCE_PATH,
    Clock,
    PrefixTree,
    Workload,
    load_reference,
    prepare,
    replay_floor,
    replay_reference,
)
from traces import make_trace

GRANULE = 16
ROOT = 0

Children = list[dict[tuple[int, ...], int]]
Labels = list[tuple[int, ...]]


def bare_walk(children: Children, labels: Labels, key: tuple[int, ...]) -> int:
    """Tokens of ``key`` stored along one path from ROOT, found with the least work per edge."""
    node, matched = ROOT, 0
    while len(key) - matched >= GRANULE:
        child = children[node].get(key[matched : matched + GRANULE])
        if child is None:
            break
        label = labels[child]
        end = matched + len(label)
        if key[matched:end] != label:
            break
        node, matched = child, end
    return matched


class BareWalksFirst:
    """The reference tree, timing two bare walks on its current state before each match."""

    def __init__(self, tree: PrefixTree, clock: Clock) -> None:
        self.tree, self.clock, self.spent = tree, clock, 0.0
        self.children: Children = tree._children  # type: ignore[attr-defined]
        self.labels: Labels = tree._label  # type: ignore[attr-defined]

    def __len__(self) -> int:
        return len(self.tree)

    def match_prefix(self, key: Sequence[int]) -> tuple[int, list[int]]:
        start = self.clock()
        bare_walk(self.children, self.labels, tuple(key))
        bare_walk(self.children, self.labels, tuple(key))
        self.spent += self.clock() - start
        return self.tree.match_prefix(key)

    def insert(self, key: Sequence[int], values: Sequence[int]) -> tuple[int, list[int]]:
        return self.tree.insert(key, values)

    def evict(self, n: int, on_evict: Callable[[int], object]) -> int:
        return self.tree.evict(n, on_evict)


def two_bare_walks_seconds(work: Workload, clock: Clock) -> float:
    """Time spent in two bare walks per request, along one replay through the reference."""
    radix_tree = load_reference(REFERENCE_PATH)
    timed: list[BareWalksFirst] = []

    def make_tree(granule: int) -> PrefixTree:
        timed.append(BareWalksFirst(radix_tree(granule), clock))
        return timed[-1]

    replay_reference(work, work.sequences, make_tree)
    return timed[0].spent


def floor_seconds(work: Workload, clock: Clock) -> float:
    start = clock()
    replay_floor(work, work.sequences)
    return clock() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--capacity", type=float, default=0.25, help="as in prefix_cache.py")
    parser.add_argument("--repeat", type=int, default=15, help="replays of each; the best is kept")
    parser.add_argument(
        "--cpu-time", action="store_true", help="time.process_time, not perf_counter"
    )
    args = parser.parse_args(argv)
    clock: Clock = time.process_time if args.cpu_time else time.perf_counter
    work = prepare(make_trace(args.seed, requests=args.requests), GRANULE, args.capacity)
    floor = walks = float("inf")
    for _ in range(args.repeat):
        gc.collect()
        floor = min(floor, floor_seconds(work, clock))
        gc.collect()
        walks = min(walks, two_bare_walks_seconds(work, clock))
    print(
        f"granule {GRANULE}, {args.requests:,} requests, best of {args.repeat} replays "
        f"by {clock.__name__}:\n"
        f"  floor (one comparison per request)   {floor * 1e3:8.1f} ms\n"
        f"  two bare walks per request           {walks * 1e3:8.1f} ms\n"
        f"two bare walks / floor:  {walks / floor:.2f}x  "
        f"(prefix_cache.py's target for the whole reference: <= {FLOOR_RATIO_TARGET:g}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
