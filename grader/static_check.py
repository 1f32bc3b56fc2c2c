"""Rules a student's test file must follow, checked on its syntax tree before anything runs.

Tests earn kills only by observing behaviour through the public interface.
The wall that enforces it is the process boundary (the implementation under
test runs in a process of its own, and each run is confined by the operating
system: see docs/security.md). This check is the layer that
*explains*: it reads the file first and names, by line and rule, what would
reach beyond the interface, change how pytest or hypothesis judge a test, or
make a grade depend on chance, so an honest student learns the rules from the
grader's message rather than from a puzzling run. A rule that stops no
cheating has no place here: an honest, idiomatic test file must pass.

What it refuses:

- imports outside an allow-list of modules, and names of the module under test beyond the
  interface; a star import, which would bind names no rule sees;
- private and dunder attributes, frames, tracebacks and code objects, and
  dynamic attribute access (``getattr``, ``operator.attrgetter``, ``str.format``
  fields that read attributes), wherever they are named: in an attribute, a
  ``match`` class pattern, or a string a library may evaluate as code (a string
  annotation, ``typing.List["..."]``, a ``TypeVar`` bound);
- builtins that read files or run code (``open``, ``eval``...) where the name
  means the builtin, not a variable of the student's own;
- pytest's and hypothesis's ways to change a verdict (``skip``, ``xfail``,
  ``exit``, the marks that skip, hooks, plugins, profiles, ``settings`` that
  change the grader's choice) under any name: a module or ``pytest.mark`` may
  only be used as ``module.name``, never stored or passed, so no alias hides
  what it calls;
- unseeded randomness and memory addresses (``id``, ``hash`` of an object).

Settings the grader overrides at run time (``deadline``, health checks) are no
error: ``overridden_settings`` names them, and the report carries one note.
"""

from __future__ import annotations

import ast
import builtins
import re
import string
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from grader.hypothesis_profile import GRADER_SETTINGS, OVERRIDDEN_SETTINGS

ALLOWED_MODULES = frozenset(
    {
        "pytest",
        "hypothesis",
        "hypothesis.strategies",
        "hypothesis.stateful",
        "math",
        "itertools",
        "functools",
        "collections",
        "collections.abc",
        "dataclasses",
        "typing",
        "__future__",
        "random",
        "string",
        "operator",
        "copy",
        "enum",
        "re",
        "unittest",
    }
)
"""Modules a test file may import besides the module under test; the skeleton's header lists
the same (a kit test checks)."""

ALLOWED_PYTEST = frozenset(
    {
        "raises",
        "approx",
        "fixture",
        "mark",
        "param",
        "fail",
        "warns",
        "deprecated_call",
        "RaisesExc",
        "RaisesGroup",
    }
)
"""pytest's names a test file may use: assertions, fixtures and parametrizing."""
FORBIDDEN_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings"})
ALLOWED_UNITTEST = frozenset({"TestCase"})
"""``unittest.TestCase`` and its assertions; its skips, ``main`` and ``mock`` stay out."""
FORBIDDEN_SETTINGS_METHODS = frozenset({"load_profile", "register_profile", "get_profile"})

MODULE_ATTRIBUTES = frozenset(
    {
        "sys",
        "os",
        "inspect",
        "builtins",
        "importlib",
        "subprocess",
        "signal",
        "io",
        "pathlib",
        "shutil",
        "socket",
        "types",
        "gc",
        "ctypes",
        "marshal",
        "pickle",
        "dis",
        "ast",
        "linecache",
        "tokenize",
        "threading",
        "multiprocessing",
        "time",
        "datetime",
        "hashlib",
        "platform",
        "resource",
        "tempfile",
        "glob",
        "atexit",
        "code",
        "runpy",
        "weakref",
        "warnings",
        "abc",
        "reprlib",
        "keyword",
        "contextlib",
        "mock",
        # hypothesis's own modules, beyond strategies, stateful and errors
        "internal",
        "database",
        "configuration",
        "control",
        "core",
        "entry_points",
        "reporting",
        "statistics",
        "utils",
        "vendor",
    }
)
"""Attribute names that lead from an imported module to one outside the allow-list
(``hypothesis.core.os``...). On the student's own objects (``self.time``) they are fine."""

