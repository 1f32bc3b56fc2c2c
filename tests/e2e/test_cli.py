"""The ``grader`` command line, run in-process: exit statuses, messages and files.

Every run here is real (no replayed runs): ``start``, ``tests``, ``tdd``,
``diff``, the chapter argument, usage errors, and the determinism of
``check``'s JSON report.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import add_dependencies, make_submission
from terminal import plain_wide_terminal, run  # noqa: F401  (autouse)

import grader
from grader.cli import build_parser, main
from grader.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, GraderError
from grader.inputs.catalog import load_chapter
from grader.inputs.patching import apply_patch

CHAPTER = load_chapter()
SUBCOMMANDS = {"start", "tests", "tdd", "check", "diff"}
"""The subcommands this file covers; the help test checks every one the parser has."""


def lines_of(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def subparsers() -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    """Each subcommand's parser, and the help line the top-level help shows for it."""
    actions = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    helps = {choice.dest: choice.help or "" for choice in actions[0]._choices_actions}
    return dict(actions[0].choices), helps


def start(capsys: pytest.CaptureFixture[str], folder: Path, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "start", "--submission", str(folder), *extra)


# ----------------------------------------------------------------------
# Help and usage.


def test_every_subcommand_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    """Each subcommand is listed with a help line, has a description, documents every option,
    and answers ``--help`` with its usage and exit status 0."""
    parsers, helps = subparsers()
    assert set(parsers) >= SUBCOMMANDS
    code, top_help, _ = run(capsys, "--help")
    assert code == EXIT_PASS
    for name, parser in parsers.items():
        assert helps[name].strip(), f"{name} has no help line"
        assert helps[name] in " ".join(top_help.split()), f"{name}'s help is not in grader --help"
        assert (parser.description or "").strip(), f"{name} has no description"
        for action in parser._actions:
            assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)
        code, out, err = run(capsys, name, "--help")
        assert code == EXIT_PASS and err == ""
        assert out.startswith(f"usage: grader {name}")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``--version`` names the program and exits 0."""
    code, out, _ = run(capsys, "--version")
    assert code == EXIT_PASS and out.startswith("grader ")


@pytest.mark.parametrize(
    "arguments",
    [
        [],
        ["frobnicate"],
        ["check", "--no-such-option"],
        ["tdd"],
        ["tdd", "blue"],
        ["check", "--time-limit", "0"],
        ["check", "--time-limit", "-5"],
        ["check", "--time-limit", "soon"],
        ["check", "--tests-time-limit", "nan"],
        ["check", "ds.07", "extra"],
        ["batch", "folder", "--jobs", "0"],
        ["audit", "--course", "--jobs", "two"],
    ],
    ids=lambda arguments: " ".join(arguments) or "nothing",
)
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], arguments: list[str]) -> None:
    """Arguments argparse refuses give exit status 2, a usage line and an error, no traceback."""
    code, out, err = run(capsys, *arguments)
    assert code == EXIT_USAGE
    assert out == ""
    assert "usage: grader" in err and "error:" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["check", "tests", "start", "tdd red", "diff"])
def test_an_unknown_chapter_exits_2(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """Every subcommand that takes a chapter refuses one the kit does not have, naming the
    chapters it has."""
    code, out, err = run(capsys, *command.split(), "ds.99")
    assert code == EXIT_USAGE and out == ""
    assert "invalid choice: 'ds.99'" in err and "ds.07" in err


@pytest.mark.parametrize(
    ("arguments", "chapter", "folders"),
    [
        (["a"], "ds.07", ["a"]),
        (["a", "b"], "ds.07", ["a", "b"]),
        (["ds.07", "a", "b"], "ds.07", ["a", "b"]),
        (["--out", "r", "ds.07", "a"], "ds.07", ["a"]),
    ],
)
def test_batch_takes_the_chapter_first_like_every_command(
    arguments: list[str], chapter: str, folders: list[str]
) -> None:
    """``batch [CHAPTER] DIR...``: a first word that is a chapter id is the chapter, any other
    is the first folder (argparse gives the first of two words to the optional chapter)."""
    args = build_parser().parse_args(["batch", *arguments])
    assert (args.chapter, args.folders) == (chapter, [Path(folder) for folder in folders])


def test_every_chapter_argument_comes_first() -> None:
    """One chapter style: each subcommand that takes a chapter takes it as its first
    positional argument, named the same way."""
    with_chapter = set()
    for name, parser in subparsers()[0].items():
        positionals = [action for action in parser._actions if not action.option_strings]
        if any(action.dest == "chapter" for action in positionals):
            assert positionals[0].dest == "chapter" and positionals[0].metavar == "CHAPTER", name
            with_chapter.add(name)
    assert with_chapter >= SUBCOMMANDS | {"batch", "audit"}


def test_the_library_refuses_an_unknown_chapter() -> None:
    """``load_chapter`` raises the one user-facing error type, with the usage exit status."""
    with pytest.raises(GraderError) as caught:
        load_chapter("ds.99")
    assert caught.value.exit_code == EXIT_USAGE
    assert "ds.99" in caught.value.message and "ds.07" in caught.value.message


# ----------------------------------------------------------------------
# grader tests


def test_tests_lists_the_whole_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    """``grader tests`` lists the 11 course tests, the 6 required tests, and all 18 mutants,
    each on one line with its title."""
    assert (len(CHAPTER.course_tests), len(CHAPTER.required_tests), len(CHAPTER.mutants)) == (
        11,
        6,
        18,
    )
    code, out, err = run(capsys, "tests", "ds.07")
    assert code == EXIT_PASS and err == ""
    lines = lines_of(out)
    for test in CHAPTER.course_tests:
        assert any(re.search(rf"\b{test.name}\b", line) for line in lines), test.name
    for required in CHAPTER.required_tests:
        assert any(re.search(rf"\b{required.name}\b", line) for line in lines), required.name
    for mutant in CHAPTER.mutants:
        assert any(
            re.search(rf"\b{mutant.id}\b", line) and mutant.title in line for line in lines
        ), f"{mutant.id} {mutant.title!r} is not listed on one line"
    assert any("s11" in line and "(required)" in line for line in lines)


# ----------------------------------------------------------------------
# grader start


def test_start_creates_the_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``start`` copies the stub and the test skeleton into a new folder and says so."""
    folder = tmp_path / "new" / "submission"
    code, out, err = start(capsys, folder)
    assert code == EXIT_PASS and err == ""
    assert (folder / "radix.py").read_bytes() == CHAPTER.stub.read_bytes()
    assert (folder / CHAPTER.student_tests).read_bytes() == CHAPTER.stub_tests.read_bytes()
    lines = lines_of(out)
    assert f"created {folder / 'radix.py'}" in lines
    assert f"created {folder / CHAPTER.student_tests}" in lines
    assert sorted(p.name for p in folder.rglob("*")) == ["radix.py", "test_ds07_radix.py", "tests"]


