"""A student's test file cannot earn kills it did not earn, and broken inputs fail clearly.

``tests/hostile/catalogue.toml`` lists one submission per attack or broken
input, with the verdict and the message ``grader check`` must give it; the
first tests here grade each one. The grader's defences are layered, and each
layer is held to account on its own:

1. the static check (every catalogue case it stops, with line and rule);
2. collection of the one test file under the grader's configuration;
3. every implementation presented alike;
4. verdicts from per-test outcomes the grader collects, never an exit status;
5. reports written by the grader alone, after every child is gone;
6. reruns on the reference in another order and with another hash seed.

For layers 2 to 6 the catalogue cases are graded again with the static check
switched off, and sandbox-level tests run hostile code through
``WorkerPool.run`` directly. Last come the guarantees of the command as a
whole: reports identical run after run, two checks at once, and Ctrl-C.

Everything runs against a cut-down chapter (two course tests, four mutants)
with short time limits, so the suite stays fast.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import hashlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import tomllib
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from markdown_it import MarkdownIt

import grader.cli
import grader.validation
from grader.catalog import Chapter, load_chapter
from grader.commands.check import check
from grader.dependencies import kit_sources
from grader.errors import EXIT_FAIL, EXIT_INTERRUPTED
from grader.jobs import Limits, student_tests_job
from grader.output.check_json import SCHEMA_PATH, report_to_dict, report_to_json
from grader.output.summary import report_to_markdown
from grader.patching import mutant_sources
from grader.results.check import CheckReport
from grader.sandbox import confine
from grader.sandbox.confine import LEVELS, MEMORY_LIMIT_BYTES, OUTPUT_LIMIT_BYTES, IsolationLevel
from grader.sandbox.host.client import LIVE_WORKERS
from grader.sandbox.host.job import OTHER_HASH_SEED, Job, wall_backstop
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult
from grader.sandbox.procfs import descendants
from grader.static_check import check_test_source

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

KIT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "hostile"
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
def tmp_path() -> Iterator[Path]:
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
        grader.validation,
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
    flagged = [known.source for known in report.known_sources if known.flagged]
    assert flagged == expected.get("staff_flags", []), (flagged, report.known_sources)
    statuses = {m.id: m.status for m in report.mutation.mutants} if report.mutation else {}
    for mutant, status in expected.get("mutants", {}).items():
        assert statuses.get(mutant) == status, (mutant, shown)


def stray_processes() -> list[str]:
    """Processes below this one other than the pools' workers and what they hold between runs.

    The grader (here, this process) is a child subreaper: a run's process whose
    worker died is handed here, so a stray may be a child of this very process.
    """
    strays = []
    for pid in descendants(os.getpid()):
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        parent = int(stat[stat.rfind(b")") + 2 :].split()[1])
        if pid not in LIVE_WORKERS and parent not in LIVE_WORKERS:
            strays.append(f"{pid}: {cmdline.decode(errors='replace')}")
        elif parent in LIVE_WORKERS and confine.is_untrusted(pid):
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


def test_the_catalogue_holds_every_case_folder_once() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))
    folders = sorted(p.name for p in HOSTILE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert sorted(names) == folders


def test_every_run_time_proof_named_in_the_catalogue_exists() -> None:
    for case in CASES:
        if "runtime_test" in case:
            assert callable(globals().get(case["runtime_test"])), case["name"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["name"])
def test_hostile_submission_gets_its_verdict_and_message(
    case: dict[str, Any], chapter: Chapter, pool: WorkerPool, tmp_path: Path
) -> None:
    """As the catalogue says; the submission and the machine are left as they were."""
    folder = lay_out(case, tmp_path)
    before = snapshot(folder)
    limits = replace(LIMITS, course_tests=case.get("course_time_limit", LIMITS.course_tests))
    started = time.monotonic()
    report = check(chapter, folder, limits, pool=pool)
    assert time.monotonic() - started < check_seconds(case, limits)
    assert_expected(report, at_level(case, pool.isolation))
    assert live_markdown(report_to_markdown(CHAPTER, report)) == []
    assert snapshot(folder) == before
    assert stray_processes() == []


def live_markdown(markdown: str) -> list[str]:
    """The links and images GitHub would render in ``markdown`` (the kit's summary has none)."""
    parser = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "linkify"])
    found = []
    for token in parser.parse(markdown):
        for child in token.children or []:
            if child.type in ("link_open", "image", "html_inline"):
                found.append(f"{child.type}: {child.attrs or child.content}")
    return found


LEVEL_CASES = [(case, level) for case in CASES for level in case.get("levels", ())]


@pytest.mark.parametrize(
    ("case", "level"), LEVEL_CASES, ids=[f"{case['name']}-{level}" for case, level in LEVEL_CASES]
)
def test_hostile_submission_at_a_forced_level(
    case: dict[str, Any], level: IsolationLevel, chapter: Chapter, tmp_path: Path
) -> None:
    """A case about a weaker level than this machine's, graded at that level too (as far as
    the machine reaches it): the same verdict, and nothing of it left."""
    folder = lay_out(case, tmp_path)
    with WorkerPool(workers=2, at_most=level) as workers:
        report = check(chapter, folder, LIMITS, pool=workers)
        assert_expected(report, at_level(case, workers.isolation))
    assert stray_processes() == []


RUNTIME_CASES = [case for case in CASES if "runtime" in case]


@pytest.mark.parametrize("case", RUNTIME_CASES, ids=lambda case: case["name"])
@pytest.mark.usefixtures("without_static_check")
def test_run_time_layers_hold_without_the_static_check(
    case: dict[str, Any], tiny_chapter: Chapter, pool: WorkerPool, tmp_path: Path
) -> None:
    """With layer 1 off the hostile code runs, and still earns no kill."""
    folder = lay_out(case, tmp_path)
    report = check(tiny_chapter, folder, LIMITS, pool=pool)
    assert_expected(report, at_level(case["runtime"], pool.isolation))
    assert report.mutation is None or report.mutation.killed == 0
    assert stray_processes() == []


