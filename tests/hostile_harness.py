"""What the hostile suites share: the cut-down chapter, laying out a catalogue case,
running hostile code on a pool and reading back what it saw, and their fixtures
(each suite names this module in ``pytest_plugins``)."""

from __future__ import annotations

import ast
import base64
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from disguise import disguise_tree

import grader.cli
import grader.grading.validation
from grader.grading.jobs import Limits
from grader.inputs.catalog import Chapter, load_chapter
from grader.inputs.dependencies import kit_sources
from grader.inputs.patching import mutant_sources
from grader.output.check_json import report_to_dict
from grader.results.check import CheckReport
from grader.sandbox.confine import limits
from grader.sandbox.host.client import LIVE_WORKERS
from grader.sandbox.host.job import Job, wall_backstop
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult
from grader.sandbox.levels import LEVELS, IsolationLevel
from grader.sandbox.procfs import descendants, still_runs
from grader.static.checker import check_test_source

KIT = Path(__file__).resolve().parents[1]
HOSTILE = Path(__file__).resolve().parent / "hostile"
CASES: list[dict[str, Any]] = tomllib.loads(
    (HOSTILE / "catalogue.toml").read_text(encoding="utf-8")
)["case"]
CHAPTER = load_chapter()
FAST_COURSE_TESTS = ("test_hand_example_split_and_match", "test_insert_needs_one_value_per_granule")
FAST_MUTANTS = ("s11", "s14", "s15", "m01")
TINY_MUTANTS = ("s11", "m01")
"""With no wheat: for checks that only show no mutant dies, and the 20 reproducible ones."""
LIMITS = Limits(course_tests=30, student_tests=5, mutant_floor=2, mutant_factor=5)
"""Short, yet long enough for a loaded machine: a clean run of a hostile file takes < 1 s."""
CHECK_SECONDS = 30.0
"""No check of the cut-down chapter may take longer, hangs and floods included."""


def check_seconds(case: dict[str, Any], limits: Limits) -> float:
    """How long a check of ``case`` may take: ``CHECK_SECONDS``, and for a case that hangs the
    wall-clock backstops of its longest run and of the run alone that confirms its timeout
    (a run that sleeps is bounded by the backstop alone, not by its CPU time)."""
    if not case.get("hangs"):
        return CHECK_SECONDS
    longest = max(limits.course_tests, limits.student_tests)
    return CHECK_SECONDS + wall_backstop(longest) + wall_backstop(longest, confirming=True)


REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")
MUTANT_S11 = mutant_sources(CHAPTER)["s11"]


def fast_chapter(
    folder: Path, mutants: tuple[str, ...] = FAST_MUTANTS, wheats: bool = True
) -> Chapter:
    """The kit's chapter with two of its course tests (and their helpers) and some mutants."""
    tree = ast.parse(CHAPTER.course_test_file.read_text(encoding="utf-8"))
    tree.body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.ClassDef) and node.name != "TreeView")
        and (
            not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_"))
            or node.name in FAST_COURSE_TESTS
        )
    ]
    course_file = folder / CHAPTER.course_test_file.name
    course_file.write_text(ast.unparse(tree), encoding="utf-8")
    return replace(
        CHAPTER,
        course_tests=tuple(t for t in CHAPTER.course_tests if t.name in FAST_COURSE_TESTS),
        course_test_file=course_file,
        mutants=tuple(m for m in CHAPTER.mutants if m.id in mutants),
        wheats=CHAPTER.wheats if wheats else (),
        course_test_shards=(),  # the shards name tests the cut-down file leaves out
    )


