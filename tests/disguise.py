"""Disguise a copied Python file as a student hiding a copy would, for the copy-detection tests.

``disguise`` renames every name it may (locals, helpers, extra tests; never
the chapter's public names, methods, the required tests, parameters or
builtins, so the copy still works), rewrites every docstring, drops every comment,
reverses the order of the module's functions and lets ``ast.unparse`` lay the
code out anew (quotes, spacing, line breaks). ``benchmarks/batch.py`` uses it
too, to make a class of many students.
"""

from __future__ import annotations

import ast
import builtins
import random
from collections.abc import Callable
from typing import ClassVar

from grader.inputs.catalog import Chapter


class _Renamer(ast.NodeTransformer):
    def __init__(self, keep: set[str], seed: int) -> None:
        self.keep = keep
        self.names: dict[str, str] = {}
        self.words = random.Random(seed)

    def _new(self, name: str) -> str:
        if name in self.keep or name.startswith("__"):
            return name
        if name not in self.names:
            prefix = "test_" if name.startswith("test_") else ""
            stem = "".join(self.words.choice("bcdfghjklmnpqrstvwz") for _ in range(6))
            self.names[name] = f"{prefix}{stem}{len(self.names)}"
        return self.names[name]

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self._new(node.id)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self._new(node.name)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body[0].value.value = f"Checks {len(body)} things my own way."
        self.generic_visit(node)
        return node


def disguise(source: str, chapter: Chapter, seed: int = 0) -> str:
    """``source`` renamed, reordered, re-documented and re-laid out; it behaves the same."""
    tree = ast.parse(source)
    keep = set(dir(builtins)) | {test.name for test in chapter.required_tests}
    keep |= {chapter.module, *chapter.interface, "pytest", "hypothesis", "self", "cls"}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            keep.add(node.arg)
        elif isinstance(node, ast.alias):
            keep.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ClassDef):  # the class and its methods: the interface
            keep.add(node.name)
            keep |= {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.keyword) and node.arg:
            keep.add(node.arg)
    tree = _Renamer(keep, seed).visit(tree)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    others = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
    if others and isinstance(others[0], ast.Expr) and isinstance(others[0].value, ast.Constant):
        others[0].value.value = "My tests."
    tree.body = others + functions[::-1]
    return ast.unparse(tree) + "\n"


class _Messages(ast.NodeTransformer):
    """An assert message added to every assert that has none, and dropped where it has one."""

    def visit_Assert(self, node: ast.Assert) -> ast.Assert:
        node.msg = None if node.msg is not None else ast.Constant("this should hold")
        return node


class _Swapped(ast.NodeTransformer):
    """Every one-operator comparison written the other way round (``a == b`` as ``b == a``,
    ``a < b`` as ``b > a``)."""

    MIRROR: ClassVar[dict[type[ast.cmpop], type[ast.cmpop]]] = {
        ast.Lt: ast.Gt,
        ast.Gt: ast.Lt,
        ast.LtE: ast.GtE,
        ast.GtE: ast.LtE,
    }

    def visit_Compare(self, node: ast.Compare) -> ast.Compare:
        self.generic_visit(node)
        op = node.ops[0]
        if len(node.ops) == 1 and isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
            node.left, node.comparators = node.comparators[0], [node.left]
        elif len(node.ops) == 1 and type(op) in self.MIRROR:
            node.ops = [self.MIRROR[type(op)]()]
            node.left, node.comparators = node.comparators[0], [node.left]
        return node


class _Unittest(ast.NodeTransformer):
    """``assert a == b`` written ``self.assertEqual(a, b)`` (and ``!=``, ``in``, ``<``...)."""

    METHODS: ClassVar[dict[type[ast.cmpop], str]] = {
        ast.Eq: "assertEqual",
        ast.NotEq: "assertNotEqual",
        ast.In: "assertIn",
        ast.NotIn: "assertNotIn",
        ast.Is: "assertIs",
        ast.Lt: "assertLess",
        ast.Gt: "assertGreater",
    }

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            method = self.METHODS.get(type(test.ops[0]))
            if method is not None:
                func = ast.Attribute(ast.Name("self", ast.Load()), method, ast.Load())
                call = ast.Call(func, [test.left, test.comparators[0]], [])
                return ast.copy_location(ast.Expr(call), node)
        return node


