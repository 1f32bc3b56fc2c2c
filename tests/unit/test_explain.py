"""The reason behind every ✗: near-miss names, uncollected classes, swallowed asserts, the
student's own line, output over the limit, and tracebacks without the grader's frames.

These are the pure functions; ``tests/e2e/test_release.py`` shows each reason on the student
edition's own commands.
"""

from __future__ import annotations

import pytest

from grader.grading.explain import (
    failure_reason,
    missing_reason,
    swallowing_handler,
    too_much_output,
)
from grader.grading.timing import cost_sentence, runs_per_check, slow_tests
from grader.grading.tracebacks import STAND_IN_ERROR, for_students
from grader.grading.wording import grade_breakdown, too_slow
from grader.inputs.catalog import load_chapter
from grader.output.failures import group_failures
from grader.results.check import (
    CheckReport,
    CourseTestsResult,
    MutantResult,
    MutationResult,
    StudentTestsResult,
)
from grader.sandbox.confine.limits import OUTPUT_LIMIT_BYTES
from grader.sandbox.protocol.status import MutantStatus, TestStatus
from grader.sandbox.untrusted.proxy import ImplementationError

CHAPTER = load_chapter()

UNCOLLECTED = """
class RadixTests:
    def test_parent_becomes_evictable(self) -> None:
        assert False
"""

SWALLOWED = """
import pytest

def test_locks_pin_ancestors() -> None:
    try:
        assert 1 == 2
    except Exception:
        pass

class TestGroup:
    def test_oldest_leaf_goes_first(self) -> None:
        try:
            assert 1 == 2
        except:
            print("never mind")

def test_split_by_hand() -> None:
    try:
        assert 1 == 2
    except KeyError:
        pass

def test_parent_becomes_evictable() -> None:
    try:
        assert 1 == 2
    except Exception:
        raise
"""

REPORT = """tests/test_ds07_radix.py:154: in test_oldest_leaf_goes_first
    assert evict_all(tree, 1) == (2, ["b1", "b2"])
E   AssertionError: assert (0, []) == (2, ['b1', 'b2'])
E
E     At index 0 diff: 0 != 2
E     Use -v to get more diff
"""

THROUGH_THE_STAND_IN = """tests/test_ds07.py:111: in __init__
    whole, nodes = read_whole(
site-packages/grader/sandbox/untrusted/proxy.py:363: in read_whole
    result: list[Any] = type(obj)._grader_connection.request(message, {})
                        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
site-packages/grader/sandbox/untrusted/proxy.py:86: in request
    raise_through(frames, self._error(reply), self.module)
radix.py:480: in _check
    raise AssertionError("invariant 3") from None
E   grader.sandbox.untrusted.proxy.ImplementationError: radix raised AssertionError: invariant 3
E     Use -v to get more diff
E   Failing test case: <state machine>
E   state = TreeAgainstNaiveMapAtGranule1()
"""


def test_a_near_miss_name_gets_did_you_mean() -> None:
    defined = {"test_parent_becomes_evictible", "test_split_by_hand"}
    reason = missing_reason("test_parent_becomes_evictable", "", defined)
    assert "did you mean test_parent_becomes_evictible?" in reason


def test_a_name_far_from_any_is_simply_missing() -> None:
    reason = missing_reason("test_parent_becomes_evictable", "", {"test_split_by_hand"})
    assert reason == "test_parent_becomes_evictable is missing: write it"


def test_a_class_pytest_does_not_collect_is_named() -> None:
    reason = missing_reason("test_parent_becomes_evictable", UNCOLLECTED, set())
    assert "class RadixTests is not collected" in reason
    assert "classes named Test..." in reason and "did you mean" not in reason


def test_a_test_case_class_of_any_name_is_collected_so_not_blamed() -> None:
    source = "import unittest\n\nclass Radix(unittest.TestCase):\n" + UNCOLLECTED.split(":", 1)[1]
    assert "is not collected" not in missing_reason("test_parent_becomes_evictable", source, set())


@pytest.mark.parametrize(
    ("test", "line"),
    [("test_locks_pin_ancestors", 7), ("TestGroup::test_oldest_leaf_goes_first", 14)],
)
def test_a_broad_except_that_swallows_the_assert_is_pointed_at(test: str, line: int) -> None:
    reason = swallowing_handler(SWALLOWED, test)
    assert reason.startswith(f"line {line} (except")
    assert "catches the failed assert" in reason


@pytest.mark.parametrize("test", ["test_split_by_hand", "test_parent_becomes_evictable"])
def test_a_narrow_or_reraising_handler_is_not_blamed(test: str) -> None:
    assert swallowing_handler(SWALLOWED, test) == ""


