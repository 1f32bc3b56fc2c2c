"""The layout of ``grader/`` stays true: the rules no import graph can state.

The package is entry points (``cli/``, ``__main__``), ``commands/`` (one per
command), ``output/`` (every format), ``course/`` (a class as a whole),
``grading/`` (how a check grades), ``static/`` (the static check), ``results/``
(the frozen values commands return), ``sandbox/`` (the only code that starts
processes) and ``inputs/`` (the chapter and a submission). Which layer imports
which is import-linter's to hold (the contracts in ``pyproject.toml``, run by
``tools/lint``); these tests run those contracts on the package and on a planted
import that breaks each one. The rest (who signals, reads ``/proc``, starts
processes or writes files, how long a function or module is, frozen and
documented results) these tests read off every module's syntax tree with
``ast``, so a change that breaks a rule fails here, naming the module and what
it did.
"""

from __future__ import annotations

import ast
import copy
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grimp
import pytest
from importlinter import Contract
from importlinter.api import read_configuration
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract
from importlinter.contracts.protected import ProtectedContract

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
    lines: int
    """The file's length in lines."""

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
        text = path.read_text(encoding="utf-8")
        found.append(Module(name, ast.parse(text, filename=str(path)), len(text.splitlines())))
    return found


def planted(name: str, source: str) -> Module:
    """A module named ``name`` holding ``source``, planted to show a rule catches it."""
    return Module(name, ast.parse(source), len(source.splitlines()))


MODULES = package_modules()


def where(module: Module, node: ast.AST) -> str:
    return f"{module.name} line {getattr(node, 'lineno', '?')}"


def test_the_walk_sees_the_whole_package() -> None:
    """The rules below mean something only if the walk finds every part of the layout."""
    names = {module.name for module in MODULES}
    assert ENTRY_POINTS | {TERMINAL, "grader.commands.check", "grader.sandbox.host.pool"} <= names
    assert {"grader.cli.parser", "grader.cli.handlers", "grader.cli.progress"} <= names
    assert {"grader.commands", "grader.sandbox", "grader.output", "grader.results"} <= names
    assert {REAPER, PROCFS, LIBC, PROTOCOL, *SANDBOX_SIDES} <= names
    assert {"grader.sandbox.untrusted.recorder", "grader.sandbox.worker.server"} <= names


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


def results_not_frozen(modules: list[Module]) -> list[str]:
    """Results are values: every dataclass of ``grader/results/`` is frozen, so a renderer
    cannot change what the command found."""
    return [
        f"{where(module, node)} defines {node.name}, a dataclass not frozen"
        for module in modules
        if module.within("grader.results")
        for node in ast.walk(module.tree)
        if isinstance(node, ast.ClassDef) and not _frozen_or_plain(node)
    ]


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
            if any(whole == p or whole.startswith(f"{p}.") for p in (PROTOCOL, UNTRUSTED)):
                continue
            broken.append(f"{where(module, node)} imports {whole}")
    return broken


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


LONGEST_MODULE = 450
"""The most lines a module of ``grader/`` may have."""
LONG_MODULES = {
    "grader.output.terminal": "issue 37: being split by command",
}
"""Modules still over ``LONGEST_MODULE`` while issue 37 splits them, and the change that
does: the list only shrinks (``test_the_long_modules_are_still_long``)."""


def modules_too_long(modules: list[Module]) -> list[str]:
    """No module of ``grader/`` but those of ``LONG_MODULES`` has more than ``LONGEST_MODULE``
    lines: one that does holds more than one job."""
    return [
        f"{module.name} line {module.lines} is past {LONGEST_MODULE} lines"
        for module in modules
        if module.lines > LONGEST_MODULE and module.name not in LONG_MODULES
    ]


def test_the_long_modules_are_still_long() -> None:
    """An entry of ``LONG_MODULES`` goes once its module is split: each still names a module
    over the limit."""
    lines = {module.name: module.lines for module in MODULES}
    assert {name for name in LONG_MODULES if lines.get(name, 0) <= LONGEST_MODULE} == set()


