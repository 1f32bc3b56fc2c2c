"""A call of the student's own tree that does not return is a located hang (issue 35).

Each case runs a test file against a tree with a planted hang, as the grader runs the
student's own tree (its calls bounded by ``Chapter.call_limit``): the test that made the
call ends with one line naming the call and the line it was stuck on, the student's own
stack with it, and nothing of hypothesis's machinery; the run goes on to the next test.
The reference, the wheats, the stub and the mutants get no bound.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from grader.commands import tdd
from grader.grading.jobs import (
    blame_slow_tests,
    course_tests_job,
    student_tests_job,
    too_slow_a_call,
)
from grader.inputs.catalog import load_chapter
from grader.inputs.dependencies import kit_sources
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult

pytestmark = pytest.mark.slow  # sandboxed runs, each hang a second of CPU time or more

CHAPTER = load_chapter()
REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")
EVICT_LOOP = "        while freed < n and self._next[ROOT] != ROOT:\n"


def hanging(body: str) -> tuple[str, int]:
    """The reference whose ``evict`` runs ``body`` (lines at the loop's indent) before its
    loop when asked for more than the tree holds, and the number of ``body``'s first line."""
    lines = "".join(f"        {line}\n" for line in body.splitlines())
    planted = "        if n > len(self):\n" + textwrap.indent(lines, "    ")
    source = REFERENCE.replace(EVICT_LOOP, planted + EVICT_LOOP, 1)
    assert source != REFERENCE
    at = source.splitlines().index(EVICT_LOOP.rstrip("\n"))
    return source, at - len(body.splitlines()) + 1


TESTS = """
    from radix import RadixTree

    def test_before():
        assert len(RadixTree(1)) == 0

    def test_evicts_too_much():
        tree = RadixTree(1)
        tree.insert([1], ["a"])
        tree.evict(5, [].append)

    def test_after():
        tree = RadixTree(1)
        tree.insert([1, 2], ["a", "b"])
        assert tree.evict(1, [].append) == 2
    """


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2) as workers:
        yield workers


def on_own_tree(pool: WorkerPool, implementation: str, tests: str = TESTS) -> RunResult:
    job = student_tests_job(CHAPTER, textwrap.dedent(tests), implementation, 60.0, own_tree=True)
    assert job.call_limit == CHAPTER.call_limit > 0
    return pool.run(job)


def test_a_loop_that_never_ends_is_stopped_and_located(pool: WorkerPool) -> None:
    """A busy loop in ``evict``: stopped after the call bound, its loop's line named, the test
    that called it failed with the student's frame, and the tests after it still run."""
    source, first = hanging("while True:\n    pass")
    result = on_own_tree(pool, source)
    assert result.status == "completed"
    assert [(o.name, o.status) for o in result.outcomes] == [
        ("test_before", "passed"),
        ("test_evicts_too_much", "failed"),
        ("test_after", "passed"),
    ]
    detail = result.detail("test_evicts_too_much")
    line = f"your radix.py did not return from `evict` (line {first})"
    assert detail.splitlines()[-1].startswith(f"E   {line}: stopped after 1 s of CPU time")
    assert f"radix.py:{first}: in evict\n    while True:" in detail
    assert "tests/test_ds07_radix.py:" in detail and "tree.evict(5, [].append)" in detail
    assert "grader/sandbox" not in detail and "proxy" not in detail


def test_a_wait_that_never_ends_is_stopped_and_located(pool: WorkerPool) -> None:
    """A call that sleeps (or waits on a lock) uses no CPU time: it is a hang once it has
    waited without computing, not at the run's time limit."""
    source, first = hanging("import threading\nthreading.Event().wait()")
    result = on_own_tree(pool, source)
    detail = result.detail("test_evicts_too_much")
    assert result.outcome("test_after") == "passed"
    assert f"E   your radix.py did not return from `evict` (line {first + 1}): it waited" in detail


def test_a_hang_that_swallows_the_stop_still_ends(pool: WorkerPool) -> None:
    """A loop that catches everything, the bound's stop included: the second bound ends the
    process from where it is, and the test still gets the one line with the line number."""
    source, _ = hanging(
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        pass"
    )
    result = on_own_tree(pool, source)
    detail = result.detail("test_evicts_too_much")
    assert "E   your radix.py did not return from `evict` (line" in detail
    # the process is gone: the next test says so in one line of its own
    after = result.detail("test_after").splitlines()[-1]
    assert after.startswith("E   your radix.py's process ended before the call")


def test_a_hang_under_hypothesis_shows_no_hypothesis_internals(pool: WorkerPool) -> None:
    """A hang or a dead process under ``@given`` or a state machine ends the test at once:
    no shrinking, no replay, none of hypothesis's errors about flaky data."""
    source, _ = hanging("while True:\n    pass")
    tests = """
        from hypothesis import given, settings, strategies as st
        from hypothesis.stateful import RuleBasedStateMachine, rule
        from radix import RadixTree

        @settings(max_examples=20, database=None)
        @given(st.integers(min_value=0, max_value=3))
        def test_given(n):
            tree = RadixTree(1)
            tree.insert([1], ["a"])
            tree.evict(n, [].append)

        class Machine(RuleBasedStateMachine):
            def __init__(self):
                super().__init__()
                self.tree = RadixTree(1)

            @rule(key=st.lists(st.integers(0, 3), min_size=1, max_size=3))
            def insert(self, key):
                self.tree.insert(key, list(key))

            @rule(n=st.integers(0, 9))
            def evict(self, n):
                self.tree.evict(n, [].append)

        TestMachine = Machine.TestCase
        TestMachine.settings = settings(max_examples=20, database=None)
        """
    result = on_own_tree(pool, source, tests)
    for name in ("test_given", "TestMachine::runTest"):
        detail = result.detail(name)
        assert result.outcome(name) == "failed", detail
        assert detail.splitlines()[-1].startswith("E   your radix.py did not return from")
        for internal in ("Flaky", "hypothesis", "Falsifying", "Inconsistent data"):
            assert internal not in detail, (name, detail)
    died = REFERENCE.replace(EVICT_LOOP, "        __import__('os')._exit(3)\n" + EVICT_LOOP, 1)
    result = on_own_tree(pool, died, tests)
    for name in ("test_given", "TestMachine::runTest"):
        detail = result.detail(name)
        assert detail.splitlines()[-1].startswith("E   your radix.py's process ended during")
        assert "Flaky" not in detail and "hypothesis" not in detail, detail


