"""The static check's time per KB, from 8 KB to 1 MiB: flat when the check is linear.

Three shapes of file, each grown to every size by doubling:

- ``model``: the kit's model answer to the students' tests, its tests renamed and
  repeated (what an honest, long file looks like);
- ``self_reads``: a state machine whose helper reads ``self._a`` thousands of
  times (once a walk of the method per read);
- ``chain``: attribute chains ``x.a.a.a...`` of 1,000 links, one per line (once a walk
  of the chain per link; one chain as long as the file would pass what Python parses).

Usage: ``python benchmarks/static_check.py [--max-kib N]``; the default runs up
to 1024 KiB. The last column is the time per KB relative to the 8 KB file's:
near 1 at every size for a linear check.
"""

from __future__ import annotations

import argparse
import re
import time

from grader.inputs.catalog import load_chapter
from grader.static.checker import LIMITS, check_test_source
from grader.static.rules import Limits

SIZES_KIB = (8, 16, 32, 64, 128, 256, 512, 1024)


def model_file(size: int, model: str) -> str:
    """The model answer's tests repeated, renamed each time, to ``size`` bytes or just over."""
    header, _, body = model.partition("\ndef ")
    parts = [header]
    copy = 0
    while sum(len(p) for p in parts) < size:
        parts.append(re.sub(r"\ndef (test_\w+)", rf"\ndef \1_{copy}", "\ndef " + body))
        copy += 1
    return "".join(parts)


def self_reads_file(size: int) -> str:
    head = (
        "from hypothesis.stateful import RuleBasedStateMachine, rule\n\n\n"
        "class Machine(RuleBasedStateMachine):\n"
        "    def __init__(self):\n        super().__init__()\n        self._a = 0\n\n"
        "    @rule()\n    def step(self):\n        total = 0\n"
    )
    line = "        total += self._a\n"
    return head + line * max(1, (size - len(head)) // len(line))


def chain_file(size: int) -> str:
    head = "def f(x):\n"
    line = "    y = x" + ".a" * 1000 + "\n"
    return head + line * max(1, (size - len(head)) // len(line)) + "    return y\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--max-kib", type=int, default=SIZES_KIB[-1])
    options = parser.parse_args()
    chapter = load_chapter()
    model = chapter.model_tests.read_text(encoding="utf-8")
    # the benchmark measures the walk itself: no time budget cuts it short
    unbounded = Limits(max_bytes=2 * LIMITS.max_bytes, seconds=3600.0)
    print(f"{'shape':<11} {'KiB':>5} {'seconds':>8} {'ms/KB':>7} {'vs 8 KB':>7}")
    for shape in ("model", "self_reads", "chain"):
        first: float | None = None
        for kib in (k for k in SIZES_KIB if k <= options.max_kib):
            size = kib * 1024
            if shape == "model":
                source = model_file(size, model)
            elif shape == "self_reads":
                source = self_reads_file(size)
            else:
                source = chain_file(size)
            started = time.perf_counter()
            check_test_source(source, chapter.module, chapter.interface, unbounded)
            seconds = time.perf_counter() - started
            per_kb = seconds * 1000 / (len(source.encode()) / 1000)
            first = first or per_kb
            print(f"{shape:<11} {kib:>5} {seconds:>8.3f} {per_kb:>7.3f} {per_kb / first:>7.2f}")


if __name__ == "__main__":
    main()
