"""Issue 38: kills that hold across seeds, end to end on the cut-down chapter.

The fixture ``submissions/seeds`` kills m01 with a property every example shows, s15 with
one that checks its rule for a rare number only, and s14 with one that is itself wrong for
another rare number: the reruns must tell the three apart, give the same counts twice, and
leave the grade as the graded seed made it.
"""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from hostile_harness import LIMITS, REFERENCE
from rich.console import Console

from grader.commands.check import check
from grader.grading.grade import grade
from grader.inputs.catalog import Chapter
from grader.output.check_json import SCHEMA_PATH, report_from_dict, report_to_dict
from grader.output.terminal import render_check
from grader.results.check import CheckReport, RobustnessResult
from grader.sandbox.host.pool import WorkerPool

pytest_plugins = ["hostile_harness"]
pytestmark = pytest.mark.slow  # whole checks in the sandbox

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "submissions" / "seeds"
SEEDS = 4


@pytest.fixture(scope="module")
def graded(
    chapter: Chapter, pool: WorkerPool, tmp_path_factory: pytest.TempPathFactory
) -> tuple[CheckReport, CheckReport, CheckReport]:
    """The fixture checked without further seeds, then twice with ``SEEDS`` of them."""
    folder = tmp_path_factory.mktemp("seeds") / "submission"
    shutil.copytree(FIXTURE, folder)
    (folder / "radix.py").write_text(REFERENCE, encoding="utf-8")
    limits = replace(LIMITS, ref_deps=True)  # the kit's map: the fixture holds radix.py alone
    plain = check(chapter, folder, limits, pool=pool)
    seeded = replace(limits, robustness=SEEDS)
    return (
        plain,
        check(chapter, folder, seeded, pool=pool),
        check(chapter, folder, seeded, pool=pool),
    )


def _robustness(report: CheckReport) -> RobustnessResult:
    assert report.mutation is not None and report.mutation.robustness is not None
    return report.mutation.robustness


def test_kills_are_told_robust_or_lucky_the_same_every_run(
    graded: tuple[CheckReport, CheckReport, CheckReport],
) -> None:
    plain, first, again = graded
    assert plain.mutation is not None and plain.mutation.robustness is None
    result = _robustness(first)
    assert result == _robustness(again)  # the same seeds, the same counts, every run
    assert len(result.seeds) == SEEDS
    kills = {kill.mutant: kill for kill in result.kills}
    assert set(kills) == {"m01", "s14", "s15"}  # s11 survives; every kill drew examples
    assert kills["m01"].test == "test_len_counts_every_value"
    assert (kills["m01"].held, kills["m01"].seeds) == (SEEDS + 1, SEEDS + 1)
    assert result.robust(kills["m01"])
    assert kills["s15"].test == "test_a_wrong_count_of_values_is_refused"
    assert 1 <= kills["s15"].held < SEEDS + 1 and not result.robust(kills["s15"])
    # the flaky test's kill does not hold where it fails on the reference too
    flaky = [f for f in result.flaky if f.test == "test_unlock_without_a_lock_is_refused"]
    assert flaky and all(f.seed in result.seeds for f in flaky)
    assert kills["s14"].held == SEEDS + 1 - len(flaky)
    assert "number=" in flaky[0].example and "assert" in flaky[0].reason


def test_the_grade_stays_on_the_graded_seed(
    chapter: Chapter, graded: tuple[CheckReport, CheckReport, CheckReport]
) -> None:
    plain, first, _ = graded
    assert plain.mutation is not None and first.mutation is not None
    assert first.mutation.mutants == plain.mutation.mutants
    assert grade(chapter, first) == grade(chapter, plain)
    assert first.verdict == plain.verdict
    assert first.student_tests.valid and plain.student_tests.valid  # flaky only warns


def test_the_report_says_which_kills_are_lucky(
    chapter: Chapter, graded: tuple[CheckReport, CheckReport, CheckReport]
) -> None:
    _, first, _ = graded
    data = report_to_dict(first, chapter)
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert report_from_dict(data).mutation == first.mutation  # the class reads it back
    console = Console(file=io.StringIO(), width=300, color_system=None, record=True)
    render_check(console, chapter, first)
    text = console.export_text()
    s15 = next(kill for kill in _robustness(first).kills if kill.mutant == "s15")
    assert f"kills s15 with {s15.held} of {SEEDS + 1} seeds" in text
    assert "insert accepts a number of values that is not one per granule" in text
    assert "robust: m01 (test_len_counts_every_value, 5 of 5)" in text
    assert "flaky across seeds: test_unlock_without_a_lock_is_refused" in text
