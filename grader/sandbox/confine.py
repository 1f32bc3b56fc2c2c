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
    process, so a pool runs them one at a time (``grader.sandbox.host.pool``) and
    ``remove_leftovers`` clears the shared folders after each.
``namespaces``
    Root and namespaces: ``uid`` plus a PID namespace of its own (its first
    process is a small init kept by the grader; when the run ends, the kernel
    kills everything it started, and it sees no other process), a network
    namespace of its own (no network at all, not even the machine's
    loopback), and a mount namespace whose root is built from a list, as
    bubblewrap and nsjail build one (``View``): a small read-only tmpfs holding
    the interpreter and its standard library, the installed packages the
    warm worker imported (pytest, hypothesis and what they import; of the
    grader only the modules a run runs), four devices, the run's own ``/proc``
    and, writable, the run's folder at ``RUN_FOLDER``, a tmpfs with a size and
    a file count of its own (``run_folder``). Nothing else exists there: not
    the kit, not the host's ``/tmp``, ``/root`` or ``/home``, not another run.

``isolation_level()`` measures the level once per process by trying it in a
throwaway child. ``fork_confined()`` is the one call a worker makes: it forks
like ``os.fork()`` and, in the child, returns only once the child is
confined. Bubblewrap would give the same namespaces, but it runs a fresh
program per run; calling the kernel through ``ctypes`` keeps the warm worker's
fork, which is what makes a run cost milliseconds.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import resource
import secrets
import shutil
import signal
import stat
import struct
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, NoReturn

from grader.sandbox import libc, procfs, reaper

IsolationLevel = Literal["none", "uid", "namespaces"]
LEVELS: tuple[IsolationLevel, ...] = ("none", "uid", "namespaces")
"""Weakest first: a level stops everything the ones before it stop."""

ISOLATION_CHOICES: dict[str, IsolationLevel] = {
    "best": "none",
    "required": "uid",
    "namespaces": "namespaces",
}
"""The values of ``--isolation``, each naming the least level the runs must get: ``best``
takes what the machine gives (as root, never less than ``uid``: ``host.pool.require_isolation``);
``required`` means student code never runs as the grader's user."""

UNTRUSTED_UID = 65534
UNTRUSTED_GID = 65534
"""``nobody`` and ``nogroup`` on Debian and most distributions: the identity of the probe that
measures the level, and of a ``Confinement`` made without an identity of its own."""

RUN_IDS = range(1_500_000_000, 1_500_000_000 + (1 << 24))
"""The uids (and gids of the same number) the grader reserves for runs: each process of a run
gets one of its own, drawn at random (``new_identity``), so no two runs share a user, and the
number tells a test nothing of which run it is in or what came before it."""

NARROW_RUN_IDS = range(60_000, 65_534)
"""The run ids where the user namespace does not map ``RUN_IDS``: a container with a uid map
of 65536 ids (Kubernetes' ``hostUsers: false``, rootless podman) maps 0 to 65535 only. Below
``nobody``, in the band Debian leaves to accounts made on demand, which a grading image has
none of: no file of the image or the kit is theirs."""

MIN_RUN_IDS = 1024
"""The fewest mapped run ids the grader grades with: the ids of the runs alive at once (two
per run, a run per worker) are redrawn, so a band this wide rarely needs a second draw."""


class RunIdsUnmapped(Exception):
    """The user namespace maps too few of the run ids (``run_ids``)."""


def _mapped(band: range, uids: tuple[range, ...], gids: tuple[range, ...]) -> range:
    """The widest run of ``band`` that ``uids`` and ``gids`` both map (a run's uid and gid are
    one number)."""
    widest = range(0)
    for uid_range in uids:
        for gid_range in gids:
            start = max(band.start, uid_range.start, gid_range.start)
            stop = min(band.stop, uid_range.stop, gid_range.stop)
            if stop - start > len(widest):
                widest = range(start, stop)
    return widest


def choose_run_ids(uids: tuple[range, ...], gids: tuple[range, ...]) -> range:
    """The ids runs draw from under the maps ``uids`` and ``gids``: the mapped part of
    ``RUN_IDS``, else of ``NARROW_RUN_IDS``; ``RunIdsUnmapped`` where neither has
    ``MIN_RUN_IDS``."""
    for band in (RUN_IDS, NARROW_RUN_IDS):
        ids = _mapped(band, uids, gids)
        if len(ids) >= MIN_RUN_IDS:
            return ids
    found = max(len(_mapped(band, uids, gids)) for band in (RUN_IDS, NARROW_RUN_IDS))
    raise RunIdsUnmapped(
        f"this container's user namespace maps only {found} of the ids the grader runs "
        f"students' code as ({RUN_IDS.start}-{RUN_IDS.stop - 1}, or else "
        f"{NARROW_RUN_IDS.start}-{NARROW_RUN_IDS.stop - 1}; at least {MIN_RUN_IDS} are "
        "needed): map 65536 ids from 0 (podman --uidmap 0:100000:65536 --gidmap "
        "0:100000:65536, or Kubernetes' hostUsers: false), or run it without a uid map"
    )


