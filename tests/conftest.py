"""Example submissions for the grader's end-to-end tests, laid out on demand.

Each example under ``fixtures/submissions/<name>/`` stores only the files in
which it differs from the kit's model answer: its own test file, its own
``radix.py``, or ``radix.py.patch``, a one-bug diff on the reference. Where an
example's ``radix.py`` or test file is the correct one, ``make_submission``
copies it from ``reference/``, so the fixtures never hold a stale copy of it.
``EXAMPLES`` says, per example, where each of its two files comes from. An
example whose ``radix.py`` is the reference's, or a patch of it, also holds
the kit's copy of each earlier chapter's module the reference imports, as a
student who built that chapter holds their own (``add_dependencies``).

The kit's copy of each of those modules is importable by name in the kit's
own test process too, where tests load the reference by path.

``ReusedRuns`` lets a test replay sandboxed runs another test already made,
so the same example is graded for real once per session however many
interfaces (library, command line) are checked against it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from grader.inputs.catalog import Chapter, load_chapter
from grader.inputs.patching import apply_patch
from grader.sandbox.confine.probe import installed_kit, private_paths
from grader.sandbox.host.client import Worker
from grader.sandbox.host.job import Job
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.result import RunResult

SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "submissions"
PATCH_SUFFIX = ".patch"

# The fixtures' and the hostile catalogue's test files import ``radix`` and are
# graded, never collected here (the hostile ones end the process, kill their parent...).
collect_ignore = ["fixtures", "hostile"]
pytest.register_assert_rewrite("hostile_harness")  # its asserts explain themselves, as a test's do

Source = Literal["reference", "own", "patched", "missing"]


@dataclass(frozen=True)
class Example:
    """Where an example submission's ``radix.py`` and test file come from.

    ``reference``: the kit's model answer; ``own``: the file stored under the
    example's folder; ``patched``: the reference with the example's
    ``radix.py.patch`` applied; ``missing``: the file is left out.
    """

    implementation: Source
    tests: Source


EXAMPLES: dict[str, Example] = {
    "strong": Example("reference", "reference"),
    "weak": Example("reference", "own"),
    "misses_s11": Example("reference", "own"),
    "fails_on_reference": Example("reference", "own"),
    "passes_on_stub": Example("reference", "own"),
    "syntax_error_in_tests": Example("reference", "own"),
    "syntax_error_in_radix": Example("own", "reference"),
    "hangs": Example("reference", "own"),
    "missing_test_file": Example("reference", "missing"),
    "missing_radix": Example("missing", "reference"),
    "buggy_radix": Example("patched", "reference"),
    "lru_split": Example("patched", "reference"),
    "lru_split_again": Example("patched", "reference"),
    "children_unsorted": Example("patched", "reference"),
}


def _lay_out(chapter: Chapter, example: str, relative: str, source: Source, folder: Path) -> None:
    """Write the file ``relative`` of ``folder`` from ``source`` (see ``Example``)."""
    target = folder / relative
    model = chapter.reference if relative == chapter.implementation else chapter.model_tests
    stored = SUBMISSIONS / example / relative
    if source == "missing":
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if source == "reference":
        shutil.copyfile(model, target)
    elif source == "own":
        shutil.copyfile(stored, target)
    else:
        patch = stored.with_name(stored.name + PATCH_SUFFIX)
        target.write_text(apply_patch(model.read_text(encoding="utf-8"), patch), encoding="utf-8")
    if relative == chapter.implementation and source != "own":
        add_dependencies(target.parent, chapter)


def add_dependencies(folder: Path, chapter: Chapter | None = None) -> None:
    """Put the kit's copy of each earlier chapter's module in ``folder``, beside a radix.py
    that imports it (a submission of a student who built those chapters)."""
    for need in (chapter or load_chapter()).needs:
        shutil.copyfile(need.reference, folder / need.implementation)


def _import_kit_dependencies() -> None:
    """Register the kit's copy of each module the chapter needs under its own name, so that
    loading the reference by path in this process finds what it imports."""
    for need in load_chapter().needs:
        if need.module in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(need.module, need.reference)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[need.module] = module
        spec.loader.exec_module(module)


_import_kit_dependencies()


def make_submission(tmp_path: Path, name: str) -> Path:
    """Lay out the example submission ``name`` in a new folder under ``tmp_path``; return it."""
    chapter = load_chapter()
    example = EXAMPLES[name]
    folder = tmp_path / name
    folder.mkdir()
    _lay_out(chapter, name, chapter.implementation, example.implementation, folder)
    _lay_out(chapter, name, chapter.student_tests, example.tests, folder)
    return folder


class ReusedRuns:
    """A memo of ``WorkerPool.run``: each distinct ``Job`` runs once, later asks get its result.

    A job is the whole input of a run (implementation, test file, time limit,
    order, hash seed), so a replayed result is the one a new run would give
    on a deterministic grader; the determinism tests check that separately,
    without this memo. Asks for a job already running wait for its result.
    Workers start only when a run needs one, so a fully replayed grading
    starts no process.
    """

    def __init__(self) -> None:
        self._runs: dict[Job, Future[RunResult]] = {}
        self._lock = threading.Lock()
        self.made = 0
        self.reused = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Route every ``WorkerPool.run`` through the memo until ``monkeypatch`` is undone.

        Installing it again while it is installed changes nothing (a memo in
        front of itself would wait for its own result).
        """
        if getattr(WorkerPool.run, "memo", None) is self:
            return
        real_run = WorkerPool.run

        def run(pool: WorkerPool, job: Job) -> RunResult:
            with self._lock:
                future = self._runs.get(job)
                mine = future is None
                if future is None:
                    future = self._runs[job] = Future()
                    self.made += 1
                else:
                    self.reused += 1
            if mine:
                try:
                    future.set_result(real_run(pool, job))
                except BaseException as error:
                    with self._lock:
                        del self._runs[job]
                    future.set_exception(error)
            return future.result()

        run.memo = self  # type: ignore[attr-defined]
        monkeypatch.setattr(WorkerPool, "run", run)
        monkeypatch.setattr("grader.sandbox.host.pool.Worker", _lazy(Worker))


