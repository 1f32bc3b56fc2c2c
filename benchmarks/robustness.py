"""What ``grader check --robustness 4`` costs on the hypothesis-heavy file (issue 38).

The file is the model answer's tests and a state machine that reads every node after every
step (``fixtures/hypothesis_heavy``), graded with the reference as the student's code.
Each round runs ``python -m grader check --no-cache`` four times, back to back, as a student
runs it: without and with ``--robustness 4``, then the same two with ``--every-kill`` (the
way batch grades, where every drawing test that kills a mutant is rerun, not only the first
killer). It prints each time, the kills rerun and the further runs they took (from the
JSON reports), and the ratio of each pair: target at most 1.5x at K = 4. A ratio is the
median of the rounds' own, a time the best of the rounds (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KIT = Path(__file__).resolve().parent.parent
HEAVY_TESTS = KIT / "benchmarks" / "fixtures" / "hypothesis_heavy" / "tests" / "test_ds07_radix.py"
SEEDS = 4
TARGET = 1.5


def submission(folder: Path) -> Path:
    """The reference's tree and map with the heavy test file, as a submission folder."""
    (folder / "tests").mkdir(parents=True)
    for name in ("radix.py", "robin_hood.py"):
        shutil.copy(KIT / "reference" / name, folder / name)
    shutil.copy(HEAVY_TESTS, folder / "tests" / "test_ds07_radix.py")
    return folder


def timed_check(folder: Path, *options: str) -> tuple[float, dict[str, Any]]:
    """The wall time of one fresh ``grader check`` of ``folder``, and its JSON report."""
    report = folder / "report.json"
    command = [sys.executable, "-m", "grader", "check", "--no-cache", "--submission", str(folder)]
    started = time.perf_counter()
    subprocess.run([*command, "--json", str(report), *options], cwd=KIT, capture_output=True)
    seconds = time.perf_counter() - started
    return seconds, json.loads(report.read_text(encoding="utf-8"))


def reruns(report: dict[str, Any]) -> str:
    """How many kills were rerun, and the runs that took (K per mutant, K per set of tests)."""
    robustness = (report.get("mutation") or {}).get("robustness")
    if robustness is None:
        return "no robustness"
    kills = robustness["kills"]
    mutants = {kill["mutant"] for kill in kills}
    selections = {tuple(k["test"] for k in kills if k["mutant"] == mutant) for mutant in mutants}
    runs = SEEDS * (len(mutants) + len(selections))
    robust = sum(kill["robust"] for kill in kills)
    return f"{len(kills)} kills rerun ({robust} robust), {runs} further runs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="rounds (default 1)")
    args = parser.parse_args()
    modes = {"first kills (check)": (), "every kill (batch)": ("--every-kill",)}
    seconds: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as scratch:
        folder = submission(Path(scratch) / "heavy")
        for _ in range(args.repeat):
            for mode, options in modes.items():
                without, _ = timed_check(folder, *options)
                with_seeds, report = timed_check(folder, *options, "--robustness", str(SEEDS))
                seconds[mode].append((without, with_seeds))
                print(
                    f"{mode}: {without:6.2f} s, with K={SEEDS} {with_seeds:6.2f} s; "
                    f"{reruns(report)}",
                    flush=True,
                )
    for mode, rounds in seconds.items():
        ratio = statistics.median(with_seeds / without for without, with_seeds in rounds)
        best = min(w for w, _ in rounds), min(s for _, s in rounds)
        verdict = "met" if ratio <= TARGET else "MISSED"
        print(
            f"{mode}: best {best[0]:.2f} s without, {best[1]:.2f} s with; "
            f"ratio {ratio:.2f}x (target <= {TARGET}x: {verdict})"
        )


if __name__ == "__main__":
    main()