@functools.cache
def run_ids() -> range:
    """The ids this process's runs draw from, read once from its user namespace's maps
    (``choose_run_ids``)."""
    return choose_run_ids(procfs.own_id_map("uid"), procfs.own_id_map("gid"))


MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024
"""Address space of every untrusted process. Its hard limit also marks the process as a
run's: an unprivileged process can lower a hard limit but never raise it, so a process
the grader did not start with this limit is never taken for one (see ``is_untrusted``)."""

OUTPUT_LIMIT_BYTES = 4 * 1024 * 1024
"""The largest file an untrusted process may write (``RLIMIT_FSIZE``): its output included."""
OPEN_FILES_LIMIT = 256
"""The most descriptors an untrusted process may hold (``RLIMIT_NOFILE``)."""
UID_PROCESS_LIMIT = 64
"""The most processes and threads one process of a run and what it starts may have
(``RLIMIT_NPROC`` on its uid, which no other process has): a test needs one, pytest and
hypothesis start none; a fork bomb stops here, after a few milliseconds."""
FOLDER_FILES_LIMIT = 2000
"""The most files and folders a run may make in its own folder (``folder_over_cap``)."""
FOLDER_BYTES_LIMIT = 64 * 1024 * 1024
"""The most disk a run's folder may take (``folder_over_cap``); one file is capped at
``OUTPUT_LIMIT_BYTES`` by the kernel."""

RUN_FOLDER = Path("/run/grader")
"""Where a run's folder is at the ``namespaces`` level, inside the run's own root: the same
path for every run, so that no path a run sees (its folder, ``HOME``, ``TMPDIR``, the
test file's) differs from one run or variant to the next."""

RUN_FOLDER_BYTES = FOLDER_BYTES_LIMIT + OUTPUT_LIMIT_BYTES
"""The size of a run's folder at ``namespaces`` (a tmpfs of its own): the kernel's hard stop
behind the worker's cap (``folder_over_cap``), one largest file above it, so a run that
writes past the cap is failed by the worker with its message and none writes further."""
RUN_FOLDER_FILES = FOLDER_FILES_LIMIT + 64
"""The most inodes a run's folder at ``namespaces`` holds: the worker's cap, and room for the
run's own layout (about ten entries); each costs the kernel memory the size does not count."""

DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
"""The devices a run's root holds at ``namespaces``: bound from the machine's."""
DEVICE_LINKS = (
    ("/dev/fd", procfs.OWN_DESCRIPTORS),
    ("/dev/stdin", f"{procfs.OWN_DESCRIPTORS}/0"),
    ("/dev/stdout", f"{procfs.OWN_DESCRIPTORS}/1"),
    ("/dev/stderr", f"{procfs.OWN_DESCRIPTORS}/2"),
)


@dataclass(frozen=True)
class View:
    """What a run's root holds at the ``namespaces`` level besides its folder, ``/proc`` and
    ``DEVICES``, each at its own path: an allow-list, made by ``run_view``.

    ``binds`` are files and folders of the machine, bound read-only, parents
    before children; ``empty`` are folders inside one of them that show
    nothing but what ``binds`` puts in them (a site-packages below the standard
    library); ``links`` are the symbolic links on the way to them, as the
    machine has them; ``listed`` the folders made on the way that a run may
    list (those ``sys.path`` names, where imports look): every other one may
    only be passed through (``/root``, holding a pyenv, shows nothing).
    """

    binds: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    listed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Confinement:
    """How to confine a run's process: the level, what its root holds, the identity it takes."""

    level: IsolationLevel
    view: View = View()
    identity: int | None = None
    """The uid and gid (one number) the process takes; ``None``: ``UNTRUSTED_UID``."""

    @property
    def uid(self) -> int | None:
        """The uid a run's process takes, or ``None`` where it keeps the grader's."""
        if self.level == "none":
            return None
        return UNTRUSTED_UID if self.identity is None else self.identity

    @property
    def gid(self) -> int | None:
        if self.level == "none":
            return None
        return UNTRUSTED_GID if self.identity is None else self.identity

    def as_identity(self, identity: int | None) -> Confinement:
        """This confinement for one process of a run that takes ``identity``."""
        return replace(self, identity=identity)


