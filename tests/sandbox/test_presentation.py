"""One presentation: every implementation a test file runs against looks the same to it.

``tests/fixtures/presentation_probe.py`` records everything a test can
observe of its run (``sys.flags``, argv, paths, environment, open files,
limits, assertion rewriting, pytest's options and plugins, loaded modules,
the module under test and its class, chance and hypothesis's settings). It
runs here through the grader's own jobs against every variant a check runs
a student's test file against (the reference, each wheat, the stub, each
mutant) and against a student's own implementation, and the records must be
identical, apart from what also changes between two runs of the reference
(which must then change the same way for every variant). The course tests'
job is held to the same rule for the reference and a student's
implementation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from grader.grading.jobs import Limits, course_tests_job, mutant_limit, student_tests_job
from grader.inputs.catalog import load_chapter
from grader.inputs.patching import apply_patch, mutant_sources
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
PROBE = Path(__file__).resolve().parents[1] / "fixtures" / "presentation_probe.py"
MARK = "OBSERVED "
STUDENT_OWN = CHAPTER.reference.read_text(encoding="utf-8").replace(
    "class RadixTree(Generic[V]):", "class RadixTree:  # a student's own, not generic"
)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2) as workers:
        yield workers


def observed(result: RunResult) -> dict[str, Any]:
    """Each probe test's observation, from the message it failed with on purpose."""
    assert result.status == "completed", (result.status, result.message, result.output)
    found = {}
    for outcome in result.outcomes:
        assert outcome.status == "failed", outcome
        line = next(line for line in outcome.detail.splitlines() if MARK in line)
        found[outcome.name] = json.loads(line.split(MARK, 1)[1])
    return found


def differences(one: dict[str, Any], other: dict[str, Any]) -> set[str]:
    return {key for key in one.keys() | other.keys() if one.get(key) != other.get(key)}


def variants() -> dict[str, str]:
    """Every implementation a check runs a student's test file against, and a student's own."""
    reference = CHAPTER.reference.read_text(encoding="utf-8")
    found = {"reference": reference, "stub": CHAPTER.stub.read_text(encoding="utf-8")}
    found |= {wheat.id: apply_patch(reference, wheat.patch) for wheat in CHAPTER.wheats}
    found |= mutant_sources(CHAPTER)
    found["student's own"] = STUDENT_OWN
    return found


LIMITS = Limits()


def job_of(name: str, probe: str, source: str) -> Job:
    """The job ``check`` makes for the variant ``name``: the validation runs get the student's
    tests' time limit, the mutants a shorter one set from the reference run."""
    if name in mutant_sources(CHAPTER):
        limit = mutant_limit(LIMITS, 0.5)
        assert limit < LIMITS.student_tests
        return student_tests_job(CHAPTER, probe, source, limit, ceiling=LIMITS.student_tests)
    return student_tests_job(CHAPTER, probe, source, LIMITS.student_tests)


def test_the_student_tests_see_every_variant_alike(pool: WorkerPool) -> None:
    """The same record on every variant, apart from what two reference runs also differ in:
    limits, identity, placement, cgroup, keyrings and /proc/self included."""
    probe = PROBE.read_text(encoding="utf-8")

    def record(name: str) -> dict[str, Any]:
        return observed(pool.run(job_of(name, probe, variants()[name])))

    first = record("reference")
    volatile = differences(first, record("reference"))
    assert len(first) == 13, sorted(first)
    assert first["test_assertion_rewriting"][0] == "rewritten"
    for name in variants():
        changed = differences(first, record(name)) - volatile
        assert not changed, (name, {key: first[key] for key in changed})
    assert volatile == set(), "the probe masks what changes from run to run; this changed too"
    if pool.isolation != "none":
        keyrings = first["test_keyrings"]
        assert keyrings["session"] == keyrings["user"] == "errno 38", keyrings  # refused
        # Only the run's own keyrings, all empty: nothing of the grader's or another run's.
        assert all(line.endswith(": empty") for line in keyrings["/proc/keys"]), keyrings
    if pool.isolation == "namespaces":
        uids, gids, groups, _, cgroup = first["test_identity_and_placement"]
        assert (uids, gids, groups) == ([65534] * 3, [65534] * 3, [])
        assert all(line.endswith(":/") for line in cgroup.splitlines()), cgroup


def test_the_course_tests_see_every_implementation_alike(pool: WorkerPool, tmp_path: Path) -> None:
    """The course tests' job presents the reference and a student's own implementation alike.

    Its test process is the kit's, and runs on its worker's CPU where the implementation is
    pinned (``Job.kit_tests``): that one CPU is the placement it records, whichever worker."""
    probe_file = tmp_path / CHAPTER.course_test_file.name
    probe_file.write_text(PROBE.read_text(encoding="utf-8"), encoding="utf-8")
    chapter = replace(CHAPTER, course_test_file=probe_file)
    placements: list[list[int]] = []

    def record(source: str) -> dict[str, Any]:
        seen = observed(pool.run(course_tests_job(chapter, source, 60.0)))
        placements.append(seen["test_identity_and_placement"].pop(3))
        return seen

    reference = variants()["reference"]
    first = record(reference)
    volatile = differences(first, record(reference))
    assert not differences(first, record(STUDENT_OWN)) - volatile
    assert volatile == set()
    if pool.isolation == "namespaces":
        assert all(len(cpus) == 1 for cpus in placements), placements
    else:
        assert all(cpus == sorted(os.sched_getaffinity(0)) for cpus in placements), placements