class _Parametrized(ast.NodeTransformer):
    """A test whose whole body is one loop over literal cases becomes a parametrized test."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        loops = [n for n in node.body if isinstance(n, ast.For)]
        loop = loops[0] if len(loops) == 1 and node.body[-1] is loops[0] else None
        if loop is None or not isinstance(loop.iter, ast.List | ast.Tuple):
            return node
        target = loop.target
        names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [])
        if not names or not all(isinstance(n, ast.Name) for n in names):
            return node
        spec = ast.Constant(", ".join(n.id for n in names))
        mark = ast.Attribute(
            ast.Attribute(ast.Name("pytest", ast.Load()), "mark", ast.Load()),
            "parametrize",
            ast.Load(),
        )
        node.decorator_list.append(ast.Call(mark, [spec, loop.iter], []))
        node.args.args += [ast.arg(n.id) for n in names]
        node.body = node.body[:-1] + loop.body
        return node


DISGUISES: dict[str, Callable[[str, Chapter], str]] = {
    "renamed, reordered, re-laid-out": lambda source, chapter: disguise(source, chapter, seed=5),
    "assert messages added or dropped": lambda source, chapter: _rewritten(source, _Messages()),
    "comparisons swapped": lambda source, chapter: _rewritten(source, _Swapped()),
    "assert == as assertEqual": lambda source, chapter: _rewritten(source, _Unittest()),
    "loops as parametrize": lambda source, chapter: _rewritten(source, _Parametrized()),
}
"""Each disguise the copy-detection tests hold the fingerprints to, by what it does."""


def every_disguise(source: str, chapter: Chapter) -> str:
    """Every disguise of ``DISGUISES`` at once."""
    for name, change in DISGUISES.items():
        if name != "assert == as assertEqual":  # the others need no class around the tests
            source = change(source, chapter)
    return source


def _rewritten(source: str, change: ast.NodeTransformer) -> str:
    tree = ast.fix_missing_locations(change.visit(ast.parse(source)))
    return ast.unparse(tree) + "\n"


class _HelpersRenamed(ast.NodeTransformer):
    """Every private helper (a function or method named ``_x``, not a dunder) renamed, at its
    definition and at every call, and every docstring stripped."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def _renamed(self, name: str) -> str:
        return self.names.get(name, name)

    def _stripped(self, body: list[ast.stmt]) -> list[ast.stmt]:
        first = body[0] if body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            body = body[1:] or [ast.Pass()]
        return body

    def visit_Module(self, node: ast.Module) -> ast.Module:
        node.body = self._stripped(node.body)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.body = self._stripped(node.body)
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self._renamed(node.name)
        node.body = self._stripped(node.body)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.Attribute:
        node.attr = self._renamed(node.attr)
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self._renamed(node.id)
        return node


def disguise_tree(source: str, seed: int = 0) -> str:
    """A copy of an implementation as a student hiding it would hand it in: its private
    helpers renamed, the methods of each class and the module's functions in another order,
    every docstring and comment stripped, laid out anew; it behaves the same."""
    tree = ast.parse(source)
    words = random.Random(seed)
    helpers = sorted(
        {
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            and node.name.startswith("_")
            and not node.name.startswith("__")
        }
    )
    names = {
        name: "_" + "".join(words.choice("bcdfghjklmnpqrstvwz") for _ in range(7)) + str(n)
        for n, name in enumerate(helpers)
    }
    tree = _HelpersRenamed(names).visit(tree)
    for node in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]:
        body = node.body
        functions = [n for n in body if isinstance(n, ast.FunctionDef)]
        others = [n for n in body if not isinstance(n, ast.FunctionDef)]
        words.shuffle(functions)
        node.body = others + functions
    return ast.unparse(tree) + "\n"