def new_identity(level: IsolationLevel, taken: Iterable[int] = ()) -> int | None:
    """A uid (and gid) from ``run_ids()`` for one process of one run, other than ``taken`` (the
    run's other process), where the level drops the grader's user; ``None`` at ``none``.

    Drawn at random, so it says nothing a test could use; it is never reused
    while anything of its run lives, since every run ends swept (by its PID
    namespace, its cgroup and its users: ``kill_users``). From the narrow band
    an id some process holds (another worker's run) is drawn again.
    """
    if level == "none":
        return None
    ids, taken = run_ids(), set(taken)
    for _ in range(64):
        candidate = ids.start + secrets.randbelow(len(ids))
        if candidate in taken:
            continue
        if len(ids) < len(RUN_IDS) and procfs.users_processes([candidate]):
            continue
        return candidate
    raise OSError(f"no free run id in {ids.start}-{ids.stop - 1} after 64 draws")


def new_identities(level: IsolationLevel, kinds: Iterable[str]) -> dict[str, int | None]:
    """An identity for each process of one run, by kind (``new_identity``), no two alike."""
    drawn: dict[str, int | None] = {}
    for kind in kinds:
        drawn[kind] = new_identity(level, [each for each in drawn.values() if each is not None])
    return drawn


def parse_level(text: str) -> IsolationLevel:
    """The level named ``text``; ``ValueError`` for any other name."""
    for level in LEVELS:
        if level == text:
            return level
    raise ValueError(f"unknown isolation level {text!r}: one of {', '.join(LEVELS)}")


def level_at_least(level: IsolationLevel, minimum: IsolationLevel) -> bool:
    return LEVELS.index(level) >= LEVELS.index(minimum)


def pins_implementation(confinement: Confinement) -> bool:
    """Whether a run's implementation process is pinned to its worker's CPU: only where each
    process has a PID namespace of its own, so the test process cannot see it, nor read its
    placement; the test process's own placement is every run's."""
    return confinement.level == "namespaces"


def confinement_for(level: IsolationLevel, own: Iterable[str] = ()) -> Confinement:
    """How to confine runs at ``level`` from this process as it is now: at ``namespaces`` a
    root holding what it has imported (``run_view``), of the grader only ``own``."""
    return Confinement(level, run_view(own) if level == "namespaces" else View())


def run_view(own: Iterable[str] = ()) -> View:
    """The allow-list of a run's root, read from this process (a warm worker, after its
    warm-up): the files it has mapped (the interpreter, its libraries, extension modules),
    the standard library's folder, and of each other folder on ``sys.path`` only the
    top-level packages and modules its loaded modules come from. The grader's own package,
    and the checkout it runs from where that is no site-packages (an editable install, which
    holds the kit), are left out but for the files and folders ``own`` names (the modules a
    run runs).

    The folder of a package is bound whole, so what it imports lazily is there too; a
    package that nothing imported before the fork is not."""
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    grader = str(Path(__file__).resolve().parents[1])
    entries = {os.path.realpath(entry) for entry in sys.path if entry and os.path.isdir(entry)}
    empty = [f"{stdlib}/{name}" for name in _SITE_NAMES if os.path.isdir(f"{stdlib}/{name}")]
    # The checkout an editable install runs the grader from holds the kit: not a site.
    checkout = os.path.dirname(grader)
    entries -= {checkout} if not os.path.isdir(os.path.join(checkout, "_pytest")) else set()
    sites = sorted(e for e in entries if not _within(stdlib, e) or e in empty)
    chosen: set[str] = set()
    for module in list(sys.modules.values()):
        for file in _module_files(module):
            site = max((entry for entry in sites if _within(entry, file)), key=len, default=None)
            if site is not None and file != site:
                top = os.path.join(site, os.path.relpath(file, site).split(os.sep)[0])
                if top != grader:
                    chosen.add(top)
    links: dict[str, str] = {}
    wanted = [stdlib, *sorted(chosen), *own]
    wanted += [path for path in procfs.mapped_files() if os.path.isfile(path)]
    # The interpreter as a run may start it again: by its path, through its ELF interpreter,
    # with its virtual environment's settings.
    interpreter = _elf_interpreter(os.path.realpath(sys.executable))
    config = os.path.join(sys.prefix, "pyvenv.cfg")
    wanted += [p for p in (sys.executable, interpreter, config) if p and os.path.isfile(p)]
    binds = {_route(path, links) for path in wanted}

    def covered(path: str) -> bool:
        return any(
            _below(bind, path) and not any(_below(bind, e) and _within(e, path) for e in empty)
            for bind in binds
        )

    binds = {path for path in binds if not covered(path)}
    listed = sorted(site for site in sites if any(_below(site, path) for path in binds))
    return View(tuple(sorted(binds)), tuple(empty), tuple(sorted(links.items())), tuple(listed))


