"""The static check's one walk of a test file: each node handed to the rules registered for
its type (``grader.static.rules``), scopes, annotations and strings read as code tracked on
the way, and the questions rules ask about names answered once per node, scope or class.
``grader.static.checker`` reads the file and runs the walk within its budget."""

from __future__ import annotations

import ast
import builtins
import time
from dataclasses import dataclass

from grader.inputs import python_source
from grader.static.lists import (
    ALLOWED_MODULES,
    GENERIC_BUILTINS,
    MAIN_GUARD,
    OWN_ATTRIBUTE_BASES,
    STRING_NESTING,
)
from grader.static.rules import BY_TYPE
from grader.static.scopes import COMPREHENSIONS, bound_here, survey_file

TIME_CHECK_EVERY = 1024
"""Nodes visited between two looks at the clock."""
MAX_RESOLVED_PARTS = 8
"""Dotted names longer than this resolve to nothing: every name a rule compares with is
shorter, and a 4,000-link chain must not build 4,000 ever longer strings."""


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str
    """The message a student reads."""
    code: str
    """The code of the rule it breaks (``grader rules`` explains each)."""

    def describe(self, filename: str) -> str:
        return f"{filename} line {self.line}: {self.rule} [{self.code}]"


class OverBudget(Exception):
    """The walk ran past its time budget."""


_BUILTIN_NAMES = frozenset(dir(builtins))
_CODE_NODES = (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda, ast.NamedExpr)
_CHAINS = (ast.Attribute, ast.Subscript, ast.Call)


