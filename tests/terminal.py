"""Driving ``grader`` as a student does at a terminal, for the suites that read what it says
(``tests/e2e/test_cli.py``, ``test_edge_paths.py``): one home for the terminal and the call."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.cli import main


@pytest.fixture(autouse=True)
def plain_wide_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Rich draws for a wide, colourless terminal; the default folder lands in tmp (autouse in
    every module that imports it)."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.chdir(tmp_path)


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    """``grader ARGUMENTS``: the exit status, stdout and stderr."""
    code = main(list(arguments))
    out, err = capsys.readouterr()
    return code, out, err
