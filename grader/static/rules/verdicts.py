"""The ``V`` rules: what changes a verdict."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from grader.static.lists import (
    ALLOWED_PYTEST,
    ALLOWED_UNITTEST,
    DYNAMIC_ACCESS_FIX,
    FORBIDDEN_FIXTURES,
    FORBIDDEN_MARKS,
    FORBIDDEN_SETTINGS_METHODS,
    PYTEST_VARIABLES,
)
from grader.static.rules.attributes import ATTRIBUTE_NODES, attributes_of
from grader.static.rules.registry import register

if TYPE_CHECKING:
    from grader.static.walk import Checker


@register(
    "V001",
    "pytest-name",
    "Of pytest, use its assertions, fixtures and parametrizing: a test passes or fails on its "
    "own, never by skip, xfail, exit or main.",
    "import pytest\n\ndef test_x():\n    pytest.skip()\n",
    "import pytest\n\ndef test_x():\n    with pytest.raises(KeyError):\n        {}[1]\n",
    (ast.ImportFrom, ast.Attribute),
)
def pytest_name(node: ast.ImportFrom | ast.Attribute, ctx: Checker) -> Iterator[str]:
    if isinstance(node, ast.ImportFrom):
        names = [a.name for a in node.names] if node.module == "pytest" else []
    else:
        names = [node.attr] if ctx.resolve(node.value) == "pytest" else []
    for name in names:
        if name not in ALLOWED_PYTEST and not name.startswith("_") and name != "*":
            allowed = ", ".join(sorted(ALLOWED_PYTEST))
            yield (
                f"pytest.{name} is not allowed: a test must pass or fail on its own "
                f"(allowed: {allowed})"
            )


@register(
    "V002",
    "unittest-name",
    "Of unittest, use TestCase and its assertions; its skips, main and mock stay out.",
    "from unittest import mock\n",
    "from unittest import TestCase\n",
    (ast.ImportFrom, ast.Attribute),
)
def unittest_name(node: ast.ImportFrom | ast.Attribute, ctx: Checker) -> Iterator[str]:
    if isinstance(node, ast.ImportFrom):
        names = [a.name for a in node.names] if node.module == "unittest" else []
    else:
        names = [node.attr] if ctx.resolve(node.value) == "unittest" else []
    for name in names:
        if name not in ALLOWED_UNITTEST and not name.startswith("_") and name != "*":
            yield f"unittest.{name} is not allowed: of unittest, use TestCase and its assertions"


@register(
    "V003",
    "forbidden-mark",
    "Marks that skip, expect failure or change fixtures (skip, skipif, xfail, usefixtures, "
    "filterwarnings) are refused: every test runs every time.",
    "import pytest\n\n@pytest.mark.xfail\ndef test_x():\n    pass\n",
    "import pytest\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_x(n):\n    assert n\n",
    (ast.Attribute,),
)
def forbidden_mark(node: ast.Attribute, ctx: Checker) -> Iterator[str]:
    if node.attr in FORBIDDEN_MARKS and ctx.resolve(node.value) == "pytest.mark":
        yield f"the mark {node.attr!r} is not allowed: every test runs every time"


@register(
    "V004",
    "settings-profile",
    "The grader loads its own hypothesis profile: a test file registers or loads none.",
    "from hypothesis import settings\n\nsettings.load_profile('ci')\n",
    "from hypothesis import settings\n\nS = settings(max_examples=10)\n",
    (ast.Attribute,),
)
def settings_profile(node: ast.Attribute, ctx: Checker) -> Iterator[str]:
    if node.attr in FORBIDDEN_SETTINGS_METHODS and ctx.resolve(node.value) == "hypothesis.settings":
        yield f"settings.{node.attr} is not allowed: the grader loads its own hypothesis profile"


@register(
    "V005",
    "settings-double-star",
    "settings(**...) hides which settings it sets: name each one.",
    "from hypothesis import settings\n\nS = settings(**{'max_examples': 5})\n",
    "from hypothesis import settings\n\nS = settings(max_examples=5)\n",
    (ast.Call,),
)
def settings_double_star(node: ast.Call, ctx: Checker) -> Iterator[str]:
    target = ctx.resolve(node.func) or ""
    if target.startswith("hypothesis.settings") and any(k.arg is None for k in node.keywords):
        yield "settings(**...) hides which settings it sets: name each one"


@register(
    "V006",
    "pytest-hook",
    "pytest hooks change how every test is collected, run or reported: none in a test file.",
    "def pytest_runtest_makereport(item, call):\n    pass\n",
    "def test_x():\n    pass\n",
    (ast.FunctionDef, ast.AsyncFunctionDef),
)
def pytest_hook(node: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Checker) -> Iterator[str]:
    if node.name.startswith("pytest_"):
        yield f"the pytest hook {node.name!r} is not allowed in a test file"


@register(
    "V007",
    "pytest-variable",
    "pytest_plugins and pytestmark change how pytest runs the whole file.",
    "pytest_plugins = ['pytester']\n",
    "plugins = ['none']\n",
    (ast.Assign,),
)
def pytest_variable(node: ast.Assign, ctx: Checker) -> Iterator[str]:
    for target in node.targets:
        if isinstance(target, ast.Name) and target.id in PYTEST_VARIABLES:
            yield f"setting {target.id!r} is not allowed in a test file"


@register(
    "V008",
    "skip-test",
    "A test must pass or fail on its own: TestCase.skipTest is refused.",
    "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n"
    "        self.skipTest('later')\n",
    "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n"
    "        self.assertEqual(1, 1)\n",
    ATTRIBUTE_NODES,
)
def skip_test(node: ast.Attribute | ast.MatchClass, ctx: Checker) -> Iterator[str]:
    for attr, _ in attributes_of(node):
        if attr == "skipTest":
            yield f"attribute {attr!r} is not allowed: {DYNAMIC_ACCESS_FIX[attr]}"


@register(
    "V009",
    "forbidden-fixture",
    "Fixtures that reach pytest's session, files, the process or captured output are refused; "
    "request is fine where it is used only as request.param.",
    "def test_x(monkeypatch):\n    pass\n",
    "import pytest\n\n@pytest.fixture(params=[1, 2])\ndef size(request):\n"
    "    return request.param\n",
    (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda),
)
def forbidden_fixture(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, ctx: Checker
) -> Iterator[str]:
    arguments = node.args
    every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    for argument in every:
        if argument.arg in FORBIDDEN_FIXTURES and not ctx.only_param(node, argument.arg):
            yield f"the fixture {argument.arg!r} is not allowed in a test file"
