"""The static check's rules: each a small function registered under a stable code.

A rule has a code (``A001``), a name (``private-attribute``), the explanation
a student reads, one file that breaks it and one that keeps it, and the node
types it looks at. ``grader.static.checker`` walks a file once and hands each
node to the rules registered for its type; a rule yields the message for each
way the node breaks it. What a rule needs to know about names (what a dotted
name resolves to, whether a builtin is shadowed, whether ``self`` is a
class's own) it asks the checker, which works each out once per scope.

Codes by family: ``F`` the file itself, ``I`` imports, ``A`` attributes,
``B`` builtins and names, ``V`` what changes a verdict (pytest, unittest,
hypothesis), ``D`` what makes a grade depend on chance or order, ``S``
strings that libraries run as code, ``M`` monkeypatching.

In the examples ``{module}`` stands for the module under test and ``{name}``
for one of its public names (``Rule.example`` fills them in).
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.inputs.python_source import ENCODING_CODE
from grader.static.lists import (
    ADDRESS_BUILTINS,
    ALLOWED_PYTEST,
    ALLOWED_UNITTEST,
    DYNAMIC_ACCESS_FIX,
    FORBIDDEN_BUILTINS,
    FORBIDDEN_FIXTURES,
    FORBIDDEN_MARKS,
    FORBIDDEN_SETTINGS_METHODS,
    INTROSPECTION_ATTRIBUTES,
    INTROSPECTION_PREFIXES,
    MAIN_GUARD,
    MODULE_ATTRIBUTES,
    PYTEST_VARIABLES,
    STRING_NESTING,
)

if TYPE_CHECKING:
    from grader.static.checker import Checker

Check = Callable[[Any, "Checker"], Iterator[str]]


@dataclass(frozen=True)
class Limits:
    """How much the check reads and how long it may take, beyond which a file is refused."""

    max_bytes: int
    seconds: float


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    explanation: str
    bad: str
    good: str
    types: tuple[type[ast.AST], ...]
    check: Check | None
    """``None`` for a rule on the whole file, which the checker applies itself."""
    example_limits: Limits | None = None
    """Limits under which the examples show the rule (a size or time limit made small)."""

    def example(self, text: str, module: str, interface: frozenset[str]) -> str:
        """``text`` (``bad`` or ``good``) for a chapter: its module and one public name."""
        name = min(interface) if interface else "NAME"
        return text.replace("{module}", module).replace("{name}", name)


RULES: dict[str, Rule] = {}
"""Every rule by code, in the order they were registered."""
BY_TYPE: dict[type[ast.AST], list[Rule]] = {}
"""The rules each node type is handed to."""


def register(
    code: str,
    name: str,
    explanation: str,
    bad: str,
    good: str,
    types: tuple[type[ast.AST], ...] = (),
    example_limits: Limits | None = None,
) -> Callable[[Check], Check]:
    """Register the decorated function as the rule ``code`` for nodes of ``types``."""

    def add(check: Check) -> Check:
        file_rule(code, name, explanation, bad, good, example_limits, types, check)
        return check

    return add


def file_rule(
    code: str,
    name: str,
    explanation: str,
    bad: str,
    good: str,
    example_limits: Limits | None = None,
    types: tuple[type[ast.AST], ...] = (),
    check: Check | None = None,
) -> Rule:
    """Register a rule; without ``check`` it is one the checker applies to the whole file."""
    if code in RULES or any(r.name == name for r in RULES.values()):
        raise ValueError(f"the rule {code} {name} is registered twice")
    rule = Rule(code, name, explanation, bad, good, types, check, example_limits)
    RULES[code] = rule
    for kind in types:
        BY_TYPE.setdefault(kind, []).append(rule)
    return rule


# ----------------------------------------------------------------------
# F: the file itself, applied by the checker before and around the walk.

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

# ----------------------------------------------------------------------
# I: imports.


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


# ----------------------------------------------------------------------
# A: attributes, wherever they are named (``x.attr``, ``case C(attr=...)``).


def _attributes(node: ast.Attribute | ast.MatchClass) -> list[tuple[str, ast.expr | None]]:
    """The attribute names ``node`` reads, each with the expression it reads them on."""
    if isinstance(node, ast.Attribute):
        return [(node.attr, node.value)]
    return [(attr, None) for attr in node.kwd_attrs]


ATTRIBUTE_NODES = (ast.Attribute, ast.MatchClass)


@register(
    "A001",
    "private-attribute",
    "Attributes starting with '_' are the implementation's own: use only the public interface "
    "(on self they are yours in a class of your own or a hypothesis state machine).",
    "from {module} import {name}\n\ndef test_x():\n    assert {name}.__dict__\n",
    "class Model:\n    def __init__(self):\n        self._items = []\n",
    ATTRIBUTE_NODES,
)
def private_attribute(node: ast.Attribute | ast.MatchClass, ctx: Checker) -> Iterator[str]:
    for attr, value in _attributes(node):
        if attr.startswith("_") and not ctx.own_private(attr, value):
            message = f"attribute {attr!r} is private: use only the public interface"
            if isinstance(value, ast.Name) and value.id == "self" and not attr.startswith("__"):
                message += (
                    "; on self a name with '_' is yours only in a method of a class of your "
                    "own or of a hypothesis state machine (a unittest.TestCase keeps private "
                    "state of its own)"
                )
            yield message


@register(
    "A002",
    "dynamic-attribute-access",
    "Reading attributes named at run time (str.format fields, operator.attrgetter) gets round "
    "every rule on names: call the methods themselves, and use f-strings.",
    "def label(template, tree):\n    return template.format(tree)\n",
    'def label(tree):\n    return f"{tree!r}" + "{} of {}".format(1, 2)\n',
    ATTRIBUTE_NODES,
)
def dynamic_attribute_access(node: ast.Attribute | ast.MatchClass, ctx: Checker) -> Iterator[str]:
    for attr, value in _attributes(node):
        if attr == "format" and _plain_format(value):
            continue
        if attr in DYNAMIC_ACCESS_FIX and attr != "skipTest":
            yield f"attribute {attr!r} is not allowed: {DYNAMIC_ACCESS_FIX[attr]}"


def _plain_format(value: ast.expr | None) -> bool:
    """``"{} and {name}".format(...)``: a literal template whose fields read no attribute."""
    return (
        isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and _format_fields_are_plain(value.value)
    )


def _format_fields_are_plain(template: str) -> bool:
    """True when every field of a ``str.format`` template names an argument, nothing more."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return False
    for _, field, spec, _ in parsed:
        if field is None:
            continue
        if not re.fullmatch(r"\w*", field):
            return False
        if spec and "{" in spec and not _format_fields_are_plain(spec):
            return False
    return True


