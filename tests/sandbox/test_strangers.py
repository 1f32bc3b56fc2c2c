"""Issue 33: classmates are strangers. What lives in the kernel outside every folder (System V
IPC, POSIX message queues) passes nothing from one run to another, and what a run leaves in
its folder (``output.log`` swapped for a link to ``/dev/zero`` or a FIFO) neither blocks nor
floods the worker that reads it: at every level this machine reaches.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import os
import resource
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hostile_harness import KIT, REFERENCE, report_back, reported, run, stray_processes

from grader.commands import batch
from grader.commands.batch import grade_batch
from grader.errors import GraderError
from grader.inputs.catalog import Chapter
from grader.sandbox import procfs, reaper
from grader.sandbox.confine import user
from grader.sandbox.confine.folders import open_to_runs
from grader.sandbox.host.pool import MACHINE_LOCK, WorkerPool
from grader.sandbox.levels import LEVELS, IsolationLevel

pytest_plugins = ["hostile_harness"]
pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)


@pytest.fixture(scope="module", params=LEVELS)
def level_pool(request: pytest.FixtureRequest) -> Iterator[WorkerPool]:
    """Workers at each level in turn, as far as this machine reaches it."""
    with WorkerPool(workers=1, other_seed=False, at_most=request.param) as workers:
        yield workers
    assert stray_processes() == []


IPC_KEY = 0x33B1
"""The key alice's segment, semaphore and queue are made under, and bob looks for."""

IPC_CALLS = """
import ctypes, os

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.shmat.restype = ctypes.c_void_p


def _tried(result):
    return "made" if result != -1 else f"errno {ctypes.get_errno()}"


def _leave(text):
    '''Alice: put ``text`` where a later run could find it, in every IPC the kernel has.'''
    segment = _LIBC.shmget(KEY, 65536, 0o1000 | 0o666)
    done = {"shm": _tried(segment)}
    if segment != -1:
        address = _LIBC.shmat(segment, None, 0)
        ctypes.memmove(address, text, len(text))
    done["sem"] = _tried(_LIBC.semget(KEY, 1, 0o1000 | 0o666))
    done["msg"] = _tried(_LIBC.msgget(KEY, 0o1000 | 0o666))
    done["mq"] = _tried(_LIBC.mq_open(b"/grader-note", 0o100 | 0o2, 0o666, None))
    return sorted(done.items())  # plain data: what a module may offer the tests


def _find():
    '''Bob: whatever alice left, the first bytes of it.'''
    segment = _LIBC.shmget(KEY, 0, 0)
    found = {"shm": _tried(segment)}
    if segment != -1:
        found["text"] = ctypes.string_at(_LIBC.shmat(segment, None, 0), 64).decode(errors="replace")
    found["sem"] = _tried(_LIBC.semget(KEY, 0, 0))
    found["msg"] = _tried(_LIBC.msgget(KEY, 0, 0))
    found["mq"] = _tried(_LIBC.mq_open(b"/grader-note", 0o2, 0, None))
    return sorted(found.items())
""".replace("KEY", str(IPC_KEY))

ALICE = f"{REFERENCE}\n{IPC_CALLS}\nLEFT = _leave(b'class RadixTree:  # the whole tree')\n"
BOB = f"{REFERENCE}\n{IPC_CALLS}\nFOUND = _find()\n"
ASKS = f"""
import base64, json, zlib
import radix


def test_what_the_implementation_did():
    {report_back("getattr(radix, 'LEFT', None) or radix.FOUND")}
"""
REFUSED = {kind: "errno 38" for kind in ("shm", "sem", "msg", "mq")}


def test_no_ipc_passes_the_source_of_one_run_to_another(level_pool: WorkerPool) -> None:
    """Item 4: alice's ``radix.py`` leaves its source in a System V shared memory segment (and
    a semaphore, a message queue, a POSIX queue) for bob's to run. Every call is refused
    (ENOSYS, the seccomp filter that refuses the keyring calls), at every level, in the
    implementation's process as in the test's; bob finds nothing."""
    left = reported(run(level_pool, ASKS, implementation=ALICE), "test_what_the_implementation_did")
    found = reported(run(level_pool, ASKS, implementation=BOB), "test_what_the_implementation_did")
    assert dict(left) == REFUSED, left
    assert dict(found) == REFUSED, found
    in_the_tests = f"{IPC_CALLS}\n{ASKS.replace('radix.FOUND', '_leave(bytes(8))')}"
    tests_left = reported(run(level_pool, in_the_tests), "test_what_the_implementation_did")
    assert dict(tests_left) == REFUSED, tests_left


