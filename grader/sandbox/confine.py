"""Confinement by the operating system for every process that runs untrusted code.

A run's processes (the test process, and the implementation process where
one is used) are forked from a warm worker and then confined here, before a
line of student code runs. What this machine allows decides the *isolation
level*, weakest first:

``none``
    The grader is not root: the run keeps the grader's user. It still gets
    its own session, resource limits, a clean environment and folder, and is
    killed with everything it started (the grader is a child subreaper and
    kills every process of a run by pidfd before it writes a report).
``uid``
    The grader is root but the kernel refuses new namespaces (a container
    without ``CAP_SYS_ADMIN``): each run drops to an unprivileged uid and gid
    (``nobody``/``nogroup``, no supplementary groups, no new privileges). It
    cannot write the kit, the reports or the grader's files, nor signal the
    grader or its workers. Every run has that one user and sees every
    process, so a pool runs them one at a time (``grader.sandbox.pool``) and
    ``remove_leftovers`` clears the shared folders after each.
``namespaces``
    Root and namespaces: ``uid`` plus a PID namespace of its own (its first
    process is a small init kept by the grader; when the run ends, the kernel
    kills everything it started, and it sees no other process), a network
    namespace of its own (no network at all, not even the machine's
    loopback), and a mount namespace in which the kit's reference, model
    answer, wheats and mutants are hidden under empty read-only folders and
    every other mount but the run's own folder is read-only.

``isolation_level()`` measures the level once per process by trying it in a
throwaway child. ``fork_confined()`` is the one call a worker makes: it forks
like ``os.fork()`` and, in the child, returns only once the child is
confined. Bubblewrap would give the same namespaces, but it runs a fresh
program per run; calling the kernel through ``ctypes`` keeps the warm worker's
fork, which is what makes a run cost milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NoReturn

IsolationLevel = Literal["none", "uid", "namespaces"]
LEVELS: tuple[IsolationLevel, ...] = ("none", "uid", "namespaces")
"""Weakest first: a level stops everything the ones before it stop."""

ISOLATION_CHOICES: dict[str, IsolationLevel] = {
    "best": "none",
    "required": "uid",
    "namespaces": "namespaces",
}
"""The values of ``--isolation``, each naming the least level the runs must get: ``best``
takes what the machine gives; ``required`` means student code never runs as the grader's
user."""

UNTRUSTED_UID = 65534
UNTRUSTED_GID = 65534
"""``nobody`` and ``nogroup`` on Debian and most distributions."""

MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024
"""Address space of every untrusted process. Its hard limit also marks the process as a
run's: an unprivileged process can lower a hard limit but never raise it, so a process
the grader did not start with this limit is never taken for one (see ``is_untrusted``)."""

HIDDEN_KIT_FOLDERS = ("reference", "mutants", "wheats")
"""What a run must not read at the ``namespaces`` level: the model implementation and
answer, and the variants of it the tests are graded against."""

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_KEPT_FLAGS = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC}
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_ADDR_NO_RANDOMIZE = 0x0040000
_PERSONALITY_QUERY = 0xFFFFFFFF

_libc = ctypes.CDLL(None, use_errno=True)
# Loaded here, at import: a fork of a threaded process must not load libraries.


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str, target: str, kind: str | None, flags: int, data: str | None) -> None:
    _call(
        _libc.mount(
            source.encode(),
            target.encode(),
            None if kind is None else kind.encode(),
            ctypes.c_ulong(flags),
            None if data is None else data.encode(),
        ),
        f"mount {target}",
    )


@dataclass(frozen=True)
class Confinement:
    """How to confine a run's processes: the level and what it hides."""

    level: IsolationLevel
    hidden: tuple[Path, ...] = ()

    @property
    def uid(self) -> int | None:
        """The uid a run's processes take, or ``None`` where they keep the grader's."""
        return None if self.level == "none" else UNTRUSTED_UID


def parse_level(text: str) -> IsolationLevel:
    """The level named ``text``; ``ValueError`` for any other name."""
    for level in LEVELS:
        if level == text:
            return level
    raise ValueError(f"unknown isolation level {text!r}: one of {', '.join(LEVELS)}")


