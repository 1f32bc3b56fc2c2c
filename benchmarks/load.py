"""How a busy machine moves a check: its time, and (it must not) its report.

On the model-answer submission (``reference/``), this runs ``grader check
--no-cache`` as a student runs it (a fresh process), once on the machine as
it is and once while busy loops hold every core (``--loops`` per core, 2 by
default), and prints each wall time, their ratio, and whether the two JSON
reports are the same apart from ``timings`` and ``graded_at``. A run's time
limit is on its own CPU time, so the report must not change; the wall time
is what the load costs. ``--repeat N`` takes the best of N of each.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

KIT = Path(__file__).resolve().parent.parent
SUBMISSION = KIT / "reference"


@contextlib.contextmanager
def busy_cores(loops: int) -> Iterator[None]:
    """``loops`` processes that spin until the block ends."""
    spin = [sys.executable, "-c", "while True:\n    pass\n"]
    spinners = [subprocess.Popen(spin) for _ in range(loops)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def timed_check(report: Path) -> tuple[float, dict[str, Any]]:
    """The wall time of one ``grader check``, and its report without what differs by run."""
    command = [sys.executable, "-m", "grader", "check", "--no-cache"]
    command += ["--submission", str(SUBMISSION), "--json", str(report)]
    started = time.perf_counter()
    subprocess.run(command, cwd=KIT, check=False, capture_output=True)
    seconds = time.perf_counter() - started
    data = json.loads(report.read_text(encoding="utf-8"))
    del data["timings"], data["graded_at"]
    return seconds, data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each case (best)")
    parser.add_argument("--loops", type=int, default=2, help="busy loops per core")
    args = parser.parse_args(argv)
    loops = args.loops * len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        quiet = [timed_check(report) for _ in range(args.repeat)]
        with busy_cores(loops):
            busy = [timed_check(report) for _ in range(args.repeat)]
    quiet_seconds = min(seconds for seconds, _ in quiet)
    busy_seconds = min(seconds for seconds, _ in busy)
    reports = [data for _, data in quiet + busy]
    same = all(data == reports[0] for data in reports)
    print(f"check on a quiet machine: {quiet_seconds:.1f} s")
    print(
        f"check with {loops} busy loops: {busy_seconds:.1f} s ({busy_seconds / quiet_seconds:.2f}x)"
    )
    print(f"reports the same apart from timings: {'PASS' if same else 'MISS'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