def test_a_failure_names_the_students_own_line() -> None:
    reason = failure_reason(REPORT, CHAPTER.student_tests)
    assert reason == (
        "AssertionError: assert (0, []) == (2, ['b1', 'b2']) "
        '(line 154: assert evict_all(tree, 1) == (2, ["b1", "b2"]))'
    )


def test_output_over_the_limit_is_said_plainly() -> None:
    report = (
        "tests/test_ds07_radix.py:24: in test_x\n    print(x)\n"
        "E   OSError: [Errno 27] File too large"
    )
    reason = failure_reason(report, CHAPTER.student_tests)
    assert reason == too_much_output()
    assert f"more than {OUTPUT_LIMIT_BYTES // (1024 * 1024)} MB" in reason


def test_tracebacks_lose_the_stand_ins_frames_and_advice_a_student_cannot_follow() -> None:
    shown = for_students(THROUGH_THE_STAND_IN)
    assert "proxy.py" not in shown and "_grader_connection" not in shown
    assert "Use -v" not in shown
    assert "radix.py:480: in _check" in shown and "Failing test case" in shown
    assert "E   ImplementationError: radix raised AssertionError: invariant 3" in shown


def test_a_timeout_is_said_as_slowness_with_its_limit() -> None:
    sentence = too_slow(10.0, "test_many", {"test_quick": 0.2, "test_other": 1.5})
    assert sentence.startswith("too slow: stopped after 10 s while running test_many")
    assert "hang" not in sentence and "(test_other)" in sentence


def test_the_cost_of_a_check_is_stated() -> None:
    runs = runs_per_check(CHAPTER)
    assert runs == 5 + len(CHAPTER.wheats) + len(CHAPTER.mutants)
    sentence = cost_sentence(CHAPTER, {"test_slow": 6.1, "test_fast": 0.1})
    assert f"check runs them {runs} times: about {round(6.2 * runs / 60)} min" in sentence
    assert "slowest: test_slow 6.1 s" in sentence
    assert slow_tests(CHAPTER, {"test_slow": 6.1, "test_fast": 0.1}) == [("test_slow", 6.1)]


def report_with(killed: int, required_killed: bool, course_passed: int) -> CheckReport:
    """A report by hand: ``killed`` mutants detected, the required one among them or not."""
    names = [t.name for t in CHAPTER.course_tests]
    course = CourseTestsResult(
        {
            n: TestStatus.PASSED if at < course_passed else TestStatus.FAILED
            for at, n in enumerate(names)
        },
        {},
        None,
    )
    student = StudentTestsResult(True, (), (), ("test_a",), 1.0)
    ids = [m.id for m in CHAPTER.mutants]
    order = ids if required_killed else [i for i in ids if i not in CHAPTER.required]
    detected = set(order[:killed])
    mutants = tuple(
        MutantResult(
            i,
            "",
            MutantStatus.KILLED if i in detected else MutantStatus.SURVIVED,
            ("test_a",) * (i in detected),
        )
        for i in ids
    )
    mutation = MutationResult(CHAPTER.threshold, CHAPTER.required, mutants)
    return CheckReport(CHAPTER.id, "s", course, student, mutation, {})


def test_the_grade_says_where_its_points_came_from() -> None:
    passing = grade_breakdown(CHAPTER, report_with(15, True, len(CHAPTER.course_tests)))
    assert passing.startswith("course tests 50 of 50 (11 of 11 passed, 4.54 to 4.55 each)")
    assert "your tests 50 of 50 (13 kills counted of the 13 needed, 3.85 each" in passing
    assert "more kills add nothing" in passing
    short = grade_breakdown(CHAPTER, report_with(13, False, 10))
    assert "10 of 11 passed" in short
    assert "12 kills counted of the 13 needed" in short
    assert "while s11 survives (required) the count stops at 12" in short


def test_a_group_of_failures_shows_the_shrunk_program() -> None:
    """Two course tests failing the same way are one box, and the box shows the report
    that holds hypothesis's program of calls, not the other."""
    plain = "radix.py:58: in __init__\n    raise NotImplementedError\nE   NotImplementedError"
    program = plain + "\nE   Failing test case: <state machine>\nE   state.teardown()"
    (group,) = group_failures({"test_a": plain, "test_model": program})
    assert group.tests == ("test_a", "test_model") and group.detail == program


def test_the_stand_in_error_is_named_as_pytest_names_it() -> None:
    """The report rewrites the stand-in's error by its full name: it must be the real one."""
    qualified = f"{ImplementationError.__module__}.{ImplementationError.__qualname__}"
    assert qualified == STAND_IN_ERROR