def test_the_sweep_removes_what_a_runs_users_left_in_ipc() -> None:
    """Where no filter refused them (a machine whose call table the kit does not know), what
    a run's users made in System V IPC is removed by the sweep after the run, by owner;
    another user's objects stay."""
    run_uid, other_uid = user.RUN_IDS.start + 3301, user.RUN_IDS.start + 3302
    libc = ctypes.CDLL(None, use_errno=True)
    for uid, key in ((run_uid, IPC_KEY + 1), (other_uid, IPC_KEY + 2)):
        pid = os.fork()
        if pid == 0:
            try:
                os.setgid(uid)
                os.setuid(uid)
                made = [
                    libc.shmget(key, 4096, 0o1000 | 0o600),
                    libc.semget(key, 1, 0o1000 | 0o600),
                    libc.msgget(key, 0o1000 | 0o600),
                ]
            finally:
                os._exit(0 if -1 not in made else 1)
        assert os.waitstatus_to_exitcode(reaper.wait_for(pid)) == 0
    try:
        assert sorted(kind for kind, _ in procfs.users_ipc_objects([run_uid])) == [
            "msg",
            "sem",
            "shm",
        ]
        reaper.remove_users_ipc([run_uid])
        assert procfs.users_ipc_objects([run_uid]) == []
        assert len(procfs.users_ipc_objects([other_uid])) == 3
    finally:
        reaper.remove_users_ipc([run_uid, other_uid])


SWAPS_ITS_LOG = """
import os


def test_swap():
    os.unlink("output.log")
    SWAP
"""


@pytest.mark.parametrize(
    "swap",
    ['os.symlink("/dev/zero", "output.log")', 'os.mkfifo("output.log")'],
    ids=["zero", "fifo"],
)
def test_a_run_that_swaps_its_output_log_neither_floods_nor_blocks_the_worker(
    level_pool: WorkerPool, swap: str
) -> None:
    """Item 5: the worker reads a run's output through the descriptor it opened before the
    run, never by path: a link to ``/dev/zero`` or a FIFO in its place changes nothing but a
    note in the run's own record, and the next run goes as usual."""
    result = run(level_pool, SWAPS_ITS_LOG.replace("SWAP", swap))
    assert result.all_passed, result
    assert "the run put something else in place of output.log" in result.output, result.output
    assert "[100%]" in result.output, result.output  # pytest wrote it after the swap
    assert run(level_pool, "def test_x():\n    print('plain')\n").all_passed


FILLS_ITS_FOLDER = """
import os


def test_fill():
    os.makedirs("notes", exist_ok=True)
    for number in range(COUNT):
        with open(f"notes/{number}", "wb") as note:
            note.write(bytes(SIZE))
"""


@pytest.mark.parametrize(
    ("count", "size", "said"),
    [(3000, 0, "more than 2000 files"), (40, 3 * 2**20, "more than 64 MB")],
    ids=["files", "bytes"],
)
def test_a_run_that_fills_its_folder_fails_itself_not_the_machine(
    level_pool: WorkerPool, count: int, size: int, said: str
) -> None:
    """Item 6: thousands of files, or more disk than a run may take, in the run's own folder
    (each file is kept under 4 MB by the kernel's RLIMIT_FSIZE): the run fails with a message
    saying why, whether it ended first or was stopped; the next run goes as usual."""
    source = FILLS_ITS_FOLDER.replace("COUNT", str(count)).replace("SIZE", str(size))
    result = run(level_pool, source)
    assert result.status == "crashed", result
    assert said in result.message, result.message
    assert run(level_pool, "def test_x():\n    pass\n").all_passed


FORKS_AWAY = """
import os, time


def test_forks():
    children = []
    try:
        for _ in range(1000):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError as error:
        assert len(children) < 100, len(children)
        raise RuntimeError(f"LIMITED {error.strerror}")
    raise RuntimeError(f"UNLIMITED {len(children)}")
"""


def test_a_run_cannot_fork_more_than_its_process_limit(level_pool: WorkerPool) -> None:
    """Item 6: at ``uid`` and ``namespaces`` a run's processes are capped (the run's own uid's
    RLIMIT_NPROC, 64, and its cgroup's pids.max where there is one): a fork bomb stops at the
    limit and every process of it is swept. At ``none`` (an ordinary user) only a cgroup
    could cap it, and none is given, so it is not tried there."""
    if level_pool.isolation == "none":  # 1000 processes as the grader's own user: not tried
        limit = "import resource\ndef test_limit():\n    assert resource.getrlimit(6) == LIMIT\n"
        own = resource.getrlimit(resource.RLIMIT_NPROC)
        assert run(level_pool, limit.replace("LIMIT", repr(own))).all_passed
        return
    result = run(level_pool, FORKS_AWAY)
    assert "RuntimeError: LIMITED Resource temporarily unavailable" in result.detail(
        "test_forks"
    ), result.detail("test_forks")
    assert stray_processes() == []


ALICE_WAITS = """
import time

PLACES = ("home/note", "tmp/note", "tests/note")


def test_alice():
    for place in PLACES:
        with open(place, "w") as note:
            note.write("alice")
    time.sleep(4)
    for place in PLACES:
        with open(place) as note:
            assert note.read() == "alice", place
"""