def test_the_kits_own_test_files_pass_the_static_check() -> None:
    """No false alarm on the model answer, the stub's skeleton or the example submissions."""
    files = [CHAPTER.model_tests, CHAPTER.stub_tests]
    files += sorted((KIT / "tests" / "fixtures" / "submissions").rglob("test_*.py"))
    for path in files:
        if "syntax_error" not in str(path):
            source = path.read_text(encoding="utf-8")
            violations, _ = check_test_source(source, CHAPTER.module, CHAPTER.interface)
            assert violations == [], (path, violations)


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


PROBE = """
    import base64, json, os, sys, tempfile, importlib.util, zlib
    import radix

    def test_observe():
        folder = os.getcwd()
        def rel(text):
            return str(text).replace(folder, "<run>")
        with open("/proc/self/cmdline", "rb") as cmdline, open("/proc/self/comm") as comm:
            process = [rel(cmdline.read()), comm.read()]
        seen = {
            "module": [radix.__name__, getattr(radix, "__file__", None), radix.__spec__.origin],
            "loader": type(radix.__loader__).__name__,
            "cwd": [rel(folder), sorted(os.listdir(".")), sorted(os.listdir("tests"))],
            "environ": {key: rel(value) for key, value in os.environ.items()},
            "argv": [sys.argv, sys.orig_argv],
            "path": [rel(entry) for entry in sys.path],
            "process": process,
            "home_tmp": [rel(os.path.expanduser("~")), rel(tempfile.gettempdir())],
            "kit_importable": [importlib.util.find_spec(name) is not None
                               for name in ("reference", "mutants", "course_tests")],
            "modules": sorted(name for name in sys.modules if "radix" in name),
        }
        REPORT_BACK
"""


def observe(pool: WorkerPool, implementation: str) -> dict[str, Any]:
    probe = textwrap.dedent(PROBE).replace("REPORT_BACK", report_back("seen"))
    seen: dict[str, Any] = reported(run(pool, probe, implementation), "test_observe")
    return seen


