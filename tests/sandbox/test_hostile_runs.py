"""Layers 2 to 6 held at the sandbox level: hostile code run directly on a pool, and what it
can see, reach, leave behind or break.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import resource
import shutil
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hostile_harness import (
    HOSTILE,
    KIT,
    MUTANT_S11,
    REFERENCE,
    report_back,
    reported,
    run,
    stray_processes,
    wait_until_gone,
)

from grader.sandbox.confine import leftovers, policy, probe, user
from grader.sandbox.confine.limits import MEMORY_LIMIT_BYTES, OUTPUT_LIMIT_BYTES
from grader.sandbox.host.job import OTHER_HASH_SEED, wall_backstop
from grader.sandbox.host.pool import WorkerPool

pytest_plugins = ["hostile_harness"]
pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)


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
    next either (at the ``namespaces`` level a run cannot write them, nor see them). Every
    run of the file finds them at the same paths (issue 33: a path that varies moves
    allocations and the order of sets), fresh each time: the note test passes each run."""
    source = (HOSTILE / "remembers_runs" / "tests" / "test_ds07_radix.py").read_text()
    source += "\nimport base64, json, zlib\n\ndef test_where():\n"
    source += f"    {report_back('[tempfile.gettempdir(), str(pathlib.Path.home())]')}\n"
    places = []
    for _ in range(3):
        result = run(pool, source)
        assert result.status == "completed" and result.failing() == ["test_where"], result
        places += reported(result, "test_where")
    assert places == places[:2] * 3 and len(set(places)) == 2
    assert not any(Path(place).exists() for place in places)
    notes = [Path(folder, "seen") for folder in leftovers.SHARED_FOLDERS]
    if pool.isolation == "namespaces":
        assert not any(note.exists() for note in notes)
    for note in notes:
        with contextlib.suppress(OSError):
            note.unlink()


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
    folders = (*leftovers.SHARED_FOLDERS, str(shared))
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
    reachable_tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the sweep removes: the untrusted user's entries, in the shared folders and in
    the folders below them every user may write; nothing of another user's, and nothing
    a symbolic link points at."""
    if os.geteuid() != 0:
        assert probe.isolation_level() == "none"
        return
    nobody = user.UNTRUSTED_UID
    theirs_top, ours_top = reachable_tmp_path / "theirs", reachable_tmp_path / "ours"
    open_below, closed_below = reachable_tmp_path / "open", reachable_tmp_path / "closed"
    for folder, mode in ((open_below, 0o1777), (closed_below, 0o755)):
        folder.mkdir()
        folder.chmod(mode)
    victim = reachable_tmp_path / "ours" / "kept"
    planted = [theirs_top, open_below / "note", closed_below / "note", reachable_tmp_path / "link"]
    ours_top.mkdir()
    victim.write_text("kept")
    theirs_top.mkdir()
    (theirs_top / "inside").write_text("x")
    (open_below / "note").write_text("x")
    (closed_below / "note").write_text("x")
    (reachable_tmp_path / "link").symlink_to(victim)
    for path in planted:
        os.chown(path, nobody, nobody, follow_symlinks=False)
    monkeypatch.setattr(leftovers, "SHARED_FOLDERS", (str(reachable_tmp_path),))
    leftovers.remove_leftovers(policy.Confinement("uid"))
    left = sorted(
        str(path.relative_to(reachable_tmp_path)) for path in reachable_tmp_path.rglob("*")
    )
    assert left == ["closed", "closed/note", "open", "ours", "ours/kept"]
    assert victim.read_text() == "kept"


def test_a_confined_run_cannot_write_the_kit_or_the_reports(
    pool: WorkerPool, reachable_tmp_path: Path
) -> None:
    """Confined to another user, a run can write neither into the kit nor beside a report
    the grader writes (a folder of the grader's user); unconfined it could, which is what
    docs/security.md says of the level ``none``."""
    reports = reachable_tmp_path / "reports"
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
    """At the ``namespaces`` level nothing of the kit is in a run's root, even by the path
    the grader's own package gives away (issue 33: an allow-list, not hidden folders): of
    the grader only the modules a run runs; below it the kit can be read."""
    result = run(
        pool,
        """
        import os
        import grader
        KIT = os.path.dirname(os.path.dirname(grader.__file__))
        def test_look():
            seen = {name: os.path.exists(os.path.join(KIT, name))
                    for name in ("reference", "mutants", "wheats", "course_tests", "chapter")}
            GRADER = ("catalog.py", "sandbox/confine", "sandbox/protocol",
                      "sandbox/untrusted")
            here = os.path.dirname(grader.__file__)
            grader_files = [n for n in GRADER if os.path.exists(os.path.join(here, n))]
            if not all(seen.values()):
                raise RuntimeError(repr((seen, grader_files)))
        """,
    )
    if pool.isolation == "namespaces":
        assert result.outcome("test_look") == "failed"
        nothing = dict.fromkeys(("reference", "mutants", "wheats", "course_tests", "chapter"), 0)
        seen = f"{nothing!r}, ['sandbox/protocol', 'sandbox/untrusted']"
        assert seen.replace("0", "False") in result.detail("test_look")
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
        assert probe.isolation_level() == "none" and os.geteuid() != 0
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
        import os, subprocess, sys, time
        SLEEP = [sys.executable, "-c", "import time; time.sleep({marker})"]
        def test_leaves_processes():
            subprocess.Popen(SLEEP, start_new_session=True, close_fds=False)
            subprocess.Popen(SLEEP, close_fds=False)
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
        import base64, json, subprocess, sys, zlib
        SHOW = (
            "import resource as r; print(*(r.getrlimit(getattr(r, 'RLIMIT_' + n))[0] "
            "for n in ('AS', 'FSIZE', 'NOFILE', 'CPU')))"
        )
        def test_child_limits():
            limits = subprocess.run([sys.executable, "-c", SHOW],
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
    memory, size, files, cpu = map(int, reported(result, "test_child_limits").split())
    assert (memory, size) == (MEMORY_LIMIT_BYTES, OUTPUT_LIMIT_BYTES)
    assert files <= 256 and cpu != resource.RLIM_INFINITY


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
