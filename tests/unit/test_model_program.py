"""The model-based test's shrunk program in the chapter's words, and the hint that does not
blame a student's own invariant check for damage it only found."""

from __future__ import annotations

from grader.grading.model_program import PROGRAM_HEADER, in_chapter_words, last_call
from grader.inputs.catalog import load_chapter
from grader.output.failures import checker_step

CHAPTER = load_chapter()

REPORT = """\
radix.py:487: in _check
    raise AssertionError("invariant 6")
E   ImplementationError: radix raised AssertionError: invariant 6
E   Failing test case: <state machine>
E   state = TreeAgainstNaiveMapAtGranule2()
E   state.insert_some(keys=[(0, 0), (1, 0)], locked=1)
E   state.tree_agrees_with_the_model()
E   state.lock(node=2)
E   state.match_prefix(key=(0,))
E   state.evict(n=1)
E   state.tree_agrees_with_the_model()
E   state.teardown()
"""


def test_the_rules_become_the_interface_calls_they_make() -> None:
    shown = in_chapter_words(CHAPTER, REPORT)
    program = shown.split(PROGRAM_HEADER, 1)[1].splitlines()[1:]
    check = CHAPTER.model_program["rules"]["tree_agrees_with_the_model"][0]
    assert program == [
        "E   tree = RadixTree(2)",
        "E   tree.insert(key=(0, 0))",
        "E   tree.insert(key=(1, 0))",
        "E   tree.lock(node=<the node of (0, 0)>)",
        f"E   {check}",
        "E   tree.lock(node=2)",
        "E   tree.match_prefix(key=(0,))",
        "E   tree.evict(n=1)",
        f"E   {check}",
    ]
    assert "state." not in shown and "insert_some" not in shown
    assert last_call(shown) == "tree.evict(n=1)"


def test_a_rule_not_in_the_catalog_or_odd_arguments_stay_as_they_are() -> None:
    odd = REPORT.replace("state.evict(n=1)", "state.rebalance(depth=3)").replace(
        "state.lock(node=2)", "state.lock(node=__import__('os'))"
    )
    shown = in_chapter_words(CHAPTER, odd)
    assert "E   state.rebalance(depth=3)" in shown
    assert "E   state.lock(node=__import__('os'))" in shown
    assert in_chapter_words(CHAPTER, "E   assert 1 == 2") == "E   assert 1 == 2"


def test_the_hint_blames_the_call_before_the_check_not_the_check() -> None:
    shown = in_chapter_words(CHAPTER, REPORT)
    hint = checker_step(shown, "radix.py", ("_check",))
    assert hint.startswith("radix.py:487 in _check is your own invariant check")
    assert "(tree.evict(n=1) in the program above)" in hint


def test_the_hint_points_below_the_interface_call_when_it_ran_the_check() -> None:
    """An evict that runs the student's own check at its end: the hint names the evict."""
    own = "radix.py:305: in evict\n    self._check()\n" + REPORT
    hint = checker_step(own, "radix.py", ("_check",))
    assert hint.startswith("Fix radix.py:305 in evict first")
    assert "(radix.py:487 in _check) found the damage" in hint
    assert checker_step("radix.py:12: in insert\nE   KeyError", "radix.py", ("_check",)) == ""
