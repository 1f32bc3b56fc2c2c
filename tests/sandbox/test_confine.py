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
import shlex
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TypedDict, cast

import pytest

from grader.errors import GraderError
from grader.inputs.catalog import kit_root
from grader.sandbox import libc, reaper
from grader.sandbox.confine import (
    contain,
    descriptors,
    folders,
    limits,
    pid_namespace,
    probe,
    report,
    user,
)
from grader.sandbox.confine.cgroups import Cgroups
from grader.sandbox.confine.policy import Confinement, confinement_for
from grader.sandbox.confine.probe import isolation_level
from grader.sandbox.host.client import LIVE_WORKERS
from grader.sandbox.host.job import OTHER_HASH_SEED, Job
from grader.sandbox.host.pool import WorkerPool, require_isolation
from grader.sandbox.levels import LEVELS
from grader.sandbox.procfs import descendants, still_runs

pytest_plugins = ["hostile_harness"]

KIT_CONTENT = ("reference", "mutants", "wheats", "course_tests", "chapter", "student", "grader")
"""What the kit holds: at ``namespaces`` none of it is in a run's root (of the grader's code,
only the modules a run runs, which no bare confinement asks for)."""
MACHINE_FOLDERS = ("/tmp", "/home", "/var", "/etc", "/autograder", "/srv", "/opt")


class Seen(TypedDict):
    """What a confined child reports of the machine."""

    uid: int
    gid: int
    groups: list[int]
    pid: int
    processes: int
    kit_content: list[str]
    machine: list[str]
    kit_writable: bool
    workdir_writable: bool
    network: str


def _network() -> str:
    """``connected`` if this process reaches the machine's loopback, else why not."""
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1).close()
    except OSError as error:
        return error.strerror or str(error)
    return "connected"


def observe_confined(confinement: Confinement, workdir: Path) -> tuple[Seen, int]:
    """What a confined child sees of the machine, and its exit code as the parent reads it."""
    read_end, write_end = os.pipe()
    pid = contain.fork_confined(confinement, workdir)
    if pid == 0:  # the confined child: report and end by a signal
        try:
            os.close(read_end)
            seen: Seen = {
                "uid": os.getuid(),
                "gid": os.getgid(),
                "groups": os.getgroups(),
                "pid": os.getpid(),
                "processes": len([name for name in os.listdir("/proc") if name.isdigit()]),
                "kit_content": [name for name in KIT_CONTENT if (kit_root() / name).exists()],
                "machine": [path for path in MACHINE_FOLDERS if os.path.exists(path)],
                "kit_writable": os.access(kit_root(), os.W_OK),
                "workdir_writable": os.access(
                    folders.folder_seen(workdir, confinement.level), os.W_OK
                ),
                "network": _network(),
            }
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
    return cast(Seen, json.loads(data)), pid_namespace.exit_code(status, confinement)


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
    confinement = confinement_for(level)
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"confine-{os.getpid()}"
    workdir.mkdir()
    try:
        folders.hand_over([workdir], confinement)
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
        assert seen["kit_content"] == [] and seen["machine"] == []
        assert confinement.view.binds
        assert seen["network"] == "Network is unreachable"


def test_a_confined_run_leaves_no_process_once_its_pid_is_killed() -> None:
    """At the ``namespaces`` level, killing the pid ``fork_confined`` returned ends every
    process of the run, even a detached grandchild; at every level the run's processes
    carry the mark the grader's sweep looks for."""
    libc.become_subreaper()  # orphans come here, where the test can see them
    confinement = confinement_for(isolation_level())
    read_end, write_end = os.pipe()
    pid = contain.fork_confined(confinement, Path("/"))
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
    assert run and all(limits.is_untrusted(process) for process in run)
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
    assert not limits.is_untrusted(os.getpid())
    assert not limits.is_untrusted(1)


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
    cgroups = Cgroups()
    try:
        made = list(cgroups.kinds)
    finally:
        cgroups.close()
    described = report.what_runs_get(level)
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
            descriptors.close_descriptors_but({0, 1, 2, kept})
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


