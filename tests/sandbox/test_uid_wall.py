"""At ``uid`` the wall is the file mode (issue 33): a grade made there, end to end as root
without ``CAP_SYS_ADMIN``, keeps the kit from a test that holds ``os``, because the grader
closes the kit and its own install to run uids, and the probe checks it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_harness import CASES, lay_out

from grader.sandbox.confine import folders, probe

pytest_plugins = ["hostile_harness"]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the uid level is root's: below it, practice"),
]

KIT_ATTACKS = [case for case in CASES if case["name"].startswith("pytest_object_reads_kit")]


def python_every_user_reads() -> Path | None:
    """An interpreter of this one's version that every user may read and run, outside any
    closed folder (``/usr/bin``, not a pyenv under ``/root``); ``None`` where there is none."""
    name = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for folder in ("/usr/local/bin", "/usr/bin"):
        found = Path(folder, name)
        if found.is_file() and folders.open_to_runs([found]) == [found]:
            return found
    return None


@pytest.fixture
def open_python() -> Iterator[Path | None]:
    """A virtual environment of ``python_every_user_reads`` in a folder every user may enter,
    whose packages are this environment's (the grader's install among them)."""
    base = python_every_user_reads()
    if base is None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="open-python-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        subprocess.run([str(base), "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        own = sysconfig.get_paths()["purelib"]
        link = folder / "venv" / "lib" / version / "site-packages" / "kit.pth"
        link.write_text(f"import site; site.addsitedir({own!r})\n", encoding="utf-8")
        yield folder / "venv" / "bin" / "python"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("case", KIT_ATTACKS, ids=lambda case: case["name"])
def test_at_uid_the_kit_attack_earns_nothing_end_to_end(
    case: dict[str, object], open_python: Path | None, tmp_path: Path
) -> None:
    """``grader check`` as root without ``CAP_SYS_ADMIN`` (``capsh --drop``), with a Python a
    run can read: graded at ``uid``, the attack's test fails on the reference, denied the
    kit, and every private folder is closed to other users afterwards. Where the machine has
    no such Python the grader exits 2 saying a run cannot read Python; never a pass."""
    folder, report = lay_out(case, tmp_path), tmp_path / "report.json"
    python = open_python or Path(sys.executable)
    grade = (
        f"{shlex.quote(str(python))} -m grader check --json {shlex.quote(str(report))} "
        f"--submission {shlex.quote(str(folder))}"
    )
    done = subprocess.run(
        ["capsh", "--drop=cap_sys_admin", "--", "-c", grade],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    if open_python is None:
        assert done.returncode == 2 and "a run cannot read Python" in done.stderr, done.stderr
        return
    graded = json.loads(report.read_text(encoding="utf-8"))
    assert (graded["isolation"], graded["verdict"], graded["practice"]) == ("uid", "fail", False)
    problems = graded["student_tests"]["problems"]
    assert any("PermissionError: [Errno 13] Permission denied" in p for p in problems), problems
    assert folders.open_to_runs(probe.private_paths(probe.installed_kit())) == []