_SITE_NAMES = ("site-packages", "dist-packages")
"""The folders of installed packages that an installation keeps below its standard library:
a run's root shows them empty but for the packages chosen from them."""


def _elf_interpreter(executable: str) -> str | None:
    """The program loader an ELF ``executable`` names (``PT_INTERP``), if it names one."""
    try:
        with open(executable, "rb") as file:
            head = file.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit only
                return None
            order = "<" if head[5] == 1 else ">"
            offset, size, count = (
                struct.unpack_from(f"{order}Q", head, 0x20)[0],
                *struct.unpack_from(f"{order}HH", head, 0x36),
            )
            for index in range(count):
                file.seek(offset + index * size)
                header = file.read(size)
                if struct.unpack_from(f"{order}I", header, 0)[0] == 3:  # PT_INTERP
                    where, length = (
                        struct.unpack_from(f"{order}Q", header, 8)[0],
                        struct.unpack_from(f"{order}Q", header, 32)[0],
                    )
                    file.seek(where)
                    return file.read(length).rstrip(b"\0").decode()
    except (OSError, struct.error, UnicodeDecodeError):
        return None
    return None


def _module_files(module: object) -> list[str]:
    """Where a loaded module comes from: its file, else (a namespace package) its folders."""
    file = getattr(module, "__file__", None)
    if isinstance(file, str) and os.path.isabs(file):
        return [os.path.realpath(file)]
    folders = getattr(module, "__path__", None)
    if file is None and folders is not None and not isinstance(folders, str):
        return [os.path.realpath(folder) for folder in list(folders) if isinstance(folder, str)]
    return []