class Checker(ast.NodeVisitor):
    """One walk of a file: each node handed to its rules, scopes tracked on the way.

    The questions rules ask (``resolve``, ``root_name``, ``own_private``,
    ``string_code``...) are answered from analyses made once per node, scope
    or class and kept, never by walking the tree again for each use.
    """

    def __init__(
        self, tree: ast.Module, module: str, interface: frozenset[str], deadline: float
    ) -> None:
        self.violations: list[Violation] = []
        self.module = module
        self.interface = interface
        self.allowed_modules = ALLOWED_MODULES | {module}
        survey = survey_file(tree)
        self.imported = survey.imported
        self.parents = survey.parents
        self.line_offset = 0
        self.last_line = 0
        self.scopes: list[tuple[ast.AST, set[str]]] = [(tree, bound_here(tree))]
        self.classes: list[ast.ClassDef] = []
        self.local_classes = survey.classes
        self.binds_module_name = "__name__" in survey.bound
        self.in_annotation = 0
        self.annotation_root: ast.AST | None = None
        self.string_depth = 0
        """How deep in strings read as code the walk is."""
        self.type_slices = 0
        """How many brackets of generic types (``List[...]``) enclose the node."""
        self._deadline = deadline
        self._visited = 0
        self._resolved: dict[ast.AST, str | None] = {}
        self._roots: dict[ast.AST, str | None] = {}
        self._self_stores = survey.self_stores
        self._rebinding: set[ast.AST] | None = None
        self._own_classes: dict[ast.ClassDef, bool] = {}
        self._strings: dict[ast.Constant, ast.Expression | None] = {}

    def _index(self, tree: ast.AST) -> None:
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    def visit(self, node: ast.AST) -> None:
        """Hand ``node`` to every rule registered for its type, then walk on."""
        self._visited += 1
        if self._visited % TIME_CHECK_EVERY == 0 and time.monotonic() > self._deadline:
            raise OverBudget
        line = getattr(node, "lineno", None)
        if line is not None:
            self.last_line = line + self.line_offset
        for rule in BY_TYPE.get(type(node), ()):
            if rule.check is not None:
                for message in rule.check(node, self):
                    self._flag(node, rule.code, message)
        super().visit(node)

    def _flag(self, node: ast.AST, code: str, message: str) -> None:
        line = getattr(node, "lineno", 0) + self.line_offset
        self.violations.append(Violation(line, message, code))

    # ------------------------------------------------------------------
    # What the rules ask.

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(node)

    def resolve(self, node: ast.AST) -> str | None:
        """``pytest.mark`` for ``pytest.mark`` or for ``mark`` imported from pytest.

        Each link of a chain is resolved once and kept: a chain of n links
        costs n steps, whichever of its links is asked first.
        """
        if isinstance(node, ast.Name):
            return self.imported.get(node.id)
        if not isinstance(node, ast.Attribute):
            return None
        chain: list[ast.Attribute] = []
        link: ast.expr = node
        while isinstance(link, ast.Attribute) and link not in self._resolved:
            chain.append(link)
            link = link.value
        if isinstance(link, ast.Attribute):
            base = self._resolved[link]
        else:
            base = self.imported.get(link.id) if isinstance(link, ast.Name) else None
        for attribute in reversed(chain):
            too_long = base is not None and base.count(".") + 1 >= MAX_RESOLVED_PARTS
            base = f"{base}.{attribute.attr}" if base and not too_long else None
            self._resolved[attribute] = base
        return base

    def root_name(self, node: ast.expr) -> str | None:
        """The variable at the start of ``a.b[c].d``, if there is one (kept per link)."""
        chain: list[ast.expr] = []
        link = node
        while isinstance(link, _CHAINS) and link not in self._roots:
            chain.append(link)
            link = link.func if isinstance(link, ast.Call) else link.value
        if isinstance(link, _CHAINS):
            root = self._roots[link]
        else:
            root = link.id if isinstance(link, ast.Name) else None
        for part in chain:
            self._roots[part] = root
        return root

    def is_builtin(self, name: str) -> bool:
        """True when ``name`` here means the builtin: no enclosing scope binds it."""
        for depth, (scope, bound) in enumerate(reversed(self.scopes)):
            if isinstance(scope, ast.ClassDef) and depth > 0:
                continue
            if name in bound:
                return False
        return True

    def in_type(self) -> bool:
        """True in an annotation or the brackets of a generic type: code typing may evaluate."""
        return bool(self.in_annotation) or self.type_slices > 0

    def is_annotation_root(self, node: ast.AST) -> bool:
        return bool(self.in_annotation) and node is self.annotation_root

    def string_code(self, node: ast.Constant) -> ast.Expression | None:
        """The string ``node`` parsed as an expression, or ``None`` when it is none (kept)."""
        if node not in self._strings:
            try:
                parsed: ast.Expression | None = python_source.parse(
                    str(node.value).strip(), mode="eval"
                )
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                parsed = None
            self._strings[node] = parsed
        return self._strings[node]

    def own_private(self, attr: str, value: ast.expr | None) -> bool:
        """``super().__init__()``, and ``self._x`` in a method of a class of the student's own.

        ``self`` must be the first parameter of a method defined right in the
        class body, never assigned to; and neither the class nor any class it
        inherits from, however indirectly, may come from the module under test.
        """
        if attr == "__init__" and isinstance(value, ast.Call):
            func = value.func
            return isinstance(func, ast.Name) and func.id == "super" and not value.args
        if attr.startswith("__") or not (isinstance(value, ast.Name) and value.id == "self"):
            return False
        method = self._innermost_function()
        if method is None or not self.classes or self.parents.get(method) is not self.classes[-1]:
            return False
        first = (method.args.posonlyargs + method.args.args)[:1]
        return (
            [a.arg for a in first] == ["self"]
            and not self._rebinds(method)
            and self._own_class(self.classes[-1])
        )

    def _rebinds(self, method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether ``method`` assigns ``self`` anywhere, nested functions included.

        Worked out once for the file: every function around an assignment to
        ``self``, found by walking up from each such assignment.
        """
        if self._rebinding is None:
            self._rebinding = set()
            for store in self._self_stores:
                node: ast.AST | None = store
                while node is not None and node not in self._rebinding:
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                        self._rebinding.add(node)
                    node = self.parents.get(node)
        return method in self._rebinding

    def only_param(self, node: ast.AST, name: str) -> bool:
        """True for a ``request`` used only as ``request.param``: a parametrized fixture."""
        if name != "request" or isinstance(node, ast.Lambda):
            return False
        uses = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
        return all(
            isinstance(self.parents.get(use), ast.Attribute)
            and self.parents[use].attr == "param"  # type: ignore[attr-defined]
            and isinstance(use.ctx, ast.Load)
            for use in uses
        )

    def _innermost_function(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function whose body is being read (comprehensions aside), if it is a ``def``."""
        for scope, _ in reversed(self.scopes):
            if isinstance(scope, COMPREHENSIONS):
                continue
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                return scope
            return None
        return None

    def _own_class(self, cls: ast.ClassDef) -> bool:
        """True when every base of ``cls``, followed through the file's own classes, is a
        builtin or one of ``OWN_ATTRIBUTE_BASES``: no base holds private state of its own that
        a test could read as ``self._x`` (the implementation's, or unittest's ``_outcome``).
        Worked out once per class."""
        if cls not in self._own_classes:
            self._own_classes[cls] = self._bases_are_own(cls, (cls,))
        return self._own_classes[cls]

    def _bases_are_own(self, cls: ast.ClassDef, seen: tuple[ast.ClassDef, ...]) -> bool:
        for base in cls.bases:
            if isinstance(base, ast.Subscript):  # Generic[T], a generic base
                base = base.value
            target = self.resolve(base)
            if target is not None:
                if target not in OWN_ATTRIBUTE_BASES:
                    return False
                continue
            if not isinstance(base, ast.Name):
                return False
            local = self.local_classes.get(base.id)
            if local is not None:
                if local in seen or not self._bases_are_own(local, (*seen, local)):
                    return False
            elif not (base.id in _BUILTIN_NAMES and self.is_builtin(base.id)):
                return False
        return True

    def _is_generic(self, value: ast.expr) -> bool:
        target = self.resolve(value) or ""
        if target.startswith(("typing.", "collections.abc.", "collections.")):
            return True
        return (
            isinstance(value, ast.Name)
            and value.id in GENERIC_BUILTINS
            and self.is_builtin(value.id)
        )

    # ------------------------------------------------------------------
    # The walk: scopes, annotations, strings read as code, the main guard.

    def _in_scope(self, scope: ast.AST) -> ScopeGuard:
        return ScopeGuard(self, scope)

    def visit_Constant(self, node: ast.Constant) -> None:
        """A string that reads as code with calls or attributes is checked as code.

        Libraries evaluate strings: ``typing`` a forward reference in a type
        (``List["..."]``, a ``TypeVar`` bound), hypothesis and
        ``functools.singledispatch`` the annotations they read. In a type any
        Python string counts; elsewhere only one that calls or reads something.
        """
        if not isinstance(node.value, str) or self.string_depth >= STRING_NESTING:
            return
        parsed = self.string_code(node)
        if parsed is None:
            return
        if not self.in_type() and not any(isinstance(n, _CODE_NODES) for n in ast.walk(parsed)):
            return
        self._index(parsed)
        offset, scopes, slices = self.line_offset, self.scopes, self.type_slices
        self.line_offset = offset + node.lineno - 1
        self.scopes = self.scopes[:1]  # a string is evaluated in the module's namespace
        self.type_slices = 0
        self.string_depth += 1
        try:
            self.visit(parsed)
        finally:
            self.string_depth -= 1
            self.line_offset, self.scopes, self.type_slices = offset, scopes, slices

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not self._is_generic(node.value):
            self.generic_visit(node)
            return
        self.visit(node.value)
        self.type_slices += 1
        try:
            self.visit(node.slice)
        finally:
            self.type_slices -= 1

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._visit_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._visit_function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        with self._in_scope(node):
            self.visit(node.body)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        arguments = node.args
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        for argument in every:
            if argument.annotation is not None:
                self._visit_annotation(argument.annotation)
        for default in [*arguments.defaults, *arguments.kw_defaults]:
            if default is not None:
                self.visit(default)
        if node.returns is not None:
            self._visit_annotation(node.returns)
        with self._in_scope(node):
            for statement in node.body:
                self.visit(statement)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for base in node.bases:
            self.visit(base)
        for keyword in node.keywords:
            self.visit(keyword)
        self.classes.append(node)
        with self._in_scope(node):
            for statement in node.body:
                self.visit(statement)
        self.classes.pop()

    def _visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    ) -> None:
        self.visit(node.generators[0].iter)
        with self._in_scope(node):
            for number, generator in enumerate(node.generators):
                self.visit(generator.target)
                if number:
                    self.visit(generator.iter)
                for condition in generator.ifs:
                    self.visit(condition)
            for part in ("elt", "key", "value"):
                if hasattr(node, part):
                    self.visit(getattr(node, part))

    visit_ListComp = _visit_comprehension
    visit_SetComp = _visit_comprehension
    visit_DictComp = _visit_comprehension
    visit_GeneratorExp = _visit_comprehension

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._visit_annotation(node.annotation)
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def _visit_annotation(self, annotation: ast.expr) -> None:
        """An annotation is code ``typing`` may evaluate: every string in it is checked as code."""
        root, self.annotation_root = self.annotation_root, annotation
        self.in_annotation += 1
        try:
            self.visit(annotation)
        finally:
            self.in_annotation -= 1
            self.annotation_root = root

    def visit_If(self, node: ast.If) -> None:
        """``if __name__ == "__main__":`` at the top level never runs under pytest: skipped,
        unless the file binds ``__name__`` somewhere (``case __name__:`` would make it run)."""
        test = node.test
        guard = (
            not self.binds_module_name
            and isinstance(self.parents.get(node), ast.Module)
            and isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == MAIN_GUARD
        )
        if not guard:
            self.generic_visit(node)
            return
        self.visit(test)
        for statement in node.orelse:
            self.visit(statement)


class ScopeGuard:
    """``with checker._in_scope(node):`` visits the body of ``node`` with its own names bound."""

    def __init__(self, checker: Checker, scope: ast.AST) -> None:
        self.checker = checker
        self.scope = scope

    def __enter__(self) -> None:
        self.checker.scopes.append((self.scope, bound_here(self.scope)))

    def __exit__(self, *exc: object) -> None:
        self.checker.scopes.pop()
