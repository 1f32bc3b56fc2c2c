"""``grader release``: the student edition leaves the answer key out and still grades.

The student edition's wheel is built once, installed without an index into a
fresh virtual environment (its dependencies come from this one's
site-packages through a ``.pth`` line, so the test needs no network), and
driven through its own ``grader`` command from a folder outside the kit,
as a student would: ``start``, ``tdd``, ``check``, ``diff``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import SUBMISSIONS

import grader.cli
from grader.catalog import kit_root, load_chapter
from grader.commands.bundle import kit_files
from grader.commands.release import WHEEL_KIT, build_release, is_staff_only
from grader.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE

CHAPTER = load_chapter()
MODEL_ANSWER = CHAPTER.model_tests.relative_to(kit_root()).as_posix()


@pytest.fixture(scope="module")
def student_edition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("release")
    assert grader.cli.main(["release", "--student", "-o", str(out)]) == EXIT_PASS
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(student_edition: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with the student edition installed; its ``bin`` folder."""
    environment = tmp_path_factory.mktemp("venv") / "student"
    venv.create(environment, with_pip=False)
    python = environment / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies (pytest, hypothesis, rich...) from this environment, after its own.
    (Path(site) / "dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    install = [*pip, "install", "--quiet", "--no-index", "--no-deps", str(student_edition)]
    subprocess.run(install, capture_output=True, text=True, check=True)
    return environment / "bin"


def run(bin_folder: Path, cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [bin_folder / "grader", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_the_student_edition_holds_no_model_answer(student_edition: Path) -> None:
    model_answer = CHAPTER.model_tests.read_bytes()
    assert is_staff_only(MODEL_ANSWER, CHAPTER.staff_only)
    with zipfile.ZipFile(student_edition) as wheel:
        names = wheel.namelist()
        assert WHEEL_KIT + "reference/radix.py" in names  # the reference students diff against
        for need in CHAPTER.needs:  # the kit's map, which --ref-deps grades with
            assert WHEEL_KIT + f"reference/{need.implementation}" in names
        assert WHEEL_KIT + "student/" + CHAPTER.student_tests in names
        assert not [n for n in names if n.startswith(WHEEL_KIT + "reference/tests")]
        assert all(wheel.read(name) != model_answer for name in names)
        shared = b"\n".join(  # every file of the kit students may see
            path.read_bytes()
            for path in kit_files(kit_root())
            if not is_staff_only(path.relative_to(kit_root()).as_posix(), CHAPTER.staff_only)
        )
        answers = [  # the model answer's own lines: no other file of the kit has them
            line.strip()
            for line in model_answer.splitlines()
            if len(line.strip()) > 30 and line.strip() not in shared
        ]
        assert len(answers) > 20
        for name in names:
            text = wheel.read(name)
            assert not [line for line in answers if line in text], name
    assert student_edition.name.startswith("ds07_grader-0.1.0+student-")


def test_the_installed_edition_grades_outside_the_kit(installed: Path, tmp_path: Path) -> None:
    where = run(installed, tmp_path, "--version")
    assert where.returncode == 0
    probe = subprocess.run(
        [installed / "python", "-c", "from grader.catalog import kit_root; print(kit_root())"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    kit = Path(probe.stdout.strip())
    assert kit.is_relative_to(installed.parent), "the wheel's grader, not this checkout's"
    assert (kit / "reference" / CHAPTER.implementation).is_file()
    assert not (kit / "reference" / "tests").exists()

    started = run(installed, tmp_path, "start")
    assert started.returncode == 0, started.stderr
    submission = tmp_path / "submission"
    assert (submission / CHAPTER.student_tests).read_bytes() == CHAPTER.stub_tests.read_bytes()
    red = run(installed, tmp_path, "tdd", "red")  # the skeleton's placeholders fail everywhere
    assert red.returncode == EXIT_FAIL, red.stdout + red.stderr
    assert "fails for the wrong reason" in red.stdout

    shutil.copyfile(CHAPTER.reference, submission / CHAPTER.implementation)
    weak = SUBMISSIONS / "weak" / CHAPTER.student_tests
    shutil.copyfile(weak, submission / CHAPTER.student_tests)
    green = run(installed, tmp_path, "tdd", "green")  # radix.py imports a map it lacks
    assert green.returncode == EXIT_FAIL, green.stdout + green.stderr
    assert "pass --ref-deps" in green.stderr
    green = run(installed, tmp_path, "tdd", "green", "--ref-deps")  # the edition ships the kit's
    assert green.returncode == EXIT_PASS, green.stdout + green.stderr
    checked = run(installed, tmp_path, "check", "--ref-deps", "--json", "report.json")
    assert checked.returncode == EXIT_FAIL, checked.stdout + checked.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [use["used"] for use in report["dependencies"].values()] == ["kit"]
    assert report["course_tests"]["passed"] == report["course_tests"]["total"] == 11
    assert report["mutation"]["killed"] == 3  # the weak example's kills, as in the staff edition

    radix = submission / CHAPTER.implementation
    radix.write_text(radix.read_text(encoding="utf-8") + "# my own note\n", encoding="utf-8")
    diffed = run(installed, tmp_path, "diff", "--ref-deps")
    assert diffed.returncode == EXIT_PASS, diffed.stderr
    assert "--- yours/radix.py" in diffed.stdout and "\n-# my own note\n" in diffed.stdout
    headers = [line for line in diffed.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == ["--- yours/radix.py", "+++ reference/radix.py"]  # this chapter's alone
    assert not [need for need in CHAPTER.needs if (submission / need.implementation).exists()]


def test_the_staff_edition_keeps_the_model_answer(tmp_path: Path) -> None:
    release = build_release("staff", tmp_path)
    assert release.left_out == ()
    with zipfile.ZipFile(release.wheel) as wheel:
        assert wheel.read(WHEEL_KIT + MODEL_ANSWER) == CHAPTER.model_tests.read_bytes()


def test_a_release_needs_the_source_checkout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(Exception, match="not the kit's source checkout"):
        build_release("student", tmp_path / "out", root=tmp_path)
    assert grader.cli.main(["release", "-o", str(tmp_path)]) == EXIT_USAGE
    assert "one of the arguments --student --staff is required" in capsys.readouterr().err