INTROSPECTION_ATTRIBUTES = frozenset(
    {
        # frames, tracebacks and their text: they lead to the implementation's code
        "tb",
        "frame",
        "traceback",
        "getrepr",
        "mro",
        # dynamic attribute access, which would get round every rule on names
        "attrgetter",
        "methodcaller",
        "format_map",
        "Formatter",
        # evaluating strings as code
        "get_type_hints",
        "ForwardRef",
        "get_annotations",
        # a test that skips itself
        "skipTest",
    }
)
INTROSPECTION_PREFIXES = ("f_", "tb_", "co_", "gi_", "cr_", "ag_")
"""Attributes of frames, tracebacks, code objects, generators and coroutines."""
DYNAMIC_ACCESS_FIX = {
    "format": "a str.format field can read any attribute; use an f-string, or plain fields",
    "format_map": "str.format fields can read any attribute; use an f-string",
    "attrgetter": "it reads attributes named at run time; call the methods themselves",
    "methodcaller": "it calls methods named at run time; call the methods themselves",
    "skipTest": "a test must pass or fail on its own",
}
"""For the rules a student may trip over without meaning harm: what to write instead."""

FORBIDDEN_BUILTINS = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "globals",
        "locals",
        "vars",
        "dir",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "exit",
        "quit",
        "memoryview",
        "id",
        "hash",
        "help",
    }
)
"""Builtins that read files, run code or read objects by name."""
ADDRESS_BUILTINS = frozenset({"id", "hash"})
"""The builtins a variable of the student's own may be named after: they only give addresses,
which a repr shows too. The others stay refused under any binding (``open = open``)."""
OWN_ATTRIBUTE_BASES = frozenset(
    {
        "hypothesis.stateful.RuleBasedStateMachine",
        "typing.Generic",
        "typing.NamedTuple",
        "enum.Enum",
    }
)
"""Imported base classes under which ``self._x`` is the student's own attribute."""

FORBIDDEN_FIXTURES = frozenset(
    {
        "request",
        "pytestconfig",
        "monkeypatch",
        "tmp_path",
        "tmp_path_factory",
        "tmpdir",
        "tmpdir_factory",
        "pytester",
        "testdir",
        "cache",
        "record_property",
        "record_xml_attribute",
        "record_testsuite_property",
        "doctest_namespace",
        # capturing output would let a test read help() or reprs it printed
        "capsys",
        "capsysbinary",
        "capfd",
        "capfdbinary",
        "capteesys",
    }
)
"""Fixtures that reach pytest's session, the file system or the process. ``request`` is
allowed where the only use of it is ``request.param`` (a parametrized fixture)."""

GENERIC_BUILTINS = frozenset({"list", "dict", "tuple", "set", "frozenset", "type"})
"""Builtins whose subscripts are types: ``list["..."]`` holds a forward reference too."""
MAIN_GUARD = "__main__"
STRING_NESTING = 4
"""How deep strings in strings are read as code; deeper is refused, since typing evaluates a
forward reference inside a forward reference too."""
RECURSION_LIMIT = 20_000
"""Deep enough for the deepest expression Python itself parses (about 3,000 levels)."""


UNPARSABLE = ("syntax error", "the file cannot be parsed")
"""How the one violation of a file that does not parse begins."""


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str

    def describe(self, filename: str) -> str:
        return f"{filename} line {self.line}: {self.rule}"


@dataclass(frozen=True)
class Override:
    """A hypothesis setting the file sets and the grader replaces with its own value."""

    line: int
    setting: str


def check_test_source(
    source: str, module: str, interface: frozenset[str]
) -> tuple[list[Violation], list[str]]:
    """Return the rule violations of a test file and the names of the tests it defines.

    ``module`` is the name the tests import the implementation under and
    ``interface`` its public names (the chapter's ``module`` and ``interface``).

    A test's name is the one pytest reports: ``test_x`` at the top level,
    ``TestGroup::test_x`` in a test class. A file that does not parse yields
    one violation naming the error, and no names.
    """
    tree, error = _parse(source)
    if tree is None:
        return [error or Violation(0, "the file cannot be read as Python")], []
    rules = _Rules(tree, module, interface)
    try:
        rules.visit(tree)
    except RecursionError:
        rules.violations.append(
            Violation(
                rules.last_line,
                "this expression is nested too deeply to check: split it into smaller steps",
            )
        )
    violations = sorted(set(rules.violations), key=lambda v: (v.line, v.rule))
    return violations, list(_test_names(tree.body, ""))