def test_every_implementation_is_presented_alike(pool: WorkerPool) -> None:
    """Layer 3: name, file, loader, times, folder, environment, argv, path and process agree."""
    on_reference = observe(pool, REFERENCE)
    on_mutant = observe(pool, MUTANT_S11)
    assert on_reference == on_mutant
    assert on_reference["module"] == ["radix", None, None]  # no file: its code is elsewhere
    assert on_reference["argv"] == [["pytest"], ["python", "-m", "pytest"]]
    assert on_reference["home_tmp"] == ["<run>/home", "<run>/tmp"]
    assert on_reference["kit_importable"] == [False, False, False]
    grader_sets = {"HOME", "LANG", "PATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "TMPDIR"}
    pytest_sets = {"PYTEST_CURRENT_TEST", "PYTEST_VERSION"}
    assert set(on_reference["environ"]) == grader_sets | pytest_sets | {"PYTHONDONTWRITEBYTECODE"}
    # No path into the kit, except through the Python installation (CI keeps its venv there).
    seen = json.dumps(on_reference).replace(sys.prefix, "<python>")
    assert str(KIT) not in seen


def test_only_the_graders_configuration_is_used(pool: WorkerPool) -> None:
    """Layer 2: the grader's empty pytest.ini, its rootdir, no conftest, no plugin, no cache."""
    result = run(
        pool,
        f"""
        import base64, json, os, zlib
        def test_config(pytestconfig):
            manager = pytestconfig.pluginmanager
            files = [getattr(p, "__file__", "") or "" for p in manager.get_plugins()]
            seen = {{
                "ini": [os.path.basename(str(pytestconfig.inipath)),
                        open(pytestconfig.inipath).read()],
                "rootdir": str(pytestconfig.rootpath) == os.getcwd(),
                "noconftest": pytestconfig.getoption("noconftest"),
                "conftests": [f for f in files if f.endswith("conftest.py")],
                "cache": manager.has_plugin("cacheprovider"),
                "third_party": [f for f in files if "site-packages" in f
                                and "/_pytest/" not in f and "/pytest/" not in f],
                "args": pytestconfig.args,
            }}
            {report_back("seen")}
        """,
    )
    seen = reported(result, "test_config")
    assert seen["ini"] == ["pytest.ini", "[pytest]\n"]
    assert seen["rootdir"] and seen["noconftest"]
    assert seen["conftests"] == [] and seen["cache"] is False
    assert [f for f in seen["third_party"] if "grader" not in f] == []
    assert seen["args"] == ["tests/test_hostile.py"]


def test_a_run_that_ends_early_is_crashed_not_passed(pool: WorkerPool) -> None:
    """Layer 4: os._exit(0) ends the run with a clean status, yet it is never a pass."""
    result = run(
        pool,
        """
        import os
        def test_before():
            pass
        def test_exits():
            os._exit(0)
        def test_after():
            pass
        """,
    )
    assert result.status == "crashed" and not result.all_passed
    assert result.message == "the test process ended early (exit status 0) while running test_exits"
    assert [result.outcome(n) for n in ("test_before", "test_exits", "test_after")] == [
        "passed",
        "error",
        "not run",
    ]
    killed = run(
        pool, "import os, signal\ndef test_x():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    assert killed.status == "crashed"
    assert killed.message.startswith("the test process died of SIGKILL")
    at_import = run(pool, "import os\nos._exit(0)\ndef test_x():\n    pass\n")
    assert at_import.status == "crashed" and at_import.outcomes == ()


def test_a_test_that_kills_its_worker_crashes_only_its_own_run(pool: WorkerPool) -> None:
    """Layer 4: killing the parent (the worker) is a crashed run; the pool carries on. Where
    runs are confined to another user, the test cannot signal the worker at all."""
    result = run(pool, "import os, signal\ndef test_x():\n    os.kill(os.getppid(), 9)\n")
    if pool.isolation == "none":
        assert result.status == "crashed"
        assert result.message == "the test process killed its parent, the grader's worker"
    else:
        assert result.status == "completed" and result.outcome("test_x") == "failed"
        assert "PermissionError" in result.detail("test_x")
    assert run(pool, "def test_x():\n    pass\n").all_passed
    assert stray_processes() == []


def test_signals_are_ignored_in_a_c_call_yet_the_run_stops_on_time(pool: WorkerPool) -> None:
    """A test that ignores every catchable signal inside one C call is stopped by SIGKILL."""
    started = time.monotonic()
    result = run(
        pool,
        """
        import signal
        def test_spin():
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU, signal.SIGHUP,
                           signal.SIGALRM, signal.SIGUSR1):
                signal.signal(number, signal.SIG_IGN)
            sum(range(10**18))
        """,
        time_limit=2.0,
    )
    assert result.status == "timeout" and result.outcome("test_spin") == "timeout"
    # Its limit is 2 s of CPU time; the wall clock only backs it up (a busy machine is slower).
    assert time.monotonic() - started < wall_backstop(2.0) + 2.0
    assert stray_processes() == []


def test_patching_the_reporters_tools_changes_no_outcome(pool: WorkerPool) -> None:
    """Layer 4: replacing json.dumps, os.write and pytest.fail does not forge the record."""
    result = run(
        pool,
        """
        import builtins, json, os, pytest
        json.dumps = lambda *args, **kwargs: '{"event": "finished", "exitstatus": 0}'
        os.write = lambda fd, data: len(data)
        pytest.fail = lambda *args, **kwargs: None
        builtins.AssertionError = KeyError
        def test_passes():
            pass
        def test_fails():
            assert 1 == 2
        """,
    )
    assert result.status == "completed"
    assert (result.outcome("test_passes"), result.outcome("test_fails")) == ("passed", "failed")


def test_chance_is_the_same_in_every_run(pool: WorkerPool) -> None:
    """Layer 6 made moot: random is reseeded per test by name, so chance cannot pick mutants."""
    source = """
        import random
        def test_low():
            assert random.random() < 0.5
        def test_high():
            assert random.random() >= 0.5
        def test_three_draws():
            assert [random.randrange(10) for _ in range(3)] == [0, 5, 5]
    """
    runs = [
        run(pool, source),
        run(pool, source),
        run(pool, source, reverse=True, hash_seed=OTHER_HASH_SEED),
        run(pool, source, MUTANT_S11),
    ]
    signatures = {tuple(sorted((o.name, o.status) for o in r.outcomes)) for r in runs}
    assert len(signatures) == 1
    assert runs[0].outcome("test_three_draws") == "passed"


def test_no_run_sees_what_an_earlier_run_left(pool: WorkerPool) -> None:
    """Each run has its own working folder, HOME and TMPDIR, and they are gone afterwards;
    the machine's shared folders (``/tmp``, ``/dev/shm``) keep no note from one run to the
    next either (at the ``namespaces`` level a run cannot write them)."""
    source = (HOSTILE / "remembers_runs" / "tests" / "test_ds07_radix.py").read_text()
    source += "\nimport base64, json, zlib\n\ndef test_where():\n"
    source += f"    {report_back('[tempfile.gettempdir(), str(pathlib.Path.home())]')}\n"
    places = []
    for _ in range(3):
        result = run(pool, source)
        assert result.status == "completed" and result.failing() == ["test_where"], result
        places += reported(result, "test_where")
    assert len(set(places)) == 6
    assert not any(Path(place).exists() for place in places)
    leftovers = [Path(folder, "seen") for folder in confine.SHARED_FOLDERS]
    if pool.isolation == "namespaces":
        assert not any(note.exists() for note in leftovers)
    for note in leftovers:
        with contextlib.suppress(OSError):
            note.unlink()


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


STOPPER = """
import os, signal, time

def test_stop_every_other_run():
    me, mine = os.getuid(), {os.getpid(), os.getppid()}
    stopped = set()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in mine | stopped:
                try:
                    with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                        ours = SCRATCH in cmdline.read()
                    if ours and os.stat(f"/proc/{name}").st_uid == me:
                        os.kill(int(name), signal.SIGSTOP)
                        stopped.add(int(name))
                except OSError:
                    pass
        time.sleep(0.01)
"""


def test_at_the_uid_level_a_run_cannot_stop_another(uid_pool: WorkerPool) -> None:
    """At ``uid`` every run has the same user and sees every process: a run that stops the
    others (a SIGSTOPped run times out, and a timeout kills a mutant) finds none running,
    since that level runs them one at a time. (At ``none`` the same test would stop the
    grader itself: it runs only where the runs are confined to another user.) This is also
    why one machine should have one grader at ``uid``: runs of two graders share the user."""
    if uid_pool.isolation == "none":
        assert os.geteuid() != 0
        return
    victim = "import time\n\ndef test_sleep():\n    time.sleep(1.0)\n"
    # Only this pool's runs (their command line names its scratch folder): a run of any
    # other grader on the machine with the same user would be stopped too.
    stopper_source = STOPPER.replace("SCRATCH", repr(str(uid_pool.scratch).encode()))
    with ThreadPoolExecutor(2) as threads:
        stopper = threads.submit(run, uid_pool, stopper_source)
        time.sleep(0.5)
        attacked = threads.submit(run, uid_pool, victim, time_limit=5.0, hash_seed=OTHER_HASH_SEED)
        assert stopper.result().all_passed, stopper.result()
        assert attacked.result().all_passed, attacked.result()


def test_at_the_uid_level_no_two_runs_overlap(uid_pool: WorkerPool) -> None:
    """The runs of three jobs sent at once: one after another at ``uid``, side by side at
    ``none`` (where runs are the grader's user, and nothing keeps them from it anyway)."""
    source = f"""
        import base64, json, time, zlib
        def test_when():
            started = time.monotonic()
            time.sleep(0.5)
            {report_back("[started, time.monotonic()]")}
    """
    seeds = [0, 0, OTHER_HASH_SEED]
    with ThreadPoolExecutor(len(seeds)) as threads:
        results = list(threads.map(lambda seed: run(uid_pool, source, hash_seed=seed), seeds))
    spans = sorted(reported(result, "test_when") for result in results)
    overlapping = any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))
    assert overlapping == (uid_pool.isolation == "none"), spans


