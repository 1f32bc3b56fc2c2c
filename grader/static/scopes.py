"""What a test file binds, worked out before the walk (``grader.static.walk``): the names
each scope binds itself (``bound_here``), and one survey of the whole file (``survey_file``):
each node's parent, what every import binds, every bound name, the file's own classes."""

from __future__ import annotations

import ast
from dataclasses import dataclass

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def bound_here(scope: ast.AST) -> set[str]:
    """The names a scope binds itself: assignments, parameters, imports, defs, loop targets.

    Nested functions, classes and comprehensions are scopes of their own and
    are not entered (their names, decorators and defaults belong here).
    """
    bound: set[str] = set()
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        arguments = scope.args
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        bound.update(a.arg for a in every)
    if isinstance(scope, COMPREHENSIONS):
        todo: list[ast.AST] = [g.target for g in scope.generators]
    elif isinstance(scope, ast.Lambda):
        todo = [scope.body]
    else:
        todo = list(getattr(scope, "body", []))
    while todo:
        node = todo.pop()
        if isinstance(node, _SCOPES):
            bound.add(getattr(node, "name", ""))
            continue
        if isinstance(node, COMPREHENSIONS):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
        todo.extend(ast.iter_child_nodes(node))
    bound.discard("")
    return bound


_NAMED_BINDINGS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
)


@dataclass
class Survey:
    """What one walk of the whole file finds, before the rules run."""

    parents: dict[ast.AST, ast.AST]
    imported: dict[str, str]
    """Every name an import binds, anywhere in the file, mapped to what it imports."""
    bound: set[str]
    """Every name the file binds anywhere, by any statement or pattern."""
    classes: dict[str, ast.ClassDef]
    """The file's classes by name, for names that name nothing else (one class, never
    assigned)."""
    self_stores: list[ast.Name]
    """Every assignment to a name ``self``."""


def survey_file(tree: ast.Module) -> Survey:
    parents: dict[ast.AST, ast.AST] = {}
    imported: dict[str, str] = {}
    bound: set[str] = set()
    defined: dict[str, list[ast.ClassDef]] = {}
    assigned: set[str] = set()
    self_stores: list[ast.Name] = []
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
                assigned.add(node.id)
                if node.id == "self":
                    self_stores.append(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                imported[alias.asname or root] = alias.name if alias.asname else root
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module or ''}.{alias.name}"
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name)
            assigned.add(node.asname or node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.MatchMapping):
            bound.add(node.rest or "")
        elif isinstance(node, _NAMED_BINDINGS):
            bound.add(node.name or "")
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assigned.add(node.name)
    classes = {
        name: found[0]
        for name, found in defined.items()
        if len(found) == 1 and name not in assigned
    }
    return Survey(parents, imported, bound, classes, self_stores)