def overridden_settings(source: str) -> list[Override]:
    """The hypothesis settings the file sets that the grader overrides, one per keyword."""
    tree, _ = _parse(source)
    if tree is None:
        return []
    found = {
        Override(node.value.lineno, node.arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword)
        and node.arg in OVERRIDDEN_SETTINGS
        and not _equals_grader_value(node.arg, node.value)
    }
    return sorted(found, key=lambda o: (o.line, o.setting))


def _equals_grader_value(setting: str, value: ast.expr) -> bool:
    """``deadline=None`` changes nothing: the grader's own value, written out."""
    chosen = GRADER_SETTINGS[setting]
    return isinstance(value, ast.Constant) and not isinstance(chosen, str) and value.value == chosen


def describe_overrides(overrides: list[Override]) -> str | None:
    """The one note a report carries for ``overrides``, or ``None`` when there are none."""
    if not overrides:
        return None
    where = ", ".join(f"{o.setting} (line {o.line})" for o in overrides)
    grader = ", ".join(_shown(name) for name in sorted(OVERRIDDEN_SETTINGS))
    return (
        f"hypothesis settings the grader sets itself were overridden: {where}; every run "
        f"uses {grader}, so that the grade does not depend on the machine's speed"
    )


def _shown(setting: str) -> str:
    value = GRADER_SETTINGS[setting]
    return f"{setting}: {value}" if isinstance(value, str) else f"{setting}={value!r}"


def function_name(test: str) -> str:
    """The test function's own name in a reported name: ``TestX::test_y[1]`` gives ``test_y``."""
    return test.split("::")[-1].split("[", 1)[0]


def _parse(source: str) -> tuple[ast.Module | None, Violation | None]:
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        return ast.parse(source), None
    except SyntaxError as error:
        rule = f"{UNPARSABLE[0]}: {error.msg}; fix it and run again"
        return None, Violation(error.lineno or 0, rule)
    except (ValueError, RecursionError, MemoryError) as error:
        what = str(error) if isinstance(error, ValueError) else "it is nested too deeply"
        return None, Violation(0, f"{UNPARSABLE[1]}: {what}; fix it and run again")


def _test_names(body: list[ast.stmt], prefix: str) -> Iterator[str]:
    """Tests as pytest names them: functions ``test*``, and methods of classes ``Test*``."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield prefix + node.name
        elif isinstance(node, ast.ClassDef) and (
            node.name.startswith("Test") or any(_is_test_case(base) for base in node.bases)
        ):
            yield from _test_names(node.body, f"{prefix}{node.name}::")


def _is_test_case(base: ast.expr) -> bool:
    return (isinstance(base, ast.Name) and base.id == "TestCase") or (
        isinstance(base, ast.Attribute) and base.attr == "TestCase"
    )


def _imported_names(tree: ast.AST) -> dict[str, str]:
    """Every name an import binds, anywhere in the file, mapped to what it imports."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    names[root] = root
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module or ''}.{alias.name}"
    return names


def _root_name(node: ast.expr) -> str | None:
    """The variable at the start of ``a.b[c].d``, if there is one."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bound_here(scope: ast.AST) -> set[str]:
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
    if isinstance(scope, _COMPREHENSIONS):
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
        if isinstance(node, _COMPREHENSIONS):
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


_BUILTIN_NAMES = frozenset(dir(builtins))


_NAMED_BINDINGS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
)


def _every_binding(tree: ast.AST) -> set[str]:
    """Every name the file binds anywhere, by any statement or pattern."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.MatchMapping):
            bound.add(node.rest or "")
        elif isinstance(node, _NAMED_BINDINGS):
            bound.add(node.name or "")
    return bound


def _classes_by_name(tree: ast.Module) -> dict[str, ast.ClassDef]:
    """The file's classes by name, for names that name nothing else (one class, never assigned)."""
    defined: dict[str, list[ast.ClassDef]] = {}
    assigned: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            defined.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            assigned.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.alias):
            assigned.add(
                getattr(node, "name", "")
                if not isinstance(node, ast.alias)
                else (node.asname or node.name)
            )
    return {
        name: classes[0]
        for name, classes in defined.items()
        if len(classes) == 1 and name not in assigned
    }