RULES = {
    rule.__name__: rule
    for rule in (
        untrusted_importing_beyond_protocol,
        signals_outside_the_reaper,
        proc_outside_procfs,
        writes_outside_the_writer,
        functions_too_long,
        modules_too_long,
        processes_outside_the_sandbox,
        result_fields_undocumented,
        commands_drawing_or_mutable,
        results_not_frozen,
    )
}

BREAKING = [
    ("functions_too_long", "grader.x", "def f():\n" + "    pass\n" * LONGEST_FUNCTION),
    ("modules_too_long", "grader.x", "x = 1\n" * (LONGEST_MODULE + 1)),
    ("writes_outside_the_writer", "grader.commands.x", "path.write_text('report')"),
    ("writes_outside_the_writer", "grader.cli", "open(path, 'w').write(text)"),
    ("writes_outside_the_writer", "grader.output.junit", "path.open(mode='a')"),
    ("writes_outside_the_writer", "grader.output.html", "Path('x.txt').open('w')"),
    ("writes_outside_the_writer", "grader.course.gradebook", "os.replace(partial, path)"),
    ("writes_outside_the_writer", "grader.commands.batch", "shutil.rmtree(copy)"),
    ("processes_outside_the_sandbox", "grader.commands.x", "import subprocess"),
    ("processes_outside_the_sandbox", "grader.output.x", "import multiprocessing.pool"),
    ("processes_outside_the_sandbox", "grader.grading.grade", "from os import posix_spawn"),
    ("processes_outside_the_sandbox", "grader.commands.x", "def f():\n    os.execv('a', [])"),
    (
        "processes_outside_the_sandbox",
        "grader.x",
        "from concurrent.futures import ProcessPoolExecutor",
    ),
    (
        "result_fields_undocumented",
        "grader.results.x",
        '@dataclass(frozen=True)\nclass Result:\n    a: int\n    b: int\n    """Documented."""',
    ),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "from grader.sandbox import confine"),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "import grader.inputs.catalog"),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "import hypothesis.strategies"),
    ("signals_outside_the_reaper", "grader.sandbox.x", "os.killpg(pid, 9)"),
    ("signals_outside_the_reaper", "grader.sandbox.x", "from os import waitpid"),
    ("signals_outside_the_reaper", "grader.x", "signal.pidfd_send_signal(fd, 9)"),
    ("proc_outside_procfs", "grader.sandbox.x", "open('/proc/self/status')"),
    ("proc_outside_procfs", "grader.sandbox.x", "Path(f'/proc/{pid}/stat')"),
    ("commands_drawing_or_mutable", "grader.commands.x", "print('done')"),
    ("commands_drawing_or_mutable", "grader.commands.x", "sys.stderr.write('done')"),
    ("commands_drawing_or_mutable", "grader.commands.x", "@dataclass\nclass Result:\n    a: int"),
    (
        "results_not_frozen",
        "grader.results.x",
        '@dataclass\nclass Result:\n    a: int\n    """Documented."""',
    ),
]


KEPT = [
    (
        "untrusted_importing_beyond_protocol",
        UNTRUSTED + ".x",
        "from grader.sandbox import protocol",
    ),
    ("untrusted_importing_beyond_protocol", UNTRUSTED + ".x", "import os\nimport pytest"),
    (
        "untrusted_importing_beyond_protocol",
        UNTRUSTED + ".x",
        "from grader.sandbox.protocol.calls import Hang\n"
        "from grader.sandbox.untrusted import bound",
    ),
    ("signals_outside_the_reaper", "grader.sandbox.x", "signal.signal(signal.SIGINT, f)"),
    ("proc_outside_procfs", "grader.sandbox.x", "path = procfs.ROOT"),
]
"""Lines close to a forbidden one that a rule must let through."""


@pytest.mark.parametrize(("rule", "name", "source"), KEPT)
def test_each_rule_lets_through_what_it_allows(rule: str, name: str, source: str) -> None:
    assert RULES[rule]([planted(name, source)]) == []


