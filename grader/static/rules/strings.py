"""The ``S`` rules: strings that a library may run as code."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from grader.static.lists import (
    MAIN_GUARD,
    STRING_NESTING,
)
from grader.static.rules.registry import register

if TYPE_CHECKING:
    from grader.static.walk import Checker


@register(
    "S001",
    "dunder-string",
    "A string naming a dunder attribute ('__code__') is a way to read it by name.",
    'X = "__loader__"\n',
    'X = "__main__"\n',
    (ast.Constant,),
)
def dunder_string(node: ast.Constant, ctx: Checker) -> Iterator[str]:
    text = node.value
    if isinstance(text, str) and re.search(r"__\w+__", text) and text != MAIN_GUARD:
        yield "strings naming dunder attributes are not allowed"


def nested_type(depth: int) -> str:
    """``list['list["...int..."]']``: a type whose forward references nest ``depth`` deep."""
    inner = "int"
    for _ in range(depth):
        inner = f"list[{inner!r}]"
    return inner


@register(
    "S002",
    "strings-nested-too-deep",
    "typing evaluates a string in a type, and a string in that string: past a few levels, "
    "write the type out.",
    "T = " + nested_type(STRING_NESTING + 1) + "\n",
    "T = list['int']\n",
    (ast.Constant,),
)
def strings_nested_too_deep(node: ast.Constant, ctx: Checker) -> Iterator[str]:
    if isinstance(node.value, str) and ctx.string_depth >= STRING_NESTING:
        yield "a string nested this deep in strings is not allowed: write the code"


@register(
    "S003",
    "annotation-not-a-type",
    "A string annotation is code typing may evaluate: it must be a type, written as Python.",
    'def f(x: "the tree") -> None:\n    pass\n',
    'def f(x: "list[int]") -> None:\n    pass\n',
    (ast.Constant,),
)
def annotation_not_a_type(node: ast.Constant, ctx: Checker) -> Iterator[str]:
    if (
        isinstance(node.value, str)
        and ctx.string_depth < STRING_NESTING
        and ctx.is_annotation_root(node)
        and ctx.string_code(node) is None
    ):
        yield "a string annotation must be a type, written as Python"


@register(
    "S004",
    "type-built-at-run-time",
    "In a type, a string built at run time would be evaluated unseen: write the type out.",
    'import typing\n\nT = typing.List["in" + "t"]\n',
    'import typing\n\nT = typing.List["int"]\n',
    (ast.JoinedStr, ast.BinOp),
)
def type_built_at_run_time(node: ast.JoinedStr | ast.BinOp, ctx: Checker) -> Iterator[str]:
    if not ctx.in_type():
        return
    built = isinstance(node, ast.JoinedStr) or any(
        isinstance(side, ast.Constant) and isinstance(side.value, str)
        for side in (node.left, node.right)
    )
    if built:
        yield "a type must be written out, not built from strings at run time"