NOTE_TAKER = """
import os

def test_note(folders=FOLDERS):
    found = [folder for folder in folders if os.path.exists(os.path.join(folder, "seen"))]
    for folder in folders:
        try:
            with open(os.path.join(folder, "seen"), "w") as note:
                note.write("seen")
        except OSError:
            pass
    assert found == []
"""


def test_at_the_uid_level_no_note_in_a_shared_folder_outlives_its_run(uid_pool: WorkerPool) -> None:
    """A run at ``uid`` can write ``/tmp`` and the like (it has no mount namespace); what it
    leaves there, in a folder every user may write below them included, is removed before
    the next run starts, so no run finds a note of an earlier one. (At ``none`` the runs
    are the grader's user, whose files the grader cannot tell from theirs.)"""
    if uid_pool.isolation == "none":
        assert os.geteuid() != 0
        return
    shared = Path(tempfile.mkdtemp(prefix="grader-shared-", dir="/tmp"))
    shared.chmod(0o1777)
    folders = (*confine.SHARED_FOLDERS, str(shared))
    try:
        for _ in range(3):
            result = run(uid_pool, NOTE_TAKER.replace("FOLDERS", repr(folders)))
            assert result.all_passed, result
        assert [folder for folder in folders if Path(folder, "seen").exists()] == []
    finally:
        for folder in folders:
            with contextlib.suppress(OSError):
                Path(folder, "seen").unlink()
        shutil.rmtree(shared, ignore_errors=True)


def test_leftovers_are_only_the_untrusted_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the sweep removes: the untrusted user's entries, in the shared folders and in
    the folders below them every user may write; nothing of another user's, and nothing
    a symbolic link points at."""
    if os.geteuid() != 0:
        assert confine.isolation_level() == "none"
        return
    nobody = confine.UNTRUSTED_UID
    theirs_top, ours_top = tmp_path / "theirs", tmp_path / "ours"
    open_below, closed_below = tmp_path / "open", tmp_path / "closed"
    for folder, mode in ((open_below, 0o1777), (closed_below, 0o755)):
        folder.mkdir()
        folder.chmod(mode)
    victim = tmp_path / "ours" / "kept"
    planted = [theirs_top, open_below / "note", closed_below / "note", tmp_path / "link"]
    ours_top.mkdir()
    victim.write_text("kept")
    theirs_top.mkdir()
    (theirs_top / "inside").write_text("x")
    (open_below / "note").write_text("x")
    (closed_below / "note").write_text("x")
    (tmp_path / "link").symlink_to(victim)
    for path in planted:
        os.chown(path, nobody, nobody, follow_symlinks=False)
    monkeypatch.setattr(confine, "SHARED_FOLDERS", (str(tmp_path),))
    confine.remove_leftovers(confine.Confinement("uid"))
    left = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    assert left == ["closed", "closed/note", "open", "ours", "ours/kept"]
    assert victim.read_text() == "kept"


def test_a_confined_run_cannot_write_the_kit_or_the_reports(
    pool: WorkerPool, tmp_path: Path
) -> None:
    """Confined to another user, a run can write neither into the kit nor beside a report
    the grader writes (a folder of the grader's user); unconfined it could, which is what
    docs/security.md says of the level ``none``."""
    reports = tmp_path / "reports"
    reports.mkdir(mode=0o755)
    targets = [KIT / "grader" / f"written-by-a-run-{os.getpid()}", reports / "results.json"]
    result = run(
        pool,
        f"""
        def test_write():
            for target in {[str(target) for target in targets]!r}:
                with open(target, "w") as out:
                    out.write("forged")
        """,
    )
    written = [target for target in targets if target.exists()]
    for target in written:
        target.unlink()
    if pool.isolation == "none":
        assert result.all_passed and written == targets
    else:
        assert result.outcome("test_write") == "failed" and written == []
        wall = "Read-only file system" if pool.isolation == "namespaces" else "PermissionError"
        assert wall in result.detail("test_write")


def test_the_kits_reference_is_out_of_sight_of_a_confined_run(pool: WorkerPool) -> None:
    """At the ``namespaces`` level a run finds the kit's reference, mutants and wheats empty,
    even by the path the grader's own package gives away; below it they can be read."""
    result = run(
        pool,
        """
        import os
        import grader
        KIT = os.path.dirname(os.path.dirname(grader.__file__))
        def test_look():
            seen = {name: sorted(os.listdir(os.path.join(KIT, name)))
                    for name in ("reference", "mutants", "wheats")}
            assert all(seen.values()), seen
        """,
    )
    if pool.isolation == "namespaces":
        assert result.outcome("test_look") == "failed"
        assert "{'reference': [], 'mutants': [], 'wheats': []}" in result.detail("test_look")
    else:
        assert result.all_passed


def test_kill_minus_one_reaches_only_its_own_run(pool: WorkerPool) -> None:
    """``kill(-1, SIGKILL)`` (every process the caller may signal but itself and init) from
    a confined run reaches neither the grader nor its workers. In a PID namespace it reaches
    nothing but the run's own processes, so a run on the other worker at the same time
    passes; at the ``uid`` level it kills that run (docs/security.md says so). Unconfined it
    would kill every process of the user running the tests, so it is not tried there; the
    level is then ``none``, as asserted."""
    if pool.isolation == "none":
        assert confine.isolation_level() == "none" and os.geteuid() != 0
        return
    slow = "import time\ndef test_slow():\n    time.sleep(3)\n"
    killer = """
        import contextlib, os, time
        def test_kill():
            time.sleep(1)
            with contextlib.suppress(ProcessLookupError):  # none it may signal
                os.kill(-1, 9)
        """
    with ThreadPoolExecutor(2) as threads:
        bystander = threads.submit(run, pool, slow)
        time.sleep(0.3)
        assert threads.submit(run, pool, killer).result().all_passed
        assert bystander.result().all_passed == (pool.isolation == "namespaces")
    assert run(pool, "def test_x():\n    pass\n").all_passed
    assert stray_processes() == []


def test_a_listening_socket_is_closed_with_its_run(pool: WorkerPool) -> None:
    """A test that listens on a local port and hangs is stopped; the port is free again."""
    with __import__("socket").socket() as probe:  # a port free now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run(
        pool,
        f"""
        import socket
        def test_listen():
            server = socket.socket()
            server.bind(("127.0.0.1", {port}))
            server.listen()
            server.accept()
        """,
        time_limit=2.0,
    )
    assert result.status == "timeout"
    with pytest.raises(ConnectionRefusedError):
        __import__("socket").create_connection(("127.0.0.1", port), timeout=1)