@pytest.mark.parametrize("rule", RULES)
def test_the_package_keeps_the_rule(rule: str) -> None:
    assert RULES[rule](MODULES) == []


@pytest.mark.parametrize(("rule", "name", "source"), BREAKING)
def test_each_rule_catches_what_it_forbids(rule: str, name: str, source: str) -> None:
    """A module planted with one forbidden line is named by the rule it breaks."""
    found = RULES[rule]([planted(name, source)])
    assert found and {line.partition(" line ")[0] for line in found} == {name}


@pytest.mark.parametrize(
    "package",
    ["grader.commands", "grader.output", "grader.results", "grader.sandbox", *SANDBOX_SIDES],
)
def test_each_folder_says_what_lives_there(package: str) -> None:
    """``commands/``, ``sandbox/`` and ``output/`` each open with a paragraph on their part."""
    module = next(module for module in MODULES if module.name == package)
    assert len(ast.get_docstring(module.tree) or "") > 80


# ----------------------------------------------------------------------
# The import contracts (pyproject.toml), run by import-linter as tools/lint runs them.

CONFIGURATION = read_configuration(str(PACKAGE.parent / "pyproject.toml"))
CONTRACTS = {options["id"]: options for options in CONFIGURATION["contracts_options"]}
KINDS: dict[str, type[Contract]] = {
    "layers": LayersContract,
    "forbidden": ForbiddenContract,
    "protected": ProtectedContract,
}
GRAPH = grimp.build_graph("grader", include_external_packages=True, cache_dir=None)
"""The package's import graph, as lint-imports builds it."""


def contract_kept(contract: str, planted_imports: tuple[tuple[str, str], ...] = ()) -> bool:
    """Whether the contract ``contract`` holds on the package with ``planted_imports`` (each
    an importer and the module it imports, either of them new) added to it."""
    options = CONTRACTS[contract]
    graph = copy.deepcopy(GRAPH)
    for importer, imported in planted_imports:
        graph.add_import(importer=importer, imported=imported)
    kind = KINDS[options["type"]]
    checker = kind(options["name"], CONFIGURATION["session_options"], options)
    return checker.check(graph, verbose=False).kept


def test_the_contracts_are_the_ones_tools_lint_runs() -> None:
    lint = (PACKAGE.parent / "tools" / "lint").read_text(encoding="utf-8")
    assert "lint-imports" in lint.split()
    assert set(CONTRACTS) == {"layers", "output", "results", "host", "terminal", "libc", "hashes"}


@pytest.mark.parametrize("contract", CONTRACTS)
def test_the_package_keeps_the_contract(contract: str) -> None:
    assert contract_kept(contract)


CONTRACT_BREAKING: list[tuple[str, tuple[tuple[str, str], ...]]] = [
    ("layers", (("grader.commands.x", "grader.cli"),)),
    ("layers", (("grader.output.x", "grader.cli.autograder"),)),
    ("layers", (("grader.output.x", "grader.commands.check"),)),
    ("layers", (("grader.grading.grade", "grader.commands.check"),)),
    ("layers", (("grader.sandbox.x", "grader.commands"),)),
    ("layers", (("grader.results.x", "grader.grading.wording"),)),
    ("layers", (("grader.results.x", "grader.grading.jobs"),)),
    ("layers", (("grader.sandbox.x", "grader.output.files"),)),
    ("layers", (("grader.grading.x", "grader.course.roster"),)),
    ("layers", (("grader.inputs.x", "grader.static.checker"),)),
    ("layers", (("grader.planted", "grader.errors"),)),  # a top-level module in no layer
    ("output", (("grader.output.x", "grader.grading.grade"),)),
    ("output", (("grader.output.x", "grader.inputs.patching"),)),
    ("output", (("grader.output.x", "grader.static.checker"),)),
    ("output", (("grader.output.x", "grader.sandbox.protocol.calls"),)),
    ("output", (("grader.output.x", "grader.sandbox.host.result"),)),
    ("output", (("grader.output.x", "grader.course.similarity"),)),
    ("results", (("grader.results.x", "grader.sandbox.host.pool"),)),
    ("results", (("grader.results.x", "grader.sandbox.confine"),)),
    (
        "results",
        (("grader.results.x", "grader.inputs.x"), ("grader.inputs.x", "grader.sandbox.reaper")),
    ),
    ("host", (("grader.sandbox.host.x", "grader.sandbox.untrusted.proxy"),)),
    ("host", (("grader.sandbox.host.x", "grader.sandbox.worker.child"),)),
    ("terminal", (("grader.commands.x", "grader.output.terminal"),)),
    ("terminal", (("grader.output.junit", "rich"),)),
    ("libc", (("grader.sandbox.x", "ctypes"),)),
    ("hashes", (("grader.commands.x", "hashlib"),)),
    ("hashes", (("grader.output.x", "hashlib"),)),
]
"""A planted import (or chain of them) that breaks each contract."""

