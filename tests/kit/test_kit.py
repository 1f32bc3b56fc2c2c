"""The kit is sound: its content agrees with itself, checked in mutmut's order of phases.

Every patch applies; the course tests pass on the reference and on every
wheat (a clean run); they fail on the stub (proof that swapping the
implementation really swaps it); only then is each planted mutant shown to be
caught by the course tests the catalog names, and by the model-based test.
The model answer to the student's part passes the same bar a student's file
must pass.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.grading.jobs import course_test_jobs, course_tests_job, student_tests_job
from grader.inputs.catalog import Chapter, Mutant, Wheat, load_chapter
from grader.inputs.patching import apply_patch, mutant_sources
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult, merged_runs

pytestmark = [pytest.mark.kit, pytest.mark.slow]

CHAPTER = load_chapter()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MODEL_BASED = "test_model_based_against_a_naive_map"
COURSE_NAMES = [test.name for test in CHAPTER.course_tests]
REQUIRED_NAMES = [test.name for test in CHAPTER.required_tests]


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2) as workers:
        yield workers


def course_run(pool: WorkerPool, implementation: str) -> RunResult:
    """The course tests on ``implementation`` as ``check`` runs them: in shards, side by side."""
    jobs = course_test_jobs(CHAPTER, implementation, time_limit=120)
    with ThreadPoolExecutor(len(jobs)) as threads:
        return merged_runs(list(threads.map(pool.run, jobs)))


def model_answer_run(pool: WorkerPool, implementation: str) -> RunResult:
    tests = CHAPTER.model_tests
    return pool.run(student_tests_job(CHAPTER, tests.read_text(), implementation, 60))


def reference_source(chapter: Chapter = CHAPTER) -> str:
    return chapter.reference.read_text(encoding="utf-8")


# ----------------------------------------------------------------------
# Phase 1: the catalog and the patches.


def test_catalog_names_the_chapter_as_the_spec_does() -> None:
    """Ids, counts and the grading rule carry over from the chapter unchanged."""
    assert CHAPTER.id == "ds.07"
    assert [m.id for m in CHAPTER.mutants] == [f"s{i:02}" for i in range(1, 16)] + [
        "m01",
        "m02",
        "m03",
    ]
    assert len(CHAPTER.course_tests) == 11
    assert CHAPTER.threshold == 0.70 and CHAPTER.required == ("s11",)
    assert len(REQUIRED_NAMES) == 6
    for mutant in CHAPTER.mutants:
        assert mutant.title and mutant.caught_by
        assert set(mutant.caught_by) <= set(COURSE_NAMES), mutant.id


@pytest.mark.parametrize(
    "patch",
    [m.patch for m in CHAPTER.mutants] + [w.patch for w in CHAPTER.wheats],
    ids=lambda p: p.stem,
)
def test_patch_applies_with_git_and_patch_as_well_as_the_kit(patch: Path, tmp_path: Path) -> None:
    """Each patch is a standard unified diff: ``git apply`` and ``patch -p1`` agree with the kit."""
    expected = apply_patch(reference_source(), patch)
    for tool in (["git", "apply", str(patch)], ["patch", "-p1", "--quiet", "-i", str(patch)]):
        if shutil.which(tool[0]) is None:
            pytest.fail(f"{tool[0]} is needed to check the patches")
        folder = tmp_path / tool[0]
        folder.mkdir()
        shutil.copy(CHAPTER.reference, folder / "radix.py")
        subprocess.run(tool, cwd=folder, check=True, capture_output=True)
        assert (folder / "radix.py").read_text() == expected


def test_mutants_are_distinct_and_none_is_the_reference() -> None:
    """No two mutants produce the same source, and every one changes the source."""
    sources = mutant_sources(CHAPTER)
    assert len(set(sources.values())) == len(sources)
    assert reference_source() not in sources.values()


def test_mutants_and_wheats_compile() -> None:
    for name, source in mutant_sources(CHAPTER).items():
        compile(source, f"{name}.py", "exec")
    for wheat in CHAPTER.wheats:
        compile(apply_patch(reference_source(), wheat.patch), f"{wheat.id}.py", "exec")


# ----------------------------------------------------------------------
# Phase 2: clean runs, and proof that the implementation is really swapped.


def test_reference_passes_every_course_test(pool: WorkerPool) -> None:
    run = course_run(pool, reference_source())
    assert run.status == "completed", run.message
    assert {name: run.outcome(name) for name in COURSE_NAMES} == dict.fromkeys(
        COURSE_NAMES, "passed"
    )


def test_the_shards_run_every_course_test_once(pool: WorkerPool) -> None:
    """The course tests split into runs (``course_test_shards``) run each test case exactly
    once, as one run of the whole file does, in the file's order."""
    assert len(course_test_jobs(CHAPTER, reference_source(), 120)) > 1
    whole = pool.run(course_tests_job(CHAPTER, reference_source(), time_limit=120))
    sharded = course_run(pool, reference_source())
    assert whole.all_passed and sharded.all_passed, (whole.message, sharded.message)
    assert [o.name for o in sharded.outcomes] == [o.name for o in whole.outcomes]