def test_a_grandchild_holding_the_pipes_neither_blocks_nor_survives(pool: WorkerPool) -> None:
    """Processes that outlive pytest, in or out of its group, are killed at once after it."""
    marker = f"299.{os.getpid()}"
    started = time.monotonic()
    result = run(
        pool,
        f"""
        import os, subprocess, time
        def test_leaves_processes():
            subprocess.Popen(["sleep", "{marker}"], start_new_session=True, close_fds=False)
            subprocess.Popen(["sleep", "{marker}"], close_fds=False)
            if os.fork() == 0:  # a copy of pytest, detached, holding every pipe
                os.setsid()
                if os.fork() == 0:
                    time.sleep(300)
                os._exit(0)
        """,
        time_limit=20.0,
    )
    assert result.all_passed, result
    assert time.monotonic() - started < 5.0
    assert wait_until_gone(marker) == []
    assert stray_processes() == []


def test_memory_is_bounded(pool: WorkerPool) -> None:
    """Unbounded memory ends in MemoryError; the limits hold for the test's own children too."""
    result = run(
        pool,
        f"""
        import base64, json, subprocess, zlib
        def test_child_limits():
            limits = subprocess.run(["sh", "-c", "ulimit -v; ulimit -f; ulimit -n; ulimit -t"],
                                    capture_output=True, text=True).stdout
            {report_back("limits")}
        def test_memory():
            blocks = []
            while True:
                blocks.append(bytearray(1024 * 1024 * 1024))  # at once: no race with the clock
        """,
    )
    assert result.outcome("test_memory") == "failed" and "MemoryError" in result.detail(
        "test_memory"
    )
    memory, size, files, cpu = reported(result, "test_child_limits").split()
    assert int(memory) * 1024 == MEMORY_LIMIT_BYTES
    assert int(size) * 512 == OUTPUT_LIMIT_BYTES or int(size) * 1024 == OUTPUT_LIMIT_BYTES
    assert int(files) <= 256 and cpu != "unlimited"


def test_output_is_bounded_and_cut_with_a_note(pool: WorkerPool) -> None:
    """200 MB of output stops at the file-size limit; what is kept is cut, with a note."""
    source = (HOSTILE / "output_flood" / "tests" / "test_ds07_radix.py").read_text()
    source += '\n\ndef test_huge_message() -> None:\n    assert False, "y" * 1_000_000\n'
    started = time.monotonic()
    result = run(pool, source)
    assert time.monotonic() - started < 10.0
    assert result.outcome("test_flood") == "failed"
    assert "File too large" in result.detail("test_flood")
    huge = result.detail("test_huge_message")
    assert " characters]\n" in huge and len(huge) < 6100  # the middle cut, the end kept
    assert huge.rstrip().endswith("assert False")
    assert result.output.startswith("[output cut to its last 4000 bytes of ")
    assert len(result.output) < 4200


# ----------------------------------------------------------------------
# Layer 5 and the command as a whole.