def _within(folder: str, path: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _below(folder: str, path: str) -> bool:
    """Whether ``path`` lies below ``folder`` (not ``folder`` itself)."""
    return path != folder and _within(folder, path)


def _route(path: str, links: dict[str, str], depth: int = 0) -> str:
    """``path`` with every symbolic link on the way resolved, each noted in ``links`` (its
    path and its target), so the run's root can hold the same way to the same file."""
    if depth > 16:
        raise OSError(f"too many symbolic links on the way to {path}")
    current = "/"
    for part in Path(os.path.normpath(path)).parts[1:]:
        step = os.path.join(current, part)
        if os.path.islink(step):
            target = os.readlink(step)
            links[step] = target
            current = _route(os.path.normpath(os.path.join(current, target)), links, depth + 1)
        else:
            current = step
    return current


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
    kit = Path(__file__).resolve().parents[1] / "kit"
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
    grader = Path(__file__).resolve().parents[1]
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


def reachable(path: Path) -> bool:
    """Whether a process of another user could reach ``path`` (every folder above it lets
    others through); at the ``uid`` level a run's folder must be."""
    return all(folder.stat().st_mode & 0o001 for folder in path.resolve().parents)


def open_to_runs(paths: Iterable[Path]) -> list[Path]:
    """Those of ``paths`` a run at the ``uid`` level could enter: every folder above, and the
    path itself, let others through. A path not made yet counts as its nearest folder that
    is (what is made in it inherits the way in)."""
    found = []
    for path in paths:
        existing = path.resolve()
        while not existing.exists():
            existing = existing.parent
        if all(folder.stat().st_mode & 0o001 for folder in (existing, *existing.parents)):
            found.append(path)
    return found


def fork_confined(confinement: Confinement, workdir: Path, new_session: bool = True) -> int:
    """Fork like ``os.fork()``: the child's pid in the parent, 0 in a confined child.

    With ``new_session`` the child leads a session of its own
    (``os.killpg(pid, ...)`` reaches it and what it starts, unless that
    leaves the session); else it stays in the caller's.

    Call it in a single-threaded process, after making the run's folder
    ``workdir`` writable for ``confinement.uid`` (``hand_over``). At the
    ``namespaces`` level the child's root holds only ``confinement.view``,
    with ``workdir`` at ``RUN_FOLDER``; the folders on the way to them are
    the root's own, which every user may pass (``/root`` holding a pyenv,
    say, shows only the way). The pid returned is then the run's init, a small process of the
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
    own_namespace = procfs.open_own_pid_namespace()
    try:
        libc.unshare(libc.CLONE_NEWPID, "unshare(CLONE_NEWPID)")
        try:
            pid = os.fork()
        finally:
            if os.getpid() != 1:
                # Back in the parent: its later children go to its own namespace again.
                libc.setns(own_namespace, libc.CLONE_NEWPID)
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
    """In the run's init: private mount, network, IPC, UTS and cgroup namespaces, and a root
    of the run's own built from ``confinement.view`` (``_build_root``)."""
    # Its own cgroup namespace too: the run's cgroup (joined by its root) reads as "/".
    spaces = (
        libc.CLONE_NEWNS
        | libc.CLONE_NEWNET
        | libc.CLONE_NEWIPC
        | libc.CLONE_NEWUTS
        | libc.CLONE_NEWCGROUP
    )
    libc.unshare(spaces)
    libc.mount("none", "/", None, libc.MS_REC | libc.MS_PRIVATE, None)
    _build_root(confinement.view, workdir)


_OLD_ROOT = "/.old-root"
"""Where the machine's root is while a run's root is built from it, then detached."""
_ROOT_OPTIONS = "size=1m,nr_inodes=1024,mode=0755"
"""The run's root tmpfs: only folders, links and mount points, read-only once built."""
_READ_ONLY = libc.MS_REMOUNT | libc.MS_BIND | libc.MS_RDONLY | libc.MS_NOSUID | libc.MS_NODEV


def _build_root(view: View, workdir: Path) -> None:
    """Make a new tmpfs this mount namespace's root, holding exactly ``view``, ``DEVICES``,
    a ``/proc`` of this PID namespace and ``workdir`` (writable) at ``RUN_FOLDER``; the
    machine's own root is then detached, out of every path's reach (bubblewrap's way).

    The tmpfs is mounted over ``/tmp`` and made the root with ``pivot_root``: the old root,
    with whatever lay under ``/tmp`` (the run's folder), stays reachable below
    ``_OLD_ROOT`` until every bind is made."""
    mask = os.umask(0o022)
    try:
        flags = libc.MS_NOSUID | libc.MS_NODEV
        libc.mount("none", "/tmp", "tmpfs", flags, _ROOT_OPTIONS)
        os.mkdir(f"/tmp{_OLD_ROOT}")
        libc.pivot_root("/tmp", f"/tmp{_OLD_ROOT}")
        os.chdir("/")
        for path, target in view.links:
            _make_parents(path)
            if not os.path.lexists(path):
                os.symlink(target, path)
        empty = set(view.empty)
        for path in sorted([*view.binds, *empty]):
            _make_parents(path)
            if path in empty:
                libc.mount("none", path, "tmpfs", flags, _ROOT_OPTIONS)
                continue
            _bind(path, path)
            libc.mount("none", path, None, _READ_ONLY, None)
        for device in DEVICES:
            _make_parents(device)
            _bind(device, device)
        for path, target in DEVICE_LINKS:
            os.symlink(target, path)
        run_folder = str(RUN_FOLDER)
        _make_parents(run_folder)
        _bind(str(workdir), run_folder)
        os.mkdir(procfs.ROOT)
        proc_flags = libc.MS_NOSUID | libc.MS_NODEV | libc.MS_NOEXEC
        libc.mount("proc", procfs.ROOT, "proc", proc_flags, None)
        for folder in ("/dev", *view.listed):
            if folder not in empty and os.path.isdir(folder):
                os.chmod(folder, 0o755)
        libc.umount(_OLD_ROOT, libc.MNT_DETACH)
        os.rmdir(_OLD_ROOT)
        for path in sorted(empty, reverse=True):
            libc.mount("none", path, None, libc.MS_REMOUNT | libc.MS_RDONLY | flags, None)
        libc.mount("none", "/", None, libc.MS_REMOUNT | libc.MS_RDONLY | flags, None)
    finally:
        os.umask(mask)


def _make_parents(path: str) -> None:
    """The folders above ``path`` in the run's root being built, each one that this makes
    passable but not listable (mode 0711; ``View.listed`` are opened to listing after)."""
    folder = "/"
    for part in Path(os.path.dirname(path)).parts[1:]:
        folder = os.path.join(folder, part)
        if not os.path.lexists(folder):
            os.mkdir(folder, 0o711)
            os.chmod(folder, 0o711)


def _bind(source: str, target: str) -> None:
    """Bind the machine's ``source`` (below the old root) at ``target``, which this makes."""
    old = f"{_OLD_ROOT}{source}"
    if not os.path.lexists(target):
        if os.path.isdir(old):
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    libc.mount(old, target, None, libc.MS_BIND, None)


def _confine_process(confinement: Confinement) -> None:
    """In the process that runs untrusted code: its own keyrings and uid, then the mark, then
    no way back, and no keyring or IPC calls at all."""
    own_keyrings()
    if confinement.uid is not None and confinement.gid is not None:
        os.setgroups([])
        os.setgid(confinement.gid)
        os.setuid(confinement.uid)
        if os.getuid() != confinement.uid or os.geteuid() != confinement.uid:
            raise OSError("the uid was not dropped")
        own_keyrings()  # the new user's: empty, whatever an earlier holder of the uid left
        # The uid is this process's alone: the kernel's count of its processes is the run's,
        # a pids limit where no cgroup gives one.
        limit = (UID_PROCESS_LIMIT, UID_PROCESS_LIMIT)
        resource.setrlimit(resource.RLIMIT_NPROC, limit)
        if confinement.level == "namespaces":
            _seen_as(UNTRUSTED_UID, UNTRUSTED_GID)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    libc.no_new_privileges()
    libc.die_with_parent()
    refuse_shared_kernel_objects()


def _seen_as(uid: int, gid: int) -> None:
    """Enter a user namespace of this process's own in which its uid and gid read as ``uid``
    and ``gid``, then give up the capabilities it has there.

    The run's own uid is drawn at random; inside, every run is the same
    ``nobody``, so no run looks unlike another (``/proc/self/uid_map`` still
    shows the random number, which says nothing). The mounts and the network
    stay those of the run's namespaces, which this user namespace does not own.
    Where the machine refuses the namespace the run goes on as its own uid.
    """
    outside_uid, outside_gid = os.geteuid(), os.getegid()
    if not libc.try_unshare(libc.CLONE_NEWUSER):
        return  # refused (a kernel or security module that keeps users from making one)
    # The uid change made the process not dumpable, and /proc/self root's: for a moment it
    # is dumpable again, to write its own maps (no other process has its uid).
    libc.set_dumpable(True)
    procfs.write_own_id_maps(uid, outside_uid, gid, outside_gid)
    libc.set_dumpable(False)
    libc.drop_capabilities()
    if os.getuid() != uid or os.getgid() != gid:
        raise OSError("the user namespace did not map the run's identity")


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


def _serve_as_init(child: int) -> NoReturn:
    """The run's init: reap every process of the namespace until ``child`` ends, then exit
    with its status, which makes the kernel kill whatever of the run is left."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    with contextlib.suppress(OSError):
        close_descriptors_but(())
    with contextlib.suppress(OSError):
        libc.die_with_parent()
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    status = reaper.serve_as_init(child)
    os._exit(125 if status is None else _encode(status))


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


def close_descriptors_but(keep: Iterable[int]) -> None:
    """Close every descriptor of this process (below ``1 << 16``) but those in ``keep``: a
    process forked for a run holds nothing it was not handed."""
    low = 0
    for fd in sorted(set(keep)):
        if low < fd:  # closerange(n, n) would close every descriptor from n on
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def hand_over(paths: Iterable[Path], confinement: Confinement) -> None:
    """Make ``paths`` (a run's folder and what it holds) the untrusted uid's, where it has one."""
    if confinement.uid is None or confinement.gid is None:
        return
    for path in paths:
        os.chown(path, confinement.uid, confinement.gid, follow_symlinks=False)


def private_mounts(level: IsolationLevel) -> None:
    """At ``namespaces``, give this process (a warm worker) a mount namespace of its own, in
    which its runs' folders are mounted (``make_run_folder``): no other process of the
    machine sees them, and they all go when the worker does."""
    if level == "namespaces":
        libc.unshare(libc.CLONE_NEWNS, "unshare(CLONE_NEWNS)")
        libc.mount("none", "/", None, libc.MS_REC | libc.MS_PRIVATE, None)


def make_run_folder(scratch: Path, name: str, level: IsolationLevel) -> Path:
    """A new run's folder: ``scratch/NAME-N``, ``N`` the lowest number free (made as
    ``O_EXCL`` makes a file: never one that exists), so that every run gets the same path
    unless another runs at that moment. At ``namespaces`` it is a tmpfs of its
    own of ``RUN_FOLDER_BYTES`` and ``RUN_FOLDER_FILES`` (call ``private_mounts`` first): a
    run that fills it fails alone, and nothing of it outlives ``remove_run_folder``."""
    for slot in range(1 << 16):
        folder = scratch / f"{name}-{slot}"
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        if level == "namespaces":
            caps = f"size={RUN_FOLDER_BYTES},nr_inodes={RUN_FOLDER_FILES},mode=0700"
            try:
                libc.mount("none", str(folder), "tmpfs", libc.MS_NOSUID | libc.MS_NODEV, caps)
            except BaseException:
                folder.rmdir()
                raise
        return folder
    raise OSError(f"no free run folder named {name} in {scratch}")


def remove_run_folder(folder: Path, level: IsolationLevel) -> None:
    """Remove a folder ``make_run_folder`` made, with everything in it."""
    if level == "namespaces":
        with contextlib.suppress(OSError):
            libc.umount(str(folder), libc.MNT_DETACH)
    shutil.rmtree(folder, ignore_errors=True)


def folder_seen(folder: Path, level: IsolationLevel) -> Path:
    """Where a run's processes find their folder ``folder``: at ``namespaces`` always at
    ``RUN_FOLDER`` in their own root, else where it is."""
    return RUN_FOLDER if level == "namespaces" else folder


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


def folder_over_cap(folder: Path, owners: Iterable[int] = ()) -> str | None:
    """Why a run's ``folder`` is over its caps (``FOLDER_FILES_LIMIT`` entries,
    ``FOLDER_BYTES_LIMIT`` of disk), or ``None``: where no file system caps a run's folder
    (``uid``, ``none``), a run that writes thousands of files or a folder of them must fail
    itself, not fill the machine's disk for every other run. At ``uid``, where a run has no
    private ``/tmp``, what the run's uids (``owners``) own in ``SHARED_FOLDERS`` counts too:
    files in ``/tmp`` or ``/dev/shm`` (memory) escape no cap. It never reads more than the
    limit's count of entries, nor follows a link."""
    owners = set(owners)
    entries = used = shared = 0
    todo = [(str(folder), True), *((path, False) for path in SHARED_FOLDERS if owners)]
    while todo:
        where, everything = todo.pop()
        try:
            listing = os.scandir(where)
        except OSError:
            continue
        with listing:
            for entry in listing:
                try:
                    status = entry.stat(follow_symlinks=False)
                except OSError:
                    entries += everything
                    continue
                mine = everything or status.st_uid in owners
                if stat.S_ISDIR(status.st_mode) and (mine or status.st_mode & 0o002):
                    todo.append((entry.path, mine))
                if mine:
                    entries, used = entries + 1, used + status.st_blocks * 512
                    shared += not everything
                if entries > FOLDER_FILES_LIMIT:
                    return f"the run made more than {FOLDER_FILES_LIMIT} files in its folder" + (
                        _IN_SHARED if shared else ""
                    )
    if used > FOLDER_BYTES_LIMIT:
        megabytes = FOLDER_BYTES_LIMIT // 2**20
        return f"the run wrote more than {megabytes} MB into its folder" + (
            _IN_SHARED if shared else ""
        )
    return None


