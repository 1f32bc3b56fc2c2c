"""The layout of ``grader/`` stays true: its rules, read off every module's syntax tree.

The package is entry points (``cli/``, ``__main__``), ``commands/`` (one per
command), ``output/`` (every format), ``grading/`` (how a check grades),
``static/`` and ``course/`` (the static check, a class as a whole),
``results/`` (the frozen values commands return), ``sandbox/`` (the only code
that starts processes) and ``inputs/`` (the chapter and a submission). These
tests walk each module's imports and calls with ``ast``, so a change that breaks
a rule fails here, naming the module and what it did.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import grader

PACKAGE = Path(grader.__file__).resolve().parent
ENTRY_POINTS = frozenset({"grader.cli", "grader.__main__"})
"""The entry points; ``grader.cli`` is a package, and each of its modules is one too."""
TERMINAL = "grader.output.terminal"
PROCESS_MODULES = frozenset({"subprocess", "multiprocessing", "pty"})
PROCESS_NAMES = frozenset({"ProcessPoolExecutor"})
"""Names whose import starts processes wherever they come from (``concurrent.futures``)."""
PROCESS_FUNCTIONS = re.compile(r"(fork|forkpty|spawn\w*|exec\w*|posix_spawnp?|system|popen)")
"""Functions of ``os`` that start a process or replace this one."""


@dataclass(frozen=True)
class Module:
    name: str
    tree: ast.Module

    def within(self, package: str) -> bool:
        return self.name == package or self.name.startswith(f"{package}.")

    def imports(self) -> Iterator[tuple[ast.stmt, str, str | None]]:
        """Every import anywhere in the module (functions and ``TYPE_CHECKING`` blocks too)
        as (statement, module, name): ``import a.b`` gives ("a.b", None), ``from a import b``
        gives ("a", "b")."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield node, alias.name, None
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node)
                for alias in node.names:
                    yield node, base, alias.name

    def imported_modules(self) -> Iterator[tuple[ast.stmt, str]]:
        """Each module an import names, ``from a import b`` naming both ``a`` and ``a.b``."""
        for node, module, name in self.imports():
            yield node, module
            if name is not None:
                yield node, f"{module}.{name}"

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.name.split(".")
        is_package = parts[-1] == "__init__"
        base = parts[: len(parts) - node.level + (1 if is_package else 0)]
        return ".".join([*base, *([node.module] if node.module else [])])


def package_modules() -> list[Module]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.append(Module(name, tree))
    return found


MODULES = package_modules()


def where(module: Module, node: ast.AST) -> str:
    return f"{module.name} line {getattr(node, 'lineno', '?')}"


def is_under(imported: str, package: str) -> bool:
    return imported == package or imported.startswith(f"{package}.")


def is_entry_point(name: str) -> bool:
    """Whether the module ``name`` is an entry point (any module of ``grader/cli/``)."""
    return name in ENTRY_POINTS or is_under(name, "grader.cli")


def test_the_walk_sees_the_whole_package() -> None:
    """The rules below mean something only if the walk finds every part of the layout."""
    names = {module.name for module in MODULES}
    assert ENTRY_POINTS | {TERMINAL, "grader.commands.check", "grader.sandbox.host.pool"} <= names
    assert {"grader.cli.parser", "grader.cli.handlers", "grader.cli.progress"} <= names
    assert {"grader.commands", "grader.sandbox", "grader.output", "grader.results"} <= names
    assert {REAPER, PROCFS, LIBC, PROTOCOL, *SANDBOX_SIDES} <= names
    assert {"grader.sandbox.untrusted.recorder", "grader.sandbox.worker.server"} <= names


def terminal_outside_entry_points(modules: list[Module]) -> list[str]:
    """Commands and outputs never draw on a terminal: only an entry point imports
    ``grader.output.terminal``, and only those and the terminal module import rich."""
    broken = []
    for module in modules:
        if is_entry_point(module.name):
            continue
        for node, imported in module.imported_modules():
            if imported == TERMINAL or (is_under(imported, "rich") and module.name != TERMINAL):
                broken.append(f"{where(module, node)} imports {imported}")
    return broken


