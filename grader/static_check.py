"""Rules a student's test file must follow, checked on its syntax tree before anything runs.

Tests earn kills only by observing behaviour through the public interface.
A test that could read the implementation's source or bytecode, the
environment, files or the process itself could tell the reference from a
mutant without testing anything; one that could patch pytest or the builtins
could change what a run reports. Those doors are closed here, each with a
message that names the line and the rule. The sandbox closes what it can a
second time at run time (see ``grader.sandbox.zygote``), but reading the code of the
module under test cannot be stopped inside the process that runs it: this
check is the layer that stops it.

The rules are an allow-list where one is possible (which modules, which
names of the module under test: the chapter's ``module`` and ``interface``)
and a deny-list of the known ways around it elsewhere: dunder names and
strings, private attributes, frames and tracebacks, code objects, dynamic
attribute access (``getattr``, ``operator.attrgetter``, ``str.format``
fields), string annotations that ``typing`` would evaluate, and unseeded
randomness.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

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
    }
)
"""Modules a test file may import besides the module under test."""

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
        "traceback",
        "code",
        "runpy",
        "weakref",
        "unittest",
        "warnings",
        "re",
        "abc",
        "reprlib",
        "keyword",
        "contextlib",
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
"""Attribute names that lead to a module outside the allow-list (``hypothesis.core.os``...)."""

INTROSPECTION_ATTRIBUTES = frozenset(
    {
        # frames, tracebacks and their text: they lead to the implementation's code
        "tb",
        "frame",
        "getrepr",
        "mro",
        # dynamic attribute access, which would get round every rule on names
        "attrgetter",
        "methodcaller",
        "format",
        "format_map",
        "Formatter",
        # evaluating strings as code
        "get_type_hints",
        "ForwardRef",
        "get_annotations",
    }
)
INTROSPECTION_PREFIXES = ("f_", "tb_", "co_", "gi_", "cr_", "ag_")
"""Attributes of frames, tracebacks, code objects, generators and coroutines."""
DYNAMIC_ACCESS_FIX = {
    "format": "str.format fields can read any attribute; use an f-string",
    "format_map": "str.format fields can read any attribute; use an f-string",
    "attrgetter": "it reads attributes named at run time; call the methods themselves",
    "methodcaller": "it calls methods named at run time; call the methods themselves",
}
"""For the rules a student may trip over without meaning harm: what to write instead."""

FORBIDDEN_CALLS = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
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
        "repr",
        "ascii",
        "help",
    }
)
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
FORBIDDEN_PYTEST = frozenset(
    {
        "skip",
        "xfail",
        "exit",
        "importorskip",
        "main",
        "console_main",
        "cmdline",
        "set_trace",
        "register_assert_rewrite",
        "MonkeyPatch",
        "Pytester",
        "Testdir",
        "TempPathFactory",
        "TempdirFactory",
        "Cache",
        "Config",
        "Session",
        "PytestPluginManager",
        "hookimpl",
        "hookspec",
    }
)
FORBIDDEN_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings"})
FORBIDDEN_SETTINGS = frozenset({"database", "derandomize", "deadline", "suppress_health_check"})


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str

    def describe(self, filename: str) -> str:
        return f"{filename} line {self.line}: {self.rule}"


def check_test_source(
    source: str, module: str, interface: frozenset[str]
) -> tuple[list[Violation], list[str]]:
    """Return the rule violations of a test file and the names of its top-level tests.

    ``module`` is the name the tests import the implementation under and
    ``interface`` its public names (the chapter's ``module`` and ``interface``).
    A file that does not parse yields one violation naming the syntax error.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [
            Violation(error.lineno or 0, f"syntax error: {error.msg}; fix it and run again")
        ], []
    visitor = _Rules(_imported_names(tree), module, interface)
    visitor.visit(tree)
    tests = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]
    return sorted(set(visitor.violations), key=lambda v: (v.line, v.rule)), tests


def _imported_names(tree: ast.Module) -> dict[str, str]:
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


