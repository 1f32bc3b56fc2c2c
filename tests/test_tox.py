"""tox.ini as ``tox list`` reads it: one environment per section, each with its own description."""

from __future__ import annotations

import configparser
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