CONTRACT_KEPT: list[tuple[str, tuple[tuple[str, str], ...]]] = [
    ("layers", (("grader.cli.x", "grader.sandbox.host.pool"),)),
    ("output", (("grader.output.x", "grader.grading.wording"),)),
    ("output", (("grader.output.x", "grader.results.check"),)),
    ("output", (("grader.output.x", "grader.inputs.catalog"),)),
    ("output", (("grader.output.x", "grader.sandbox.protocol.status"),)),
    ("results", (("grader.results.x", "grader.sandbox.protocol"),)),
    ("results", (("grader.results.x", "grader.sandbox.levels"),)),
    ("host", (("grader.sandbox.host.x", "grader.sandbox.protocol"),)),
    ("terminal", (("grader.cli.x", "rich"),)),
]
"""Imports close to a forbidden one that a contract must let through."""


@pytest.mark.parametrize(("contract", "imports"), CONTRACT_BREAKING)
def test_each_contract_catches_what_it_forbids(
    contract: str, imports: tuple[tuple[str, str], ...]
) -> None:
    assert not contract_kept(contract, imports)


@pytest.mark.parametrize(("contract", "imports"), CONTRACT_KEPT)
def test_each_contract_lets_through_what_it_allows(
    contract: str, imports: tuple[tuple[str, str], ...]
) -> None:
    assert contract_kept(contract, imports)


OUTPUT_MAY_IMPORT = frozenset(
    {
        "grader.grading.wording",
        "grader.inputs.catalog",
        "grader.inputs.dependencies",
        "grader.inputs.provenance",
        "grader.static.rules",
    }
)
"""Of ``grading/``, ``inputs/`` and ``static/``: what ``output/`` may import (the contract's
comment says why)."""
OUTPUT_MAY_IMPORT_OF_SANDBOX = frozenset({PROTOCOL, f"{PROTOCOL}.status"})
"""Of ``sandbox/``: what ``output/`` may import, the statuses results carry."""
RESULTS_MAY_IMPORT = frozenset({PROTOCOL, "grader.sandbox.levels"})
"""Of ``sandbox/``: what ``results/`` may import, the typed messages and the level names."""


@pytest.mark.parametrize(
    ("contract", "packages", "allowed"),
    [
        ("output", ("grader.grading", "grader.inputs", "grader.static"), OUTPUT_MAY_IMPORT),
        ("output", ("grader.sandbox", PROTOCOL), OUTPUT_MAY_IMPORT_OF_SANDBOX),
        ("results", ("grader.sandbox",), RESULTS_MAY_IMPORT),
    ],
)
def test_a_contract_by_module_names_every_module(
    contract: str, packages: tuple[str, ...], allowed: frozenset[str]
) -> None:
    """A contract that forbids a package's modules one by one names each the package holds
    but the allowed few, so a new module is forbidden until someone says otherwise."""
    children = {child for package in packages for child in GRAPH.find_children(package)}
    forbidden = set(CONTRACTS[contract]["forbidden_modules"])
    assert children - allowed == {name for name in forbidden if name.rpartition(".")[0] in packages}
