"""How fast a resubmission is regraded when little or nothing changed.

The cache is ``grader.grading.result_cache``.

On the model-answer submission (``reference/`` and its tests) in a fresh
cache, this measures ``grader check`` as a student runs it (a fresh process):

- cold: every phase runs;
- unchanged: the same files again; target under 1 s (the check's own time, from its
  report, is printed beside the process's);
- ``radix.py`` changed (a comment added): only the course tests and the run of
  the student's tests on their code again; target at most the cold check's
  course-test phase (its wall time in the report, from the phase's start to its
  last run's end) plus 1 s.

``--repeat N`` takes the best of N runs of each warm case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.inputs.catalog import load_chapter


def timed_check(folder: Path, cache: Path, report: Path) -> tuple[float, dict[str, object]]:
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "check",
            "--submission",
            str(folder),
            "--json",
            str(report),
        ],
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
        stdout=subprocess.DEVNULL,
        check=False,
    )
    took = time.monotonic() - started
    return took, json.loads(report.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each warm case (best)")
    args = parser.parse_args(argv)
    chapter = load_chapter()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        folder = root / "submission"
        (folder / "tests").mkdir(parents=True)
        shutil.copyfile(chapter.reference, folder / chapter.implementation)
        shutil.copyfile(chapter.model_tests, folder / chapter.student_tests)
        for need in chapter.needs:  # the student's own copy of each earlier chapter's module
            shutil.copyfile(need.reference, folder / need.implementation)
        cache, report = root / "cache", root / "report.json"
        cold, data = timed_check(folder, cache, report)
        timings = data["timings"]
        assert isinstance(timings, dict)
        course_phase = float(timings["course_tests"])
        warm = [timed_check(folder, cache, report) for _ in range(args.repeat)]
        unchanged = min(took for took, _ in warm)
        inside = min(float(data["timings"]["total"]) for _, data in warm)  # type: ignore[index]
        radix = folder / chapter.implementation
        changed = []
        for at in range(args.repeat):
            radix.write_text(radix.read_text(encoding="utf-8") + f"\n# edit {at}\n", "utf-8")
            took, data = timed_check(folder, cache, report)
            timings = data["timings"]
            assert isinstance(timings, dict) and timings["reused"] == ["tests"], timings
            changed.append(took)
    print(f"cold check: {cold:.1f} s (course-test phase {course_phase:.1f} s)")
    print(
        f"unchanged resubmission: {unchanged:.2f} s (target < 1 s), of which the check "
        f"itself {inside:.2f} s (the rest: starting Python and importing the grader)"
    )
    print(
        f"only radix.py changed: {min(changed):.1f} s "
        f"(target <= course-test phase + 1 s = {course_phase + 1:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