def test_start_uses_the_default_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Without ``--submission``, ``start`` makes ``submission/`` in the working folder."""
    code, _, _ = run(capsys, "start")
    assert code == EXIT_PASS
    assert (tmp_path / "submission" / "radix.py").is_file()


def test_start_never_overwrites(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An existing file is left alone, and ``start`` says which; a missing one is still made."""
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "radix.py").write_text("# my work\n", encoding="utf-8")
    code, out, _ = start(capsys, folder)
    assert code == EXIT_PASS
    assert (folder / "radix.py").read_text(encoding="utf-8") == "# my work\n"
    lines = lines_of(out)
    assert any(line.startswith(f"left {folder / 'radix.py'} alone") for line in lines), out
    assert f"created {folder / CHAPTER.student_tests}" in lines

    (folder / CHAPTER.student_tests).write_text("# my tests\n", encoding="utf-8")
    code, out, _ = start(capsys, folder)
    assert code == EXIT_PASS
    assert not any(line.startswith("created") for line in lines_of(out))
    assert sum(line.startswith("left ") for line in lines_of(out)) == 2
    assert (folder / CHAPTER.student_tests).read_text(encoding="utf-8") == "# my tests\n"
    assert not list(folder.rglob("*.bak"))


def test_start_force_keeps_a_backup(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``--force`` replaces both files, first saving each old one under a timestamped name,
    and a second ``--force`` never overwrites the first backup."""
    folder = tmp_path / "submission"
    start(capsys, folder)
    for version in ("first", "second"):
        (folder / "radix.py").write_text(f"# {version}\n", encoding="utf-8")
        (folder / CHAPTER.student_tests).write_text(f"# {version} tests\n", encoding="utf-8")
        code, out, err = start(capsys, folder, "--force")
        assert code == EXIT_PASS and err == ""
        assert (folder / "radix.py").read_bytes() == CHAPTER.stub.read_bytes()
        assert (folder / CHAPTER.student_tests).read_bytes() == CHAPTER.stub_tests.read_bytes()
        prefix = "saved your old file as "
        saved = [line.removeprefix(prefix) for line in lines_of(out) if line.startswith(prefix)]
        assert len(saved) == 2 and all(Path(name).is_file() for name in saved), out

    backups = sorted(folder.glob("radix.py.*.bak"))
    assert sorted(b.read_text(encoding="utf-8") for b in backups) == ["# first\n", "# second\n"]
    assert all(re.fullmatch(r"radix\.py\.\d{8}-\d{6}(-\d+)?\.bak", b.name) for b in backups)
    test_backups = sorted((folder / "tests").glob("test_ds07_radix.py.*.bak"))
    assert sorted(b.read_text(encoding="utf-8") for b in test_backups) == [
        "# first tests\n",
        "# second tests\n",
    ]


def test_start_on_a_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A ``--submission`` that is a file fails with exit status 1 and one line, nothing else."""
    target = tmp_path / "a-file"
    target.write_text("x", encoding="utf-8")
    code, out, err = start(capsys, target)
    assert code == EXIT_FAIL and out == ""
    assert err.count("\n") == 1 and err.startswith("grader: ")
    assert target.read_text(encoding="utf-8") == "x"


# ----------------------------------------------------------------------
# grader tdd


def model_answer(folder: Path) -> None:
    """Put the kit's model answer (reference radix.py, with the kit's map it imports, and
    tests) into ``folder``."""
    shutil.copyfile(CHAPTER.reference, folder / "radix.py")
    add_dependencies(folder)
    shutil.copyfile(CHAPTER.model_tests, folder / CHAPTER.student_tests)


@pytest.mark.slow
def test_tdd_on_the_skeleton(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The skeleton's placeholders fail on the stub, but on the reference too: red is not
    reached, and each is named as failing for the wrong reason. Green is not reached either."""
    folder = tmp_path / "submission"
    start(capsys, folder)
    monkeypatch.setenv("COLUMNS", "300")
    code, out, _ = run(capsys, "tdd", "red", "--submission", str(folder))
    assert code == EXIT_FAIL
    lines = lines_of(out)
    assert lines[-1] == (
        "tdd red: not yet: every required test fails on the stub and passes on the reference "
        "is the goal."
    )
    for required in CHAPTER.required_tests:
        assert f"  {required.name}: failed" in lines
        assert (
            f"✗ {required.name} fails for the wrong reason: it fails on the reference too, so "
            "its failure on the stub shows nothing (Failed: write this test (line "
        ) in {line.partition("(line ")[0] + "(line " for line in lines}
        assert any(
            line.startswith(f"✗ {required.name} fails for the wrong reason")
            and line.endswith(': pytest.fail("write this test")))')
            for line in lines
        )

    code, out, _ = run(capsys, "tdd", "green", "--submission", str(folder))
    assert code == EXIT_FAIL
    assert "tdd green: not yet: every test passes is the goal." in lines_of(out)


@pytest.mark.slow
def test_tdd_with_the_model_answer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """With the model answer's tests, red holds (they fail on the stub) and, with the
    reference radix.py, green holds (they all pass)."""
    folder = tmp_path / "submission"
    start(capsys, folder)
    model_answer(folder)
    # The stage may come before the chapter id, as `tox -e red -- ds.07` writes it.
    code, out, _ = run(capsys, "tdd", "red", "ds.07", "--submission", str(folder))
    assert (code, lines_of(out)[-1]) == (
        EXIT_PASS,
        "tdd red: every required test fails on the stub and passes on the reference.",
    )
    code, out, _ = run(capsys, "tdd", "green", "--submission", str(folder))
    assert (code, lines_of(out)[-1]) == (EXIT_PASS, "tdd green: every test passes.")
    timing = [line for line in lines_of(out) if line.startswith("⏱ Slowest on your radix.py")]
    assert len(timing) == 1
    assert all(line.endswith(": passed") for line in lines_of(out)[:-1] if line not in timing)
    # The chapter id first, as every command takes it.
    code, out, _ = run(capsys, "tdd", "ds.07", "green", "--submission", str(folder))
    assert (code, lines_of(out)[-1]) == (EXIT_PASS, "tdd green: every test passes.")


# ----------------------------------------------------------------------
# grader diff


@pytest.mark.slow
def test_diff_refuses_before_the_course_tests_pass(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """On the stub, ``diff`` shows nothing and exits 1 with one line naming what still fails."""
    folder = tmp_path / "submission"
    start(capsys, folder)
    code, out, err = run(capsys, "diff", "--submission", str(folder))
    assert code == EXIT_FAIL and out == ""
    assert err.count("\n") == 1
    assert err.startswith("grader: the diff is shown once every course test passes")
    assert CHAPTER.course_tests[0].name in err


@pytest.mark.slow
def test_diff_shows_a_unified_diff(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A correct radix.py that differs from the reference (the wheat w01) gets a unified diff
    from the student's file to the reference, and of that file alone (built on the kit's map,
    ``--ref-deps``: the submission holds none)."""
    folder = tmp_path / "submission"
    start(capsys, folder)
    (wheat,) = CHAPTER.wheats
    reference = CHAPTER.reference.read_text(encoding="utf-8")
    (folder / "radix.py").write_text(apply_patch(reference, wheat.patch), encoding="utf-8")
    code, out, err = run(capsys, "diff", "ds.07", "--submission", str(folder), "--ref-deps")
    assert (code, err) == (EXIT_PASS, "")
    summary, _, diff = out.partition("\n\n")
    assert summary.splitlines() == [
        "1 function or method differs from the reference:",
        "  RadixTree._new_node: 1 line of yours against 1 line of the reference's",
        "The diff, from your radix.py (-) to the reference (+):",
    ]
    lines = diff.splitlines()
    assert lines[:2] == ["--- yours/radix.py", "+++ reference/radix.py"]
    assert [line for line in lines if line.startswith(("--- ", "+++ "))] == lines[:2]
    assert lines[2].startswith("@@ ")
    assert "-            node = self._free.pop(0)" in lines
    assert "+            node = self._free.pop()" in lines
    assert sum(line[:1] in "+-" for line in lines[2:]) == 2


# ----------------------------------------------------------------------
# grader check


@pytest.mark.slow
def test_check_accepts_the_chapter_id(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``grader check ds.07`` grades; a folder that does not exist is a fail (exit 1) that
    says what to do, reported in the JSON too, not an error."""
    report = tmp_path / "out" / "report.json"
    code, out, err = run(
        capsys, "check", "ds.07", "--submission", str(tmp_path / "nowhere"), "--json", str(report)
    )
    assert (code, err) == (EXIT_FAIL, "")
    assert "does not exist: run `grader start` to create it" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert (data["chapter"], data["verdict"], data["mutation"]) == ("ds.07", "fail", None)


def without_timings(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in ("timings", "graded_at")}


@pytest.mark.slow
def test_check_is_deterministic(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same submission graded three times (at once) gives the same JSON but for
    ``timings``: course-test failures with hypothesis's steps, problems and mutant results."""
    folder = make_submission(tmp_path, "buggy_radix")
    reports = [tmp_path / f"report-{n}.json" for n in range(3)]

    def grade(report: Path) -> int:
        return main(["check", "--submission", str(folder), "--json", str(report)])

    with ThreadPoolExecutor(len(reports)) as pool:
        codes = list(pool.map(grade, reports))
    capsys.readouterr()
    assert codes == [EXIT_FAIL] * 3
    texts = [report.read_text(encoding="utf-8") for report in reports]
    data = [json.loads(text) for text in texts]
    assert data[0]["course_tests"]["failures"] and data[0]["mutation"] is not None
    same = [json.dumps(without_timings(d), ensure_ascii=False) for d in data]
    assert same[1] == same[0] and same[2] == same[0]
    assert all(
        set(d["timings"])
        == {"course_tests", "validation", "mutation", "total", "per_test", "reused"}
        for d in data
    )


# ----------------------------------------------------------------------
# A fresh stub, submitted unchanged


@pytest.mark.slow
def test_an_unchanged_stub_is_named_first_and_its_failures_shown_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``grader start`` then ``grader check``: the first lines say both files are the kit's
    untouched stub and skeleton and the course tests are 0/11; the eleven identical
    tracebacks are one box listing every test, with what to do next; the grade stands
    beside the verdict."""
    monkeypatch.setenv("COLUMNS", "200")
    folder = tmp_path / "submission"
    start(capsys, folder)
    report = tmp_path / "report.json"
    code, out, err = run(capsys, "check", "--submission", str(folder), "--json", str(report))
    assert (code, err) == (EXIT_FAIL, "")
    lines = [line.rstrip() for line in out.splitlines()]
    total = len(CHAPTER.course_tests)
    assert lines[:3] == [
        "✗ radix.py is the unmodified stub: no course test can pass until you write the tree",
        "✗ tests/test_ds07_radix.py is the unmodified test skeleton: each required test is "
        "still a placeholder that fails everywhere; write them",
        f"Course tests on your radix.py: 0/{total} passed",
    ]
    assert out.count("E   NotImplementedError") == 1
    assert f"These {total} course tests all fail the same way:" in out
    assert "Next: Fix radix.py:" in out
    assert lines[-1] == "FAIL, grade 0 of 100: course tests failing; your tests are not valid"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["unmodified"] == ["radix.py", "tests/test_ds07_radix.py"]
    assert data["grade"]["points"] == 0 and data["kit_version"] == grader.__version__
    failures = "".join(data["course_tests"]["failures"].values())
    assert "site-packages/hypothesis/" in failures  # the model-based test's frames
    assert sys.prefix not in failures and str(Path(sys.prefix).resolve()) not in failures
