"""Driving mutmut 3 for ``grader audit``: its working copy, its phases, its records.

mutmut is a command, not a library: ``run_mutmut`` has
``grader.sandbox.host.mutmut_run`` start ``mutmut run`` (the sandbox is the only
code that starts processes), follows its phases on its output, and reads its
per-mutant results from the file mutmut keeps for them
(``mutants/<module>.meta``, mutmut's exit code per mutant). Each mutant's
diff comes from mutmut's own ``show`` code (``read_mutmut_diffs``).
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

from grader import DISTRIBUTION
from grader.errors import EXIT_FAIL, GraderError
from grader.sandbox.host.mutmut_run import run_mutmut_cli
from grader.sandbox.host.result import failure_line
from grader.sandbox.protocol.status import AuditStatus

Progress = Callable[[str, int, int], None]
"""Called as ``progress(phase, done, total)``; ``total`` is 0 while a phase has no count."""

# mutmut's exit codes (mutmut/stats.py) in the audit's words: one table, read once.
KILLED_CODES = {1, 3, 37}  # a test failed; pytest internal error; caught by a type check
SURVIVED_CODES = {0}
NO_TESTS_CODES = {5, 33}  # pytest collected nothing; no test reaches the function
TIMEOUT_CODES = {24, -24, 36, 152, 255}  # SIGXCPU in its several spellings
CRASHED_CODES = {-9, -11}  # killed (often for memory), segmentation fault


def status_of(exit_code: int | None) -> AuditStatus:
    """The audit status of one mutmut exit code; anything unknown is an ``error``."""
    for codes, status in (
        (KILLED_CODES, AuditStatus.KILLED),
        (SURVIVED_CODES, AuditStatus.SURVIVED),
        (NO_TESTS_CODES, AuditStatus.NO_TESTS),
        (TIMEOUT_CODES, AuditStatus.TIMEOUT),
        (CRASHED_CODES, AuditStatus.CRASHED),
    ):
        if exit_code in codes:
            return status
    return AuditStatus.ERROR


def mutmut_version() -> str:
    """The installed mutmut's version; a ``GraderError`` saying how to install it if missing."""
    if importlib.util.find_spec("mutmut") is None:
        raise GraderError(f"grader audit needs mutmut 3: {audit_install_hint()}")
    version = importlib.metadata.version("mutmut")
    if not version.startswith("3."):
        raise GraderError(f"grader audit needs mutmut 3, found mutmut {version}")
    return version


def audit_install_hint() -> str:
    """The command that installs what audit needs, in any edition: the kit's ``audit`` extra
    as its own metadata pins it (a wheel installed from a file has no index to resolve
    ``ds07-grader[audit]`` from); from a source checkout, the extra itself."""
    try:
        required = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        required = []
    pins = []
    for line in required:
        requirement = Requirement(line)
        if requirement.marker is not None and requirement.marker.evaluate({"extra": "audit"}):
            requirement.marker = None
            pins.append(f"'{requirement}'")
    return f"pip install {' '.join(pins)}" if pins else "pip install -e '.[audit]'"


# ----------------------------------------------------------------------
# The functions of the mutated module and mutmut's names for them.


@dataclass(frozen=True)
class SourceFunction:
    qualname: str  # RadixTree.insert, or a top-level name
    key: str  # mutmut's mangled name: xǁRadixTreeǁinsert or x_name
    def_line: int


def source_functions(source: str) -> dict[str, SourceFunction]:
    """The functions mutmut mutates (top-level ones and methods of top-level classes), by key."""
    found: dict[str, SourceFunction] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[f"x_{node.name}"] = SourceFunction(node.name, f"x_{node.name}", node.lineno)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    key = f"xǁ{node.name}ǁ{item.name}"
                    found[key] = SourceFunction(f"{node.name}.{item.name}", key, item.lineno)
    return found


def function_key(mutant_id: str) -> str:
    """``radix.xǁRadixTreeǁinsert__mutmut_3`` -> ``xǁRadixTreeǁinsert``."""
    return mutant_id.partition("__mutmut_")[0].rpartition(".")[2]


# ----------------------------------------------------------------------
# The temporary copy of the kit.

MUTMUT_CONFIG = """\
[tool.mutmut]
source_paths = ["{module}"]
also_copy = {also_copy}
pytest_add_cli_args_test_selection = ["tests/"]
pytest_add_cli_args = ["-p", "no:cacheprovider"]
timeout_multiplier = 4.0
timeout_constant = 2.0
use_git_change_detection = false
use_setproctitle = false

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

AUDIT_CONFTEST = '''\
"""Written by `grader audit` into its temporary copy of the kit.