@pytest.mark.usefixtures("without_static_check")
def test_the_report_is_the_graders_even_if_a_test_forges_one(
    chapter: Chapter,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Layer 5: a passing report written by the tests, and rewritten ten times a second by a
    process meant to outlive them, is replaced by the grader's, which stays."""
    monkeypatch.setattr(grader.cli, "load_chapter", lambda chapter_id: chapter)
    report = tmp_path / "out" / "results.json"
    folder = lay_out({"name": "writes_results"}, tmp_path)
    (folder / CHAPTER.student_tests).write_text(
        (HOSTILE / "writes_results" / CHAPTER.student_tests).read_text()
        + textwrap.dedent(
            f"""

            import os, time

            def test_forge_now_and_later():
                with open({str(report)!r}, "w") as out:
                    out.write(FAKE)
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        for _ in range(300):
                            time.sleep(0.1)
                            with open({str(report)!r}, "w") as out:
                                out.write(FAKE)
                    os._exit(0)
            """
        )
    )
    report.parent.mkdir()
    code = grader.cli.main(
        ["check", "--submission", str(folder), "--json", str(report), "--tests-time-limit", "3"]
    )
    capsys.readouterr()
    assert code == EXIT_FAIL
    written = report.read_text(encoding="utf-8")
    time.sleep(0.5)
    assert report.read_text(encoding="utf-8") == written
    data = json.loads(written)
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert data["verdict"] == "fail"
    # Confined, the forging test cannot write outside its folder and fails on the reference.
    assert data["mutation"] is None or data["mutation"]["killed"] == 0
    assert sorted(p.name for p in report.parent.iterdir()) == ["results.json"]
    assert stray_processes() == []


def test_a_process_left_by_radix_py_never_rewrites_the_report(tmp_path: Path) -> None:
    """Issue 11, case 5, as a student would run it: ``grader check --json`` on a radix.py
    that leaves a detached, re-executed process and kills its worker. Once the grader
    has exited, no process of the submission is left and the report stays the grader's."""
    case = next(case for case in CASES if case["name"] == "orphan_rewrites_report")
    folder = lay_out(case, tmp_path)
    report = tmp_path / "out" / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "check", "--submission", folder, "--json", report],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == EXIT_FAIL, done.stderr
    written = report.read_text(encoding="utf-8")
    assert wait_until_gone("orphan-rewrites-report", seconds=1.0) == []
    time.sleep(1.0)  # the process polled every 50 ms for the grader to be gone
    assert report.read_text(encoding="utf-8") == written
    data = json.loads(written)
    assert data["verdict"] == "fail" and data["course_tests"]["passed"] == 0
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.json"]


def six_required_tests(folder: Path) -> Path:
    """A submission: the reference and the model answer's six required tests (and its helper)."""
    tree = ast.parse(CHAPTER.model_tests.read_text(encoding="utf-8"))
    required = {test.name for test in CHAPTER.required_tests}
    tree.body = [
        node
        for node in tree.body
        if not isinstance(node, ast.FunctionDef)
        or not node.name.startswith("test_")
        or node.name in required
    ]
    (folder / "tests").mkdir(parents=True)
    (folder / CHAPTER.student_tests).write_text(ast.unparse(tree), encoding="utf-8")
    (folder / "radix.py").write_text(REFERENCE, encoding="utf-8")
    for need in CHAPTER.needs:
        shutil.copyfile(need.reference, folder / need.implementation)
    return folder


def without_timings(report: CheckReport) -> str:
    """The JSON report's bytes up to its last two keys, ``timings`` and ``graded_at``, the ones
    that vary."""
    text = report_to_json(report, CHAPTER)
    before, found, _ = text.partition('  "timings": {')
    assert found and before.endswith("},\n")
    return before


def test_the_same_submission_gives_byte_identical_reports_20_times(
    tiny_chapter: Chapter, pool: WorkerPool, tmp_path: Path
) -> None:
    """Reproducible: 20 checks write the same bytes, timings aside.

    They share warm workers, as batch grading does; the next test shows that
    checks with workers of their own write the same bytes too.
    """
    folder = six_required_tests(tmp_path / "submission")
    reports = set()
    for _ in range(20):
        report = check(tiny_chapter, folder, LIMITS, pool=pool)
        assert report.verdict == "pass", report_to_json(report, CHAPTER)
        reports.add(without_timings(report))
    assert len(reports) == 1


def test_a_set_order_dependent_submission_gets_the_same_report_20_times(
    tiny_chapter: Chapter, pool: WorkerPool, tmp_path: Path
) -> None:
    """Issue 11, case 7: a test whose outcome on a mutant follows the order of a set of plain
    objects (their addresses). Graded 20 times on warm workers that ran other jobs in
    between, and once more on workers of its own, it gets the same report every time:
    runs have address-space layout randomisation off and start from the same memory."""
    folder = lay_out(next(case for case in CASES if case["name"] == "set_order"), tmp_path)
    reports = set()
    for number in range(20):
        reports.add(without_timings(check(tiny_chapter, folder, LIMITS, pool=pool)))
        if number % 5 == 0:  # other jobs in between change the workers' own memory
            assert run(pool, "def test_x():\n    assert [object() for _ in range(99)]\n").all_passed
    reports.add(without_timings(check(tiny_chapter, folder, LIMITS)))
    assert len(reports) == 1, reports