BOB_TRIES = f"""
import base64, json, os, signal, zlib


def test_bob():
    done = []
    for path in PATHS:
        for mode in ("r", "a"):
            try:
                open(path, mode).close()
                done.append(mode + " " + path)
            except OSError:
                pass
        try:
            os.listdir(os.path.dirname(path))
            done.append("listed " + os.path.dirname(path))
        except OSError:
            pass
    for pid in PIDS:
        try:
            os.kill(pid, 0)
            done.append("may signal " + str(pid))
        except OSError:
            pass
    {report_back("done")}
"""


def alices_run() -> tuple[str, list[int]]:
    """Alice's run folder and her run's processes, as root sees them from outside (through
    /proc, once her notes are written)."""
    for _ in range(400):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if (entry / "cwd" / "home" / "note").read_text() == "alice":
                        folder = os.readlink(entry / "cwd")
                        pids = [int(entry.name), *procfs.descendants(int(entry.name))]
                        return folder, pids
        time.sleep(0.01)
    raise AssertionError("alice's run never wrote her notes")


@pytest.mark.parametrize("level", ["uid", "namespaces"])
def test_classmates_are_strangers_alive_at_once_and_after(level: IsolationLevel) -> None:
    """Two students graded at once (two pools, as two graders on one machine) and one after
    the other: bob's run can neither read, write nor list alice's files, nor signal her
    processes; alice's run finds her notes as she left them. (At ``uid`` bob's run waits for
    alice's to end: the runs of every grader there go one at a time.) At ``none`` every run
    is the grader's own user, so a check there is practice and makes no such promise
    (docs/security.md)."""
    with (
        WorkerPool(workers=1, other_seed=False, at_most=level) as alices,
        WorkerPool(workers=1, other_seed=False, at_most=level) as bobs,
        ThreadPoolExecutor(1) as beside,
    ):
        assert alices.isolation == bobs.isolation == level
        alice = beside.submit(run, alices, ALICE_WAITS)
        folder, pids = alices_run()
        if level == "namespaces":
            # Every run's folder is /run/grader in a root of its own, which in bob's root is
            # his: he tries alice's by the machine's path for it.
            assert alices.scratch is not None
            folder = str(next(alices.scratch.glob("run-*")))
        paths = [f"{folder}/{place}" for place in ("home/note", "tmp/note", "tests/note")]
        paths.append(f"{folder}/tests/test_hostile.py")
        tries = BOB_TRIES.replace("PATHS", repr(paths)).replace("PIDS", repr(pids))
        at_once = reported(run(bobs, tries), "test_bob")
        assert alice.result().all_passed, alice.result()
        after = reported(run(bobs, tries), "test_bob")
    assert at_once == [] and after == [], (at_once, after)
    assert stray_processes() == []


def test_at_uid_a_batch_refuses_a_class_other_users_can_enter(
    monkeypatch: pytest.MonkeyPatch, tiny_chapter: Chapter, reachable_tmp_path: Path
) -> None:
    """At ``uid`` only permissions keep bob's run from alice's submission and from her
    report and kept copy in the out folder: a batch whose class or out folder other users
    can enter is refused before anything runs, naming them; closed, they pass."""
    monkeypatch.setattr(batch, "WorkerPool", functools.partial(WorkerPool, at_most="uid"))
    folders = []
    for name in ("alice", "bob"):
        folder = reachable_tmp_path / "class" / name
        shutil.copytree(KIT / "student", folder)
        folders.append(folder)
    out = reachable_tmp_path / "out"
    with pytest.raises(GraderError) as refused:
        grade_batch(tiny_chapter, folders, out)
    said = str(refused.value)
    alice, bob = folders
    assert f"can enter {alice}, {bob}, {out}: a student's run" in said, said
    assert said.endswith("nothing was graded") and not out.exists()
    out.mkdir(mode=0o700)
    (reachable_tmp_path / "class").chmod(0o700)  # closing a folder above them does too
    assert open_to_runs([out, *folders]) == []


SPAN = f"""
import base64, json, time, zlib


def test_when():
    started = time.monotonic()
    time.sleep(0.5)
    {report_back("[started, time.monotonic()]")}
"""


def test_at_uid_the_runs_of_two_graders_never_overlap() -> None:
    """At ``uid`` a run has no namespace: alive at once, two runs could meet in ``/tmp`` or
    ``/dev/shm`` (a file of mode 0666) before any sweep. So the runs of every grader on the
    machine go one at a time (a lock only root can open, ``pool.MACHINE_LOCK``): two pools,
    as two graders, never run at once."""
    with (
        WorkerPool(workers=1, other_seed=False, at_most="uid") as one,
        WorkerPool(workers=1, other_seed=False, at_most="uid") as other,
        ThreadPoolExecutor(4) as threads,
    ):
        assert one.isolation == other.isolation == "uid"
        results = list(threads.map(lambda pool: run(pool, SPAN), [one, other, one, other]))
    spans = sorted(reported(result, "test_when") for result in results)
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(spans)), spans
    assert MACHINE_LOCK.stat().st_mode & 0o077 == 0
