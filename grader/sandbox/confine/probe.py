"""The isolation level this machine gives runs, measured once by trying it in a child.

``isolation_level`` is the strongest level whose probe lacks nothing; ``level_lacks`` says,
one sentence each, what keeps a level from holding: a step the kernel refused, a library
a run cannot read, a private folder it can.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import signal
import stat
import sys
import sysconfig
import tempfile
from collections.abc import Iterable
from pathlib import Path

from grader.sandbox import reaper
from grader.sandbox.confine.contain import fork_confined
from grader.sandbox.confine.folders import open_to_runs
from grader.sandbox.confine.pid_namespace import exit_code
from grader.sandbox.confine.policy import Confinement, confinement_for
from grader.sandbox.confine.user import UNTRUSTED_UID
from grader.sandbox.confine.view import GRADER_PACKAGE
from grader.sandbox.levels import IsolationLevel


@functools.cache
def isolation_level() -> IsolationLevel:
    """The strongest level this machine allows this process, tried once in a throwaway child."""
    if os.geteuid() != 0:
        return "none"
    for level in ("namespaces", "uid"):
        if not level_lacks(level):
            return level
    return "none"


@functools.cache
def level_lacks(level: IsolationLevel) -> tuple[str, ...]:
    """What keeps this machine from giving runs ``level``, one sentence each (none: it gives
    it), tried once in a throwaway child confined at that level. At ``uid`` the grader first
    closes the kit and its own install to other users (``close_to_runs``)."""
    if level == "none":
        return ()
    if os.geteuid() != 0:
        return ("the grader is not root, and only root can give a run a user of its own",)
    if level == "uid":  # the wall is the file mode: close what no run may read, then probe
        cannot = close_to_runs(private_paths(installed_kit()))
        if cannot:
            return tuple(cannot)
    return _try_level(level)


RUN_PACKAGES = (
    "pytest",
    "_pytest",
    "pluggy",
    "iniconfig",
    "packaging",
    "hypothesis",
    "sortedcontainers",
    "attr",
)
"""The packages a run imports from beyond the standard library: pytest, hypothesis and what
they import."""
KIT_CONTENT = ("reference", "mutants", "wheats", "course_tests", "chapter")
"""The folders of the kit no run may read: the model implementation and answer, the variants
graded against, the course tests and the chapter's data."""


def run_library_paths() -> list[Path]:
    """What a run must be able to read: the interpreter, its standard library (compiled
    modules included) and the folder of each of ``RUN_PACKAGES``."""
    paths = [Path(sys.executable), Path(sysconfig.get_path("stdlib"))]
    paths.append(Path(sysconfig.get_path("stdlib")) / "lib-dynload")
    for name in RUN_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            paths.append(Path(spec.origin).parent)
    return [path for path in dict.fromkeys(paths) if path.exists()]


def installed_kit() -> Path:
    """The kit this grader grades with: inside its package (a wheel), else the checkout."""
    kit = GRADER_PACKAGE / "kit"
    return kit if kit.is_dir() else kit.parents[1]


def close_to_runs(paths: Iterable[Path]) -> list[str]:
    """Close each of ``paths`` that other users can enter to all but its owner (``chmod
    go-rwx`` on the folder itself, so nothing below it is reachable): the ``uid`` level's
    wall for what no run may read. One sentence for each it could not close."""
    cannot = []
    for path in open_to_runs(paths):
        try:
            os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & ~0o077)
        except OSError as error:
            cannot.append(f"{path} could not be closed to other users ({error.strerror})")
    return cannot


def private_paths(kit: Path) -> list[Path]:
    """What no run may read, where runs only have permissions to keep them out (``uid``):
    the grader's own install (in a wheel, the kit inside it), the kit's content, and any
    copy of the package on ``sys.path`` that holds a kit (an editable install copies the
    kit into ``site-packages/grader/kit``, beside the packages every run reads)."""
    grader = GRADER_PACKAGE
    copies = [Path(e, grader.name).resolve() for e in sys.path if e and os.path.isabs(e)]
    copies = [copy for copy in copies if copy != grader and (copy / "kit").is_dir()]
    content = [kit / name for name in KIT_CONTENT if (kit / name).is_dir()]
    return list(dict.fromkeys([grader, *copies, *content]))


def _try_level(level: IsolationLevel) -> tuple[str, ...]:
    """Fork a child that confines itself at ``level`` and says what of the level it lacks:
    a step the kernel refused, a library a run cannot read, a private folder it can.

    The stop signals wait until the probe is over and its folder gone (a fraction of a
    second): one handled in between could skip the clean-up, or, inside an at-fork hook
    (``logging`` has one), be ignored by Python and lose the grader's Ctrl-C. The child
    keeps them held; it ends by itself."""
    stops = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        return _probe(level)  # the child ends in it (os._exit), never here
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _probe(level: IsolationLevel) -> tuple[str, ...]:
    """``_try_level``'s work, with the stop signals held."""
    # A run may import nothing else.
    needed, private = run_library_paths(), private_paths(installed_kit())
    read_end, write_end = os.pipe()
    workdir: Path | None = None
    try:
        workdir = Path(tempfile.mkdtemp(prefix="grader-probe-"))  # in the try: Ctrl-C removes it
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            lacks: list[str] = []
            try:
                # At namespaces the probe's root holds what a run must read, and no more.
                child = fork_confined(confinement_for(level, map(str, needed)), workdir)
                if child == 0:
                    _tell(write_end, _what_is_lacking(level, needed, private))
                    os._exit(0)
                code = exit_code(reaper.wait_for(child), Confinement(level))
                if code != 0:
                    lacks.append(f"a confined process could not be made (exit status {code})")
            except BaseException as error:
                lacks.append(f"the kernel refused a step ({error})")
            _tell(write_end, lacks)
            os._exit(0)
        os.close(write_end)
        said = b""
        while chunk := os.read(read_end, 65536):
            said += chunk
        reaper.wait_for(pid)
        return tuple(line for line in said.decode(errors="replace").splitlines() if line)
    finally:
        with contextlib.suppress(OSError):
            os.close(write_end)
        os.close(read_end)
        if workdir is not None:
            os.rmdir(workdir)


def _tell(fd: int, lines: list[str]) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, "".join(f"{line}\n" for line in lines).encode())


def _what_is_lacking(level: IsolationLevel, needed: list[Path], private: list[Path]) -> list[str]:
    """In the probe's confined child: what of ``level`` this process lacks, with the paths a
    run must read (``needed``) and must not (``private``)."""
    lacks = []
    if os.getuid() != UNTRUSTED_UID or os.getgroups() != []:
        lacks.append("the run's user could not be dropped")
    unreadable = [str(path) for path in needed if not os.access(path, os.R_OK | os.X_OK)]
    if unreadable:
        lacks.append(f"a run cannot read Python, which every run needs ({', '.join(unreadable)})")
    readable = [str(path) for path in private if os.access(path, os.R_OK | os.X_OK)]
    if level == "uid" and readable:
        lacks.append(f"a run could read the kit, which no run may ({', '.join(readable)})")
    if level == "namespaces":
        if os.getpid() != 2 or os.access(__file__, os.F_OK):
            lacks.append("the run's PID or mount namespace did not hold")
        if os.access(tempfile.gettempdir(), os.W_OK):
            lacks.append("the mounts outside the run's folder stayed writable")
    return lacks
