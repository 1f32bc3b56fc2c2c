"""What a run shares with no other in the kernel: keyrings, System V IPC, message queues.

These live outside every folder, so runs alive at once could pass a key, a segment or a
message between them whatever its permissions say: each process of a run leaves the
grader's keyrings for its own (``own_keyrings``), and a seccomp filter refuses it the
calls (``refuse_shared_kernel_objects``).
"""

from __future__ import annotations

import contextlib

from grader.sandbox import libc


def own_keyrings() -> None:
    """Leave the grader's session keyring for a new, empty one of this process's own, and
    empty this user's keyrings: a key one run adds is never in another's reach.

    Every process inherits its parent's session keyring and possesses the keys
    in it, whatever its uid; the user keyring lives as long as the kernel keeps
    the user, across runs and across grader processes. Harmless where the
    kernel has no keyrings."""
    with contextlib.suppress(OSError):
        libc.keyctl(libc.KEYCTL_JOIN_SESSION_KEYRING, 0)
    for keyring in (libc.KEY_SPEC_USER_KEYRING, libc.KEY_SPEC_USER_SESSION_KEYRING):
        with contextlib.suppress(OSError):
            libc.keyctl(libc.KEYCTL_CLEAR, keyring)


def _refusal_filter() -> list[tuple[int, int, int, int]]:
    """A seccomp program that fails with ENOSYS the keyring calls (``add_key``,
    ``request_key``, ``keyctl``), System V IPC (shared memory, semaphores, message queues)
    and POSIX message queues, and every call of another architecture's table (an i386 or
    x32 call on x86-64 would reach them by other numbers), and allows the rest."""
    arch, keyrings = libc.SECCOMP_TABLES[libc.MACHINE]
    numbers = (*keyrings, *libc.IPC_CALLS[libc.MACHINE])
    load, jump_equal, jump_at_least, answer = 0x20, 0x15, 0x35, 0x06
    deny, allow = 0x00050000 | 38, 0x7FFF0000
    count = len(numbers)
    return [
        (load, 0, 0, 4),
        (jump_equal, 1, 0, arch),
        (answer, 0, 0, deny),
        (load, 0, 0, 0),
        (jump_at_least, count + 1, 0, 0x40000000),
        *((jump_equal, count - index, 0, number) for index, number in enumerate(numbers)),
        (answer, 0, 0, allow),
        (answer, 0, 0, deny),
    ]


def refuse_shared_kernel_objects() -> None:
    """Fail every keyring, System V IPC and POSIX message queue call of this process and its
    children from now on (seccomp): these live in the kernel, outside every folder, so runs
    alive at the same time could pass a key, a segment or a message between them, whatever
    its permissions say. Needs ``PR_SET_NO_NEW_PRIVS``; does nothing on a machine whose call
    table is unknown."""
    if not keyrings_refused():
        return
    with contextlib.suppress(OSError):  # a kernel without seccomp: the keyrings stay as above
        libc.seccomp_filter(_refusal_filter())


def keyrings_refused() -> bool:
    """Whether ``refuse_shared_kernel_objects`` can refuse the keyring and IPC calls on this
    machine."""
    return libc.MACHINE in libc.SECCOMP_TABLES and libc.MACHINE in libc.IPC_CALLS