_CODE_NODES = (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda, ast.NamedExpr)


class _Rules(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, module: str, interface: frozenset[str]) -> None:
        self.violations: list[Violation] = []
        self.module = module
        self.interface = interface
        self.allowed_modules = ALLOWED_MODULES | {module}
        self.imported = _imported_names(tree)
        self.parents: dict[ast.AST, ast.AST] = {}
        self._index(tree)
        self.line_offset = 0
        self.last_line = 0
        self.scopes: list[tuple[ast.AST, set[str]]] = [(tree, _bound_here(tree))]
        self.classes: list[ast.ClassDef] = []
        self.local_classes = _classes_by_name(tree)
        self.binds_module_name = "__name__" in _every_binding(tree)
        self.in_annotation = 0
        self.in_string_code = 0

    def _index(self, tree: ast.AST) -> None:
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    def visit(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", None)
        if line is not None:
            self.last_line = line + self.line_offset
        super().visit(node)

    def _flag(self, node: ast.AST, rule: str) -> None:
        line = getattr(node, "lineno", 0) + self.line_offset
        self.violations.append(Violation(line, rule))

    # ------------------------------------------------------------------
    # What a name or a dotted name refers to.

    def _resolve(self, node: ast.AST) -> str | None:
        """``pytest.mark`` for ``pytest.mark`` or for ``mark`` imported from pytest."""
        if isinstance(node, ast.Name):
            return self.imported.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def _is_builtin(self, name: str) -> bool:
        """True when ``name`` here means the builtin: no enclosing scope binds it."""
        for depth, (scope, bound) in enumerate(reversed(self.scopes)):
            if isinstance(scope, ast.ClassDef) and depth > 0:
                continue
            if name in bound:
                return False
        return True

    def _in_scope(self, scope: ast.AST) -> _ScopeGuard:
        return _ScopeGuard(self, scope)

    # ------------------------------------------------------------------
    # Imports: an allow-list of modules, and only the public names of the module under test.

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._flag(node, f"relative imports are not allowed: import {self.module} by its name")
        module = node.module or ""
        self._check_module(node, module)
        for alias in node.names:
            name = alias.name
            if name == "*":
                self._flag(node, f"'from {module} import *' is not allowed: import each name")
            elif name.startswith("_") and name != "annotations":
                self._flag(node, f"importing the private name {name!r} is not allowed")
            elif module == self.module and name not in self.interface:
                self._flag(node, self._not_in_interface(name))
            elif module == "random" and name != "Random":
                self._flag(node, _UNSEEDED)
            elif module == "pytest" and name not in ALLOWED_PYTEST:
                self._flag(node, _not_in_pytest(name))
            elif module == "unittest" and name not in ALLOWED_UNITTEST:
                self._flag(node, _not_in_unittest(name))
            elif name in MODULE_ATTRIBUTES | INTROSPECTION_ATTRIBUTES:
                self._flag(node, f"importing {name!r} reaches beyond the tree's interface")

    def _check_module(self, node: ast.AST, module: str) -> None:
        if module not in self.allowed_modules:
            allowed = ", ".join(sorted(self.allowed_modules - {"__future__"}))
            self._flag(node, f"import of {module!r} is not allowed (allowed: {allowed})")

    # ------------------------------------------------------------------
    # Attributes: nothing private, nothing that leads to the interpreter.

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check_attribute_name(node, node.attr, node.value)
        self._check_namespace_use(node)
        self.generic_visit(node)

    def _check_attribute_name(self, node: ast.AST, attr: str, value: ast.expr | None) -> None:
        base = self._resolve(value) if value is not None else None
        if attr.startswith("_"):
            if not self._own_private(attr, value):
                self._flag(node, _private_rule(attr, value))
        elif attr == "format":
            if not self._plain_format(node, value):
                self._flag(node, f"attribute 'format' is not allowed: {DYNAMIC_ACCESS_FIX[attr]}")
        elif attr in DYNAMIC_ACCESS_FIX:
            self._flag(node, f"attribute {attr!r} is not allowed: {DYNAMIC_ACCESS_FIX[attr]}")
        elif attr in INTROSPECTION_ATTRIBUTES or attr.startswith(INTROSPECTION_PREFIXES):
            self._flag(
                node, f"attribute {attr!r} inspects code or objects: test behaviour, not code"
            )
        elif attr in MODULE_ATTRIBUTES and (value is None or _root_name(value) in self.imported):
            self._flag(node, f"attribute {attr!r} reaches beyond the tree's interface")
        elif base == self.module and attr not in self.interface:
            self._flag(node, self._not_in_interface(attr))
        elif base == "random" and attr != "Random":
            self._flag(node, _UNSEEDED)
        elif base == "pytest" and attr not in ALLOWED_PYTEST:
            self._flag(node, _not_in_pytest(attr))
        elif base == "pytest.mark" and attr in FORBIDDEN_MARKS:
            self._flag(node, f"the mark {attr!r} is not allowed: every test runs every time")
        elif base == "unittest" and attr not in ALLOWED_UNITTEST:
            self._flag(node, _not_in_unittest(attr))
        elif base == "hypothesis.settings" and attr in FORBIDDEN_SETTINGS_METHODS:
            self._flag(
                node, f"settings.{attr} is not allowed: the grader loads its own hypothesis profile"
            )

    def _own_private(self, attr: str, value: ast.expr | None) -> bool:
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
        reassigned = any(
            isinstance(n, ast.Name) and n.id == "self" and not isinstance(n.ctx, ast.Load)
            for n in ast.walk(method)
        )
        return (
            [a.arg for a in first] == ["self"]
            and not reassigned
            and self._own_class(self.classes[-1], ())
        )

    def _innermost_function(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function whose body is being read (comprehensions aside), if it is a ``def``."""
        for scope, _ in reversed(self.scopes):
            if isinstance(scope, _COMPREHENSIONS):
                continue
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                return scope
            return None
        return None

    def _own_class(self, cls: ast.ClassDef, seen: tuple[ast.ClassDef, ...]) -> bool:
        """True when every base of ``cls``, followed through the file's own classes, is a
        builtin or one of ``OWN_ATTRIBUTE_BASES``: no base holds private state of its own that
        a test could read as ``self._x`` (the implementation's, or unittest's ``_outcome``)."""
        for base in cls.bases:
            if isinstance(base, ast.Subscript):  # Generic[T], a generic base
                base = base.value
            target = self._resolve(base)
            if target is not None:
                if target not in OWN_ATTRIBUTE_BASES:
                    return False
                continue
            if not isinstance(base, ast.Name):
                return False
            local = self.local_classes.get(base.id)
            if local is not None:
                if local in seen or not self._own_class(local, (*seen, local)):
                    return False
            elif not (base.id in _BUILTIN_NAMES and self._is_builtin(base.id)):
                return False
        return True

    def _plain_format(self, node: ast.AST, value: ast.expr | None) -> bool:
        """``"{} and {name}".format(...)``: a literal template whose fields read no attribute."""
        return (
            isinstance(value, ast.Constant)
            and isinstance(value.value, str)
            and _format_fields_are_plain(value.value)
        )

    def _check_namespace_use(self, node: ast.Name | ast.Attribute) -> None:
        """A module, ``pytest.mark`` or ``settings`` is used only as ``x.name`` or ``x(...)``."""
        target = self._resolve(node)
        namespaces = self.allowed_modules | {"pytest.mark", "hypothesis.settings"}
        if target not in namespaces:
            return
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return
        if isinstance(parent, ast.Call) and parent.func is node and target == "hypothesis.settings":
            return
        shown = ast.unparse(node)
        self._flag(
            node,
            f"{shown!r} is used here as a value: write {shown}.<name> where you use it "
            "(an alias hides what a test calls)",
        )

    # ------------------------------------------------------------------
    # Names and calls.

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if name == "__name__":
            if not isinstance(node.ctx, ast.Load):
                self._flag(node, "assigning '__name__' is not allowed")
        elif name.startswith("__"):
            self._flag(node, f"the name {name!r} is not allowed: it reaches into the interpreter")
        elif (
            isinstance(node.ctx, ast.Load)
            and name in FORBIDDEN_BUILTINS
            and (name not in ADDRESS_BUILTINS or self._is_builtin(name))
        ):
            self._flag(node, _builtin_rule(name))
        if isinstance(node.ctx, ast.Load) and name in self.imported:
            self._check_namespace_use(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        target = self._resolve(func)
        if target == "random.Random" and not node.args and not node.keywords:
            self._flag(node, _UNSEEDED)
        if (target or "").startswith("hypothesis.settings") and any(
            k.arg is None for k in node.keywords
        ):
            self._flag(node, "settings(**...) hides which settings it sets: name each one")
        if isinstance(func, ast.Name) and func.id == "hasattr" and self._is_builtin("hasattr"):
            name = node.args[1] if len(node.args) > 1 else None
            if not (
                isinstance(name, ast.Constant)
                and isinstance(name.value, str)
                and not name.value.startswith("_")
            ):
                self._flag(node, "hasattr takes a public attribute's name, written as a string")
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        value = node.value
        if node.arg == "derandomize" and not (isinstance(value, ast.Constant) and value.value):
            self._flag(
                node.value,
                "derandomize=False makes hypothesis draw other examples each run, and the "
                "grade with them: leave it out (the grader runs derandomized)",
            )
        elif node.arg == "database" and not (
            isinstance(value, ast.Constant) and value.value is None
        ):
            self._flag(
                node.value,
                "a hypothesis database carries examples from one run to the next: leave it out "
                "(the grader runs with database=None)",
            )
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        text = node.value
        if not isinstance(text, str):
            return
        if re.search(r"__\w+__", text) and text != MAIN_GUARD:
            self._flag(node, "strings naming dunder attributes are not allowed")
        self._check_string_as_code(node, text)

    def _check_string_as_code(self, node: ast.Constant, text: str) -> None:
        """A string that reads as code with calls or attributes is checked as code.

        Libraries evaluate strings: ``typing`` a forward reference in a type
        (``List["..."]``, a ``TypeVar`` bound), hypothesis and
        ``functools.singledispatch`` the annotations they read. In a type any
        Python string counts; elsewhere only one that calls or reads something.
        """
        if self.in_string_code >= STRING_NESTING:
            self._flag(node, "a string nested this deep in strings is not allowed: write the code")
            return
        try:
            parsed = ast.parse(text.strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            if self.in_annotation and node is self._annotation_root:
                self._flag(node, "a string annotation must be a type, written as Python")
            return
        in_type = bool(self.in_annotation) or self._in_type_subscript(node)
        if not in_type and not any(isinstance(n, _CODE_NODES) for n in ast.walk(parsed)):
            return
        self._index(parsed)
        offset, scopes = self.line_offset, self.scopes
        self.line_offset = offset + node.lineno - 1
        self.scopes = self.scopes[:1]  # a string is evaluated in the module's namespace
        self.in_string_code += 1
        try:
            self.visit(parsed)
        finally:
            self.in_string_code -= 1
            self.line_offset, self.scopes = offset, scopes

    _annotation_root: ast.AST | None = None

    def _in_type_subscript(self, node: ast.AST) -> bool:
        """True when ``node`` sits in the brackets of a generic type: ``List[...]``."""
        child, parent = node, self.parents.get(node)
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.Subscript) and parent.slice is child:
                return self._is_generic(parent.value)
            child, parent = parent, self.parents.get(parent)
        return False

    def _is_generic(self, value: ast.expr) -> bool:
        target = self._resolve(value) or ""
        if target.startswith(("typing.", "collections.abc.", "collections.")):
            return True
        return (
            isinstance(value, ast.Name)
            and value.id in GENERIC_BUILTINS
            and self._is_builtin(value.id)
        )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self._is_generic(node.value):
            self._check_type_is_written_out(node.slice)
        self.generic_visit(node)

    def _check_type_is_written_out(self, node: ast.expr) -> None:
        """In a type, a string built at run time would be evaluated unseen: refuse it."""
        for part in ast.walk(node):
            built = isinstance(part, ast.JoinedStr) or (
                isinstance(part, ast.BinOp)
                and any(
                    isinstance(side, ast.Constant) and isinstance(side.value, str)
                    for side in (part.left, part.right)
                )
            )
            if built:
                self._flag(part, "a type must be written out, not built from strings at run time")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        """``case object(__loader__=l)`` reads an attribute: the same rules as ``x.attr``."""
        for attr in node.kwd_attrs:
            self._check_attribute_name(node, attr, None)
        self.generic_visit(node)

    # ------------------------------------------------------------------
    # Definitions: no hooks, no privileged fixtures; annotations are code.

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._check_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._check_function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._check_arguments(node, node.args)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        with self._in_scope(node):
            self.visit(node.body)

    def _check_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith("pytest_"):
            self._flag(node, f"the pytest hook {node.name!r} is not allowed in a test file")
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._check_arguments(node, node.args)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        if node.returns is not None:
            self._visit_annotation(node.returns)
        with self._in_scope(node):
            for statement in node.body:
                self.visit(statement)

    def _check_arguments(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, arguments: ast.arguments
    ) -> None:
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        for argument in every:
            if argument.arg in FORBIDDEN_FIXTURES and not self._only_param(node, argument.arg):
                self._flag(node, f"the fixture {argument.arg!r} is not allowed in a test file")
            if argument.annotation is not None:
                self._visit_annotation(argument.annotation)

    def _only_param(self, node: ast.AST, name: str) -> bool:
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
        self._check_targets(node, [node.target])
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def _visit_annotation(self, annotation: ast.expr) -> None:
        """An annotation is code ``typing`` may evaluate: every string in it is checked as code."""
        root, self._annotation_root = self._annotation_root, annotation
        self.in_annotation += 1
        try:
            self._check_type_is_written_out(annotation)
            self.visit(annotation)
        finally:
            self.in_annotation -= 1
            self._annotation_root = root

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

    # ------------------------------------------------------------------
    # Assignments: no shared state, no monkeypatching.

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id in ("pytest_plugins", "pytestmark"):
                self._flag(node, f"setting {target.id!r} is not allowed in a test file")
        self._check_targets(node, node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_targets(node, [node.target])
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._check_targets(node, node.targets)
        self.generic_visit(node)

    def _check_targets(self, node: ast.AST, targets: list[ast.expr]) -> None:
        """Changing an attribute of an imported module or class is monkeypatching: refused."""
        for target in targets:
            if isinstance(target, ast.Tuple | ast.List):
                self._check_targets(node, list(target.elts))
            elif isinstance(target, ast.Starred):
                self._check_targets(node, [target.value])
            elif isinstance(target, ast.Attribute | ast.Subscript):
                root = _root_name(target)
                if root in self.imported:
                    self._flag(
                        node,
                        f"changing {root!r} (imported) is monkeypatching: tests may only call it",
                    )

    def _not_in_interface(self, name: str) -> str:
        public = ", ".join(sorted(self.interface))
        return f"{self.module}.{name} is not part of the interface: tests may use only {public}"

    def visit_Global(self, node: ast.Global) -> None:
        self._flag(node, "'global' is not allowed: tests must not share state")


class _ScopeGuard:
    """``with rules._in_scope(node):`` visits the body of ``node`` with its own names bound."""

    def __init__(self, rules: _Rules, scope: ast.AST) -> None:
        self.rules = rules
        self.scope = scope

    def __enter__(self) -> None:
        self.rules.scopes.append((self.scope, _bound_here(self.scope)))

    def __exit__(self, *exc: object) -> None:
        self.rules.scopes.pop()


_UNSEEDED = (
    "unseeded randomness is not allowed: use random.Random(SEED) with a fixed seed, or hypothesis"
)


def _private_rule(attr: str, value: ast.expr | None) -> str:
    rule = f"attribute {attr!r} is private: use only the public interface"
    if isinstance(value, ast.Name) and value.id == "self" and not attr.startswith("__"):
        rule += (
            "; on self a name with '_' is yours only in a method of a class of your own or of "
            "a hypothesis state machine (a unittest.TestCase keeps private state of its own)"
        )
    return rule


def _builtin_rule(name: str) -> str:
    if name in ADDRESS_BUILTINS:
        return (
            f"{name}() of an object is its memory address, which changes from run to run: "
            "compare values instead"
        )
    return f"{name!r} is not allowed: tests reach the tree only through its methods"


def _not_in_pytest(name: str) -> str:
    allowed = ", ".join(sorted(ALLOWED_PYTEST))
    return f"pytest.{name} is not allowed: a test must pass or fail on its own (allowed: {allowed})"


def _not_in_unittest(name: str) -> str:
    return f"unittest.{name} is not allowed: of unittest, use TestCase and its assertions"
