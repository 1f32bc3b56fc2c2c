"""``failure_line``: the one line of a pytest report every message and report quotes.

The reports are pytest's own text (pytest 8, Python 3.11), as the recorder passes them on.
"""

from __future__ import annotations

import pytest

from grader.sandbox.host.result import LINE_LIMIT, failure_line

CHAINED = """
    def test_chain():
        try:
>           {}[5]
E           KeyError: 5

test_x.py:4: KeyError

The above exception was the direct cause of the following exception:

    def test_chain():
        try:
            {}[5]
        except KeyError as e:
>           raise ValueError("bad key") from e
E           ValueError: bad key

test_x.py:6: ValueError
"""

BARE_ASSERT = """
    def test_assert():
>       assert [1, 2] == [1, 3]
E       assert [1, 2] == [1, 3]
E
E         At index 1 diff: 2 != 3
E         Use -v to get more diff

test_x.py:8: AssertionError
"""

NOT_RAISED = """
    def test_raises():
>       with pytest.raises(KeyError):
E       Failed: DID NOT RAISE KeyError

test_x.py:10: Failed
"""

SYNTAX_ERROR = """
/usr/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File "/tmp/run-1/tests/test_syn.py", line 1
E       def f(:
E             ^
E   SyntaxError: invalid syntax
"""

ASSERT_WITH_HYPOTHESIS_NOTE = """
E       AssertionError: tree lost a key
E       assert 2 == 3
E       Falsifying example: test_keys(
E           keys=[[0], [0, 1]],
E       )
"""


@pytest.mark.parametrize(
    ("report", "line"),
    [
        (CHAINED, "ValueError: bad key"),
        (BARE_ASSERT, "assert [1, 2] == [1, 3]"),
        (NOT_RAISED, "Failed: DID NOT RAISE KeyError"),
        (SYNTAX_ERROR, "SyntaxError: invalid syntax (/tmp/run-1/tests/test_syn.py, line 1)"),
        (ASSERT_WITH_HYPOTHESIS_NOTE, "AssertionError: tree lost a key"),
        ("fixture 'tree' not found\n", "fixture 'tree' not found"),
        ("first\nthe process ended early\n", "the process ended early"),
        ("", ""),
    ],
    ids=["chained", "assert", "not-raised", "syntax", "note", "no-e-lines", "last", "empty"],
)
def test_the_headline_of_the_exception_the_test_ended_with(report: str, line: str) -> None:
    """The last exception pytest shows (a chained exception's cause comes first), by its
    exception line, else its first line; without ``E`` lines, the report's last line."""
    assert failure_line(report) == line


def test_a_huge_line_is_cut() -> None:
    line = failure_line("E   AssertionError: " + "x" * 10 * LINE_LIMIT)
    assert len(line) == LINE_LIMIT + len(" [cut]") and line.endswith(" [cut]")
