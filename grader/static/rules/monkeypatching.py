"""The ``M`` rules: monkeypatching."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from grader.static.rules.registry import register

if TYPE_CHECKING:
    from grader.static.walk import Checker


@register(
    "M001",
    "monkeypatching",
    "Changing an attribute of something imported is monkeypatching: tests may only call it.",
    "import math\n\nmath.pi = 3\n",
    "import math\n\npi = math.pi\n",
    (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete),
)
def monkeypatching(
    node: ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete, ctx: Checker
) -> Iterator[str]:
    todo: list[ast.expr] = (
        list(node.targets) if isinstance(node, ast.Assign | ast.Delete) else [node.target]
    )
    while todo:
        target = todo.pop()
        if isinstance(target, ast.Tuple | ast.List):
            todo.extend(target.elts)
        elif isinstance(target, ast.Starred):
            todo.append(target.value)
        elif isinstance(target, ast.Attribute | ast.Subscript):
            root = ctx.root_name(target)
            if root in ctx.imported:
                yield f"changing {root!r} (imported) is monkeypatching: tests may only call it"