@register(
    "A003",
    "introspection",
    "Frames, tracebacks, code objects and type hints lead to the implementation's code: test "
    "behaviour, not code.",
    "import pytest\n\ndef test_x():\n    with pytest.raises(KeyError) as info:\n"
    "        {}[1]\n    assert info.tb\n",
    "import pytest\n\ndef test_x():\n    with pytest.raises(KeyError) as info:\n"
    "        {}[1]\n    assert info.value\n",
    ATTRIBUTE_NODES,
)
def introspection(node: ast.Attribute | ast.MatchClass, ctx: Checker) -> Iterator[str]:
    for attr, _ in _attributes(node):
        if attr in DYNAMIC_ACCESS_FIX or attr.startswith("_"):
            continue
        if attr in INTROSPECTION_ATTRIBUTES or attr.startswith(INTROSPECTION_PREFIXES):
            yield f"attribute {attr!r} inspects code or objects: test behaviour, not code"


@register(
    "A004",
    "module-attribute",
    "An attribute that leads from an imported module to another module (hypothesis.core.os) "
    "is an import in disguise; on your own objects (self.time) such names are fine.",
    "import hypothesis\n\nX = hypothesis.core\n",
    "class Clock:\n    def __init__(self):\n        self.time = 0\n",
    ATTRIBUTE_NODES,
)
def module_attribute(node: ast.Attribute | ast.MatchClass, ctx: Checker) -> Iterator[str]:
    for attr, value in _attributes(node):
        if attr in MODULE_ATTRIBUTES and (value is None or ctx.root_name(value) in ctx.imported):
            yield f"attribute {attr!r} reaches beyond the tree's interface"


@register(
    "A005",
    "hasattr-name",
    "hasattr takes a public attribute's name written as a string, so the rules can read it.",
    "def test_x(tree):\n    assert not hasattr(tree, '_clock')\n",
    "def test_x(tree):\n    assert hasattr(tree, 'insert')\n",
    (ast.Call,),
)
def hasattr_name(node: ast.Call, ctx: Checker) -> Iterator[str]:
    func = node.func
    if isinstance(func, ast.Name) and func.id == "hasattr" and ctx.is_builtin("hasattr"):
        name = node.args[1] if len(node.args) > 1 else None
        if not (
            isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and not name.value.startswith("_")
        ):
            yield "hasattr takes a public attribute's name, written as a string"


@register(
    "A006",
    "outside-interface",
    "Of the module under test, use only the names of its interface.",
    "from {module} import NOT_IN_THE_INTERFACE\n",
    "from {module} import {name}\n",
    (ast.ImportFrom, ast.Attribute),
)
def outside_interface(node: ast.ImportFrom | ast.Attribute, ctx: Checker) -> Iterator[str]:
    if isinstance(node, ast.ImportFrom):
        names = [a.name for a in node.names] if node.module == ctx.module else []
    else:
        names = [node.attr] if ctx.resolve(node.value) == ctx.module else []
    for name in names:
        if name not in ctx.interface and not name.startswith("_") and name != "*":
            public = ", ".join(sorted(ctx.interface))
            yield f"{ctx.module}.{name} is not part of the interface: tests may use only {public}"


# ----------------------------------------------------------------------
# B: builtins and names.


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


# ----------------------------------------------------------------------
# V: what changes a verdict.


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
    for attr, _ in _attributes(node):
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


# ----------------------------------------------------------------------
# D: chance and order.

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


# ----------------------------------------------------------------------
# S: strings that a library may run as code.


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


# ----------------------------------------------------------------------
# M: monkeypatching.


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
