"""The layout of ``grader/`` stays true: its rules, read off every module's syntax tree.

The package is entry points (``cli``, ``autograder``, ``__main__``), the
library they share, ``commands/`` (one per command, returning frozen results),
``sandbox/`` (the only code that starts processes) and ``output/`` (every
format). These tests walk each module's imports and calls with ``ast``, so a
change that breaks a rule fails here, naming the module and what it did.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import grader

PACKAGE = Path(grader.__file__).resolve().parent
ENTRY_POINTS = frozenset({"grader.cli", "grader.autograder", "grader.__main__"})
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


def test_the_walk_sees_the_whole_package() -> None:
    """The rules below mean something only if the walk finds every part of the layout."""
    names = {module.name for module in MODULES}
    assert ENTRY_POINTS | {TERMINAL, "grader.commands.check", "grader.sandbox.host.pool"} <= names
    assert {"grader.commands", "grader.sandbox", "grader.output"} <= names
    assert {REAPER, PROCFS, LIBC, PROTOCOL, *SANDBOX_SIDES} <= names
    assert {"grader.sandbox.untrusted.recorder", "grader.sandbox.worker.server"} <= names


def terminal_outside_entry_points(modules: list[Module]) -> list[str]:
    """Commands and outputs never draw on a terminal: only an entry point imports
    ``grader.output.terminal``, and only those and the terminal module import rich."""
    broken = []
    for module in modules:
        if module.name in ENTRY_POINTS:
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
        if module.name not in ENTRY_POINTS
        for node, imported in module.imported_modules()
        if imported in ENTRY_POINTS
    ]


def output_running_commands(modules: list[Module]) -> list[str]:
    """An output draws a result; it never runs a command. What ``grader/output/`` imports
    from ``grader/commands/`` is result types and constants: no function, no module."""
    broken = []
    for module in modules:
        if not module.within("grader.output"):
            continue
        for node, imported, name in module.imports():
            if not is_under(imported, "grader.commands"):
                continue
            value = getattr(importlib.import_module(imported), name) if name else None
            if value is None or inspect.ismodule(value) or inspect.isroutine(value):
                broken.append(f"{where(module, node)} imports {imported}.{name or ''}")
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
        or imported in ENTRY_POINTS
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
    """One home for the digests a result is keyed by: only ``grader.provenance`` imports
    ``hashlib``, so a regrade cache, a merge and a replay all hash the same way."""
    return [
        f"{where(module, node)} imports {imported}"
        for module in modules
        if module.name != "grader.provenance"
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


RULES = {
    rule.__name__: rule
    for rule in (
        untrusted_importing_beyond_protocol,
        host_importing_untrusted,
        signals_outside_the_reaper,
        proc_outside_procfs,
        ctypes_outside_libc,
        content_hashes_outside_provenance,
        terminal_outside_entry_points,
        processes_outside_the_sandbox,
        entry_points_imported,
        output_running_commands,
        sandbox_importing_upwards,
        commands_drawing_or_mutable,
    )
}

BREAKING = [
    ("content_hashes_outside_provenance", "grader.commands.x", "import hashlib"),
    ("content_hashes_outside_provenance", "grader.output.x", "from hashlib import sha256"),
    ("terminal_outside_entry_points", "grader.commands.x", "from grader.output import terminal"),
    ("terminal_outside_entry_points", "grader.output.junit", "from rich.console import Console"),
    ("processes_outside_the_sandbox", "grader.commands.x", "import subprocess"),
    ("processes_outside_the_sandbox", "grader.output.x", "import multiprocessing.pool"),
    ("processes_outside_the_sandbox", "grader.grade", "from os import posix_spawn"),
    ("processes_outside_the_sandbox", "grader.commands.x", "def f():\n    os.execv('a', [])"),
    (
        "processes_outside_the_sandbox",
        "grader.x",
        "from concurrent.futures import ProcessPoolExecutor",
    ),
    ("entry_points_imported", "grader.commands.x", "from grader import cli"),
    ("entry_points_imported", "grader.output.x", "from grader.autograder import main"),
    ("output_running_commands", "grader.output.x", "from grader.commands.check import check"),
    ("output_running_commands", "grader.output.x", "import grader.commands.batch"),
    (
        "sandbox_importing_upwards",
        "grader.sandbox.x",
        "from grader.output.files import ReportFiles",
    ),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "from grader.sandbox import confine"),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "import grader.catalog"),
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
    "package", ["grader.commands", "grader.output", "grader.sandbox", *SANDBOX_SIDES]
)
def test_each_folder_says_what_lives_there(package: str) -> None:
    """``commands/``, ``sandbox/`` and ``output/`` each open with a paragraph on their part."""
    module = next(module for module in MODULES if module.name == package)
    assert len(ast.get_docstring(module.tree) or "") > 80
