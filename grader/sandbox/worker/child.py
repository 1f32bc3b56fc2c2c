"""A run's two processes as the fork server starts them: their set-up, then what they run.

Each is confined already (``contain.fork_confined``) when it gets here. The
set-up gives it a clean environment, a folder of its own, no inherited
files, nothing of the kit on ``sys.path`` and fixed-size resource limits, the
same for every run of a test file; then the implementation process loads its
module and serves calls (``untrusted.implementation``), and the test process
runs pytest with the recorder (``untrusted.recorder``) on a stand-in module
(``untrusted.proxy``).

A run at the ``uid`` level cannot enter the folder Python lives in when that
is ``/root``, so everything a run imports is imported here, by the worker,
before any fork: pytest, hypothesis, the recorder, the stand-in and the
implementation process's code, and the codec sources are read with.
"""

from __future__ import annotations

import contextlib
import encodings.utf_8_sig  # noqa: F401  (sources are read with it; a run at uid may not import)
import os
import random
import resource
import signal
import sys
import tempfile
import traceback
from pathlib import Path

import hypothesis  # noqa: F401  (imported once here, before any fork)
import pytest
from _pytest.assertion.rewrite import PYC_TAIL, get_cache_dir

from grader.inputs.hypothesis_profile import enforce as enforce_grader_settings
from grader.sandbox import libc
from grader.sandbox.confine import descriptors
from grader.sandbox.confine.limits import MEMORY_LIMIT_BYTES, OPEN_FILES_LIMIT, OUTPUT_LIMIT_BYTES
from grader.sandbox.protocol.jobs import RunJob
from grader.sandbox.untrusted import implementation, loading, proxy
from grader.sandbox.untrusted.recorder import OutcomeRecorder
from grader.sandbox.worker.warm_pytest import PYTEST_ARGS

EPOCH = 946684800  # 2000-01-01: the mtime every implementation file gets


def run_process(job: RunJob, descriptors: list[int]) -> None:
    """A run's process, confined, as the fork server starts it: the implementation's or the
    test's, with the descriptors ``run_job`` sent in that order. It never returns."""
    try:
        folder = Path(job["folder"])
        if job["kind"] == "implementation":
            source, requests, replies, output, *dependencies = descriptors
            _implementation_child(folder, source, requests, replies, output, dependencies, job)
        else:
            source, compiled, events, requests, replies, output = descriptors
            _test_child(folder, (source, compiled), events, requests, replies, output, job)
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        os._exit(0)


def _test_child(
    folder: Path,
    test_fds: tuple[int, int],
    events_fd: int,
    requests: int,
    replies: int,
    output: int,
    job: RunJob,
) -> None:
    """The test process: write the test file (and pytest's compiled form of it, which the
    grader made), point the module at the stand-in, run pytest."""
    _isolate(folder, (*test_fds, events_fd, requests, replies), output, job)
    test_file = folder / "tests" / str(job["test_name"])
    source, compiled = (loading.read_source(fd) for fd in test_fds)
    test_file.write_bytes(source)
    test_file.chmod(0o600)
    os.utime(test_file, (EPOCH, EPOCH))
    if compiled:
        cache = get_cache_dir(test_file)
        cache.mkdir(mode=0o700)
        (cache / (test_file.name[:-3] + PYC_TAIL)).write_bytes(compiled)
    proxy.install(requests, replies, str(job["module"]), job["contract"]["exceptions"])
    recorder = OutcomeRecorder(
        events_fd, reverse=bool(job.get("reverse")), stopped=proxy.ImplementationStopped
    )
    seed = job.get("hypothesis_seed")
    enforce_grader_settings(None if seed is None else int(seed))
    random.seed(0)
    _shift_heap(int(job["heap_shift"]))
    pytest.main([*_selection(test_file.relative_to(folder), job), *PYTEST_ARGS], plugins=[recorder])


class _Ballast:
    """A plain object, as most of a test's own objects are."""


_held: list[object] = []
"""Every ballast ``_shift_heap`` made, each list holding the one before it."""

BYTES_OVERHEAD = 33
"""What a ``bytes`` object takes beside its content (header, length, hash, the final NUL)."""
_BALLAST_BYTES = tuple(size - BYTES_OVERHEAD for size in range(48, 513, 16) if size != 64)
"""The content sizes of bytes objects that take one block of each size class from 48 to 512
bytes but 64, which a plain object takes."""
_PER_COUNT = 3 + len(_BALLAST_BYTES)
_SPILL = 65
"""Slots enough that the ballast's own list (over 512 bytes) comes from ``malloc``, outside
every size class it shifts."""


