"""The ``F`` rules: the file itself, applied by the checker before and around the walk."""

from __future__ import annotations

from grader.inputs.python_source import ENCODING_CODE
from grader.static.rules.registry import Limits, file_rule

SYNTAX = file_rule(
    "F001",
    "syntax-error",
    "The file must be Python that parses: nothing else can be checked or run.",
    "def test_x(:\n    pass\n",
    "def test_x():\n    pass\n",
)
ENCODING = file_rule(
    ENCODING_CODE,
    "coding-declaration",
    "A test file is UTF-8, with no coding line naming another encoding: Python honours such a "
    "line, so the grader would check one text while Python ran another.",
    "# -*- coding: utf-7 -*-\ndef test_x():\n    pass\n",
    "# -*- coding: utf-8 -*-\ndef test_x():\n    pass\n",
)
SIZE = file_rule(
    "F003",
    "file-too-large",
    "The check reads a test file up to a size limit; a larger one is refused unread.",
    "def test_x():\n    assert [1] * 10 == [1] * 10\n" * 4,
    "def test_x():\n    pass\n",
    example_limits=Limits(max_bytes=100, seconds=10.0),
)
TIME = file_rule(
    "F004",
    "check-too-slow",
    "The check has a time budget; a file that takes longer to check is refused.",
    "def test_x():\n    assert 1\n" * 600,
    "",
    example_limits=Limits(max_bytes=1 << 20, seconds=0.0),
)
DEPTH = file_rule(
    "F005",
    "nested-too-deeply",
    "An expression nested too deeply to check (Python may parse it, the check cannot follow "
    "it) must be split into smaller steps.",
    "x = " + " + ".join(["1"] * 8000) + "\n",
    "x = " + " + ".join(["1"] * 100) + "\n",
)
