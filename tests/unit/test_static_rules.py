"""The static check's rule registry: every rule catches its bad example and passes its good one.

Parametrized over ``grader.static.rules.RULES``, so a rule is tested the
moment it is registered. Expectations name codes, never message text. The
last tests hold the check to a cost linear in the file, on the two shapes of
file that once made it quadratic.
"""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

import pytest

from grader.cli import main
from grader.inputs.catalog import load_chapter
from grader.inputs.submission import read_submission
from grader.static.checker import LIMITS, UNREAD, check_example, check_test_source
from grader.static.rules import BY_TYPE, RULES, Limits, Rule

CHAPTER = load_chapter()
ALL = list(RULES.values())


@pytest.mark.parametrize("rule", ALL, ids=[rule.code for rule in ALL])
def test_each_rule_refuses_its_bad_example(rule: Rule) -> None:
    assert rule.code in check_example(rule, rule.bad, CHAPTER.module, CHAPTER.interface)


@pytest.mark.parametrize("rule", ALL, ids=[rule.code for rule in ALL])
def test_each_rule_passes_its_good_example(rule: Rule) -> None:
    """The good example breaks no rule at all, not only its own."""
    assert check_example(rule, rule.good, CHAPTER.module, CHAPTER.interface) == []


@pytest.mark.parametrize("rule", ALL, ids=[rule.code for rule in ALL])
def test_each_rule_is_described_for_students(rule: Rule) -> None:
    assert re.fullmatch(r"[FIABVDSM]\d{3}", rule.code), rule.code
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name), rule.name
    assert rule.explanation.endswith(".") and len(rule.explanation) > 30
    assert rule.bad != rule.good
    assert (rule.check is None) == (rule.types == ())
    for kind in rule.types:
        assert issubclass(kind, ast.AST) and rule in BY_TYPE[kind]


def test_codes_and_names_are_unique_and_the_check_gives_no_other() -> None:
    assert len({rule.name for rule in ALL}) == len(ALL)
    given: set[str] = set()
    for rule in ALL:
        given.update(check_example(rule, rule.bad, CHAPTER.module, CHAPTER.interface))
    assert given <= set(RULES)
    assert set(RULES) >= UNREAD


def test_every_refusal_ends_with_its_code() -> None:
    found, _ = check_test_source("import os\nX = eval('1')\n", CHAPTER.module, CHAPTER.interface)
    assert [(v.line, v.code) for v in found] == [(1, "I001"), (2, "B001")]
    assert found[0].describe("t.py").startswith("t.py line 1: import of 'os' is not allowed")
    assert found[0].describe("t.py").endswith(" [I001]")


def test_a_coding_line_is_read_as_python_reads_it() -> None:
    """UTF-7 would turn the comment into code: refused, the hidden test never named."""
    source = "# -*- coding: utf-7 -*-\n# x+AAo-def test_hidden(): pass\n"
    found, names = check_test_source(source, CHAPTER.module, CHAPTER.interface)
    assert [v.code for v in found] == ["F002"] and "'utf-7'" in found[0].rule
    assert names == []
    for fine in ("\ufeffdef test_x(): pass\n", "# coding: utf8\ndef test_x(): pass\n"):
        assert check_test_source(fine, CHAPTER.module, CHAPTER.interface) == ([], ["test_x"])


def test_the_limits_are_named_in_their_messages() -> None:
    source = "def test_x():\n    assert 1\n" * 500
    small = Limits(max_bytes=1000, seconds=LIMITS.seconds)
    found, _ = check_test_source(source, CHAPTER.module, CHAPTER.interface, small)
    assert [v.code for v in found] == ["F003"] and "0 KiB the check reads" in found[0].rule
    no_time = Limits(max_bytes=LIMITS.max_bytes, seconds=0.0)
    found, _ = check_test_source(source, CHAPTER.module, CHAPTER.interface, no_time)
    assert [v.code for v in found] == ["F004"] and "time budget of 0 seconds" in found[0].rule


def self_reads(count: int) -> str:
    """A helper of the student's own state machine that reads ``self._a`` ``count`` times."""
    head = (
        "from hypothesis.stateful import RuleBasedStateMachine\n\n"
        "class Machine(RuleBasedStateMachine):\n"
        "    def total(self):\n        total = 0\n"
    )
    return head + "        total += self._a\n" * count + "        return total\n"


def chain(links: int) -> str:
    return "def f(x):\n    return x" + ".a" * links + "\n"


def cpu_seconds(source: str) -> float:
    """The least CPU time of three checks of ``source`` (CPU time: other processes' load
    counts less than on a wall clock)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        found, _ = check_test_source(source, CHAPTER.module, CHAPTER.interface)
        best = min(best, time.process_time() - started)
        assert found == []
    return best


@pytest.mark.parametrize(("shape", "small"), [(self_reads, 500), (chain, 500)])
def test_the_check_is_linear_in_the_file(shape: object, small: int) -> None:
    """Eight times the file costs about eight times the time (quadratic would be 64)."""
    assert callable(shape)
    ratio = cpu_seconds(shape(small * 8)) / max(cpu_seconds(shape(small)), 1e-4)
    assert ratio < 24, ratio


def test_grader_rules_lists_every_code_name_and_explanation(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["rules", "--examples"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for rule in ALL:
        assert f"{rule.code} {rule.name}" in out
        assert " ".join(rule.explanation.split()) in out
    assert f"from {CHAPTER.module} import" in out  # the examples name the chapter's module


def test_every_file_python_runs_is_read_as_python_reads_it(tmp_path: Path) -> None:
    """radix.py and the test file alike: a coding line for another encoding is refused when
    the submission is read, naming the rule; a BOM and a utf-8 coding line are fine."""
    (tmp_path / "tests").mkdir()
    (tmp_path / CHAPTER.implementation).write_bytes(b"# coding: latin-1\nX = 1\n")
    (tmp_path / CHAPTER.student_tests).write_bytes(b"\xef\xbb\xbf# coding: utf-8\nY = 2\n")
    submission = read_submission(CHAPTER, tmp_path)
    assert submission.implementation is None and submission.implementation_problem is not None
    assert submission.implementation_problem.startswith(f"{CHAPTER.implementation} cannot be")
    assert "'iso8859-1'" in submission.implementation_problem
    assert submission.implementation_problem.endswith("[F002]")
    assert submission.tests == "# coding: utf-8\nY = 2\n"
