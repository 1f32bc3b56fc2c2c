"""Batch grading against grading one submission after another: submissions per minute.

Run from the repository root::

    /work/venv/bin/python benchmarks/batch.py              # 6 submissions, about two minutes
    /work/venv/bin/python benchmarks/batch.py --copies 2   # a quick look

The class is ``--copies`` folders in a temporary directory, alternately the
model answer (every mutant killed) and the weak example of the kit's tests
(three killed): the two ends of what students hand in. They are graded twice:

one after another
    ``check()`` per folder, each with its own ``WorkerPool``, as a loop over
    ``grader check`` would (without the interpreter start-ups, which only
    flatter it).

batch
    ``grade_batch``: one shared pool, ``--jobs`` checks at once.

Both use the command line's limits. The script prints each way's wall time,
submissions per minute and the cores the machine was busy (its busy CPU time
over the wall time: a run's processes are reaped inside the sandbox, out of
this process's accounting), the speed-up, the ceiling on it (the cores there
are over the cores one check alone keeps busy: a batch runs the same runs, so
it can only fill what ``check`` leaves idle), the load average (other work on
the machine slows both and leaves less to gain), and checks that both ways
gave every folder the same gradebook row (flags aside: one check alone looks
for no copies). The batch's time includes what it does after grading: looking
for copies (here the model answers are copies of the model answer, so the model
answer's own mutant run is part of it) and drawing the class report.

Then the class as ``--shards`` shards (``grader batch --shard K/N``), one
after another as separate machines would grade them, and their merge: each
shard's wall time, the start-up overhead every shard pays whatever its size
(an interpreter importing the grader, then a batch of nobody: its warm
workers started and stopped, the class view drawn; the kit's install
excluded), the merge's time, and the throughput per core, of the batch and
of the shards (submissions per minute, divided by the cores used).

Then the similarity phase alone, for a class of ``--class-size`` students
(200): each student's radix.py and test file are a disguised variant
(``tests/disguise.py``: renamed, reordered, re-laid out) of one of the kit's
files, the test files with the kills their original has. It prints the
phase's wall time, the pairs compared, and that time against grading the
same class one check after another at the rate measured above. It always
exits 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(KIT))

sys.path.insert(0, str(KIT / "tests"))

from disguise import disguise  # noqa: E402

from grader.commands.batch import grade_batch, row_of  # noqa: E402
from grader.commands.check import check  # noqa: E402
from grader.commands.manifest import build_manifest, shard  # noqa: E402
from grader.commands.merge import merge_outputs  # noqa: E402
from grader.course.fingerprints import Fingerprinter  # noqa: E402
from grader.course.similarity import MODEL_ANSWER, REFERENCE, ClassFile, find_copies  # noqa: E402
from grader.grading.jobs import Limits  # noqa: E402
from grader.inputs.catalog import Chapter, load_chapter  # noqa: E402
from grader.results.batch import BatchRow  # noqa: E402
from grader.results.check import CheckReport  # noqa: E402

WEAK_TESTS = KIT / "tests" / "fixtures" / "submissions" / "weak" / "tests" / "test_ds07_radix.py"
LIMITS = Limits(course_tests=120.0, student_tests=120.0)


def lay_out(root: Path, copies: int) -> list[Path]:
    chapter = load_chapter()
    folders = []
    for number in range(copies):
        kind = "model" if number % 2 == 0 else "weak"
        folder = root / f"student{number:02d}-{kind}"
        (folder / "tests").mkdir(parents=True)
        shutil.copyfile(chapter.reference, folder / chapter.implementation)
        tests = chapter.model_tests if kind == "model" else WEAK_TESTS
        shutil.copyfile(tests, folder / chapter.student_tests)
        folders.append(folder)
    return folders


def cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy (``/proc/stat``), other work included.

    A run's processes are reaped inside the sandbox (the fork server lets the
    kernel reap its roots), so this process's own accounting, children
    included, never sees most of the grading's CPU time; the machine's does.
    """
    ticks = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = ticks[3] + ticks[4]  # idle and waiting for I/O
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def one_after_another(folders: list[Path]) -> tuple[float, float, list[CheckReport]]:
    chapter = load_chapter()
    started, cpu = time.perf_counter(), cpu_seconds()
    reports = [check(chapter, folder, LIMITS) for folder in folders]
    return time.perf_counter() - started, cpu_seconds() - cpu, reports


