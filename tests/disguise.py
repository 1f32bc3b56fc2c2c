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

from grader.catalog import Chapter


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