def processes_outside_the_sandbox(modules: list[Module]) -> list[str]:
    """Outside ``grader/sandbox/`` nothing imports subprocess, multiprocessing, pty or a
    process pool, nor touches ``os.fork``, ``os.spawn*``, ``os.exec*``, ``os.posix_spawn``,
    ``os.system`` or ``os.popen``."""
    broken = []
    for module in modules:
        if module.within("grader.sandbox"):
            continue
        for statement, imported, name in module.imports():
            if imported.split(".")[0] in PROCESS_MODULES or name in PROCESS_NAMES:
                broken.append(f"{where(module, statement)} imports {name or imported}")
            if imported == "os" and name is not None and PROCESS_FUNCTIONS.fullmatch(name):
                broken.append(f"{where(module, statement)} imports os.{name}")
        for node in ast.walk(module.tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
                and PROCESS_FUNCTIONS.fullmatch(node.attr)
            ):
                broken.append(f"{where(module, node)} uses os.{node.attr}")
    return broken


def entry_points_imported(modules: list[Module]) -> list[str]:
    """Entry points sit on top: no command, output, sandbox or library module imports one
    (``__main__`` runs ``cli``, itself an entry point)."""
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if not is_entry_point(module.name)
        for node, imported in module.imported_modules()
        if is_entry_point(imported)
    ]


def commands_imported_below(modules: list[Module]) -> list[str]:
    """Commands sit just under the entry points: no library, result, output or sandbox
    module imports one, not even a type (results live in ``grader/results/``)."""
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if not is_entry_point(module.name) and not module.within("grader.commands")
        for node, imported in module.imported_modules()
        if is_under(imported, "grader.commands")
    ]


def results_importing_upwards(modules: list[Module]) -> list[str]:
    """Results are values: ``grader/results/`` imports no command, output or entry point,
    nor the grading library that makes them (``grader.grading``)."""
    above = ("grader.commands", "grader.output", "grader.grading")
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if module.within("grader.results")
        for node, imported in module.imported_modules()
        if any(is_under(imported, package) for package in above) or is_entry_point(imported)
    ]


def result_fields_undocumented(modules: list[Module]) -> list[str]:
    """Every field of a result type in ``grader/results/`` has a docstring under it, so a
    reader of a report finds what each value means in one place."""
    broken = []
    for module in modules:
        if not module.within("grader.results"):
            continue
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.ClassDef):
                continue
            body = node.body
            for index, statement in enumerate(body):
                if not isinstance(statement, ast.AnnAssign):
                    continue
                after = body[index + 1] if index + 1 < len(body) else None
                documented = (
                    isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                )
                if not documented:
                    field = ast.unparse(statement.target)
                    broken.append(
                        f"{where(module, statement)} {node.name}.{field} has no docstring"
                    )
    return broken


def sandbox_importing_upwards(modules: list[Module]) -> list[str]:
    """The sandbox runs the jobs it is handed: it imports no command, output or entry point."""
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if module.within("grader.sandbox")
        for node, imported in module.imported_modules()
        if is_under(imported, "grader.commands")
        or is_under(imported, "grader.output")
        or is_entry_point(imported)
    ]


def commands_drawing_or_mutable(modules: list[Module]) -> list[str]:
    """Commands leave drawing to the entry points (no ``print``, no ``sys.stdout`` or
    ``sys.stderr``) and every dataclass they define is frozen."""
    broken = []
    for module in modules:
        if not module.within("grader.commands"):
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id == "print":
                    broken.append(f"{where(module, node)} calls print")
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
                and node.attr in ("stdout", "stderr")
            ):
                broken.append(f"{where(module, node)} uses sys.{node.attr}")
            elif isinstance(node, ast.ClassDef) and not _frozen_or_plain(node):
                broken.append(f"{where(module, node)} defines {node.name}, a dataclass not frozen")
    return broken


