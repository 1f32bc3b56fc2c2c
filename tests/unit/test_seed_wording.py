"""Issue 38, the parts without a sandbox: the further seeds, which reports show a drawn
example, the sentences, the JSON both ways, the class page's share, the option's bounds."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import jsonschema
import pytest

from grader.grading.robustness import (
    SEED_BITS,
    drawing_kills,
    drawn_example,
    draws_examples,
    robustness_seeds,
)
from grader.grading.wording import flaky_across_seeds, lucky_kill, seeded_kills
from grader.inputs.catalog import load_chapter
from grader.output.check_json import SCHEMA_PATH, robustness_from_dict, robustness_to_dict
from grader.output.class_report import robust_share_of
from grader.results.check import (
    FlakyAcrossSeeds,
    MutantResult,
    MutationResult,
    RobustnessResult,
    SeededKill,
)
from grader.sandbox.host.result import RunResult
from grader.sandbox.host.result import TestOutcome as Outcome
from grader.sandbox.protocol.status import MutantStatus

CHAPTER = load_chapter()

GIVEN_FAILURE = """\
    @given(st.integers(0, 10_000))
>   def test_refused(number: int) -> None:
E   Failed: DID NOT RAISE <class 'ValueError'>
E   Failing test case: test_refused(
E       number=37,
E   )

