"""The ``A`` rules: attributes, wherever they are named (``x.attr``, ``case C(attr=...)``)."""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator
from typing import TYPE_CHECKING

from grader.static.lists import (
    DYNAMIC_ACCESS_FIX,
    INTROSPECTION_ATTRIBUTES,
    INTROSPECTION_PREFIXES,
    MODULE_ATTRIBUTES,
)
from grader.static.rules.registry import register

if TYPE_CHECKING:
    from grader.static.walk import Checker


def attributes_of(node: ast.Attribute | ast.MatchClass) -> list[tuple[str, ast.expr | None]]:
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
    for attr, value in attributes_of(node):
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
    for attr, value in attributes_of(node):
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
    for attr, _ in attributes_of(node):
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
    for attr, value in attributes_of(node):
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