def test_two_checks_at_once_on_one_submission_do_not_interfere(
    tiny_chapter: Chapter, pool: WorkerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two checks with workers of their own, at once, agree with each other and with a third.

    Their scratch folders go to a folder of this test's, found empty afterwards.
    """
    folder = six_required_tests(tmp_path / "submission")
    before = snapshot(folder)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    results: list[str] = []

    def grade() -> None:
        results.append(without_timings(check(tiny_chapter, folder, LIMITS)))

    threads = [threading.Thread(target=grade) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and results[0] == results[1]
    assert list(scratch.iterdir()) == []
    assert results[0] == without_timings(check(tiny_chapter, folder, LIMITS, pool=pool))
    assert '"verdict": "pass"' in results[0]
    assert snapshot(folder) == before


def test_two_grader_processes_at_once_agree_and_change_neither_kit_nor_submission(
    tmp_path: Path,
) -> None:
    """Two ``grader check`` commands on one submission at once, as two terminals would run them.

    Both pass with the same report, timings aside; no file of the kit or of the
    submission changes, and their scratch folders are gone afterwards.
    """
    folder = six_required_tests(tmp_path / "submission")

    def kit() -> dict[str, str]:
        """The kit's content and code; bytecode caches, which Python itself writes, aside."""
        content = ("reference", "student", "course_tests", "mutants", "wheats", "chapter", "grader")
        files = {k: v for name in content for k, v in snapshot(KIT / name).items()}
        return {k: v for k, v in files.items() if "__pycache__" not in k}

    kit_before = kit()
    submission_before = snapshot(folder)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    reports = [tmp_path / f"report-{n}.json" for n in (1, 2)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "grader", "check", "--submission", folder, "--json", report],
            env={**os.environ, "TMPDIR": str(scratch)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for report in reports
    ]
    assert [process.wait(timeout=120) for process in processes] == [0, 0]
    first, second = (json.loads(report.read_text(encoding="utf-8")) for report in reports)
    del first["timings"], second["timings"], first["graded_at"], second["graded_at"]
    assert first == second and first["verdict"] == "pass"
    assert kit() == kit_before
    assert snapshot(folder) == submission_before
    assert list(scratch.iterdir()) == []


STOPS = [
    (signal.SIGINT, EXIT_INTERRUPTED, "grader: interrupted; no files were left behind"),
    (signal.SIGTERM, 128 + signal.SIGTERM, "grader: stopped by SIGTERM; no files were left behind"),
    (signal.SIGHUP, 128 + signal.SIGHUP, "grader: stopped by SIGHUP; no files were left behind"),
]


@pytest.mark.parametrize(("signum", "code", "line"), STOPS, ids=lambda value: str(value)[:7])
def test_a_stop_signal_leaves_no_file_no_process_and_an_unchanged_submission(
    tmp_path: Path, signum: int, code: int, line: str
) -> None:
    """SIGINT, SIGTERM or SIGHUP while runs are in flight: one line, exit 128 + the signal
    (130 for Ctrl-C), no scratch file, no process, the submission unchanged."""
    folder = six_required_tests(tmp_path / "submission")
    before = snapshot(folder)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    report = tmp_path / "report.json"
    # --no-cache: the same submission graded by an earlier parameter would be reused whole,
    # and the signal would find no run in flight
    command = ["check", "--submission", str(folder), "--json", str(report), "--no-cache"]
    process = subprocess.Popen(
        [sys.executable, "-m", "grader", *command],
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not list(scratch.glob("grader-*/run-*")):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code
    assert stderr.strip().splitlines() == [line]
    assert list(scratch.iterdir()) == []
    assert wait_until_gone(str(scratch)) == []
    assert not report.exists() and list(tmp_path.glob("*.partial")) == []
    assert snapshot(folder) == before


def test_no_route_reaches_the_implementations_source(pool: WorkerPool) -> None:
    """A test file tries a dozen routes to the source of the implementation it runs against.

    Each test of ``tests/fixtures/source_routes.py`` passes when its route
    found nothing. The same search over this process, which has read the
    reference, finds the line: the search itself works.
    """
    routes = KIT / "tests" / "fixtures" / "source_routes.py"
    line = max(
        (line.strip() for line in REFERENCE.splitlines() if "self._" in line),
        key=lambda line: (REFERENCE.count(line) == 1, len(line)),
    )
    half = len(line) // 2
    source = (
        routes.read_text(encoding="utf-8")
        .replace("HEAD OF A LINE OF THE IMPLEMENTATION", line[:half].replace('"', '\\"'))
        .replace("TAIL OF THAT LINE", line[half:].replace('"', '\\"'))
    )
    result = pool.run(student_tests_job(CHAPTER, source, REFERENCE, 60.0))
    assert result.status == "completed", (result.message, result.output)
    found = {o.name: o.detail for o in result.outcomes if o.status != "passed"}
    assert found == {}, found
    assert len(result.outcomes) >= 12
    without_the_module = source.replace("import radix\nfrom radix import RadixTree\n", "")
    probe: dict[str, Any] = {}
    exec(compile(without_the_module, str(routes), "exec"), probe)
    assert probe["holds_the_line"](REFERENCE)
    with pytest.raises(AssertionError):
        probe["test_the_memory_of_this_process"]()


# ----------------------------------------------------------------------
# Issue 18: every run alone and alike, whatever the machine's load.


KEY_WRITER = f"""
import base64, ctypes, json, zlib

LIBC = ctypes.CDLL(None, use_errno=True)
MACHINE = __import__("os").uname().machine
NUMBERS = {{"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}}[MACHINE]
KEYRINGS = {{"session": -3, "user": -4, "user session": -5}}


def test_keys():
    add_key, request_key, _ = NUMBERS
    seen = {{}}
    for name, keyring in KEYRINGS.items():
        found = LIBC.syscall(request_key, b"user", b"grader-note", None, ctypes.c_long(keyring))
        added = LIBC.syscall(add_key, b"user", b"grader-note", b"x", 1, ctypes.c_long(keyring))
        seen[name] = [found >= 0, added >= 0 or ctypes.get_errno()]
    with open("/proc/keys") as keys:
        seen["notes"] = [line for line in keys if "grader-note" in line]
    {report_back("seen")}
"""


def test_no_key_of_one_run_reaches_another(pool: WorkerPool) -> None:
    """Route 4: a run can add no key to any keyring it holds (the kernel refuses every
    keyring call, ENOSYS), finds none an earlier run of this or another pool added, and
    sees no key of another run in /proc/keys: at every level."""
    with WorkerPool(workers=1) as other:
        runs = [reported(run(p, KEY_WRITER), "test_keys") for p in (pool, other, pool)]
    refused = {name: [False, 38] for name in ("session", "user", "user session")}
    for seen in runs:
        assert seen == {**refused, "notes": []}, seen


REACHES_THE_TESTS = """
import os

def _try(path, mode):
    try:
        with open(path, mode) as file:
            file.write("x") if "a" in mode else file.read()
        return "done"
    except OSError as error:
        return error.strerror

TEST_FILE = [_try("../tests/test_hostile.py", "r"), _try("../tests/test_hostile.py", "a"),
             _try("../tests/planted.py", "w"), _try("../pytest.ini", "a")]
ROOT = 0
"""


def test_the_implementation_cannot_reach_the_test_files(pool: WorkerPool) -> None:
    """Route 5: the implementation process runs as a user of its own, in a folder of its own:
    the test process's file and folder are out of its reach, for reading and for writing
    (at ``none`` both are the grader's user, and nothing keeps them apart)."""
    result = run(
        pool,
        "import radix\n\ndef test_x():\n    assert radix.TEST_FILE == ['Permission denied'] * 4\n",
        implementation=REACHES_THE_TESTS,
    )
    if pool.isolation == "none":
        assert "done" in result.detail("test_x")
    else:
        assert result.all_passed, result


def test_the_course_tests_seed_their_state_machines() -> None:
    """Route 5 also: hypothesis seeds a derandomized state machine from a digest of its source,
    which it reads again from the file at run time; every state machine the course tests run
    has a seed of its own instead (``@seed`` with a constant), so no rewrite of the file can
    pick the programs it draws."""
    tree = ast.parse(CHAPTER.course_test_file.read_text(encoding="utf-8"))
    machines = [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(base, ast.Name) and base.id.startswith("TreeAgainst") for base in node.bases
        )
    ]
    assert len(machines) == 2
    for machine in machines:
        seeds = [
            decorator
            for decorator in machine.decorator_list
            if isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Name)
            and decorator.func.id == "seed"
            and isinstance(decorator.args[0], ast.Name)
            and decorator.args[0].id.startswith("SEED_")
        ]
        assert len(seeds) == 1, machine.name