def _frozen_or_plain(node: ast.ClassDef) -> bool:
    """A class that is no dataclass, or a dataclass with ``frozen=True``."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ast.unparse(target).rpartition(".")[2] != "dataclass":
            continue
        return isinstance(decorator, ast.Call) and any(
            keyword.arg == "frozen"
            and isinstance(keyword.value, ast.Constant)
            and keyword.value.value is True
            for keyword in decorator.keywords
        )
    return True


def content_hashes_outside_provenance(modules: list[Module]) -> list[str]:
    """One home for the digests a result is keyed by: only ``grader.inputs.provenance`` imports
    ``hashlib``, so a regrade cache, a merge and a replay all hash the same way."""
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if module.name != "grader.inputs.provenance"
        for node, imported, _ in module.imports()
        if imported == "hashlib"
    ]


def _os_or_signal_names(module: Module) -> Iterator[tuple[ast.AST, str]]:
    """Every ``os.NAME`` and ``signal.NAME`` the module uses or imports, as "os.NAME"."""
    for statement, imported, name in module.imports():
        if imported in ("os", "signal") and name is not None:
            yield statement, f"{imported}.{name}"
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("os", "signal")
        ):
            yield node, f"{node.value.id}.{node.attr}"


SIGNALS_AND_WAITS = frozenset(
    {
        *("os.kill", "os.killpg", "signal.pidfd_send_signal", "signal.pthread_kill"),
        *("os.wait", "os.waitpid", "os.waitid", "os.wait3", "os.wait4"),
    }
)
"""The calls that send a signal to another process or collect one's exit."""
PROTOCOL = "grader.sandbox.protocol"
UNTRUSTED = "grader.sandbox.untrusted"
SANDBOX_SIDES = ("grader.sandbox.host", "grader.sandbox.worker", UNTRUSTED)
"""The sandbox's folders by the process their code runs in: the grader, the warm worker, and
a confined run (beside the untrusted code)."""
UNTRUSTED_MAY_IMPORT = frozenset({"__future__", "pytest", PROTOCOL})
"""Beyond the standard library: what code loaded inside a run may import (pytest for the
recorder, which is a pytest plugin)."""
REAPER = "grader.sandbox.reaper"
PROCFS = "grader.sandbox.procfs"
LIBC = "grader.sandbox.libc"


def signals_outside_the_reaper(modules: list[Module]) -> list[str]:
    """One home for killing and reaping: only ``grader.sandbox.reaper`` sends a signal to a
    process or waits for one (``os.kill``, ``os.killpg``, ``signal.pidfd_send_signal``,
    ``os.waitpid`` and the other waits), so "what can kill a process?" is one file."""
    return [
        f"{where(module, node)} uses {name}"
        for module in modules
        if module.name != REAPER
        for node, name in _os_or_signal_names(module)
        if name in SIGNALS_AND_WAITS
    ]


def proc_outside_procfs(modules: list[Module]) -> list[str]:
    """One reader of ``/proc``: no module but ``grader.sandbox.procfs`` names a path under it
    (a string, or part of an f-string, starting ``/proc``), so every scan has one parser."""
    return [
        f"{where(module, node)} names a /proc path"
        for module in modules
        if module.name != PROCFS
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str | bytes)
        and node.value[:5] in ("/proc", b"/proc")
    ]


def ctypes_outside_libc(modules: list[Module]) -> list[str]:
    """One module talks to the C library: only ``grader.sandbox.libc`` imports ``ctypes``."""
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if module.name != LIBC
        for node, imported in module.imported_modules()
        if is_under(imported, "ctypes")
    ]


def untrusted_importing_beyond_protocol(modules: list[Module]) -> list[str]:
    """Code loaded inside a confined run (``grader/sandbox/untrusted/``) imports only
    ``protocol``, the standard library and pytest: nothing of the grader that a student's
    code, sharing the process, could reach or that a run at ``uid`` could not import."""
    broken = []
    for module in modules:
        if not module.within(UNTRUSTED):
            continue
        for node, imported, name in module.imports():
            whole = f"{imported}.{name}" if name and imported == "grader.sandbox" else imported
            if whole.split(".")[0] in sys.stdlib_module_names or whole in UNTRUSTED_MAY_IMPORT:
                continue
            broken.append(f"{where(module, node)} imports {whole}")
    return broken


def host_importing_untrusted(modules: list[Module]) -> list[str]:
    """The grader's side (``grader/sandbox/host/``) never imports ``untrusted/`` nor the
    worker that loads it: the grader's process never holds the code a run is confined to."""
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if module.within("grader.sandbox.host")
        for node, imported in module.imported_modules()
        if is_under(imported, UNTRUSTED) or is_under(imported, "grader.sandbox.worker")
    ]


WRITER = "grader.output.files"
NOT_REPORTS = {
    "grader.grading.result_cache": "the grader's own cache of phase results",
    "grader.inputs.submission": "``grader start`` lays the stub out in the student's folder",
    "grader.commands.release": "builds an edition's wheel",
    "grader.grading.mutmut_driver": "lays out mutmut's scratch folder",
    "grader.commands.audit": "mutmut's scratch folder, removed after the audit",
}
"""Modules that write files that are no report, and what they write."""
WRITE_CALLS = frozenset(
    {"write_text", "write_bytes", "mkstemp", "NamedTemporaryFile", "fdopen", "replace",
     "rename", "copy", "copy2", "copyfile", "copytree", "move", "rmtree"}
)  # fmt: skip
"""Calls that write, replace, copy or remove a file (``str.replace`` aside: see below)."""


