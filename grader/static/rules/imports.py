"""The ``I`` rules: imports."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from grader.static.lists import (
    INTROSPECTION_ATTRIBUTES,
    MODULE_ATTRIBUTES,
)
from grader.static.rules.registry import register

if TYPE_CHECKING:
    from grader.static.walk import Checker


@register(
    "I001",
    "import-not-allowed",
    "Import only the module under test and the allow-listed standard and test modules.",
    "import inspect\n",
    "import math\n",
    (ast.Import, ast.ImportFrom),
)
def import_not_allowed(node: ast.Import | ast.ImportFrom, ctx: Checker) -> Iterator[str]:
    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
    for module in modules:
        if (module or "") not in ctx.allowed_modules:
            allowed = ", ".join(sorted(ctx.allowed_modules - {"__future__"}))
            yield f"import of {module or ''!r} is not allowed (allowed: {allowed})"


@register(
    "I002",
    "relative-import",
    "Import the module under test by its name, never relatively.",
    "from . import {name}\n",
    "from {module} import {name}\n",
    (ast.ImportFrom,),
)
def relative_import(node: ast.ImportFrom, ctx: Checker) -> Iterator[str]:
    if node.level:
        yield f"relative imports are not allowed: import {ctx.module} by its name"


@register(
    "I003",
    "star-import",
    "A star import binds names no rule sees: import each name you use.",
    "from math import *\n",
    "from math import inf\n",
    (ast.ImportFrom,),
)
def star_import(node: ast.ImportFrom, ctx: Checker) -> Iterator[str]:
    if any(alias.name == "*" for alias in node.names):
        yield f"'from {node.module or ''} import *' is not allowed: import each name"


@register(
    "I004",
    "private-import",
    "Names starting with '_' are private to their module: import public names only.",
    "from collections import _chain\n",
    "from collections import deque\n",
    (ast.ImportFrom,),
)
def private_import(node: ast.ImportFrom, ctx: Checker) -> Iterator[str]:
    for alias in node.names:
        if alias.name.startswith("_") and alias.name != "annotations":
            yield f"importing the private name {alias.name!r} is not allowed"


@register(
    "I005",
    "import-reaching-out",
    "Some names of allowed modules lead on to modules that are not (hypothesis.core, "
    "operator.attrgetter): import what a test needs, not a way round the list.",
    "from hypothesis import core\n",
    "from hypothesis import given\n",
    (ast.ImportFrom,),
)
def import_reaching_out(node: ast.ImportFrom, ctx: Checker) -> Iterator[str]:
    if node.module in (ctx.module, "random", "pytest", "unittest"):
        return
    for alias in node.names:
        if alias.name in MODULE_ATTRIBUTES | INTROSPECTION_ATTRIBUTES:
            yield f"importing {alias.name!r} reaches beyond the tree's interface"
