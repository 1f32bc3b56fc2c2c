"""The ``B`` rules: builtins and names."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from grader.static.lists import (
    ADDRESS_BUILTINS,
    FORBIDDEN_BUILTINS,
)
from grader.static.rules.registry import register

if TYPE_CHECKING:
    from grader.static.walk import Checker


@register(
    "B001",
    "forbidden-builtin",
    "Builtins that read files, run code or reach objects by name (open, eval, getattr...) "
    "are refused where the name means the builtin.",
    "def test_x():\n    assert eval('1')\n",
    "def test_x():\n    assert repr(1) == '1'\n",
    (ast.Name,),
)
def forbidden_builtin(node: ast.Name, ctx: Checker) -> Iterator[str]:
    name = node.id
    if isinstance(node.ctx, ast.Load) and name in FORBIDDEN_BUILTINS - ADDRESS_BUILTINS:
        yield f"{name!r} is not allowed: tests reach the tree only through its methods"


@register(
    "B002",
    "dunder-name",
    "Names like __import__ or __builtins__ reach into the interpreter.",
    "X = __builtins__\n",
    "X = 1\n",
    (ast.Name,),
)
def dunder_name(node: ast.Name, ctx: Checker) -> Iterator[str]:
    if node.id.startswith("__") and node.id != "__name__":
        yield f"the name {node.id!r} is not allowed: it reaches into the interpreter"


@register(
    "B003",
    "assigns-module-name",
    "Assigning __name__ would make the main block run under pytest.",
    '__name__ = "__main__"\n',
    'if __name__ == "__main__":\n    pass\n',
    (ast.Name,),
)
def assigns_module_name(node: ast.Name, ctx: Checker) -> Iterator[str]:
    if node.id == "__name__" and not isinstance(node.ctx, ast.Load):
        yield "assigning '__name__' is not allowed"


@register(
    "B004",
    "namespace-as-value",
    "A module, pytest.mark or hypothesis.settings is used only as module.name where you use "
    "it: stored or passed, an alias would hide what a test calls.",
    "import pytest\n\nm = pytest.mark\n",
    "import pytest\n\n@pytest.mark.parametrize('n', [1])\ndef test_x(n):\n    assert n\n",
    (ast.Name, ast.Attribute),
)
def namespace_as_value(node: ast.Name | ast.Attribute, ctx: Checker) -> Iterator[str]:
    if isinstance(node, ast.Name) and not (
        isinstance(node.ctx, ast.Load) and node.id in ctx.imported
    ):
        return
    target = ctx.resolve(node)
    if target not in ctx.allowed_modules | {"pytest.mark", "hypothesis.settings"}:
        return
    parent = ctx.parent(node)
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return
    if isinstance(parent, ast.Call) and parent.func is node and target == "hypothesis.settings":
        return
    shown = ast.unparse(node)
    yield (
        f"{shown!r} is used here as a value: write {shown}.<name> where you use it "
        "(an alias hides what a test calls)"
    )