_IN_SHARED = " and the folders every user may write (/tmp, /dev/shm), which count with it"


def is_untrusted(pid: int) -> bool:
    """Whether process ``pid`` carries the mark of a run (a hard address-space limit no
    higher than ``MEMORY_LIMIT_BYTES``, set by ``fork_confined``) or is a run's init."""
    limit = procfs.address_space_limit(pid)
    return limit is not None and limit <= MEMORY_LIMIT_BYTES


RUN_PROCESS_LIMIT = 512
"""The most processes (threads included) one run may have at once, where a cgroup holds it."""
RUN_MEMORY_LIMIT_BYTES = 2 * MEMORY_LIMIT_BYTES
"""The memory of all of one run's processes together, where a cgroup holds it: each process's
address space is bounded as well (``MEMORY_LIMIT_BYTES``)."""
_V1_SETTINGS = {
    "cpu": {"cpu.shares": "1024"},
    "cpuacct": {},
    "pids": {"pids.max": str(RUN_PROCESS_LIMIT)},
    "memory": {"memory.limit_in_bytes": str(RUN_MEMORY_LIMIT_BYTES)},
}
"""The version-1 hierarchies a run gets a cgroup in, and what each sets: equal CPU shares for
every run, a process limit, a memory limit (``cpuacct`` counts its CPU time)."""
_V2_SETTINGS = {
    "cpu": {"cpu.weight": "100"},
    "pids": {"pids.max": str(RUN_PROCESS_LIMIT)},
    "memory": {"memory.max": str(RUN_MEMORY_LIMIT_BYTES)},
}


