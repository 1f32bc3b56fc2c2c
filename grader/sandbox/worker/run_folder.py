"""A run's folder and its output, as the worker lays them out and reads them back.

The folder is named alike for every run and holds no source (each process
reads its own from a descriptor); the run's output goes to one file the worker
reads back through a descriptor it opened first, so whatever the run puts in
its place, the worker reads neither an endless file nor a pipe. Paths of the
folder are taken out of what a run reports, so every run reads the same.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from grader.sandbox.confine import folders
from grader.sandbox.confine.policy import Confinement
from grader.sandbox.levels import IsolationLevel

OUTPUT_TAIL_BYTES = 4000

LOG_NAME = "output.log"
"""The file in a run's folder its processes' stdout and stderr go to."""


def new_folder(scratch: Path, level: IsolationLevel) -> tuple[Path, Path]:
    """A new run's folder, named alike for every run (``folders.make_run_folder``), and where
    the run's processes find it (``folders.folder_seen``)."""
    folder = folders.make_run_folder(scratch, "run", level)
    return folder, folders.folder_seen(folder, level)


def open_log(folder: Path) -> tuple[int, int]:
    """The run's output file, made new (never a link), as two descriptors: the one its
    processes write, and the one the worker reads it through after the run.

    The run owns its folder and may put anything in the file's place (a link to
    ``/dev/zero``, a FIFO): the worker never opens that path again, so it reads
    neither an endless file nor blocks on a pipe, only what was written here.
    """
    path = folder / LOG_NAME
    flags = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    write = os.open(path, os.O_WRONLY | os.O_APPEND | flags, 0o600)
    try:
        read = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except BaseException:
        os.close(write)
        raise
    return write, read


def lay_out(
    folder: Path, confinement: Confinement, test: int | None, implementation: int | None
) -> None:
    """The run's folders: no source is written here (each process reads its own from a channel).

    The run's folder and ``tests`` (where the test process writes its file)
    are the test process's user's; ``implementation`` is the implementation
    process's, which may only pass through the run's folder to reach it.
    """
    (folder / "tests").mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "home").mkdir()
    (folder / "tmp").mkdir()
    for name in ("home", "tmp"):
        (folder / "implementation" / name).mkdir(parents=True)
    own = [folder / "implementation", *(folder / "implementation").iterdir()]
    theirs = [folder, folder / "tests", folder / "home", folder / "tmp", folder / "pytest.ini"]
    folders.hand_over(theirs, confinement.as_identity(test))
    folders.hand_over(own, confinement.as_identity(implementation))
    if confinement.uid is not None:
        for path in (*own, *theirs[1:4]):
            path.chmod(0o700)
        folder.chmod(0o711)


def strip_folder(text: str, folder: Path) -> str:
    """``text`` with the run's folder taken out of every path, so every run reads the same."""
    return text.replace(f"{folder}/", "").replace(str(folder), ".")


def without_folder(events: list[Any], folder: Path) -> list[Any]:
    """Events with the run's folder taken out of every path, so reports are the same every run."""
    return list(json.loads(strip_folder(json.dumps(events), folder)))


def tail(log: int, replaced: bool) -> str:
    """The last ``OUTPUT_TAIL_BYTES`` of the run's output, read through the descriptor the
    worker opened before the run (``open_log``); at most that many bytes are read."""
    try:
        size = os.fstat(log).st_size
        start = max(0, size - OUTPUT_TAIL_BYTES)
        text = os.pread(log, OUTPUT_TAIL_BYTES, start).decode("utf-8", errors="replace")
    except OSError:
        return ""
    note = f"[the run put something else in place of {LOG_NAME}; its output was kept]\n"
    return (note if replaced else "") + (
        text
        if size <= OUTPUT_TAIL_BYTES
        else f"[output cut to its last {OUTPUT_TAIL_BYTES} bytes of {size}]\n{text}"
    )


def replaced(log: int, path: Path) -> bool:
    """Whether ``path`` no longer names the file ``log`` is open on (looked at, never
    opened: it may be a FIFO or a link to a device now)."""
    try:
        seen, kept = os.lstat(path), os.fstat(log)
    except OSError:
        return True
    return (seen.st_dev, seen.st_ino) != (kept.st_dev, kept.st_ino)


def output(log: int, folder: Path, seen: Path) -> str:
    """What the run wrote (``tail``), its folder as the run saw it (``seen``) taken out."""
    return strip_folder(tail(log, replaced(log, folder / LOG_NAME)), seen)
