"""The operating system's confinement of untrusted processes keeps what its level promises.

Every test here holds whatever the machine allows: a level the machine does
not reach is asserted to be reported lower, and the promises of the level
that is reached are checked. As root (CI runs as root) the confined path
itself runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.catalog import kit_root
from grader.sandbox import confine, libc, reaper
from grader.sandbox.confine import LEVELS, Confinement, confinement_for, isolation_level
from grader.sandbox.host.client import LIVE_WORKERS
from grader.sandbox.host.job import OTHER_HASH_SEED, Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.procfs import descendants, still_runs


def observe_confined(confinement: Confinement, workdir: Path) -> tuple[dict[str, Any], int]:
    """What a confined child sees of the machine, and its exit code as the parent reads it."""
    read_end, write_end = os.pipe()
    pid = confine.fork_confined(confinement, workdir)
    if pid == 0:  # the confined child: report and end by a signal
        try:
            os.close(read_end)
            seen: dict[str, Any] = {
                "uid": os.getuid(),
                "gid": os.getgid(),
                "groups": os.getgroups(),
                "pid": os.getpid(),
                "processes": len([name for name in os.listdir("/proc") if name.isdigit()]),
                "hidden": [os.listdir(folder) for folder in confinement.hidden],
                "kit_writable": os.access(kit_root(), os.W_OK),
                "workdir_writable": os.access(workdir, os.W_OK),
            }
            try:
                socket.create_connection(("127.0.0.1", 9), timeout=1).close()
                seen["network"] = "connected"
            except OSError as error:
                seen["network"] = error.strerror
            os.write(write_end, json.dumps(seen).encode())
            os.kill(os.getpid(), 15)
        finally:
            os._exit(3)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    return json.loads(data), confine.exit_code(status, confinement)


def test_root_reaches_a_level_above_none_and_others_report_none() -> None:
    level = isolation_level()
    assert level in LEVELS
    if os.geteuid() != 0:
        assert level == "none"
    else:
        # CI runs as root: a root grader that cannot confine is a finding, not a skip.
        assert level != "none"


def test_the_level_reached_keeps_its_promises(tmp_path: Path) -> None:
    level = isolation_level()
    confinement = confinement_for(level, kit_root())
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"confine-{os.getpid()}"
    workdir.mkdir()
    try:
        confine.hand_over([workdir], confinement)
        seen, code = observe_confined(confinement, workdir)
    finally:
        workdir.rmdir()
    assert code == -15
    assert seen["workdir_writable"]
    if level == "none":
        assert seen["uid"] == os.getuid()
        return
    assert (seen["uid"], seen["gid"], seen["groups"]) == (65534, 65534, [])
    assert not seen["kit_writable"]
    if level == "namespaces":
        assert seen["pid"] == 2 and seen["processes"] == 2
        assert seen["hidden"] == [[] for _ in confinement.hidden] and confinement.hidden
        assert seen["network"] == "Network is unreachable"


def test_a_confined_run_leaves_no_process_once_its_pid_is_killed() -> None:
    """At the ``namespaces`` level, killing the pid ``fork_confined`` returned ends every
    process of the run, even a detached grandchild; at every level the run's processes
    carry the mark the grader's sweep looks for."""
    libc.become_subreaper()  # orphans come here, where the test can see them
    confinement = confinement_for(isolation_level(), kit_root())
    read_end, write_end = os.pipe()
    pid = confine.fork_confined(confinement, Path("/"))
    if pid == 0:
        try:
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.write(write_end, b"up")
                    time.sleep(60)
                os._exit(0)
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(write_end)
    assert os.read(read_end, 2) == b"up"
    os.close(read_end)
    run = [process for process in descendants(os.getpid()) if still_runs(process)]
    assert run and all(confine.is_untrusted(process) for process in run)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    if isolation_level() == "namespaces":
        deadline = time.monotonic() + 5
        while descendants(os.getpid()) and time.monotonic() < deadline:
            reap_any()
            time.sleep(0.02)
        assert descendants(os.getpid()) == []
    for stray in descendants(os.getpid()):  # below namespaces, the grader's sweep does this
        os.kill(stray, 9)
    reap_any()


def test_a_sweep_leaves_every_process_it_killed_reaped() -> None:
    """A sweep round waits on the pidfds of the processes it killed, not a fixed sleep, and
    still ends with every one of them dead and reaped, none left a zombie. (In a child of
    its own: a sweep here would end every worker this test process has.)"""
    sweeper = os.fork()
    if sweeper == 0:
        try:
            children = []
            for _ in range(3):
                pid = os.fork()
                if pid == 0:
                    time.sleep(60)
                    os._exit(0)
                children.append(pid)
            reaper.kill_descendants()
            gone = descendants(os.getpid()) == []
            for pid in children:
                try:
                    os.waitpid(pid, os.WNOHANG)
                    gone = False
                except ChildProcessError:
                    pass
            os._exit(0 if gone else 1)
        finally:
            os._exit(2)
    assert os.waitstatus_to_exitcode(os.waitpid(sweeper, 0)[1]) == 0


def reap_any() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def test_a_process_without_the_mark_is_not_taken_for_a_run() -> None:
    assert not confine.is_untrusted(os.getpid())
    assert not confine.is_untrusted(1)


def test_workers_run_without_address_randomisation() -> None:
    """Runs start with the same addresses every time (issue 11, case 7): the warm workers,
    and so every run forked from them, have layout randomisation off."""
    with WorkerPool(workers=1) as pool:
        job = Job("", "test_x.py", "def test_x():\n    pass\n", 30.0, module="radix")
        assert pool.run(job).all_passed  # the worker is up (it re-runs itself before that)
        assert pool.run(replace(job, hash_seed=OTHER_HASH_SEED)).all_passed
        personalities = [
            int(Path(f"/proc/{pid}/personality").read_text(), 16) for pid in LIVE_WORKERS
        ]
        assert pool.isolation == isolation_level()
    assert personalities and all(value & 0x0040000 for value in personalities)


def test_a_report_names_the_cgroups_a_run_gets() -> None:
    """The report's ``confinement`` says which cgroups a run is put in: the ones a worker can
    make on this machine, no more and no fewer; and namespaces only at that level."""
    level = isolation_level()
    cgroups = confine.Cgroups()
    try:
        made = list(cgroups.kinds)
    finally:
        cgroups.close()
    described = confine.what_runs_get(level)
    assert described["cgroups"] == made
    assert bool(described["namespaces"]) == (level == "namespaces")
    assert ("nobody" in str(described["identity"])) == (level == "namespaces")


def test_a_forked_process_keeps_only_the_descriptors_it_is_handed() -> None:
    """Neighbours in the kept set too: ``os.closerange(n, n)`` would close everything from n."""
    kept, dropped = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            confine.close_descriptors_but({0, 1, 2, kept})
            still_open = [fd for fd in (0, 1, 2, kept, dropped) if _is_open(fd)]
            code = 0 if still_open == [0, 1, 2, kept] else 1
        finally:
            os._exit(code)
    os.close(kept)
    os.close(dropped)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