def test_only_the_students_own_tree_is_bounded(pool: WorkerPool) -> None:
    """The runs that decide a kill or a file's validity get no call bound (their timeouts are
    confirmed ones); the course tests and the student's tests on their own tree do."""
    source, _ = hanging("while True:\n    pass")
    assert student_tests_job(CHAPTER, TESTS, source, 60.0).call_limit == 0
    assert course_tests_job(CHAPTER, source, 60.0).call_limit == CHAPTER.call_limit
    assert replace(CHAPTER, hang=None).call_limit == 0
    assert CHAPTER.call_limit == max(
        CHAPTER.hang.floor_seconds if CHAPTER.hang else 0,
        CHAPTER.hang.factor * CHAPTER.hang.reference_slowest_call_seconds if CHAPTER.hang else 0,
    )
    unbounded = student_tests_job(CHAPTER, textwrap.dedent(TESTS), source, 3.0)
    result = pool.run(unbounded)
    assert result.status == "timeout"


def test_the_same_hang_is_reported_alike_every_run(pool: WorkerPool) -> None:
    """A busy loop is at any of its lines, or in any helper it calls, from one moment to the
    next: the report names what every look at the stack found alike (the loop's own line),
    so the same tree gets the same report, byte for byte, run after run."""
    source, first = hanging(
        "while True:\n    total = 0\n"
        "    for leaf in range(50):\n        total += self._is_leaf(ROOT)"
    )
    details = {on_own_tree(pool, source).detail("test_evicts_too_much") for _ in range(3)}
    assert len(details) == 1, details
    (detail,) = details
    assert f"radix.py:{first}: in evict\n    while True:\nE   " in detail


def test_a_test_whose_call_hangs_on_the_reference_too_is_blamed(
    pool: WorkerPool, tmp_path: Path
) -> None:
    """``tdd green`` runs the tests that hung on the student's tree again, on the reference,
    under the same bound: where the reference's call passes it too, the test asks too much
    (said as slow), else the tree hung; ``check`` decides it from the reference run's time."""
    source, _ = hanging("while True:\n    pass")
    job = student_tests_job(CHAPTER, textwrap.dedent(TESTS), source, 60.0, own_tree=True)
    run = pool.run(job)
    assert [name for name in run.test_names() if run.hung(name)] == ["test_evicts_too_much"]
    assert tdd._slow_on_the_reference(CHAPTER, job, run, pool) == set()
    slow_reference = tmp_path / "radix.py"
    slow_reference.write_text(source, encoding="utf-8")
    slow_chapter = replace(CHAPTER, reference=slow_reference)
    assert tdd._slow_on_the_reference(slow_chapter, job, run, pool) == {"test_evicts_too_much"}
    quick = {"test_evicts_too_much": 0.01}
    assert blame_slow_tests(CHAPTER, run, quick) is run
    slow = {"test_evicts_too_much": CHAPTER.call_limit}
    blamed = blame_slow_tests(CHAPTER, run, slow).detail("test_evicts_too_much")
    assert blamed == f"E   {too_slow_a_call(CHAPTER.call_limit)}"


def test_a_module_whose_import_never_ends_is_located(pool: WorkerPool) -> None:
    """A loop at the module's top level hangs the import: the run's collection fails with the
    line it was in, not at the run's time limit."""
    source = REFERENCE + "\n\nwhile True:\n    pass\n"
    line = source.splitlines().index("while True:") + 1
    result = on_own_tree(pool, source)
    assert result.status == "collection_error"
    assert f"your radix.py did not finish importing (line {line})" in result.message


def test_a_hang_in_the_map_names_the_map(pool: WorkerPool) -> None:
    """A loop in the student's own ``robin_hood.py`` (which ``radix.py`` imports) is named in
    that file: the call the test made, then the map's file, line and function."""
    (name, kit_map), *others = kit_sources(CHAPTER)
    marker = "    def __setitem__(self, key: Key, value: V) -> None:\n"
    body = kit_map.index('"""', kit_map.index('"""', kit_map.index(marker)) + 3) + 3
    looping = kit_map[:body] + "\n        while True:\n            pass" + kit_map[body:]
    line = looping.splitlines().index("        while True:") + 1
    job = student_tests_job(
        CHAPTER,
        textwrap.dedent(TESTS),
        REFERENCE,
        60.0,
        dependencies=((name, looping), *others),
        own_tree=True,
    )
    detail = pool.run(job).detail("test_evicts_too_much")
    assert (
        f"E   your radix.py did not return from `insert` (robin_hood.py line {line}, "
        "in `__setitem__`)"
    ) in detail
    assert f"robin_hood.py:{line}: in __setitem__\n    while True:\n" in detail
    assert "\nradix.py:" in detail  # the tree's own frames come first
