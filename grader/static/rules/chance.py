"""The ``D`` rules: chance and order."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from grader.static.lists import (
    ADDRESS_BUILTINS,
)
from grader.static.rules.registry import register

if TYPE_CHECKING:
    from grader.static.walk import Checker


UNSEEDED = (
    "unseeded randomness is not allowed: use random.Random(SEED) with a fixed seed, or hypothesis"
)


@register(
    "D001",
    "unseeded-random",
    "Randomness must be seeded (random.Random(SEED)) or come from hypothesis, so that the same "
    "file gets the same grade every run.",
    "import random\n\nX = random.choice([1, 2])\n",
    "import random\n\nX = random.Random(7).choice([1, 2])\n",
    (ast.ImportFrom, ast.Attribute, ast.Call),
)
def unseeded_random(node: ast.ImportFrom | ast.Attribute | ast.Call, ctx: Checker) -> Iterator[str]:
    if isinstance(node, ast.ImportFrom):
        if node.module == "random" and any(a.name not in ("Random", "*") for a in node.names):
            yield UNSEEDED
    elif isinstance(node, ast.Attribute):
        if node.attr != "Random" and ctx.resolve(node.value) == "random":
            yield UNSEEDED
    elif ctx.resolve(node.func) == "random.Random" and not node.args and not node.keywords:
        yield UNSEEDED


@register(
    "D002",
    "memory-address",
    "id() and hash() of an object are its memory address, which changes from run to run: "
    "compare values instead (a variable of your own named id is fine).",
    "def test_x():\n    assert id(object())\n",
    "def test_x():\n    id = 3\n    assert id == 3\n",
    (ast.Name,),
)
def memory_address(node: ast.Name, ctx: Checker) -> Iterator[str]:
    name = node.id
    if isinstance(node.ctx, ast.Load) and name in ADDRESS_BUILTINS and ctx.is_builtin(name):
        yield (
            f"{name}() of an object is its memory address, which changes from run to run: "
            "compare values instead"
        )


@register(
    "D003",
    "not-derandomized",
    "derandomize=False makes hypothesis draw other examples each run: the grader runs "
    "derandomized, so leave it out.",
    "from hypothesis import settings\n\nS = settings(derandomize=False)\n",
    "from hypothesis import settings\n\nS = settings(derandomize=True)\n",
    (ast.keyword,),
)
def not_derandomized(node: ast.keyword, ctx: Checker) -> Iterator[str]:
    value = node.value
    if node.arg == "derandomize" and not (isinstance(value, ast.Constant) and value.value):
        yield (
            "derandomize=False makes hypothesis draw other examples each run, and the "
            "grade with them: leave it out (the grader runs derandomized)"
        )


@register(
    "D004",
    "example-database",
    "A hypothesis database carries examples from one run to the next: the grader runs with "
    "database=None, so leave it out.",
    "from hypothesis import settings\n\nS = settings(database=1)\n",
    "from hypothesis import settings\n\nS = settings(database=None)\n",
    (ast.keyword,),
)
def example_database(node: ast.keyword, ctx: Checker) -> Iterator[str]:
    value = node.value
    if node.arg == "database" and not (isinstance(value, ast.Constant) and value.value is None):
        yield (
            "a hypothesis database carries examples from one run to the next: leave it out "
            "(the grader runs with database=None)"
        )


@register(
    "D005",
    "global-state",
    "'global' shares state between tests, so their outcome depends on their order.",
    "COUNT = 0\n\ndef test_x():\n    global COUNT\n    COUNT += 1\n",
    "def test_x():\n    count = 0\n    count += 1\n",
    (ast.Global,),
)
def global_state(node: ast.Global, ctx: Checker) -> Iterator[str]:
    yield "'global' is not allowed: tests must not share state"