def level_at_least(level: IsolationLevel, minimum: IsolationLevel) -> bool:
    return LEVELS.index(level) >= LEVELS.index(minimum)


def kit_secrets(kit: Path) -> tuple[Path, ...]:
    """The folders of ``kit`` a run must not see, those that exist."""
    return tuple(kit / name for name in HIDDEN_KIT_FOLDERS if (kit / name).is_dir())


def confinement_for(level: IsolationLevel, kit: Path) -> Confinement:
    return Confinement(level, kit_secrets(kit) if level == "namespaces" else ())


@functools.cache
def isolation_level() -> IsolationLevel:
    """The strongest level this machine allows this process, tried once in a throwaway child."""
    if os.geteuid() != 0:
        return "none"
    for level in ("namespaces", "uid"):
        if _try_level(level):
            return level
    return "none"


def _try_level(level: IsolationLevel) -> bool:
    """Fork a child that confines itself at ``level`` and reports whether every step worked,
    the Python installation still readable."""
    workdir = Path(tempfile.mkdtemp(prefix="grader-probe-"))
    try:
        pid = os.fork()
        if pid == 0:
            try:
                here = Path(__file__).parent
                child = fork_confined(Confinement(level, (here,)), workdir)
                if child == 0:
                    ok = os.getuid() == UNTRUSTED_UID and os.getgroups() == []
                    ok = ok and all(os.access(p, os.R_OK | os.X_OK) for p in _python_paths())
                    if level == "namespaces":
                        ok = ok and os.getpid() == 2 and not os.access(__file__, os.F_OK)
                        ok = ok and not os.access(tempfile.gettempdir(), os.W_OK)
                    os._exit(0 if ok else 1)
                _, status = os.waitpid(child, 0)
                os._exit(0 if os.waitstatus_to_exitcode(status) == 0 else 1)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0
    finally:
        os.rmdir(workdir)


def _python_paths() -> list[Path]:
    """The folders this Python reads its standard library and packages from."""
    folders = [Path(entry) for entry in sys.path if entry and Path(entry).is_dir()]
    return [*folders, Path(sys.prefix), Path(sys.base_prefix)]


def reachable(path: Path) -> bool:
    """Whether a process of another user could reach ``path`` (every folder above it lets
    others through); at the ``uid`` level a run's folder must be."""
    return all(folder.stat().st_mode & 0o001 for folder in path.resolve().parents)


def fork_confined(confinement: Confinement, workdir: Path, new_session: bool = True) -> int:
    """Fork like ``os.fork()``: the child's pid in the parent, 0 in a confined child.

    With ``new_session`` the child leads a session of its own
    (``os.killpg(pid, ...)`` reaches it and what it starts, unless that
    leaves the session); else it stays in the caller's.

    Call it in a single-threaded process, after making the run's folder
    ``workdir`` writable for ``confinement.uid`` (``hand_over``). At the
    ``namespaces`` level the folders above ``workdir`` and above the Python
    installation that others may not pass through (``/root`` holding a
    pyenv, say) are made passable in the run's view, showing only the way;
    the pid returned is then the run's init, a small process of the
    grader's that waits for the confined child and exits with its status
    (decoded by ``exit_code``): killing it kills every process of the run.
    Raises ``OSError`` in the parent if the fork or the namespace fails; in
    the child, a step that fails ends the child at once with exit status
    125, never running untrusted code half confined.
    """
    if confinement.level != "namespaces":
        pid = os.fork()
        if pid == 0:
            if new_session:
                os.setsid()
            _must(_confine_process, confinement)
        return pid
    own_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    try:
        _call(_libc.unshare(_CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        try:
            pid = os.fork()
        finally:
            if os.getpid() != 1:
                # Back in the parent: its later children go to its own namespace again.
                _call(_libc.setns(own_namespace, _CLONE_NEWPID), "setns")
    finally:
        if os.getpid() != 1:
            os.close(own_namespace)
    if pid != 0:
        return pid
    os.close(own_namespace)
    if new_session:
        os.setsid()
    _must(lambda confinement: _enter_namespaces(confinement, workdir), confinement)
    child = os.fork()
    if child == 0:
        _must(_confine_process, confinement)
        return 0
    _serve_as_init(child)


def _must(step: Callable[[Confinement], None], confinement: Confinement) -> None:
    try:
        step(confinement)
    except BaseException:
        os._exit(125)


def _enter_namespaces(confinement: Confinement, workdir: Path) -> None:
    """In the run's init: a private mount and network namespace, its own /proc, the kit hidden,
    the way to the run's folder and to Python open."""
    _call(_libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS), "unshare")
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE, None)
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
    _open_the_way([workdir, *_python_paths()])
    for folder in confinement.hidden:
        _mount(
            "none",
            str(folder),
            "tmpfs",
            _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
            "size=4k,mode=0555",
        )
    _writable_only(workdir)


