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
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from grader.catalog import load_chapter
from grader.commands.check import course_tests_job, student_tests_job
from grader.patching import apply_patch, mutant_sources
from grader.sandbox.pool import RunResult, WorkerPool

CHAPTER = load_chapter()
PROBE = Path(__file__).resolve().parent / "fixtures" / "presentation_probe.py"
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


def test_the_student_tests_see_every_variant_alike(pool: WorkerPool) -> None:
    """The same record on every variant, apart from what two reference runs also differ in."""
    probe = PROBE.read_text(encoding="utf-8")

    def record(source: str) -> dict[str, Any]:
        return observed(pool.run(student_tests_job(CHAPTER, probe, source, 60.0)))

    first = record(variants()["reference"])
    volatile = differences(first, record(variants()["reference"]))
    assert len(first) == 10, sorted(first)
    assert first["test_assertion_rewriting"][0] == "rewritten"
    for name, source in variants().items():
        changed = differences(first, record(source)) - volatile
        assert not changed, (name, {key: first[key] for key in changed})
    assert volatile == set(), "the probe masks what changes from run to run; this changed too"


def test_the_course_tests_see_every_implementation_alike(pool: WorkerPool, tmp_path: Path) -> None:
    """The course tests' job presents the reference and a student's own implementation alike."""
    probe_file = tmp_path / CHAPTER.course_test_file.name
    probe_file.write_text(PROBE.read_text(encoding="utf-8"), encoding="utf-8")
    chapter = replace(CHAPTER, course_test_file=probe_file)

    def record(source: str) -> dict[str, Any]:
        return observed(pool.run(course_tests_job(chapter, source, 60.0)))

    reference = variants()["reference"]
    first = record(reference)
    volatile = differences(first, record(reference))
    assert not differences(first, record(STUDENT_OWN)) - volatile
    assert volatile == set()
