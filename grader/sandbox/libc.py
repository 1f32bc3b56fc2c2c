"""The calls into the C library that Python's standard library does not wrap: the only ctypes.

``prctl``, ``mount``, ``umount2``, ``pivot_root``, ``unshare``, ``setns``, ``capset``,
``personality``, ``keyctl``, the System V ``*ctl(IPC_RMID)`` and a seccomp filter,
each a thin function that raises ``OSError`` with the call's name when the kernel
refuses. What to call, and when, is ``confine``'s policy; this module only knows how
to make the call. The library is loaded at import: a fork of a threaded process must
not load libraries.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
from collections.abc import Sequence

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_CLEAR = 7
KEY_SPEC_USER_KEYRING = -4
KEY_SPEC_USER_SESSION_KEYRING = -5

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_SECCOMP = 22
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_CAPABILITY_VERSION_3 = 0x20080522
_ADDR_NO_RANDOMIZE = 0x0040000
_PERSONALITY_QUERY = 0xFFFFFFFF
MACHINE = platform.machine()
SECCOMP_TABLES = {
    "x86_64": (0xC000003E, (248, 249, 250)),
    "aarch64": (0xC00000B7, (217, 218, 219)),
}
"""Per machine: the audit architecture and the numbers of add_key, request_key and keyctl."""
IPC_CALLS = {
    # shmget shmat shmctl semget semop semctl shmdt msgget msgsnd msgrcv msgctl semtimedop,
    # then mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
    "x86_64": (29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220, *range(240, 246)),
    # mq_open..mq_getsetattr (180-185), msgget..msgsnd (186-189), semget..semop (190-193),
    # shmget..shmdt (194-197)
    "aarch64": tuple(range(180, 198)),
}
"""Per machine: the numbers of the System V IPC calls and the POSIX message queue calls (no
machine here has the old multiplexed ``ipc()``; another architecture's table is refused
whole)."""
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(MACHINE)
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(MACHINE)

_libc = ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def mount(source: str, target: str, kind: str | None, flags: int, data: str | None) -> None:
    """``mount(2)``: ``kind`` and ``data`` may be ``None``."""
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


def umount(target: str, flags: int = 0) -> None:
    """``umount2(2)``: ``MNT_DETACH`` in ``flags`` unmounts lazily, whatever still uses it."""
    _call(_libc.umount2(target.encode(), flags), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    """``pivot_root(2)``: ``new_root`` (a mount) becomes this mount namespace's root, the old
    root is moved to ``put_old`` (a folder below ``new_root``)."""
    if _PIVOT_ROOT is None:
        raise OSError(38, "pivot_root: not known on this machine")
    result = _libc.syscall(_PIVOT_ROOT, new_root.encode(), put_old.encode())
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"pivot_root: {os.strerror(errno)}")


def unshare(flags: int, what: str = "unshare") -> None:
    """``unshare(2)`` with the ``CLONE_NEW*`` ``flags``; ``what`` names it in an error."""
    _call(_libc.unshare(flags), what)


def try_unshare(flags: int) -> bool:
    """``unshare(2)``, ``False`` where the kernel refuses (no error raised)."""
    return bool(_libc.unshare(flags) == 0)


def setns(fd: int, kind: int) -> None:
    """``setns(2)``: join the namespace the descriptor ``fd`` names."""
    _call(_libc.setns(fd, kind), "setns")


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent ends."""
    _call(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def set_dumpable(dumpable: bool) -> None:
    """``PR_SET_DUMPABLE``: whether other processes of this user may ptrace this one, or open
    its ``/proc/PID`` files."""
    _call(_libc.prctl(_PR_SET_DUMPABLE, int(dumpable), 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


def not_dumpable() -> None:
    """Keep other processes of this user out of this one's memory, descriptors and ptrace
    (``/proc/PID/fd``, ``/proc/PID/mem``); harmless where the kernel refuses."""
    with contextlib.suppress(OSError):
        set_dumpable(False)


def become_subreaper() -> None:
    """Have orphaned descendants handed to this process rather than to init, so that it can
    find and kill them; harmless where the kernel lacks it."""
    with contextlib.suppress(OSError):
        _call(_libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")


def no_new_privileges() -> None:
    """``PR_SET_NO_NEW_PRIVS``: no exec of this process or its children gains privileges."""
    _call(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def drop_capabilities() -> None:
    """``capset(2)`` with every set empty: no capability left, in this user namespace."""
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    nothing = (ctypes.c_uint32 * 6)()
    _call(_libc.capset(header, nothing), "capset")


def keyctl(operation: int, argument: int) -> None:
    """``keyctl(2)`` with one argument; ``OSError`` (ENOSYS) where its number is unknown."""
    if _KEYCTL is None:
        raise OSError(38, "keyctl: not known on this machine")
    result = _libc.syscall(_KEYCTL, operation, ctypes.c_long(argument), 0, 0, 0)
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"keyctl: {os.strerror(errno)}")


_IPC_RMID = 0


def remove_ipc_object(kind: str, ident: int) -> None:
    """Remove the System V IPC object ``ident`` of ``kind`` (``shm``, ``sem`` or ``msg``):
    ``shmctl``, ``semctl`` or ``msgctl`` with ``IPC_RMID``."""
    if kind == "shm":
        result = _libc.shmctl(ident, _IPC_RMID, None)
    elif kind == "sem":
        result = _libc.semctl(ident, 0, _IPC_RMID)
    else:
        result = _libc.msgctl(ident, _IPC_RMID, None)
    _call(0 if result == 0 else -1, f"{kind}ctl(IPC_RMID)")


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def seccomp_filter(program: Sequence[tuple[int, int, int, int]]) -> None:
    """Install the classic BPF ``program`` (code, jump if true, jump if false, constant) as a
    seccomp filter of this process and its children; needs ``no_new_privileges`` first."""
    steps = [_SockFilter(*step) for step in program]
    array = (_SockFilter * len(steps))(*steps)
    fprog = _SockFprog(len(array), array)
    _call(
        _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0),
        "prctl(PR_SET_SECCOMP)",
    )


def turn_off_address_randomisation() -> bool:
    """Turn address-space layout randomisation off for the next ``exec`` of this process;
    ``True`` only if it was on and now is off (then re-run the program), ``False`` where it
    was off already or the kernel refuses (a seccomp filter)."""
    current = _libc.personality(ctypes.c_ulong(_PERSONALITY_QUERY))
    if current == -1 or current & _ADDR_NO_RANDOMIZE:
        return False
    return bool(_libc.personality(ctypes.c_ulong(current | _ADDR_NO_RANDOMIZE)) != -1)