def _cgroup_bases() -> dict[str, Path]:
    """Each cgroup hierarchy this process may make cgroups in, by name (``v2`` or a version-1
    controller), at the cgroup this process is in."""
    own = procfs.own_cgroups()
    bases: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for mount in procfs.mounts():
            if mount.kind == "cgroup2":
                names = ["v2"]
            elif mount.kind == "cgroup":
                names = [name for name in mount.super_options if name in _V1_SETTINGS]
            else:
                continue
            for name in names:
                if name in own and name not in bases:
                    root = mount.root
                    inside = os.path.relpath(own[name], root) if root != "/" else own[name]
                    bases[name] = Path(mount.target, inside.lstrip("/").removeprefix("."))
    return {name: base for name, base in bases.items() if os.access(base, os.W_OK)}


class Cgroups:
    """The cgroups of one warm worker's runs: a folder of its own in every hierarchy it may
    write (``grader-`` and a random name), and in it one cgroup per run (a random name too:
    a run that reads its cgroup's path learns nothing of which run it is).

    Where the machine gives none (not root, no cgroup file system) every call does nothing
    and ``kinds`` is empty.
    """

    def __init__(self) -> None:
        self.folders: dict[str, Path] = {}
        self.run: dict[str, Path] = {}
        if os.geteuid() != 0:
            return
        own = f"grader-{secrets.token_hex(6)}"
        for name, base in _cgroup_bases().items():
            folder = base / own
            try:
                folder.mkdir()
            except OSError:
                continue
            self.folders[name] = folder
        v2 = self.folders.get("v2")
        if v2 is not None:
            offered = _read(v2 / "cgroup.controllers").split()
            wanted = [name for name in _V2_SETTINGS if name in offered]
            with contextlib.suppress(OSError):
                (v2 / "cgroup.subtree_control").write_text(" ".join(f"+{n}" for n in wanted))

    @property
    def kinds(self) -> tuple[str, ...]:
        """What a run gets: ``v2``, and each version-1 controller, that worked."""
        return tuple(sorted(self.folders))

    def start_run(self) -> list[str]:
        """Make the next run's cgroups; the ``cgroup.procs`` files its roots join."""
        self.end_run()
        name = secrets.token_hex(6)
        for kind, folder in self.folders.items():
            run = folder / name
            try:
                run.mkdir()
            except OSError:
                continue
            for file, value in _settings(kind).items():
                with contextlib.suppress(OSError):  # a v2 controller this machine lacks
                    (run / file).write_text(value)
            self.run[kind] = run
        return [str(run / "cgroup.procs") for run in self.run.values()]

    def cpu_seconds(self) -> float | None:
        """The CPU time every process of the run has used, the dead ones too; ``None`` where no
        cgroup counts it."""
        if "v2" in self.run:
            for line in _read(self.run["v2"] / "cpu.stat").splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
        if "cpuacct" in self.run:
            usage = _read(self.run["cpuacct"] / "cpuacct.usage").strip()
            if usage.isdigit():
                return int(usage) / 1e9
        return None

    def end_run(self) -> None:
        """Kill what is left of the run and remove its cgroups."""
        for kind in sorted(self.run, key=lambda kind: kind != "v2"):  # cgroup.kill first
            reaper.kill_cgroup(self.run[kind])
        for kind, run in list(self.run.items()):
            with contextlib.suppress(OSError):
                run.rmdir()
            del self.run[kind]

    def close(self) -> None:
        self.end_run()
        for folder in self.folders.values():
            reaper.remove_cgroup_tree(folder)
        self.folders.clear()