def as_a_batch(
    folders: list[Path], out: Path, jobs: int
) -> tuple[float, float, list[BatchRow], float]:
    started, cpu = time.perf_counter(), cpu_seconds()
    result = grade_batch(load_chapter(), folders, out, LIMITS, jobs)
    rows = [dataclasses.replace(row, report="", flags=(), graded_at="") for row in result.rows]
    return time.perf_counter() - started, cpu_seconds() - cpu, rows, result.similarity_seconds


def shard_start_up(root: Path) -> tuple[float, float]:
    """What a shard pays before and after its runs: an interpreter importing the grader, and
    a batch of nobody (workers started and stopped, an empty class drawn)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "--version"], check=True, capture_output=True)
    interpreter = time.perf_counter() - started
    started = time.perf_counter()
    grade_batch(load_chapter(), [], root / "nobody", LIMITS)
    return interpreter, time.perf_counter() - started


def as_shards(folders: list[Path], root: Path, count: int, jobs: int) -> tuple[list[float], float]:
    """The class graded as ``count`` shards, one after another, then merged: each shard's
    wall seconds, and the merge's."""
    chapter = load_chapter()
    manifest = build_manifest(chapter, folders, [f.name for f in folders])
    walls = []
    for index in range(count):
        entries = shard(manifest, index, count)
        started = time.perf_counter()
        grade_batch(
            chapter,
            [e.folder for e in entries],
            root / f"shard-{index}",
            LIMITS,
            jobs,
            names=[e.student for e in entries],
        )
        walls.append(time.perf_counter() - started)
    started = time.perf_counter()
    merge_outputs(chapter, root / "merged", [root / f"shard-{i}" for i in range(count)], LIMITS)
    return walls, time.perf_counter() - started


def a_class_of(
    size: int, chapter: Chapter, kills: dict[str, dict[str, tuple[str, ...]]]
) -> list[ClassFile]:
    """``size`` students, each a disguised variant of one of the kit's files."""
    originals = {
        "model": chapter.model_tests.read_text(encoding="utf-8"),
        "weak": WEAK_TESTS.read_text(encoding="utf-8"),
    }
    reference = chapter.reference.read_text(encoding="utf-8")
    stub = chapter.stub.read_text(encoding="utf-8")
    files = []
    for number in range(size):
        kind = "model" if number % 2 == 0 else "weak"
        name = f"student{number:03d}"
        implementation = disguise(reference, chapter, seed=number) if number % 3 == 0 else stub
        files.append(ClassFile(name, "implementation", implementation))
        tests = disguise(originals[kind], chapter, seed=number)
        files.append(ClassFile(name, "tests", tests, kills[kind]))
    files.append(ClassFile(REFERENCE, "implementation", reference))
    files.append(ClassFile(MODEL_ANSWER, "tests", originals["model"]))
    return files


