"""The text of a Python file exactly as the interpreter will read it, or why it has none.

Every file the grader reads and Python later runs (a student's tests, their
implementation) goes through ``decode``: the grader and the interpreter must
see the same text. Python honours a coding declaration on the first two lines
(``# -*- coding: utf-7 -*-``); a checker that decodes the bytes as UTF-8
would read one program while Python runs another (a comment to the checker,
a hidden test to pytest). So only UTF-8 is accepted, declared or not, with or
without a byte order mark.
"""

from __future__ import annotations

import ast
import codecs
import io
import threading
import tokenize
from typing import Any

UTF8_NAMES = frozenset({"utf-8", "utf-8-sig"})
"""The codec names of UTF-8 (with a byte order mark, the second)."""
ENCODING_CODE = "F002"
"""The static rule's code for a file whose declared encoding is not UTF-8."""


class SourceProblem(ValueError):
    """Bytes that are not a Python file the grader can read as Python would."""


def declared_encoding(data: bytes) -> str:
    """The codec Python decodes ``data`` with, as ``tokenize.detect_encoding`` finds it."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown encoding, or a BOM beside another declaration
        raise SourceProblem(error.msg) from error
    return codecs.lookup(encoding).name


def encoding_problem(data: bytes) -> str | None:
    """Why Python would not read ``data`` as UTF-8, or ``None`` when it would."""
    try:
        encoding = declared_encoding(data)
    except SourceProblem as problem:
        return f"its coding declaration cannot be used ({problem}): {_FIX}"
    if encoding in UTF8_NAMES:
        return None
    return (
        f"it declares the encoding {encoding!r}, so Python would run other text than the "
        f"grader checks: {_FIX}"
    )


_FIX = "save the file as UTF-8 and delete the coding line (or make it utf-8)"


def decode(data: bytes) -> str:
    """The text of ``data`` as Python reads it: UTF-8, a leading byte order mark dropped.

    Raises ``UnicodeDecodeError`` for bytes that are not UTF-8, and
    ``SourceProblem`` for UTF-8 bytes that declare another encoding.
    """
    text = data.decode("utf-8-sig")
    problem = encoding_problem(data)
    if problem is not None:
        raise SourceProblem(f"{problem} [{ENCODING_CODE}]")
    return text


_PARSING = threading.Lock()


def parse(source: str | bytes, mode: str = "exec") -> Any:
    """``ast.parse``, one call at a time: CPython 3.11's parser can raise ``SystemError: AST
    constructor recursion depth mismatch`` when threads parse at once (batch and regrade
    grade students side by side)."""
    with _PARSING:
        return ast.parse(source, mode=mode)