def _settings(kind: str) -> dict[str, str]:
    if kind == "v2":
        return {file: value for each in _V2_SETTINGS.values() for file, value in each.items()}
    return _V1_SETTINGS.get(kind, {})


def join_cgroups(procs_files: Iterable[str]) -> None:
    """Put this process (and so everything it starts) into the cgroups of ``procs_files``."""
    for procs in procs_files:
        with contextlib.suppress(OSError):
            Path(procs).write_text(str(os.getpid()))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@functools.cache
def _run_cgroups() -> tuple[str, ...]:
    """The cgroup hierarchies a worker on this machine puts its runs in: read once, since
    every report names them and the machine's mounts do not change while the grader runs."""
    return tuple(sorted(_cgroup_bases())) if os.geteuid() == 0 else ()


def what_runs_get(level: IsolationLevel) -> dict[str, str | list[str]]:
    """What the operating system gives each run at ``level`` on this machine, for a report:
    its identity, its keyrings, its IPC, its cgroups and its namespaces (docs/security.md)."""
    identity = {
        "none": "the grader's user",
        "uid": "a uid of its own per process",
        "namespaces": "a uid of its own per process, seen as nobody in a user namespace",
    }[level]
    keyrings = "a session keyring of its own per process"
    if keyrings_refused():
        keyrings += "; keyring calls refused"
    ipc = "System V IPC and POSIX message queue calls refused" if keyrings_refused() else ""
    if level == "namespaces":
        ipc = "; ".join(filter(None, [ipc, "an IPC namespace of its own"]))
    elif level == "uid":
        ipc = "; ".join(filter(None, [ipc, "what its users left removed after it"]))
    cgroups = list(_run_cgroups())
    namespaces = ["cgroup", "ipc", "mount", "network", "pid", "user", "uts"]
    return {
        "identity": identity,
        "keyrings": keyrings,
        "ipc": ipc or "as the machine gives it",
        "cgroups": cgroups,
        "namespaces": namespaces if level == "namespaces" else [],
    }