def _writable_only(workdir: Path) -> None:
    """Make every mount of this namespace read-only but the run's folder ``workdir``.

    Without it a run could leave a note in ``/tmp`` or ``/dev/shm`` for a later
    run to find, and a test file that counts its runs knows when the mutants'
    turn has come. ``/proc`` is this run's own and stays as mounted.
    """
    _mount(str(workdir), str(workdir), None, _MS_BIND | _MS_REC, None)
    for target, flags in _mounts():
        if target == str(workdir) or target == "/proc" or target.startswith("/proc/"):
            continue
        _mount("none", target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | flags, None)


def _mounts() -> list[tuple[str, int]]:
    """Each mount point of this namespace once, with the flags a remount must keep."""
    found: dict[str, int] = {}
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            fields = line.split()
            target = re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), fields[4])
            options = fields[5].split(",")
            found[target] = sum(flag for name, flag in _KEPT_FLAGS.items() if name in options)
    return list(found.items())


def _open_the_way(paths: list[Path]) -> None:
    """Let others pass through every folder above ``paths``, in this mount namespace only.

    A folder that others may not pass through is covered by an empty tmpfs
    that they may (mode 0711: no listing), into which only the entries on the
    way are bound back; the rest of it stays out of sight.
    """
    blocked: dict[Path, set[str]] = {}
    for path in paths:
        parts = path.resolve().parts
        for depth in range(1, len(parts)):
            folder = Path(*parts[:depth])
            if not folder.stat().st_mode & 0o001:
                blocked.setdefault(folder, set()).add(parts[depth])
    for folder in sorted(blocked, key=lambda folder: len(folder.parts)):
        kept = {name: os.open(folder / name, os.O_PATH) for name in sorted(blocked[folder])}
        _mount("none", str(folder), "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4k,mode=0711")
        for name, handle in kept.items():
            target = folder / name
            if Path(f"/proc/self/fd/{handle}").is_dir():
                target.mkdir()
            else:
                target.touch()
            _mount(f"/proc/self/fd/{handle}", str(target), None, _MS_BIND | _MS_REC, None)
            os.close(handle)