@pytest.mark.parametrize("wheat", CHAPTER.wheats, ids=lambda w: w.id)
def test_wheat_passes_every_course_test(pool: WorkerPool, wheat: Wheat) -> None:
    """Other correct implementations pass: the course tests pin behaviour, not free choices."""
    run = course_run(pool, apply_patch(reference_source(), wheat.patch))
    assert run.all_passed, run.failing()


def test_a_correct_tree_that_is_not_generic_passes(pool: WorkerPool) -> None:
    """``class RadixTree:`` without ``Generic[V]`` is a correct tree: no course test may
    subscript it (``RadixTree[Any]`` at import once failed all eleven)."""
    generic = "class RadixTree(Generic[V]):"
    plain = reference_source().replace(generic, "class RadixTree:")
    assert generic in reference_source() and generic not in plain
    namespace: dict[str, object] = {}
    exec(compile(plain, "radix.py", "exec"), namespace)
    assert not hasattr(namespace["RadixTree"], "__class_getitem__")
    run = course_run(pool, plain)
    assert run.status == "completed", run.message
    assert {name: run.outcome(name) for name in COURSE_NAMES} == dict.fromkeys(
        COURSE_NAMES, "passed"
    )


def test_an_unlock_by_the_count_alone_fails_the_course_tests(pool: WorkerPool) -> None:
    """The chapter's rule: unlock refuses a node with no lock of its own, even when a
    descendant's lock gives it a count. A tree that refuses only a count of 0 spends the
    descendant's lock, and the unit test and the model both say so."""
    own_locks = (
        "return self._locks[node] - sum(self._locks[c] for c in self._children[node].values())"
    )
    assert own_locks in reference_source()
    count_rule = reference_source().replace(own_locks, "return self._locks[node]")
    run = course_run(pool, count_rule)
    assert run.status == "completed", run.message
    assert set(run.failing()) == {"test_unlock_without_a_lock_panics", MODEL_BASED}


def test_a_tree_written_from_the_chapter_passes(pool: WorkerPool) -> None:
    """A tree written from the chapter alone, to another design (node objects, a sorted
    LRU list), passes every course test and the model answer: the chapter is enough, and
    neither suite pins the reference's representation."""
    source = (FIXTURES / "written_from_the_chapter" / "radix.py").read_text(encoding="utf-8")
    assert "_prev" not in source and "_link_after" not in source
    run = course_run(pool, source)
    assert run.status == "completed", run.message
    assert {name: run.outcome(name) for name in COURSE_NAMES} == dict.fromkeys(
        COURSE_NAMES, "passed"
    )
    answer = model_answer_run(pool, source)
    assert answer.all_passed, answer.failing()


def test_stub_fails_every_course_test(pool: WorkerPool) -> None:
    run = course_run(pool, CHAPTER.stub.read_text())
    assert run.status == "completed", run.message
    assert sorted(run.failing()) == sorted(COURSE_NAMES)


# ----------------------------------------------------------------------
# Phase 3: every planted mutant is caught where the catalog says.


@pytest.mark.parametrize("mutant", CHAPTER.mutants, ids=lambda m: m.id)
def test_mutant_is_caught_by_its_named_course_tests(pool: WorkerPool, mutant: Mutant) -> None:
    """The course tests the catalog names fail on the mutant, and so does the model-based test."""
    run = course_run(pool, mutant_sources(CHAPTER)[mutant.id])
    failing = set(run.failing())
    assert set(mutant.caught_by) <= failing, (
        f"{mutant.id} escaped {set(mutant.caught_by) - failing}"
    )
    assert MODEL_BASED in failing, f"the model-based test misses {mutant.id}"


# ----------------------------------------------------------------------
# The model answer to the student's part meets the bar set for students.


def test_model_answer_passes_on_reference_and_wheats(pool: WorkerPool) -> None:
    assert model_answer_run(pool, reference_source()).all_passed
    for wheat in CHAPTER.wheats:
        run = model_answer_run(pool, apply_patch(reference_source(), wheat.patch))
        assert run.all_passed, (wheat.id, run.failing())


def test_model_answer_required_tests_fail_on_the_stub(pool: WorkerPool) -> None:
    run = model_answer_run(pool, CHAPTER.stub.read_text())
    assert set(REQUIRED_NAMES) <= set(run.failing())


def test_model_answer_kills_every_mutant(pool: WorkerPool) -> None:
    survivors = [
        mutant_id
        for mutant_id, source in mutant_sources(CHAPTER).items()
        if not model_answer_run(pool, source).failing()
    ]
    assert survivors == []


def test_stub_tests_skeleton_names_the_required_tests() -> None:
    text = CHAPTER.stub_tests.read_text()
    for name in REQUIRED_NAMES:
        assert f"def {name}(" in text