def _lazy(worker: type[Any]) -> Callable[..., Any]:
    """A stand-in for the worker class that starts the real worker on its first run.

    Until then every other method (closing, stopping) has nothing to do.
    """

    class LazyWorker:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._args, self._kwargs = args, kwargs
            self._real: Any = None

        def run(self, *args: Any, **kwargs: Any) -> Any:
            if self._real is None:
                self._real = worker(*self._args, **self._kwargs)
            return self._real.run(*args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            if self._real is not None:
                return getattr(self._real, name)
            return lambda *args, **kwargs: None

    return LazyWorker


@pytest.fixture(scope="session")
def reused_runs() -> ReusedRuns:
    """The session's memo of sandboxed runs (inactive until a test installs it)."""
    return ReusedRuns()


@pytest.fixture(scope="session", autouse=True)
def kit_modes_restored() -> Iterator[None]:
    """Give the checkout back as the session found it: a check at ``uid`` closes the kit and
    the grader's package to other users (``confine.probe.close_to_runs``), for good, as it
    should on a grading machine, but a developer's checkout should not stay closed."""
    paths = private_paths(installed_kit())
    modes = {path: path.stat().st_mode for path in paths if path.exists()}
    yield
    for path, mode in modes.items():
        with contextlib.suppress(OSError):
            path.chmod(stat.S_IMODE(mode))


@pytest.fixture(scope="session", autouse=True)
def own_result_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``grader check``'s result cache (``grader.grading.result_cache``) in a folder of this
    session's, for the commands run here and the ones they start: never the user's own cache."""
    folder = tmp_path_factory.mktemp("cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if before is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = before