def _confine_process(confinement: Confinement) -> None:
    """In the process that runs untrusted code: the uid, then the mark, then no way back."""
    if confinement.uid is not None:
        os.setgroups([])
        os.setgid(UNTRUSTED_GID)
        os.setuid(confinement.uid)
        if os.getuid() != confinement.uid or os.geteuid() != confinement.uid:
            raise OSError("the uid was not dropped")
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    _call(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    die_with_parent()


def _serve_as_init(child: int) -> NoReturn:
    """The run's init: reap every process of the namespace until ``child`` ends, then exit
    with its status, which makes the kernel kill whatever of the run is left."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    with contextlib.suppress(OSError):
        os.closerange(0, 1 << 16)
    with contextlib.suppress(OSError):
        die_with_parent()
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    code = 125
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == child:
            code = _encode(status)
            break
    os._exit(code)


def _encode(status: int) -> int:
    """An exit status for the run's init that ``exit_code`` turns back into the child's."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 125


def exit_code(status: int, confinement: Confinement) -> int:
    """The child's exit code from the wait status of ``fork_confined``'s pid, as
    ``os.waitstatus_to_exitcode`` gives it: negative for a signal. At the ``namespaces``
    level an exit status of 129 to 159 means the signal of that number less 128."""
    code = os.waitstatus_to_exitcode(status)
    if confinement.level == "namespaces" and 128 < code < 128 + signal.NSIG:
        return -(code - 128)
    return code


def hand_over(paths: Iterable[Path], confinement: Confinement) -> None:
    """Make ``paths`` (a run's folder and what it holds) the untrusted uid's, where it has one."""
    if confinement.uid is None:
        return
    for path in paths:
        os.chown(path, confinement.uid, UNTRUSTED_GID, follow_symlinks=False)


SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")
"""The folders every user may write on a usual Linux machine: where a run at the ``uid``
level, which has no mount namespace of its own, could leave a note for a later run."""


def remove_leftovers(confinement: Confinement) -> None:
    """Remove everything the untrusted user owns in ``SHARED_FOLDERS`` and in the folders
    below them that every user may write (``/tmp/.X11-unix``): what a run left there.

    Only the ``uid`` level needs it, and there the runs of a pool go one at a
    time and this runs after each: at ``namespaces`` a run cannot write outside
    its own folder, and at ``none`` its files are the grader's user's.
    """
    if confinement.level != "uid":
        return
    todo = list(SHARED_FOLDERS)
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                status = entry.stat(follow_symlinks=False)
                directory = entry.is_dir(follow_symlinks=False)
                if status.st_uid != confinement.uid:
                    if directory and status.st_mode & 0o002:
                        todo.append(entry.path)
                elif directory:
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent ends."""
    _call(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def not_dumpable() -> None:
    """Keep other processes of this user out of this one's memory, descriptors and ptrace
    (``/proc/PID/fd``, ``/proc/PID/mem``); harmless where the kernel refuses."""
    with contextlib.suppress(OSError):
        _call(_libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


def become_subreaper() -> None:
    """Have orphaned descendants handed to this process rather than to init, so that it can
    find and kill them; harmless where the kernel lacks it."""
    with contextlib.suppress(OSError):
        _call(_libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")


def is_untrusted(pid: int) -> bool:
    """Whether process ``pid`` carries the mark of a run (a hard address-space limit no
    higher than ``MEMORY_LIMIT_BYTES``, set by ``fork_confined``) or is a run's init."""
    try:
        limits = Path(f"/proc/{pid}/limits").read_text()
    except OSError:
        return False
    for line in limits.splitlines():
        if line.startswith("Max address space"):
            hard = line.split()[4]
            return hard != "unlimited" and int(hard) <= MEMORY_LIMIT_BYTES
    return False


def descendants(root: int) -> list[int]:
    """The pids of the living (not zombie) processes below ``root``, read from /proc."""
    children: dict[int, list[int]] = {}
    zombies: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                data = stat.read()
        except OSError:
            continue
        # The name in parentheses may itself hold spaces and parentheses.
        fields = data[data.rfind(b")") + 2 :].split()
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] == b"Z":
            zombies.add(pid)
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return [pid for pid in found if pid not in zombies]


def process_state(pid: int) -> str:
    """The state letter of process ``pid`` (``R``, ``S``, ``T`` stopped, ``Z``...); ``""`` if
    it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return ""
    return data[data.rfind(b")") + 2 :][:1].decode()


def kill_by_pidfd(pid: int, only_untrusted: bool = True) -> None:
    """SIGKILL process ``pid`` through a pidfd, so a pid reused meanwhile is never hit; with
    ``only_untrusted``, only if the process opened still carries a run's mark."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if not only_untrusted or is_untrusted(pid):
            signal.pidfd_send_signal(handle, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(handle)


def without_address_randomisation() -> None:
    """Re-run this program with address-space layout randomisation off, once.

    The hash of a plain object is its address: with layout randomisation on,
    the order of a ``set`` of such objects changes from run to run, and so
    could a grade. Where the kernel refuses (a seccomp filter), the program
    carries on as it is.
    """
    current = _libc.personality(ctypes.c_ulong(_PERSONALITY_QUERY))
    if current == -1 or current & _ADDR_NO_RANDOMIZE:
        return
    if _libc.personality(ctypes.c_ulong(current | _ADDR_NO_RANDOMIZE)) == -1:
        return
    os.execv(sys.executable, sys.orig_argv)


def address_randomisation_off() -> bool:
    current = _libc.personality(ctypes.c_ulong(_PERSONALITY_QUERY))
    return current != -1 and bool(current & _ADDR_NO_RANDOMIZE)