tests/test_ds07_radix.py:31: Failed"""
MACHINE_CUT = """\
E   AssertionError: assert 3 == 2
[cut: 812 characters]
E   state.insert(key=[0, 0])
E   state.teardown()"""
EXPLICIT = "E   assert 1 == 2\nE   Failing explicit example: test_x(\nE       n=1,\nE   )"
PLAIN = "tests/test_ds07_radix.py:12: in test_split\nE   assert (0, []) == (2, ['a'])"


def test_the_seeds_are_the_chapters_alone_and_grow_by_appending() -> None:
    four = robustness_seeds("ds.07", 4)
    assert four == robustness_seeds("ds.07", 4)  # the same for every student and run
    assert robustness_seeds("ds.07", 6)[:4] == four  # a longer list keeps the shorter one
    assert robustness_seeds("ds.07", 0) == ()
    assert robustness_seeds("ds.08", 4) != four
    many = robustness_seeds("ds.07", 64)
    assert len(set(many)) == 64
    assert all(0 < seed < 2**SEED_BITS for seed in many)  # 0 would be the graded draw


def test_only_a_report_of_a_drawn_example_is_rerun() -> None:
    assert draws_examples(GIVEN_FAILURE)
    assert draws_examples(MACHINE_CUT)  # its opening line was cut out of the middle
    assert not draws_examples(EXPLICIT)  # an @example: no seed chooses it
    assert not draws_examples(PLAIN)
    assert drawn_example(GIVEN_FAILURE) == "test_refused(\nnumber=37,\n)"
    assert drawn_example(PLAIN) == ""
    assert drawn_example(MACHINE_CUT) == ""  # the opening is gone: no example to show
    machine = "E   Failing test case: <state machine>\nE   state = M()\nE   state.teardown()"
    assert drawn_example(machine) == "state = M()\nstate.teardown()"


def _run(status: str, *outcomes: tuple[str, str, str]) -> RunResult:
    tests = tuple(Outcome(name, state, detail) for name, state, detail in outcomes)  # type: ignore[arg-type]
    return RunResult(status, tests, "", "", 1.0)  # type: ignore[arg-type]


def test_the_kills_rerun_are_those_of_tests_that_drew() -> None:
    survived = _run("completed", ("test_refused", "passed", ""))
    runs = {mutant.id: survived for mutant in CHAPTER.mutants}
    runs["s15"] = _run("stopped", ("test_refused", "failed", GIVEN_FAILURE))
    runs["s01"] = _run("stopped", ("test_split", "failed", PLAIN))
    runs["m01"] = _run(
        "completed",
        ("test_split", "failed", PLAIN),
        ("test_refused", "failed", GIVEN_FAILURE),
        ("test_machine", "error", MACHINE_CUT),
    )
    found = drawing_kills(CHAPTER, runs)
    assert found == {"s15": ("test_refused",), "m01": ("test_refused", "test_machine")}
    assert list(found) == [m.id for m in CHAPTER.mutants if m.id in found]  # catalog order


def _mutation(*kills: SeededKill, flaky: tuple[FlakyAcrossSeeds, ...] = ()) -> MutationResult:
    killed = {"s07", "m01", *(kill.mutant for kill in kills)}
    mutants = tuple(
        MutantResult(
            m.id, m.title, MutantStatus.KILLED if m.id in killed else MutantStatus.SURVIVED, ()
        )
        for m in CHAPTER.mutants
    )
    robustness = RobustnessResult((11, 22, 33, 44), 1.0, kills, flaky)
    return MutationResult(0.7, ("s11",), mutants, (), robustness)


def test_lucky_kills_say_how_lucky_and_what_the_strategy_misses() -> None:
    s07 = CHAPTER.mutant("s07")
    once = lucky_kill(SeededKill("s07", "test_lru", 1, 5), s07.title)
    assert once.startswith("kills s07 with 1 of 5 seeds (test_lru): your strategy rarely builds")
    assert s07.title in once and "@example" in once
    mostly = lucky_kill(SeededKill("s07", "test_lru", 4, 5), s07.title)
    assert "does not always build" in mostly and "rarely" not in mostly
    assert "the bug;" in lucky_kill(SeededKill("s07", "test_lru", 1, 5), "")  # titles hidden
    mutation = _mutation(
        SeededKill("s07", "test_lru", 1, 5),
        SeededKill("m01", "test_len", 5, 5),
        SeededKill("m01", "test_other", 2, 5),
    )
    robust, lucky = seeded_kills(mutation)
    assert robust == ["m01 (test_len, 5 of 5)"]  # a mutant counts by its best kill
    assert lucky == [lucky_kill(SeededKill("s07", "test_lru", 1, 5), s07.title)]
    assert seeded_kills(replace(mutation, robustness=None)) == ([], [])


def test_a_test_flaky_across_seeds_is_named_with_its_seed_and_example() -> None:
    flaky = FlakyAcrossSeeds("test_unlock", 22, "assert (37 % 300) != 37 (line 9)", "f(\nn=37,\n)")
    said = flaky_across_seeds(flaky)
    assert "test_unlock passes on the reference (a correct tree) with the graded seed" in said
    assert "fails there with seed 22: assert (37 % 300) != 37 (line 9)" in said
    assert "shrunk example: f(; n=37,; )" in said and "the grade stays as it is" in said
    kill = SeededKill("s14", "test_unlock", 4, 5)
    _, lucky = seeded_kills(_mutation(kill, flaky=(flaky,)))
    assert lucky == [lucky_kill(kill, "", flaky=True)]
    assert "fails on the reference too" in lucky[0]


def test_the_json_reads_back_and_keeps_to_the_schema() -> None:
    result = RobustnessResult(
        robustness_seeds("ds.07", 2),
        0.8,
        (SeededKill("s07", "test_lru", 2, 3), SeededKill("m01", "test_len", 3, 3)),
        (FlakyAcrossSeeds("test_x", 5, "assert False", ""),),
    )
    data = robustness_to_dict(result)
    assert data is not None and [k["robust"] for k in data["kills"]] == [False, True]
    assert robustness_from_dict(json.loads(json.dumps(data))) == result
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    entry = schema["properties"]["mutation"]["oneOf"][1]["properties"]["robustness"]
    jsonschema.validate(data, entry)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "kills": [{**data["kills"][0], "held": 0}]}, entry)


def test_the_class_page_shares_robust_kills_per_mutant() -> None:
    lucky = _mutation(SeededKill("s07", "test_lru", 1, 5))
    sure = _mutation(SeededKill("s07", "test_lru", 5, 5))
    plain = _mutation()  # killed by a test that draws nothing: no seed decides it
    unmeasured = replace(plain, robustness=None)
    share = robust_share_of("s07", [lucky, sure, plain, unmeasured])
    assert share == {"seeded_kills": 3, "robust_kills": 2, "robust_fraction": 0.6667}
    assert robust_share_of("s07", [unmeasured])["robust_fraction"] is None


@pytest.mark.parametrize("given", ["-1", "21", "two", "1.5"])
def test_robustness_takes_a_count_of_seeds_from_0_to_20(given: str) -> None:
    from grader.cli.options import seed_count

    with pytest.raises(argparse.ArgumentTypeError):
        seed_count(given)
    assert seed_count("0") == 0 and seed_count("20") == 20
