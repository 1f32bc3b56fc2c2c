"""The gates that hold the kit: tox's environments, and the static checks CI, tox, pre-commit run.

``tools/lint`` is the one list of static checks; ``.ci/run``, ``tox -e lint``
and the pre-commit hook each run that script, so they cannot drift apart.
"""

from __future__ import annotations

import configparser
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOX_INI = ROOT / "tox.ini"


def _listed() -> dict[str, str]:
    """Every environment ``tox list`` shows, with the description it shows."""
    run = subprocess.run(
        [sys.executable, "-m", "tox", "list", "--no-recreate-provision"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(re.findall(r"^(\S+)\s+-> (.*)$", run.stdout, flags=re.MULTILINE))


def test_every_environment_is_a_section_with_a_description_of_its_own() -> None:
    """No phantom environment (a ``word:`` description is a factor condition) and none unnamed."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(TOX_INI)
    sections = {name.removeprefix("testenv:") for name in parser if name.startswith("testenv:")}
    listed = _listed()
    assert set(listed) == sections | {"py"}
    base = parser["testenv"]["description"]
    assert [name for name in sections if listed[name] == base] == []


def test_a_staff_environment_without_arguments_shows_its_usage() -> None:
    """``tox -e batch`` with nothing after ``--`` asks for help rather than failing in argparse."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(TOX_INI)
    assert parser["testenv:batch"]["commands"].strip() == "grader batch {posargs:--help}"


def test_ci_tox_and_pre_commit_run_the_one_list_of_static_checks() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(TOX_INI)
    assert parser["testenv:lint"]["commands"].strip() == "bash tools/lint"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci.index("tools/lint") < ci.index("python -m pytest")
    hook = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert "entry: tools/lint" in hook and "pass_filenames: false" in hook
    run = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_reaches_every_folder_that_holds_python() -> None:
    """A new folder of Python files (a tool, a deployment script) is type-checked too."""
    checked: set[str] = set()
    for line in (ROOT / "tools" / "lint").read_text(encoding="utf-8").splitlines():
        words = shlex.split(line, comments=True)
        if "mypy" in words:
            after = words[words.index("mypy") + 1 :]
            checked |= {w.split("/")[0] for w in after if not w.startswith("-") and "(" not in w}
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    folders = {path.split("/")[0] for path in tracked if "/" in path}
    assert folders - checked == set()