Tests run in the order of the file (quick unit tests before a long model-based
test, so that mutmut's -x stops early on a kill); hypothesis is derandomized
and does not shrink a failure (a kill needs a failure, not the smallest one).
"""

import pytest

try:
    from hypothesis import Phase, settings
except ImportError:  # tests that do not use hypothesis need nothing here
    pass
else:
    settings.register_profile(
        "grader-audit",
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
    )
    settings.load_profile("grader-audit")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: (str(item.path), item.location[1] or 0))
'''


def lay_out(
    folder: Path,
    module_file: str,
    source: str,
    test_name: str,
    tests: str,
    beside: Sequence[tuple[str, str]] = (),
) -> None:
    """Write the copy: the module at the top, with the files it imports (``beside``: file name
    and text, never mutated), the test file and its conftest under tests/."""
    (folder / module_file).write_text(source, encoding="utf-8")
    for name, text in beside:
        (folder / name).write_text(text, encoding="utf-8")
    also_copy = json.dumps([name for name, _ in beside])
    (folder / "tests").mkdir()
    (folder / "tests" / test_name).write_text(tests, encoding="utf-8")
    (folder / "tests" / "conftest.py").write_text(AUDIT_CONFTEST, encoding="utf-8")
    config = MUTMUT_CONFIG.format(module=module_file, also_copy=also_copy)
    (folder / "pyproject.toml").write_text(config, "utf-8")
    (folder / "home").mkdir()


# ----------------------------------------------------------------------
# mutmut run, watched.

PHASES = (
    ("Generating mutants", "generating mutants"),
    ("Running stats", "tests on the reference"),
    ("Running clean tests", "tests on the reference"),
    ("Running forced fail test", "tests on the reference"),
    ("Running mutation testing", "mutants"),
)

FAILURES = (
    ("Failed to run clean test", "the tests fail on the reference, so no kill could be trusted"),
    ("failed to collect stats", "the tests fail on the reference, so no kill could be trusted"),
    ("could not find any test case", "the tests never call the reference's functions"),
    ("Unable to force test failures", "the tests pass even when every function raises"),
    ("nothing matches", "mutmut made no mutant of the selected functions"),
)


def run_mutmut(
    folder: Path, module_file: str, names: list[str], jobs: int, progress: Progress | None
) -> dict[str, float]:
    """Run ``mutmut run`` in ``folder``; return when each phase began, or raise what stopped it."""
    meta = folder / "mutants" / f"{module_file}.meta"
    began: dict[str, float] = {}

    def follow(seen: str) -> None:
        for marker, phase in PHASES:
            if marker in seen and phase not in began:
                began[phase] = time.monotonic()
        phase = max(began, key=began.__getitem__, default="")
        if progress is not None and phase:
            done, total = _tested(meta, names) if phase == "mutants" else (0, 0)
            progress(phase, done, total)

    code, output = run_mutmut_cli(folder, ["run", "--max-children", str(jobs), *names], follow)
    if code != 0:
        raise GraderError(_failure(code, output), exit_code=EXIT_FAIL)
    return began


def _tested(meta: Path, names: list[str]) -> tuple[int, int]:
    """How many of the selected mutants mutmut has a result for, out of how many."""
    try:
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    except (OSError, ValueError, KeyError):
        return 0, 0
    chosen = [code for name, code in codes.items() if selected_by(name, names)]
    return sum(code is not None for code in chosen), len(chosen)


def selected_by(name: str, patterns: list[str]) -> bool:
    """Whether mutant ``name`` is one of those the glob ``patterns`` select (all, if none)."""
    return not patterns or any(name.startswith(p.removesuffix("*")) for p in patterns)


def _failure(code: int, log: str) -> str:
    detail = failure_line(log)
    for marker, meaning in FAILURES:
        if marker in log:
            return f"audit stopped: {meaning}" + (f" ({detail})" if detail else "")
    return f"audit stopped: mutmut failed (exit status {code}): {detail or 'no output'}"


# ----------------------------------------------------------------------
# Where each mutant's diff falls in the module.


@dataclass(frozen=True)
class Change:
    """What a function's diff changes: the first module line it touches, and the text."""

    line: int
    removed: tuple[str, ...]
    added: tuple[str, ...]


def change_of(diff: str, source: Sequence[str], def_line: int) -> Change:
    """Place a function's diff (as mutmut prints it) on the line of ``source`` it changes.

    The diff numbers its lines from the function's own text (which starts
    with the comments above it) and shows three lines of context, not always
    the ``def``: its old side is found in the module instead, nearest the
    line its numbering gives when counted from the ``def``.
    """
    old_side: list[str] = []  # context and removed lines, stripped, from the hunk's start
    removed: list[str] = []
    added: list[str] = []
    hunk, first = 1, None
    for line in diff.splitlines():
        header = re.match(r"@@ -(\d+)", line)
        if header and not old_side:
            hunk = int(header.group(1))
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith(("+", "-")) and first is None:
            first = len(old_side)
        if line.startswith("+"):
            added.append(line[1:])
            continue
        if line.startswith("-"):
            removed.append(line[1:])
        old_side.append(line[1:].strip())
    lines = [line.strip() for line in source]
    size = len(old_side)
    starts = [s for s in range(len(lines) - size + 1) if lines[s : s + size] == old_side]
    expected = def_line + hunk - 2  # 0-based start of the hunk if the text began at the def
    start = min(starts, key=lambda s: (s > expected, abs(s - expected)), default=expected)
    return Change(start + 1 + (first or 0), tuple(removed), tuple(added))