class _Rules(ast.NodeVisitor):
    def __init__(self, imported: dict[str, str], module: str, interface: frozenset[str]) -> None:
        self.violations: list[Violation] = []
        self.imported = imported
        self.module = module
        self.interface = interface
        self.allowed_modules = ALLOWED_MODULES | {module}
        self.line_offset = 0

    def _flag(self, node: ast.AST, rule: str) -> None:
        line = getattr(node, "lineno", 0) + self.line_offset
        self.violations.append(Violation(line, rule))

    # ------------------------------------------------------------------
    # Imports: an allow-list of modules, and only the public names of the module under test.

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._flag(node, f"relative imports are not allowed: import {self.module} by its name")
        self._check_module(node, node.module or "")
        for alias in node.names:
            if alias.name.startswith("_") and alias.name != "annotations":
                self._flag(node, f"importing the private name {alias.name!r} is not allowed")
            elif node.module == self.module and alias.name not in self.interface:
                self._flag(node, self._not_in_interface(alias.name))
            elif node.module == "random" and alias.name != "Random":
                self._flag(node, _UNSEEDED)
            elif alias.name in MODULE_ATTRIBUTES | INTROSPECTION_ATTRIBUTES:
                self._flag(node, f"importing {alias.name!r} reaches beyond the tree's interface")
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, module: str) -> None:
        if module not in self.allowed_modules:
            allowed = ", ".join(sorted(self.allowed_modules - {"__future__"}))
            self._flag(node, f"import of {module!r} is not allowed (allowed: {allowed})")

    # ------------------------------------------------------------------
    # Attributes: nothing private, nothing that leads to the interpreter.

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        base = self.imported.get(node.value.id) if isinstance(node.value, ast.Name) else None
        if attr.startswith("_"):
            self._flag(node, f"attribute {attr!r} is private: use only the public interface")
        elif attr in MODULE_ATTRIBUTES:
            self._flag(node, f"attribute {attr!r} reaches beyond the tree's interface")
        elif attr in DYNAMIC_ACCESS_FIX:
            self._flag(node, f"attribute {attr!r} is not allowed: {DYNAMIC_ACCESS_FIX[attr]}")
        elif attr in INTROSPECTION_ATTRIBUTES or attr.startswith(INTROSPECTION_PREFIXES):
            self._flag(
                node, f"attribute {attr!r} inspects code or objects: test behaviour, not code"
            )
        elif base == self.module and attr not in self.interface:
            self._flag(node, self._not_in_interface(attr))
        elif base == "random" and attr != "Random":
            self._flag(node, _UNSEEDED)
        elif base == "pytest" and attr in FORBIDDEN_PYTEST:
            self._flag(node, f"pytest.{attr} is not allowed: a test must pass or fail on its own")
        elif (
            isinstance(node.value, ast.Attribute)
            and node.value.attr == "mark"
            and attr in FORBIDDEN_MARKS
        ):
            self._flag(node, f"the mark {attr!r} is not allowed: every test runs every time")
        self.generic_visit(node)

    # ------------------------------------------------------------------
    # Names and calls.

    def visit_Name(self, node: ast.Name) -> None:
        if node.id.startswith("__") and node.id != "__name__":
            self._flag(
                node, f"the name {node.id!r} is not allowed: it reaches into the interpreter"
            )
        elif node.id in FORBIDDEN_CALLS:
            self._flag(
                node, f"{node.id!r} is not allowed: tests reach the tree only through its methods"
            )
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        is_random = (
            isinstance(func, ast.Attribute)
            and func.attr == "Random"
            and _root_name(func) in self.imported
        ) or (isinstance(func, ast.Name) and self.imported.get(func.id) == "random.Random")
        if is_random and not node.args and not node.keywords:
            self._flag(node, _UNSEEDED)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "__" in node.value:
            self._flag(node, "strings naming dunder attributes are not allowed")
        self.generic_visit(node)

    # ------------------------------------------------------------------
    # Definitions: no hooks, no privileged fixtures, no string annotations run as code.

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._check_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._check_function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._check_arguments(node, node.args)
        self.generic_visit(node)

    def _check_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith("pytest_"):
            self._flag(node, f"the pytest hook {node.name!r} is not allowed in a test file")
        self._check_arguments(node, node.args)
        if node.returns is not None:
            self._check_annotation(node.returns)
        self.generic_visit(node)

    def _check_arguments(self, node: ast.AST, arguments: ast.arguments) -> None:
        every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        for argument in every:
            if argument.arg in FORBIDDEN_FIXTURES:
                self._flag(node, f"the fixture {argument.arg!r} is not allowed in a test file")
            if argument.annotation is not None:
                self._check_annotation(argument.annotation)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_annotation(node.annotation)
        self._check_targets(node, [node.target])
        self.generic_visit(node)

    def _check_annotation(self, annotation: ast.expr) -> None:
        """A string annotation is code that ``typing`` or hypothesis may evaluate: check it too."""
        if not (isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)):
            return
        try:
            parsed = ast.parse(annotation.value.strip(), mode="eval")
        except SyntaxError:
            self._flag(annotation, "a string annotation must be a type, written as Python")
            return
        offset = self.line_offset
        self.line_offset = offset + annotation.lineno - 1
        self.visit(parsed)
        self.line_offset = offset

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
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg in FORBIDDEN_SETTINGS:
            self._flag(
                node, f"the setting {node.arg!r} is fixed by the grader for deterministic runs"
            )
        self.generic_visit(node)


_UNSEEDED = (
    "unseeded randomness is not allowed: use random.Random(SEED) with a fixed seed, or hypothesis"
)
