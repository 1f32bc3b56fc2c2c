"""The student's edge paths (issue 35, items 3 to 8 and 10), each as a student meets it.

Each test drives ``grader`` as a student would and reads what the terminal says:
run from inside the submission folder, a bug in the student's own map, a test
that a correct variant refuses, a flaky file, several problems at once, a failing
model-based test, and ``grader diff``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.catalog import load_chapter
from grader.cli import main
from grader.errors import EXIT_FAIL

CHAPTER = load_chapter()


@pytest.fixture(autouse=True)
def plain_wide_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Rich draws for a wide, colourless terminal; the default folder lands in tmp."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.chdir(tmp_path)


def run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    """``grader ARGUMENTS``: the exit status, stdout and stderr."""
    code = main(list(arguments))
    out, err = capsys.readouterr()
    return code, out, err


def flat(text: str) -> str:
    """``text`` with its lines joined, as a sentence wrapped by the terminal reads."""
    return re.sub(r"\s+", " ", text)


# ----------------------------------------------------------------------
# Item 3: inside the submission folder.


@pytest.mark.slow
def test_inside_the_submission_folder_the_kit_says_so_and_nests_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From inside ``submission/``: every command says this is the submission folder and to
    run from its parent or pass ``--submission .``; none advises ``grader start``, which
    would nest a new stub, and ``start`` itself refuses; a second check claims no reuse of
    a ``radix.py`` it never found; ``--submission .`` grades the folder."""
    assert run(capsys, "start")[0] == 0
    inside = tmp_path / "submission"
    monkeypatch.chdir(inside)
    advice = "run grader from the folder above it, or pass --submission ."
    for _ in range(2):  # the second check finds the first one's results in the cache
        code, out, err = run(capsys, "check")
        assert code == EXIT_FAIL, err
        said = flat(out)
        assert advice in said and "radix.py is in the current folder" in said
        assert "grader start" not in said
        assert "Reused" not in said and "unchanged" not in said
        assert "is missing: write it" not in said  # not six missing tests: one missing folder
    for command in (["tdd", "red"], ["tdd", "green"], ["diff"]):
        code, out, err = run(capsys, *command)
        assert code == EXIT_FAIL
        assert advice in flat(out + err) and "grader start" not in out + err, command
    code, out, err = run(capsys, "start")
    assert code == EXIT_FAIL and advice in err and "start wrote nothing" in err
    assert not (inside / "submission").exists()

    code, out, err = run(capsys, "check", "--submission", ".")
    assert code == EXIT_FAIL
    assert "radix.py is the unmodified stub" in out and advice not in flat(out)
