"""The course tests' model-based test: one case per granule, and every rule gets work.

The chapter asks students to pass granule 1 before granule 2, so each granule
is its own test id under the one course test name (the grader folds the cases
into that name, so the catalog still counts eleven course tests). The rules
of the state machine must share the steps fairly: a rule drawn in a few
percent of the steps (match_prefix once was, at granule 1) tests little.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.inputs.catalog import load_chapter

CHAPTER = load_chapter()
COURSE_TESTS = CHAPTER.course_test_file
MODEL_BASED = "test_model_based_against_a_naive_map"

# Runs in a fresh interpreter: it wraps hypothesis's @rule before the course
# tests are imported, and counts each rule's calls (initialisation excluded).
COUNT_RULES = """
import collections, functools, json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import hypothesis.stateful as stateful
counts, setting_up = collections.Counter(), [False]
real_rule, real_initialize = stateful.rule, stateful.initialize
def rule(**kwargs):
    def wrap(function):
        @functools.wraps(function)
        def counted(*args, **kw):
            if not setting_up[0]:
                counts[function.__name__] += 1
            return function(*args, **kw)
        return real_rule(**kwargs)(counted)
    return wrap
def initialize(**kwargs):
    def wrap(function):
        @functools.wraps(function)
        def flagged(*args, **kw):
            setting_up[0] = True
            try:
                return function(*args, **kw)
            finally:
                setting_up[0] = False
        return real_initialize(**kwargs)(flagged)
    return wrap
stateful.rule, stateful.initialize = rule, initialize
import test_ds07
shares = {}
for granule in (1, 2):
    counts.clear()
    machine = getattr(test_ds07, f"TreeAgainstNaiveMapAtGranule{granule}")
    stateful.run_state_machine_as_test(machine, settings=test_ds07.MODEL_SETTINGS)
    shares[granule] = {name: n / sum(counts.values()) for name, n in counts.items()}
print(json.dumps(shares))
"""


def test_each_granule_is_its_own_case() -> None:
    """``-k granule1`` selects the granule-1 case alone."""
    pytest_args = ["--collect-only", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, str(COURSE_TESTS), "-k", "granule1"],
        cwd=COURSE_TESTS.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    ids = [line.split("::", 1)[1] for line in listed if "::" in line]
    assert ids == [f"{MODEL_BASED}[granule1]"]


@pytest.mark.slow
@pytest.mark.kit
def test_every_rule_gets_a_fair_share_of_the_steps() -> None:
    """No rule of the model-based test is starved at either granule: match_prefix (5% of
    the steps before the rules were balanced) runs in at least a tenth of them, and
    every rule (insert, match_prefix, lock, unlock, evict) in at least a twentieth.
    Hypothesis switches rules off per example, so the shares follow its draws; the runs
    are derandomized, so the figures are the same on every machine."""
    folders = [str(COURSE_TESTS.parent), str(CHAPTER.reference.parent)]
    result = subprocess.run(
        [sys.executable, "-c", COUNT_RULES, *folders],
        capture_output=True,
        text=True,
        check=True,
    )
    shares = json.loads(result.stdout)
    for granule, share in shares.items():
        assert set(share) == {"insert", "match_prefix", "lock", "unlock", "evict"}, granule
        floors = {rule: 0.10 if rule == "match_prefix" else 0.05 for rule in share}
        starved = {rule: f"{part:.0%}" for rule, part in share.items() if part < floors[rule]}
        assert not starved, f"granule {granule}: rules starved of steps: {starved}"


@pytest.mark.slow
def test_the_course_tests_run_without_the_grader(tmp_path: Path) -> None:
    """The course tests are content: plain pytest runs them where ``grader`` cannot be imported.

    A ``grader`` package that refuses to import shadows the installed kit, as a
    machine with pytest and hypothesis alone (``tox -e reference``) would have none.
    """
    blocker = tmp_path / "grader"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('the grader is not installed here')\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(COURSE_TESTS)],
        cwd=COURSE_TESTS.parent,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "12 passed" in run.stdout