def test_as_root_best_means_namespaces_else_uid_else_exit_2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 33 item 3: as root, ``best`` takes the strongest level and never ``none``: below
    ``uid`` it refuses, naming what each level lacks and how to give it. The kit's own tests
    may still force ``none`` (``at_most``); an ordinary user gets ``none``, as practice."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(probe, "close_to_runs", lambda paths: [])
    for machine in ("namespaces", "uid"):
        monkeypatch.setattr(probe, "isolation_level", lambda machine=machine: machine)
        assert require_isolation("none") == machine
    monkeypatch.setattr(probe, "isolation_level", lambda: "none")
    monkeypatch.setattr(probe, "level_lacks", lambda level: (f"{level} lacks this",))
    with pytest.raises(GraderError) as refused:
        require_isolation("none")
    said = str(refused.value)
    assert "namespaces: namespaces lacks this" in said and "uid: uid lacks this" in said, said
    assert "CAP_SYS_ADMIN" in said and said.endswith("nothing was graded"), said
    assert require_isolation("none", at_most="none") == "none"
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert require_isolation("none") == "none"


def test_root_without_namespaces_never_grades_at_none(tmp_path: Path) -> None:
    """Item 3 as it was found: root without CAP_SYS_ADMIN (``capsh --drop``), the grader's
    Python perhaps under /root. Either the uid level holds (Python readable by a run, the kit
    not) and the check is graded there, or it exits 2 saying why; never a grade at ``none``.
    As an ordinary user the same check is practice."""
    report = tmp_path / "report.json"
    tmp_path.chmod(0o755)
    grade = (
        f"{shlex.quote(sys.executable)} -m grader check --json {shlex.quote(str(report))} "
        f"--submission {shlex.quote(str(kit_root() / 'student'))}"
    )
    command = ["capsh", "--drop=cap_sys_admin", "--", "-c", grade]
    if os.geteuid() != 0:
        command = ["sh", "-c", grade]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode == 2:
        assert os.geteuid() == 0, done.stderr
        assert "as root the grader grades only in confined runs" in done.stderr, done.stderr
        assert "uid: " in done.stderr and done.stderr.strip().endswith("nothing was graded")
        assert "Traceback" not in done.stderr and not report.exists()
    else:
        graded = json.loads(report.read_text(encoding="utf-8"))
        assert graded["isolation"] == ("uid" if os.geteuid() == 0 else "none"), graded
        assert graded["practice"] == (os.geteuid() != 0)


def lacking_as_nobody(needed: list[Path], private: list[Path]) -> list[str]:
    """What the uid probe's confined child says of these two lists, as ``nobody``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(user.UNTRUSTED_GID)
            os.setuid(user.UNTRUSTED_UID)
            said = probe._what_is_lacking("uid", needed, private)
            os.write(write_end, json.dumps(said).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as channel:
        found: list[str] = json.loads(channel.read())
    reaper.wait_for(pid)
    return found


def test_the_uid_probe_checks_exactly_its_two_lists(reachable_tmp_path: Path) -> None:
    """Issue 33: at ``uid`` a run must read Python and the packages a test imports, and must
    not enter the kit or the grader's install; the probe says which folder breaks which."""
    python, kit = reachable_tmp_path / "python", reachable_tmp_path / "kit"
    python.mkdir(mode=0o755)
    kit.mkdir(mode=0o700)
    assert lacking_as_nobody([python], [kit]) == []
    python.chmod(0o700)
    kit.chmod(0o755)
    assert lacking_as_nobody([python], [kit]) == [
        f"a run cannot read Python, which every run needs ({python})",
        f"a run could read the kit, which no run may ({kit})",
    ]


def test_at_uid_the_grader_closes_the_kit_or_says_why_not(
    reachable_tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: at ``uid`` the grader makes the kit's folders closed to run uids (the probe's
    child, as ``nobody``, then finds them so); one it cannot close (a read-only file system)
    is named, and a pool at ``uid``, forced there or not, refuses with exit 2."""
    reference, wheats = reachable_tmp_path / "reference", reachable_tmp_path / "wheats"
    for folder in (reference, wheats):
        folder.mkdir(mode=0o755)
    assert lacking_as_nobody([], [reference]) != []
    assert probe.close_to_runs([reference]) == []
    assert reference.stat().st_mode & 0o777 == 0o700
    assert lacking_as_nobody([], [reference]) == []

    def read_only(path: Path, mode: int) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "chmod", read_only)
    said = f"{wheats} could not be closed to other users (Read-only file system)"
    assert probe.close_to_runs([reference, wheats]) == [said]
    monkeypatch.setattr(probe, "private_paths", lambda kit: [reference, wheats])
    for at_most in ("uid", "namespaces"):
        monkeypatch.setattr(probe, "isolation_level", lambda: "uid")
        with pytest.raises(GraderError) as refused:
            require_isolation("none", at_most=at_most)
        assert said in str(refused.value) and str(refused.value).endswith("nothing was graded")
