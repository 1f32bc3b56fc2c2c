"""``mine``: a graded class's own bugs as mutants, against every valid test file of the class.

The library is ``grader.course.mining`` (the runs) and ``grader.course.mined_bugs``
(groups and ranking); this opens the pool, picks the shard and writes the page
and the JSON (``MINING_PAGE``, ``MINING_JSON`` in the class folder). Nothing
here touches a grade.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from grader.commands.manifest import shard
from grader.course.mined_bugs import mined_result
from grader.course.mining import (
    Runs,
    keep_the_class_from_runs,
    read_class,
    real_bugs,
    run_all,
    valid_test_files,
)
from grader.grading.jobs import Limits
from grader.grading.result_cache import ResultCache
from grader.inputs.catalog import Chapter
from grader.output.files import write_atomically
from grader.output.mining import MINING_JSON, MINING_PAGE, mining_html, mining_json
from grader.results.batch import Entry, Manifest, Step
from grader.results.mining import MiningResult
from grader.sandbox.host.pool import WorkerPool


def mine(
    chapter: Chapter,
    out: Path,
    limits: Limits,
    jobs: int = 2,
    named: bool = False,
    part: tuple[int, int] | None = None,
    progress: Callable[[Step], None] | None = None,
) -> MiningResult:
    """Mine the class in ``out`` (``grader.course.mining``) and write its page and JSON there.

    ``part`` (K, N) makes only shard K of N's runs (its real bugs, dealt as batch deals
    students: ``grader.commands.manifest.shard``) and writes nothing but the result cache;
    the mine without it then takes them again. ``named``: the page names students."""
    students, left_out = read_class(chapter, out)
    bugs, not_bugs = real_bugs(students)
    files = valid_test_files(students)
    if part is not None:  # each real bug costs one run per test file: deal them evenly
        entries = tuple(Entry(b.name, out, b.name, float(len(files))) for b in bugs)
        mine_ = {e.student for e in shard(Manifest(chapter.id, entries), *part)}
        bugs = [bug for bug in bugs if bug.name in mine_]
    done = [0]

    def said(student: str, what: str) -> None:
        done[0] += 1
        if progress is not None:
            progress(Step(done[0], len(bugs), student, what))

    with WorkerPool(minimum=limits.isolation) as pool:
        keep_the_class_from_runs(out, pool)
        runs = Runs(chapter, limits, pool, ResultCache())
        matrix, witnesses = run_all(runs, bugs, files, jobs, said)
        isolation = pool.isolation
    counts = (runs.ran, runs.reused, isolation, named)
    everyone = (students, bugs, files)
    result = mined_result(chapter, out, everyone, (matrix, witnesses), left_out + not_bugs, counts)
    if part is not None:
        return MiningResult(**{**result.__dict__, "shard": f"{part[0]}/{part[1]}"})
    write_atomically(out / MINING_JSON, mining_json(result))
    write_atomically(out / MINING_PAGE, mining_html(result))
    return result