@pytest.fixture
def reachable_tmp_path() -> Iterator[Path]:
    """A fresh folder that confined runs can reach, as /tmp itself (mode 1777): pytest's own
    lies in a folder only its user may enter, and a run must meet the wall a test means
    (the read-only view, another user's folder), not a folder it cannot enter."""
    folder = Path(tempfile.mkdtemp(prefix="hostile-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def chapter(tmp_path_factory: pytest.TempPathFactory) -> Chapter:
    return fast_chapter(tmp_path_factory.mktemp("chapter"))


@pytest.fixture(scope="module")
def tiny_chapter(tmp_path_factory: pytest.TempPathFactory) -> Chapter:
    return fast_chapter(tmp_path_factory.mktemp("tiny"), TINY_MUTANTS, wheats=False)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    """Warm workers shared by the module; once closed, nothing of theirs is left."""
    with WorkerPool(workers=2) as workers:
        yield workers
    assert workers.scratch is not None and not workers.scratch.exists()
    assert wait_until_gone(str(workers.scratch)) == []


@pytest.fixture
def without_static_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch layer 1 off: every test file passes the static check and runs."""
    monkeypatch.setattr(
        grader.grading.validation,
        "check_test_source",
        lambda *arguments: ([], check_test_source(*arguments)[1]),
    )


# ----------------------------------------------------------------------
# Laying out a case and checking what the grader said.


def lay_out(case: dict[str, Any], tmp_path: Path) -> Path:
    """The case's submission folder, as the catalogue describes it, under ``tmp_path``."""
    folder: Path = tmp_path / case["name"]
    setup = case.get("setup", "")
    if setup == "path_missing":
        return folder
    if setup == "path_is_file":
        folder.write_text("not a folder\n", encoding="utf-8")
        return folder
    folder.mkdir()
    for source in sorted((HOSTILE / case["name"]).rglob("*")):
        target = folder / source.relative_to(HOSTILE / case["name"])
        if source.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(source.read_bytes())
    if setup == "symlink_radix_self":
        (folder / "radix.py").symlink_to("radix.py")
    if case.get("radix", "reference") == "reference":
        if setup == "symlink_radix_out":
            (folder / "radix.py").symlink_to(CHAPTER.reference)
        else:
            (folder / "radix.py").write_text(REFERENCE, encoding="utf-8")
    if case.get("radix") == "attack":
        attack = (folder / "attack.py").read_text(encoding="utf-8")
        (folder / "attack.py").unlink()
        (folder / "radix.py").write_text(f"{REFERENCE}\n\n{attack}", encoding="utf-8")
    if case.get("radix") == "in_the_map":  # issue 34: the tree hidden in the map's file
        for need in CHAPTER.needs:
            tree = [
                line
                for line in disguise_tree(REFERENCE, seed=34).splitlines()
                if not line.startswith(("from __future__", f"from {need.module} import"))
            ]
            own_map = need.reference.read_text(encoding="utf-8")
            (folder / need.implementation).write_text(own_map + "\n".join(tree) + "\n")
    if case.get("radix", "reference") in ("reference", "attack"):
        for need in CHAPTER.needs:  # the kit's map where the case brings no hostile one
            if not (folder / need.implementation).exists():
                shutil.copyfile(need.reference, folder / need.implementation)
    if setup == "latin1_tests":
        tests = folder / CHAPTER.student_tests
        tests.parent.mkdir(exist_ok=True)
        tests.write_bytes(LATIN1_TESTS)
    return folder


LATIN1_TESTS = (
    '"""Saved by an editor set to Latin-1."""\n# caf\xe9\nfrom radix import RadixTree\n'
).encode("latin-1")


def snapshot(path: Path) -> dict[str, str]:
    """Every file under ``path`` (or ``path`` itself) with a digest of its bytes or link."""
    if path.is_symlink() or path.is_file():
        paths = [path]
    elif path.is_dir():
        paths = sorted(path.rglob("*"))
    else:
        return {}
    return {
        str(p.relative_to(path.parent)): (
            f"-> {os.readlink(p)}"
            if p.is_symlink()
            else hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file()
            else "dir"
        )
        for p in paths
    }


def at_level(expected: dict[str, Any], level: IsolationLevel) -> dict[str, Any]:
    """What the catalogue expects at isolation ``level``: the entries of each ``at_LEVEL``
    table up to ``level`` replace the plain ones (a confined run meets a wall sooner)."""
    merged = {key: value for key, value in expected.items() if not key.startswith("at_")}
    for reached in LEVELS[: LEVELS.index(level) + 1]:
        merged.update(expected.get(f"at_{reached}", {}))
    return merged


def messages(report: CheckReport, where: str) -> list[str]:
    if where == "course":
        return [report.course_tests.problem or ""]
    return list(report.student_tests.problems)


def assert_expected(report: CheckReport, expected: dict[str, Any]) -> None:
    """The report gives the verdict, the message and the mutant statuses ``expected`` names."""
    shown = json.dumps(report_to_dict(report, CHAPTER), indent=1)
    assert report.verdict == expected["verdict"], shown
    found = messages(report, expected.get("where", "student"))
    if "contains" in expected:
        assert any(expected["contains"] in line for line in found), (expected["contains"], found)
    if "code" in expected:
        start = f"{CHAPTER.student_tests} line {expected['line']}: " if "line" in expected else ""
        assert any(
            line.startswith(start) and line.endswith(f"[{expected['code']}]") for line in found
        ), (expected["code"], expected.get("line"), found)
    on_tests = [k for k in report.known_sources if k.file == CHAPTER.student_tests]
    flagged = [known.source for known in on_tests if known.flagged]
    assert flagged == expected.get("staff_flags", []), (flagged, report.known_sources)
    if "staff_code_flags" in expected:
        code = [k for k in report.known_sources if k.flagged and k not in on_tests]
        found = sorted(f"{k.file}:{k.source}" for k in code)
        assert found == expected["staff_code_flags"], (found, report.known_sources)
    statuses = {m.id: m.status for m in report.mutation.mutants} if report.mutation else {}
    for mutant, status in expected.get("mutants", {}).items():
        assert statuses.get(mutant) == status, (mutant, shown)


def stray_processes() -> list[str]:
    """Processes below this one other than the pools' workers and what they hold between runs.

    The grader (here, this process) is a child subreaper: a run's process whose
    worker died is handed here, so a stray may be a child of this very process.
    """
    strays = []
    for pid in filter(still_runs, descendants(os.getpid())):
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        parent = int(stat[stat.rfind(b")") + 2 :].split()[1])
        if pid not in LIVE_WORKERS and parent not in LIVE_WORKERS:
            strays.append(f"{pid}: {cmdline.decode(errors='replace')}")
        elif parent in LIVE_WORKERS and limits.is_untrusted(pid):
            strays.append(f"{pid} (a run's, between runs): {cmdline.decode(errors='replace')}")
    return strays


def processes_mentioning(marker: str) -> list[int]:
    """Pids of the processes whose command line holds ``marker``, this one aside."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until_gone(marker: str, seconds: float = 3.0) -> list[int]:
    """Wait for every process mentioning ``marker`` to exit (zombies reaped by init)."""
    deadline = time.monotonic() + seconds
    while (left := processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


# ----------------------------------------------------------------------
# The catalogue: every case gets its verdict and message.


# ----------------------------------------------------------------------
# Layers 2 to 6 at the sandbox level: hostile code run directly.


def run(pool: WorkerPool, source: str, implementation: str = REFERENCE, **job: Any) -> RunResult:
    """Run the test file ``source`` against ``implementation`` in the pool."""
    job.setdefault("time_limit", 10.0)
    job.setdefault("module", CHAPTER.module)
    job.setdefault("dependencies", kit_sources(CHAPTER))
    return pool.run(Job(implementation, "test_hostile.py", textwrap.dedent(source).lstrip(), **job))


REPORTED = "REPORTED "


def report_back(expression: str) -> str:
    """A line of test code that fails on purpose with ``expression``'s value as its message
    (an exception's: pytest cuts an assertion's message short).

    A run can write nothing outside its own folder, and the grader takes the
    run's folder out of every message, so the value travels packed (JSON,
    zlib, base64); the test needs ``import base64, json, zlib``.
    """
    packed = f"base64.b64encode(zlib.compress(json.dumps({expression}).encode())).decode()"
    return f'raise RuntimeError("{REPORTED}" + {packed})'


def reported(result: RunResult, name: str) -> Any:
    """The value test ``name`` sent back with ``report_back``."""
    assert result.outcome(name) == "failed", result
    mark = f"RuntimeError: {REPORTED}"  # the exception's line, not the line raising it
    line = next(line for line in result.detail(name).splitlines() if mark in line)
    packed = line.split(mark, 1)[1].split()[0]
    return json.loads(zlib.decompress(base64.b64decode(packed)))


@pytest.fixture(scope="module")
def uid_pool() -> Iterator[WorkerPool]:
    """Workers at the ``uid`` level (root without namespaces: a default Docker container),
    where this machine gives at least that; else at ``none``.

    Where Python lives in a folder other users may not enter (``/root``), a run at
    ``uid`` cannot import what the warm worker has not (the machine's own level
    would open the way), so the tests that use this pool import nothing else and
    do not import the module under test.
    """
    with WorkerPool(workers=2, at_most="uid") as workers:
        yield workers


@contextlib.contextmanager
def busy_cores(loops: int) -> Iterator[None]:
    """``loops`` processes that spin until the block ends (2 per core: the machine is full)."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"]) for _ in range(loops)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