def writes_outside_the_writer(modules: list[Module]) -> list[str]:
    """Only the writer writes report files: outside ``grader.output.files`` (and the sandbox,
    and ``NOT_REPORTS``) no module opens a file to write or append, nor writes, replaces,
    copies or removes one itself; it hands the writer a result or a text."""
    broken = []
    for module in modules:
        if module.name == WRITER or module.name in NOT_REPORTS or module.within("grader.sandbox"):
            continue
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            name = node.func.id if isinstance(node.func, ast.Name) else name
            owner = node.func.value if isinstance(node.func, ast.Attribute) else None
            owner_name = owner.id if isinstance(owner, ast.Name) else ""
            if name in ("replace", "rename") and owner_name != "os":
                continue  # str.replace, dataclasses.replace
            if name in ("copy", "move") and owner_name != "shutil":
                continue  # dict.copy
            if name in WRITE_CALLS or (name == "open" and _writing_mode(node)):
                broken.append(f"{where(module, node)} calls {name}")
    return broken


def _writing_mode(call: ast.Call) -> bool:
    """Whether an ``open`` call's literal mode (``open(path, MODE)``, ``path.open(MODE)`` or
    ``mode=MODE``) writes, appends or creates."""
    place = 1 if isinstance(call.func, ast.Name) else 0
    modes = [*call.args[place : place + 1], *(k.value for k in call.keywords if k.arg == "mode")]
    return any(
        isinstance(mode, ast.Constant)
        and isinstance(mode.value, str)
        and bool(set(mode.value) & set("wax+"))
        for mode in modes
    )


LONGEST_FUNCTION = 60
"""The most lines a function of ``grader/`` may span, decorators and docstring included."""


def functions_too_long(modules: list[Module]) -> list[str]:
    """No function in ``grader/`` spans more than ``LONGEST_FUNCTION`` lines: one that does
    is doing more than one job."""
    broken = []
    for module in modules:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > LONGEST_FUNCTION:
                    broken.append(f"{where(module, node)} {node.name} spans {length} lines")
    return broken


RULES = {
    rule.__name__: rule
    for rule in (
        untrusted_importing_beyond_protocol,
        host_importing_untrusted,
        signals_outside_the_reaper,
        proc_outside_procfs,
        ctypes_outside_libc,
        content_hashes_outside_provenance,
        writes_outside_the_writer,
        functions_too_long,
        terminal_outside_entry_points,
        processes_outside_the_sandbox,
        entry_points_imported,
        commands_imported_below,
        results_importing_upwards,
        result_fields_undocumented,
        sandbox_importing_upwards,
        commands_drawing_or_mutable,
    )
}