def _shift_heap(count: int) -> None:
    """Make and keep exactly ``count`` blocks of every size class the allocator serves (16 to
    512 bytes: a bare ``object``, a complex, a plain object, bytes of each other size), and
    nothing else of them, not even a loop's iterator, so that what the tests make next lies
    ``count`` blocks further in each: with an odd ``count`` a plain object's address moves
    by an odd number of 64-byte blocks, which flips the bit a small set of them orders by
    (its id hash's low bits)."""
    global _held
    kept: list[object] = [None] * max(_SPILL, 1 + count * _PER_COUNT)
    kept[0], at, number = _held, 1, 0
    while number < count:
        kept[at], kept[at + 1], kept[at + 2] = object(), complex(number, 1), _Ballast()
        at, index = at + 3, 0
        while index < len(_BALLAST_BYTES):
            kept[at], at, index = b"\1" * _BALLAST_BYTES[index], at + 1, index + 1
        number += 1
    _held = kept


def _selection(test_file: Path, job: RunJob) -> list[str]:
    """pytest's arguments for the tests of ``test_file`` the job runs."""
    only = [f"{test_file}::{name}" for name in job["only"]]
    leave_out = [f"--deselect={test_file}::{name}" for name in job["leave_out"]]
    return [*(only or [str(test_file)]), *leave_out]


def _implementation_child(
    folder: Path,
    source_fd: int,
    requests: int,
    replies: int,
    output: int,
    dependency_fds: list[int],
    job: RunJob,
) -> None:
    """The implementation process: load the module on the test's first import, then serve.

    The modules the job brings beside it (an earlier chapter's) are loaded in this process
    too, when the implementation imports them."""
    keep = (source_fd, requests, replies, *dependency_fds)
    _isolate(folder / "implementation", keep, output, job)
    contract = job["contract"]
    terms = implementation.Contract(
        str(job["module"]), contract["members"], contract["private"], bool(contract.get("frames"))
    )
    dependencies = dict(zip(map(str, job.get("dependencies", [])), dependency_fds, strict=True))
    call_limit = float(job.get("call_limit", 0.0))
    implementation.run(
        source_fd, requests, replies, terms, contract["names"], dependencies, call_limit
    )


def _isolate(folder: Path, keep: tuple[int, ...], output: int, job: RunJob) -> None:
    """Clean environment, own folders, no inherited files, nothing of the kit, bounded resources.

    Both processes of a run get this, each in its own ``folder``. What a run
    can see of its limits and its placement is the job's ``ceiling`` and
    ``cpus``, which the grader gives every run of one test file alike: the
    limit that decides a timeout (the job's ``time_limit``, on the run's CPU
    time) is the worker's to watch, and a test cannot read it.
    """
    libc.not_dumpable()
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, set(job["cpus"]))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    descriptors.close_descriptors_but({0, 1, 2, *keep})
    os.chdir(folder)
    os.environ.clear()
    os.environ.update(
        {
            "PATH": "/usr/bin:/bin",
            "HOME": str(folder / "home"),
            "TMPDIR": str(folder / "tmp"),
            "LANG": "C.UTF-8",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    tempfile.tempdir = None
    sys.argv = ["pytest"]
    sys.orig_argv = ["python", "-m", "pytest"]
    sys.path[:] = [str(folder), *_library_paths()]
    sys.dont_write_bytecode = True
    cpu_seconds = int(job["ceiling"]) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_LIMIT_BYTES, OUTPUT_LIMIT_BYTES))
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES_LIMIT, OPEN_FILES_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _library_paths() -> list[str]:
    """``sys.path`` without the kit's checkout, which an editable install puts on it.

    The grader's own modules are already imported; leaving the checkout on the
    path would let ``import reference.radix`` or ``import mutants`` find the
    kit's files. Where the kit is installed as a wheel it lives in
    site-packages, which pytest needs, so only a folder that holds the kit and
    not pytest is dropped.
    """
    kit = Path(__file__).resolve().parents[3]
    libraries = Path(pytest.__file__).resolve().parents[1]
    return [
        entry for entry in sys.path if entry and (Path(entry).resolve() != kit or kit == libraries)
    ]
