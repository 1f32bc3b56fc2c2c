"""Issue 38: a robustness rerun draws hypothesis's examples from the grader's seed, and only
that differs from the graded run; a ``@seed`` of the test file's chooses nothing there."""

from __future__ import annotations

from typing import Any

import pytest
from hostile_harness import report_back, reported, run

from grader.sandbox.host.pool import WorkerPool

pytest_plugins = ["hostile_harness"]
pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

DRAWS = f"""
import base64, json, zlib
from hypothesis import given, seed, settings, strategies as st

SEEN = {{"plain": [], "seeded": []}}


@given(st.integers(0, 10**9))
def test_draw(x):
    SEEN["plain"].append(x)


@seed(5)
@given(st.integers(0, 10**9))
def test_draw_with_a_seed_of_its_own(x):
    SEEN["seeded"].append(x)


def test_zz_report():
    chosen = settings.default
    SEEN["settings"] = [chosen.derandomize, chosen.database is None, chosen.max_examples]
    {report_back("SEEN")}
"""


def _seen(pool: WorkerPool, **job: Any) -> dict[str, Any]:
    seen: dict[str, Any] = reported(run(pool, DRAWS, **job), "test_zz_report")
    return seen


def test_a_seeded_run_draws_other_examples_and_the_same_for_the_same_seed(
    pool: WorkerPool,
) -> None:
    graded, again = _seen(pool), _seen(pool)
    first, same = _seen(pool, hypothesis_seed=1234), _seen(pool, hypothesis_seed=1234)
    other = _seen(pool, hypothesis_seed=98765)
    assert graded == again  # derandomized: the graded run draws alike every time
    assert first == same  # one seed, the same examples
    assert first["plain"] != graded["plain"] and other["plain"] != first["plain"]
    # the student's @seed chose the graded run's examples; it chooses no rerun's
    assert first["seeded"] != graded["seeded"] and other["seeded"] != first["seeded"]
    # nothing but the examples differs: the settings a test can read are the graded run's
    assert first["settings"] == graded["settings"] == [True, True, 100]