BREAKING = [
    ("functions_too_long", "grader.x", "def f():\n" + "    pass\n" * LONGEST_FUNCTION),
    ("writes_outside_the_writer", "grader.commands.x", "path.write_text('report')"),
    ("writes_outside_the_writer", "grader.cli", "open(path, 'w').write(text)"),
    ("writes_outside_the_writer", "grader.output.junit", "path.open(mode='a')"),
    ("writes_outside_the_writer", "grader.output.html", "Path('x.txt').open('w')"),
    ("writes_outside_the_writer", "grader.course.gradebook", "os.replace(partial, path)"),
    ("writes_outside_the_writer", "grader.commands.batch", "shutil.rmtree(copy)"),
    ("content_hashes_outside_provenance", "grader.commands.x", "import hashlib"),
    ("content_hashes_outside_provenance", "grader.output.x", "from hashlib import sha256"),
    ("terminal_outside_entry_points", "grader.commands.x", "from grader.output import terminal"),
    ("terminal_outside_entry_points", "grader.output.junit", "from rich.console import Console"),
    ("processes_outside_the_sandbox", "grader.commands.x", "import subprocess"),
    ("processes_outside_the_sandbox", "grader.output.x", "import multiprocessing.pool"),
    ("processes_outside_the_sandbox", "grader.grading.grade", "from os import posix_spawn"),
    ("processes_outside_the_sandbox", "grader.commands.x", "def f():\n    os.execv('a', [])"),
    (
        "processes_outside_the_sandbox",
        "grader.x",
        "from concurrent.futures import ProcessPoolExecutor",
    ),
    ("entry_points_imported", "grader.commands.x", "from grader import cli"),
    ("entry_points_imported", "grader.output.x", "from grader.cli.autograder import main"),
    ("entry_points_imported", "grader.commands.x", "from grader.cli.handlers import cmd_check"),
    ("commands_imported_below", "grader.output.x", "from grader.commands.check import check"),
    ("commands_imported_below", "grader.output.x", "import grader.commands.batch"),
    (
        "commands_imported_below",
        "grader.grading.grade",
        "from grader.commands.check import CheckReport",
    ),
    ("commands_imported_below", "grader.sandbox.x", "from grader import commands"),
    ("results_importing_upwards", "grader.results.x", "from grader.commands import check"),
    (
        "results_importing_upwards",
        "grader.results.x",
        "from grader.grading.wording import too_slow",
    ),
    ("results_importing_upwards", "grader.results.x", "from grader.grading.jobs import Limits"),
    (
        "result_fields_undocumented",
        "grader.results.x",
        '@dataclass(frozen=True)\nclass Result:\n    a: int\n    b: int\n    """Documented."""',
    ),
    (
        "sandbox_importing_upwards",
        "grader.sandbox.x",
        "from grader.output.files import ReportFiles",
    ),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "from grader.sandbox import confine"),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "import grader.inputs.catalog"),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "import hypothesis.strategies"),
    (
        "host_importing_untrusted",
        "grader.sandbox.host.x",
        "from grader.sandbox.untrusted import proxy",
    ),
    ("host_importing_untrusted", "grader.sandbox.host.x", "import grader.sandbox.worker.child"),
    ("signals_outside_the_reaper", "grader.sandbox.x", "os.killpg(pid, 9)"),
    ("signals_outside_the_reaper", "grader.sandbox.x", "from os import waitpid"),
    ("signals_outside_the_reaper", "grader.x", "signal.pidfd_send_signal(fd, 9)"),
    ("proc_outside_procfs", "grader.sandbox.x", "open('/proc/self/status')"),
    ("proc_outside_procfs", "grader.sandbox.x", "Path(f'/proc/{pid}/stat')"),
    ("ctypes_outside_libc", "grader.sandbox.x", "import ctypes"),
    ("ctypes_outside_libc", "grader.sandbox.x", "from ctypes import CDLL"),
    ("commands_drawing_or_mutable", "grader.commands.x", "print('done')"),
    ("commands_drawing_or_mutable", "grader.commands.x", "sys.stderr.write('done')"),
    ("commands_drawing_or_mutable", "grader.commands.x", "@dataclass\nclass Result:\n    a: int"),
]


KEPT = [
    (
        "untrusted_importing_beyond_protocol",
        UNTRUSTED + ".x",
        "from grader.sandbox import protocol",
    ),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "import os\nimport pytest"),
    ("host_importing_untrusted", "grader.sandbox.host.x", "from grader.sandbox import protocol"),
    ("signals_outside_the_reaper", "grader.sandbox.x", "signal.signal(signal.SIGINT, f)"),
    ("proc_outside_procfs", "grader.sandbox.x", "path = procfs.ROOT"),
]
"""Lines close to a forbidden one that a rule must let through."""


@pytest.mark.parametrize(("rule", "name", "source"), KEPT)
def test_each_rule_lets_through_what_it_allows(rule: str, name: str, source: str) -> None:
    assert RULES[rule]([Module(name, ast.parse(source))]) == []


@pytest.mark.parametrize("rule", RULES)
def test_the_package_keeps_the_rule(rule: str) -> None:
    assert RULES[rule](MODULES) == []


@pytest.mark.parametrize(("rule", "name", "source"), BREAKING)
def test_each_rule_catches_what_it_forbids(rule: str, name: str, source: str) -> None:
    """A module planted with one forbidden line is named by the rule it breaks."""
    planted = Module(name, ast.parse(source))
    found = RULES[rule]([planted])
    assert found and {line.partition(" line ")[0] for line in found} == {name}


@pytest.mark.parametrize(
    "package",
    ["grader.commands", "grader.output", "grader.results", "grader.sandbox", *SANDBOX_SIDES],
)
def test_each_folder_says_what_lives_there(package: str) -> None:
    """``commands/``, ``sandbox/`` and ``output/`` each open with a paragraph on their part."""
    module = next(module for module in MODULES if module.name == package)
    assert len(ast.get_docstring(module.tree) or "") > 80