ZOMBIE_LEADER = """
import ctypes, os, threading, time

def test_leave_a_thread_behind():
    if os.fork() == 0:
        os.setsid()
        def linger():
            ctypes.CDLL(None).prctl(15, NAME, 0, 0, 0)  # PR_SET_NAME: the test finds it so
            time.sleep(60)
        threading.Thread(target=linger).start()
        ctypes.CDLL(None).syscall({"x86_64": 60, "aarch64": 93}[os.uname().machine], 0)
    time.sleep(0.5)
"""


def threads_named(name: str) -> list[str]:
    """Every thread on the machine whose name is ``name``, as ``pid/tid``."""
    found = []
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
        with contextlib.suppress(OSError):
            if (task / "comm").read_text().strip() == name:
                found.append(f"{task.parent.parent.name}/{task.name}")
    return found


@pytest.mark.parametrize("level", LEVELS)
def test_a_zombie_looking_leader_is_swept_with_its_run(level: IsolationLevel) -> None:
    """Route 3: a process whose main thread ended alone reads ``Z`` while a thread of it runs
    on; once its run is over nothing of it lives, at every level the machine reaches."""
    name = f"z{os.urandom(6).hex()}"
    with WorkerPool(workers=1, at_most=level) as workers:
        result = run(workers, ZOMBIE_LEADER.replace("NAME", repr(name.encode())))
        assert result.all_passed, result
        assert threads_named(name) == []
    assert stray_processes() == []


def test_a_malformed_event_fails_its_run_not_the_worker(pool: WorkerPool) -> None:
    """Route 6: a line of 100,000 nested brackets, or a line of 1 MB, on the outcome channel
    is a crashed run with a one-line cause; the worker serves the next run."""
    for line in ('b"[" * 100_000', 'b"[" + b"1," * 500_000 + b"1]"'):
        result = run(
            pool,
            f"""
            import os
            def test_x():
                for name in os.listdir("/proc/self/fd"):
                    try:
                        if os.readlink(f"/proc/self/fd/{{name}}").startswith("socket:"):
                            os.write(int(name), {line} + b"\\n")
                    except OSError:
                        pass
            """,
        )
        assert result.status == "crashed", result
        assert result.message == "the test process sent a malformed event on the outcome channel"
    assert run(pool, "def test_x():\n    pass\n").all_passed


def test_a_timeout_counts_only_when_confirmed_alone(pool: WorkerPool) -> None:
    """Route 7: a run that uses its whole CPU time is run once more, alone, before its timeout
    counts (``confirmed``); one that only sleeps past its CPU limit is no timeout at all: the
    limit is on CPU time, and the wall clock only a backstop."""
    spin = Job(
        REFERENCE,
        "test_hostile.py",
        "def test_spin():\n    while True:\n        pass\n",
        1.0,
        "radix",
    )
    first = pool.run(spin)
    assert first.status == "timeout" and not first.confirmed, first
    spins = pool.confirm(spin, first)
    assert spins.status == "timeout" and spins.confirmed, spins
    assert spins.message.endswith("(confirmed: it timed out again, run alone)")
    assert pool.confirm(spin, run(pool, "def test_x():\n    pass\n")).all_passed
    nap = Job(
        REFERENCE,
        "test_hostile.py",
        "import time\ndef test_nap():\n    time.sleep(2.5)\n",
        1.0,
        "radix",
    )
    sleeps = pool.run_confirmed(nap)
    assert sleeps.all_passed and not sleeps.confirmed, sleeps


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


def test_a_busy_machine_gives_the_same_report(chapter: Chapter, tmp_path: Path) -> None:
    """Route 7: an honest submission whose tests cost CPU time gets the same report while
    busy loops hold every core as on the machine as it is (timings aside): a limit on a run's
    own CPU time does not move with the machine's load, and a timeout is confirmed alone."""
    case = next(case for case in CASES if case["name"] == "steals_cpu")
    folder = lay_out({**case, "radix": "reference"}, tmp_path)
    reports = []
    with WorkerPool(workers=2) as workers:
        reports.append(report_to_dict(check(chapter, folder, LIMITS, pool=workers), CHAPTER))
        with busy_cores(4 * len(os.sched_getaffinity(0))):
            reports.append(report_to_dict(check(chapter, folder, LIMITS, pool=workers), CHAPTER))
    for report in reports:
        del report["timings"], report["graded_at"]
    assert reports[0] == reports[1]
    assert reports[0]["verdict"] == "fail"
    statuses = {
        name: mutant["status"] for name, mutant in reports[0]["mutation"]["mutants"].items()
    }
    assert set(statuses.values()) == {"survived"}, statuses