def similarity_phase(size: int, reports: list[CheckReport]) -> tuple[float, float, int, int]:
    """The similarity phase on a generated class: its wall and CPU seconds, pairs compared,
    pairs flagged."""
    chapter = load_chapter()
    assert chapter.similarity is not None
    kills = {}
    for kind, report in (("model", reports[0]), ("weak", reports[1])):
        assert report.mutation is not None
        kills[kind] = {m.id: m.killed_by for m in report.mutation.mutants}
    files = a_class_of(size, chapter, kills)
    given = [chapter.stub.read_text("utf-8"), chapter.stub_tests.read_text("utf-8")]
    started, cpu = time.perf_counter(), time.process_time()
    fingerprints = Fingerprinter(given, chapter.similarity)
    found = find_copies(files, fingerprints, len(chapter.wheats), lambda: kills["model"])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    kinds = [f.kind for f in files]
    compared = sum(
        kinds[i] == kinds[j] for i in range(len(files)) for j in range(i + 1, len(files))
    )
    return seconds, cpu, compared, sum(pair.flagged for pair in found.pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=6, help="submissions in the class")
    parser.add_argument("--jobs", type=int, default=2, help="checks at once in the batch")
    parser.add_argument(
        "--class-size", type=int, default=200, help="students in the similarity phase's class"
    )
    parser.add_argument("--shards", type=int, default=2, help="shards the class is split into")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grader-batch-bench-") as temporary:
        root = Path(temporary)
        folders = lay_out(root, args.copies)
        load_before = os.getloadavg()[0]
        sequential, sequential_cpu, reports = one_after_another(folders)
        batched, batched_cpu, rows, comparing = as_a_batch(folders, root / "out", args.jobs)
        interpreter, empty_batch = shard_start_up(root)
        shard_walls, merging = as_shards(folders, root, args.shards, args.jobs)
        load_after = os.getloadavg()[0]
    chapter = load_chapter()
    alone = [row_of(chapter, f.name, r, "") for f, r in zip(folders, reports, strict=True)]
    same = rows == [dataclasses.replace(row, graded_at="") for row in alone]
    count = len(folders)
    kinds = f"{(count + 1) // 2} model answers, {count // 2} weak"
    print(f"{count} submissions ({kinds}) on {os.cpu_count()} cores")
    for way, wall, cpu in (
        ("one after another", sequential, sequential_cpu),
        (f"batch, {args.jobs} at once", batched, batched_cpu),
    ):
        print(
            f"{way:19} {wall:6.1f} s  {count / wall * 60:5.1f} per minute  "
            f"{cpu / wall:4.2f} cores of the machine busy on average"
        )
    print(f"speed-up: {sequential / batched:.2f}x")
    busy, cores = sequential_cpu / sequential, len(os.sched_getaffinity(0))
    print(
        f"ceiling: one check alone keeps {busy:.2f} of {cores} cores busy, "
        f"so no schedule of the same work can beat {cores / busy:.2f}x"
    )
    print(f"load average before/after: {load_before:.1f}/{load_after:.1f}")
    print(f"same gradebook rows both ways: {'yes' if same else 'NO'}")
    print(f"of the batch's time, looking for copies: {comparing:.2f} s")
    per_core = count / batched * 60 / cores
    print(f"throughput per core, one batch: {per_core:.2f} submissions per minute")
    overhead = interpreter + empty_batch
    print(
        f"per-shard start-up overhead (install excluded): {overhead:.2f} s "
        f"({interpreter:.2f} s interpreter and imports, {empty_batch:.2f} s a batch of nobody)"
    )
    shown = ", ".join(f"{wall:.1f}" for wall in shard_walls)
    total = sum(shard_walls)
    print(
        f"{args.shards} shards one after another: {shown} s, merge {merging:.2f} s; "
        f"throughput per core {count / (total + merging) * 60 / cores:.2f} submissions per "
        f"minute ({overhead * args.shards / (total + merging):.1%} of it start-up)"
    )
    if count >= 2:
        seconds, cpu, compared, flagged = similarity_phase(args.class_size, reports)
        per_check = sequential / count
        print(
            f"similarity phase, a class of {args.class_size}: {seconds:.1f} s ({cpu:.1f} s of "
            f"CPU) for {compared} pairs, {flagged} flagged; grading that "
            f"class one check after another takes about {per_check * args.class_size:.0f} s, "
            f"so the phase adds {seconds / (per_check * args.class_size):.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
