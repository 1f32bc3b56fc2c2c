"""Every run of a job starts from the same memory (``grader/sandbox/worker/forkserver.py``).

A unit test of the invariant, apart from the 20-run end-to-end test: runs of one job are
forked from a fork server, as a worker forks them, and each reports what a test could see
of memory: the ``id()`` of fresh plain objects and of a bare ``object()``, the order a
``set`` of them iterates in (it follows their addresses), and the allocator's block count.
The runs are at the ``none`` level: the invariant is the same at every level.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import cast

from grader.sandbox import libc
from grader.sandbox.confine.policy import Confinement
from grader.sandbox.protocol.jobs import RunJob
from grader.sandbox.worker.forkserver import ForkServer

Seen = dict[str, list[int] | int]
"""What a run saw of memory, by what it looked at."""

JOB = cast(RunJob, {"kind": "test", "folder": "/run/grader", "test_name": "test_x.py"})
"""One job, the same for every run (the fork server passes it on unread)."""


class Token:
    """A plain object, hashed by its address, as most of a test's own objects are."""


def observe() -> Seen:
    """What a test could see of memory as it starts."""
    tokens = [Token() for _ in range(32)]
    return {
        "ids": [id(token) for token in tokens],
        "set_order": [tokens.index(token) for token in set(tokens)],
        "fresh_object": id(object()),
        "blocks": sys.getallocatedblocks(),
    }


def report_memory(job: RunJob, descriptors: list[int]) -> None:
    """A run's entry: write what it sees on the descriptor it is handed."""
    seen = observe()
    os.write(descriptors[0], json.dumps(seen).encode())


def _read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    os.close(fd)
    return data


def run_once(server: ForkServer, folder: Path) -> Seen:
    """Fork one run of ``JOB`` from ``server``; what it saw."""
    read_end, write_end = os.pipe()
    try:
        spawned = server.spawn(JOB, [write_end], folder)
    finally:
        os.close(write_end)
    data = _read_all(read_end)
    status = spawned.status()
    assert status is not None and os.waitstatus_to_exitcode(status) == 0, status
    return cast(Seen, json.loads(data))


def churn() -> list[object]:
    """What a worker does between runs, in small: objects of many sizes made, most dropped,
    some kept (jobs read, folders laid out, records built)."""
    kept: list[object] = []
    for round_ in range(50):
        made = [Token() for _ in range(40)] + [b"x" * size for size in range(1, 400, 7)]
        kept.extend(made[round_ % 7 :: 9])
    return kept


def test_runs_forked_from_the_server_see_the_same_memory_whatever_the_worker_did(
    tmp_path: Path,
) -> None:
    """Two runs of one job from one fork server, the parent's heap changed in between, see
    the same addresses and set order; a fork straight from the changed parent does not
    (the probe sees a changed heap)."""
    gc.freeze()  # as the worker does before it makes the server
    try:
        server = ForkServer(Confinement("none"), report_memory)
    finally:
        gc.unfreeze()
    try:
        first = run_once(server, tmp_path)
        kept = churn()
        second = run_once(server, tmp_path)
        kept += churn()
        third = run_once(server, tmp_path)
    finally:
        server.close()
    assert first == second == third
    assert plain_fork_sees() != first
    assert kept


def plain_fork_sees() -> Seen:
    """What a run forked straight from this process, as it is now, would see."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            report_memory(JOB, [write_end])
        finally:
            os._exit(0)
    os.close(write_end)
    data = _read_all(read_end)
    os.waitpid(pid, 0)
    return cast(Seen, json.loads(data))


def fresh_worker_main() -> None:
    """In a fresh process: as a worker starts (address randomisation off, then the process
    runs itself again: ``worker.server.main``), make a fork server and print what one run
    of ``JOB`` saw."""
    if libc.turn_off_address_randomisation():
        os.execv(sys.executable, sys.orig_argv)
    gc.freeze()
    server = ForkServer(Confinement("none"), report_memory)
    try:
        seen = run_once(server, Path(sys.argv[1]))
    finally:
        server.close()
    sys.stdout.write(json.dumps(seen))


def test_fresh_workers_fork_runs_that_see_the_same_memory(tmp_path: Path) -> None:
    """Two processes started afresh the same way, each a fork server and one run of the job,
    see the same addresses: address randomisation is off in both."""
    here = str(Path(__file__).parent)
    command = [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {here!r}); import test_same_memory as t; "
        "t.fresh_worker_main()",
        str(tmp_path),
    ]
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    seen = [
        json.loads(subprocess.run(command, env=environment, capture_output=True, check=True).stdout)
        for _ in range(2)
    ]
    assert seen[0] == seen[1]
