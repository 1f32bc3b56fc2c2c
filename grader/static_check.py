"""Rules a student's test file must follow, checked on its syntax tree before anything runs.

Tests earn kills only by observing behaviour through the public interface.
A test that could read the implementation's source, the environment, files
or the process itself could tell the reference from a mutant without testing
anything, so those doors are closed here, each with a message that names the
line and the rule. (The sandbox closes them a second time at run time.)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

ALLOWED_MODULES = frozenset(
    {
        "radix",
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
        "internal",
        "database",
        "warnings",
        "re",
        "abc",
        "reprlib",
        "keyword",
        "contextlib",
    }
)
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
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "exit",
        "quit",
        "memoryview",
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
        "record_testsuite_property",
    }
)
FORBIDDEN_PYTEST = frozenset(
    {"skip", "xfail", "exit", "importorskip", "main", "register_assert_rewrite", "MonkeyPatch"}
)
FORBIDDEN_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings"})
FORBIDDEN_SETTINGS = frozenset({"database", "derandomize"})


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str

    def describe(self, filename: str) -> str:
        return f"{filename} line {self.line}: {self.rule}"


def check_test_source(source: str) -> tuple[list[Violation], list[str]]:
    """Return the rule violations of a test file and the names of its top-level tests.

    A file that does not parse yields one violation naming the syntax error.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [
            Violation(error.lineno or 0, f"syntax error: {error.msg}; fix it and run again")
        ], []
    visitor = _Rules()
    visitor.visit(tree)
    tests = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]
    return sorted(visitor.violations, key=lambda v: (v.line, v.rule)), tests


class _Rules(ast.NodeVisitor):
    def __init__(self) -> None:
        self.violations: list[Violation] = []

    def _flag(self, node: ast.AST, rule: str) -> None:
        self.violations.append(Violation(getattr(node, "lineno", 0), rule))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._flag(node, "relative imports are not allowed: import radix by its name")
        self._check_module(node, node.module or "")
        for alias in node.names:
            if alias.name.startswith("_") and alias.name != "annotations":
                self._flag(node, f"importing the private name {alias.name!r} is not allowed")
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, module: str) -> None:
        if module not in ALLOWED_MODULES:
            allowed = ", ".join(sorted(ALLOWED_MODULES - {"__future__"}))
            self._flag(node, f"import of {module!r} is not allowed (allowed: {allowed})")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self._flag(node, f"attribute {node.attr!r} is private: use only the public interface")
        elif node.attr in MODULE_ATTRIBUTES:
            self._flag(node, f"attribute {node.attr!r} reaches beyond the tree's interface")
        elif isinstance(node.value, ast.Name) and node.value.id == "pytest":
            if node.attr in FORBIDDEN_PYTEST:
                self._flag(
                    node, f"pytest.{node.attr} is not allowed: a test must pass or fail on its own"
                )
        elif isinstance(node.value, ast.Attribute) and node.value.attr == "mark":
            if node.attr in FORBIDDEN_MARKS:
                self._flag(
                    node, f"the mark {node.attr!r} is not allowed: every test runs every time"
                )
        self.generic_visit(node)

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

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._check_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._check_function(node)

    def _check_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith("pytest_"):
            self._flag(node, f"the pytest hook {node.name!r} is not allowed in a test file")
        for argument in node.args.args + node.args.kwonlyargs:
            if argument.arg in FORBIDDEN_FIXTURES:
                self._flag(node, f"the fixture {argument.arg!r} is not allowed in a test file")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id in ("pytest_plugins", "pytestmark"):
                self._flag(node, f"setting {target.id!r} is not allowed in a test file")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self._flag(node, "'global' is not allowed: tests must not share state")
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg in FORBIDDEN_SETTINGS:
            self._flag(
                node, f"the setting {node.arg!r} is fixed by the grader for deterministic runs"
            )
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "__" in node.value:
            self._flag(node, "strings naming dunder attributes are not allowed")
        self.generic_visit(node)
