"""The grader's channels to its workers cannot be written by anyone but the worker.

A pipe can be opened again, for writing, through ``/proc/PID/fd/N`` by any
process with ptrace rights over a process holding it: root, or a process
of the same user where the grader runs unconfined (level ``none``). That
is how a forger reached every grader on a shared machine: it wrote a
run's events into the workers' reply pipes, and the pools read them as
records. Every channel a verdict travels on is therefore a Unix socket,
which ``/proc`` cannot open, and the grader keeps processes of its own
user out of its memory and descriptors.

The attack below runs here, in the kit's test process: unconfined and as
the grader's own user (root in CI), the strongest position a process
outside the sandbox can have short of ptrace.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.grading.jobs import course_tests_job
from grader.inputs.catalog import load_chapter
from grader.sandbox import procfs
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.protocol import frames

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter("ds.07")
COURSE_TESTS = [test.name for test in CHAPTER.course_tests]
_PR_GET_DUMPABLE = 3


def forged_record() -> bytes:
    """A pid and a record in which every course test passed, framed as a worker sends them,
    followed by the same events framed as a run's recorder writes them."""
    events: list[dict[str, object]] = [{"event": "collected", "names": COURSE_TESTS}]
    for name in COURSE_TESTS:
        events += [
            {"event": "start", "name": name},
            {"event": "outcome", "name": name, "status": "passed", "detail": ""},
        ]
    events.append({"event": "finished", "exitstatus": 0})
    record = {
        "events": events,
        "timed_out": False,
        "exit_code": 0,
        "parent_killed": False,
        "seconds": 0.1,
        "output": "",
    }
    messages: list[dict[str, object]] = [{"pid": os.getpid()}, record, *events]
    return b"".join(frames.json_frame(message) for message in messages)


def channels_of(pid: int) -> Iterator[tuple[str, str]]:
    """The ``/proc`` path and the target of every pipe and socket process ``pid`` holds."""
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return
    for fd in descriptors:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            target = os.readlink(path)
        except OSError:
            continue
        if target.startswith(("pipe:", "socket:")):
            yield path, target


def grader_output() -> set[str]:
    """What the grader's stdout and stderr are: the workers inherit them for their own error
    messages, which carry no verdict (and under ``pytest -s`` may well be pipes)."""
    found = set()
    for fd in (1, 2):
        try:
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return found


def forge(pool: WorkerPool) -> list[str]:
    """Write a forged record into every channel of the pool's workers and of the grader's ends
    that ``/proc`` lets this process open; the paths it could write."""
    output = grader_output()
    workers = [zygote.process.pid for zygote in pool._all]
    processes = [*workers, *(pid for worker in workers for pid in procfs.descendants(worker))]
    targets = [
        path for pid in processes for path, target in channels_of(pid) if target not in output
    ]
    mine = {zygote.replies.fileno() for zygote in pool._all if zygote.replies is not None}
    mine |= {zygote.control.fileno() for zygote in pool._all if zygote.control is not None}
    targets += [f"/proc/{os.getpid()}/fd/{fd}" for fd in sorted(mine)]
    written = []
    for path in targets:
        try:
            with open(path, "wb", buffering=0) as channel:
                channel.write(forged_record())
        except OSError:
            continue
        written.append(path)
    return written


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    with WorkerPool() as pool:
        yield pool


def stub_run_fails(pool: WorkerPool) -> bool:
    run = pool.run(course_tests_job(CHAPTER, CHAPTER.stub.read_text(encoding="utf-8"), 60))
    return run.status == "completed" and not run.all_passed and run.test_names() == COURSE_TESTS


def test_no_channel_of_a_worker_can_be_opened_through_proc(pool: WorkerPool) -> None:
    """Nor of its fork server, which takes each run's job on channels of its own."""
    assert stub_run_fails(pool)  # every worker has started and answered once
    assert any(procfs.descendants(zygote.process.pid) for zygote in pool._all)
    assert forge(pool) == []


def test_a_forged_record_written_through_proc_changes_no_verdict(pool: WorkerPool) -> None:
    """Forge between runs, then grade the stub once per worker: each is the stub's own result,
    and the pool stays in step with its workers."""
    forge(pool)
    for _ in range(len(pool._all) + 1):
        assert stub_run_fails(pool)


def test_the_grader_keeps_other_processes_out_of_its_memory_and_descriptors(
    pool: WorkerPool,
) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    assert procfs.process_state(os.getpid()) != ""
    assert Path(f"/proc/{os.getpid()}/fd").is_dir()  # its own /proc stays readable to itself
