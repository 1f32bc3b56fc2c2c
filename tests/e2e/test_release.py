"""``grader release``: the student edition leaves the answer key out and still grades.

The student edition's wheel is built once, installed without an index into a
fresh virtual environment (its dependencies come from this one's
site-packages through a ``.pth`` line, so the test needs no network), and
driven through its own ``grader`` command from a folder outside the kit,
as a student would: ``start``, ``tdd``, ``check``, ``diff``.
"""

from __future__ import annotations

import json
import re
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
from grader.commands.bundle import kit_files
from grader.commands.release import WHEEL_KIT, build_release
from grader.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE
from grader.grading.timing import runs_per_check
from grader.inputs.catalog import kit_root, load_chapter
from grader.inputs.editions import matches
from grader.inputs.patching import mutant_sources

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

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
    assert matches(MODEL_ANSWER, CHAPTER.staff_only)
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
            if not matches(path.relative_to(kit_root()).as_posix(), CHAPTER.staff_only)
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
        [
            installed / "python",
            "-c",
            "from grader.inputs.catalog import kit_root; print(kit_root())",
        ],
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
    """From an installed wheel (no pyproject.toml beside the grader), release says to install
    the checkout with -e, and names no path of the machine."""
    with pytest.raises(Exception, match=r"install it with pip install -e \.") as refused:
        build_release("student", tmp_path / "out", root=tmp_path)
    assert str(tmp_path) not in str(refused.value) and "/" not in str(refused.value)
    assert grader.cli.main(["release", "-o", str(tmp_path)]) == EXIT_USAGE
    assert "one of the arguments --student --staff is required" in capsys.readouterr().err


# ----------------------------------------------------------------------
# Every ✗ with its reason, on the student edition's own commands (issue 21)

MODEL = CHAPTER.model_tests.read_text(encoding="utf-8")
REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")


def with_tests(folder: Path, tests: str, radix: str = REFERENCE) -> None:
    """A submission of ``tests`` and ``radix``, with the student's own map from ds.05 (here
    the kit's copy), as a student who built the earlier chapter brings it."""
    (folder / CHAPTER.student_tests).write_text(tests, encoding="utf-8")
    (folder / CHAPTER.implementation).write_text(radix, encoding="utf-8")
    for need in CHAPTER.needs:
        shutil.copyfile(need.reference, folder / need.implementation)


def swallowing(source: str, name: str) -> str:
    """``source`` with the body of test ``name`` inside ``try: ... except Exception: pass``."""
    lines = source.splitlines()
    start = next(at for at, line in enumerate(lines) if line.startswith(f"def {name}("))
    end = next(
        (at for at in range(start + 1, len(lines)) if lines[at] and not lines[at][0].isspace()),
        len(lines),
    )
    body = ["    " + line if line.strip() else line for line in lines[start + 1 : end]]
    kept = [*lines[: start + 1], "    try:", *body, "    except Exception:", "        pass"]
    return "\n".join([*kept, "", *lines[end:]]) + "\n"


def indented_after(source: str, header: str) -> str:
    """``source`` with the body under the line starting with ``header`` indented once more."""
    lines = source.splitlines()
    start = next(at for at, line in enumerate(lines) if line.startswith(header))
    end = next(
        (at for at in range(start + 1, len(lines)) if lines[at] and not lines[at][0].isspace()),
        len(lines),
    )
    body = ["    " + line if line.strip() else line for line in lines[start + 1 : end]]
    return "\n".join([*lines[: start + 1], *body, *lines[end:]]) + "\n"


def flat(text: str) -> str:
    return " ".join(text.split())


def test_every_cross_has_a_reason_on_the_student_edition(installed: Path, tmp_path: Path) -> None:
    """tdd red and green say why: a near-miss name, a class pytest does not collect, a broad
    except that swallows the assert, output past the limit, the assertion and the line."""
    assert run(installed, tmp_path, "start").returncode == 0
    folder = tmp_path / "submission"

    with_tests(
        folder,
        MODEL.replace("def test_parent_becomes_evictable(", "def test_parent_becomes_evictible("),
    )
    green = run(installed, tmp_path, "tdd", "green")
    assert green.returncode == EXIT_FAIL
    assert "did you mean test_parent_becomes_evictible?" in flat(green.stdout)

    uncollected = MODEL.replace(
        "def test_parent_becomes_evictable() -> None:",
        "class RadixTests:\n    @staticmethod\n    def test_parent_becomes_evictable() -> None:",
    )
    with_tests(folder, indented_after(uncollected, "    def test_parent_becomes_evictable"))
    red = run(installed, tmp_path, "tdd", "red")
    assert "test_parent_becomes_evictable is missing: class RadixTests is not collected" in flat(
        red.stdout
    )

    with_tests(folder, swallowing(MODEL, "test_oldest_leaf_goes_first"))
    red = run(installed, tmp_path, "tdd", "red")
    assert red.returncode == EXIT_FAIL
    assert "test_oldest_leaf_goes_first passes on the stub" in flat(red.stdout)
    assert "(except Exception:) catches the failed assert" in flat(red.stdout)

    printing = MODEL.replace(
        "def test_split_by_hand() -> None:\n",
        'def test_split_by_hand() -> None:\n    print("x" * 25_000_000)\n',
    )
    with_tests(folder, printing)
    red = run(installed, tmp_path, "tdd", "red")
    assert "your tests printed more than 4 MB" in flat(red.stdout)
    assert "Errno 27" not in red.stdout

    off_by_one = REFERENCE.replace("while freed < n and", "while freed < n - 1 and")
    assert off_by_one != REFERENCE
    with_tests(folder, MODEL, off_by_one)
    green = run(installed, tmp_path, "tdd", "green")
    assert green.returncode == EXIT_FAIL
    assert (
        "test_parent_becomes_evictable fails on your radix.py: AssertionError: assert (0, []) =="
        in flat(green.stdout)
    )
    assert '(line 220: assert evict_all(tree, 1) == (1, ["c"]))' in flat(green.stdout)


def test_check_gives_the_same_reasons_as_tdd(installed: Path, tmp_path: Path) -> None:
    """``check`` on the student edition names an uncollected class, a broad except that
    swallows the assert and output past the limit, as ``tdd red`` does."""
    assert run(installed, tmp_path, "start").returncode == 0
    folder = tmp_path / "submission"
    uncollected = MODEL.replace(
        "def test_parent_becomes_evictable() -> None:",
        "class RadixTests:\n    @staticmethod\n    def test_parent_becomes_evictable() -> None:",
    )
    printing = MODEL.replace(
        "def test_split_by_hand() -> None:\n",
        'def test_split_by_hand() -> None:\n    print("x" * 25_000_000)\n',
    )
    expected = {
        indented_after(uncollected, "    def test_parent_becomes_evictable"): (
            "test_parent_becomes_evictable is missing: class RadixTests is not collected"
        ),
        swallowing(MODEL, "test_oldest_leaf_goes_first"): (
            "(except Exception:) catches the failed assert"
        ),
        printing: "your tests printed more than 4 MB",
    }
    for tests, reason in expected.items():
        with_tests(folder, tests, REFERENCE)
        checked = run(installed, tmp_path, "check")
        assert checked.returncode == EXIT_FAIL, checked.stderr
        out = flat(checked.stdout)
        assert reason in out and "Your tests (tests/test_ds07_radix.py): not valid" in out
        assert "Errno 27" not in out and "Traceback" not in checked.stderr


def test_a_check_explains_its_verdict_its_time_and_its_failures(
    installed: Path, tmp_path: Path
) -> None:
    """A tree that breaks a lock rule (mutant s13): the model-based test fails within its
    limit with its shrunk program, without the stand-in's frames; the student's tests are
    named as disagreeing with the student's code; the grade says where its points came
    from; the JSON has every run's seconds per test."""
    assert run(installed, tmp_path, "start").returncode == 0
    folder = tmp_path / "submission"
    with_tests(folder, MODEL, mutant_sources(CHAPTER)["s13"])
    checked = run(installed, tmp_path, "check", "--json", "report.json", "--gradescope", "gs.json")
    assert checked.returncode == EXIT_FAIL, checked.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    results = report["course_tests"]["results"]
    assert results["test_model_based_against_a_naive_map"] == "failed"
    assert "timeout" not in results.values() and report["course_tests"]["problem"] is None
    shown = report["course_tests"]["failures"]["test_model_based_against_a_naive_map"]
    # the whole shrunk program, as the interface calls its rules make
    assert "Failing program, in the chapter's calls" in shown and "tree = RadixTree(" in shown
    assert "state." not in shown
    assert "proxy.py" not in shown and "Use -v" not in shown
    out = flat(checked.stdout)
    assert "Failing program, in the chapter's calls" in out
    assert "Your tests pass on the reference but not on your radix.py" in out
    assert report["student_tests"]["on_yours"]
    explanation = report["grade"]["explanation"]
    assert (
        explanation.startswith("course tests ") and "kills counted of the 13 needed" in explanation
    )
    assert f"Where the points came from: {explanation}." in out
    gradescope = json.loads((tmp_path / "gs.json").read_text(encoding="utf-8"))
    assert explanation in gradescope["output"]
    per_test = report["timings"]["per_test"]
    assert set(per_test["mutants"]) == {m.id for m in CHAPTER.mutants}
    assert set(per_test["validation"]["reference"]) == set(report["student_tests"]["tests"])
    assert per_test["course_tests"]["test_model_based_against_a_naive_map"] > 0
    assert f"check runs them {runs_per_check(CHAPTER)} times" in out


def test_a_slow_test_is_called_slow_with_its_limit(installed: Path, tmp_path: Path) -> None:
    """A test that takes long is stopped at the limit and called too slow, never hung."""
    assert run(installed, tmp_path, "start").returncode == 0
    folder = tmp_path / "submission"
    slow = MODEL + (
        "\n\ndef test_many_inserts() -> None:\n"
        "    tree = RadixTree[int](1)\n"
        "    for key in range(10_000_000):\n"
        "        tree.insert([key], [key])\n"
    )
    with_tests(folder, slow)
    checked = run(installed, tmp_path, "check", "--tests-time-limit", "10")
    assert checked.returncode == EXIT_FAIL
    out = flat(checked.stdout)
    assert "too slow: stopped after 10 s while running test_many_inserts" in out
    assert not re.search(r"\bhang", out)  # "unchanged" holds the letters, not the word


def test_help_states_every_default_limit(installed: Path, tmp_path: Path) -> None:
    shown = flat(run(installed, tmp_path, "check", "--help").stdout)
    assert "the course tests 120 s, your tests on the reference 120 s" in shown
    assert "on each mutant 5 times your tests' time on the reference, at least 5 s" in shown
    assert "may take 60 s" in flat(run(installed, tmp_path, "tdd", "--help").stdout)


# ----------------------------------------------------------------------
# The student edition is complete on its own (issue 35, item 9)

STAFF_COMMANDS = (
    "batch",
    "manifest",
    "merge",
    "override",
    "replay",
    "regrade",
    "gradescope-bundle",
    "release",
)
POINTER = re.compile(r"grader help ([a-z][\w-]*)")


def test_the_student_edition_is_complete_on_its_own(installed: Path, tmp_path: Path) -> None:
    """Its --help lists no staff command, and one asked for says what it is in one line with
    no path; every ``grader help TOPIC`` its help texts and docs name shows a doc it carries,
    and none points at a file (``docs/...``); its audit hint installs from an index."""
    listed = run(installed, tmp_path, "--help")
    assert listed.returncode == 0
    commands = set(re.findall(r"^    ([\w-]+)\s", listed.stdout, re.MULTILINE))
    assert {"start", "check", "tdd", "diff", "help"} <= commands
    assert not commands & set(STAFF_COMMANDS), commands
    for command in STAFF_COMMANDS:
        asked = run(installed, tmp_path, command)
        assert asked.returncode == EXIT_USAGE
        assert asked.stderr == (
            f"grader: grader {command} is a staff command, not part of the student edition; "
            "grader --help lists yours\n"
        )

    topics = run(installed, tmp_path, "help")
    assert topics.returncode == 0
    carried = set(re.findall(r"^  ([\w-]+)  ", topics.stdout, re.MULTILINE))
    assert {"students", "witnesses", "dependencies", "static-check", "security"} <= carried
    texts = [listed.stdout] + [run(installed, tmp_path, c, "--help").stdout for c in commands]
    texts += [run(installed, tmp_path, "help", topic).stdout for topic in sorted(carried)]
    pointed = {topic for text in texts for topic in POINTER.findall(text)}
    assert "witnesses" in pointed and pointed <= carried, pointed - carried
    for text in texts:
        assert "docs/" not in text and not re.search(r"\]\([\w-]+\.md", text)

    hint = subprocess.run(
        [installed / "python", "-c", HINT], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert hint.startswith("pip install 'mutmut") and "ds07-grader" not in hint


HINT = (
    "from grader.inputs.catalog import is_student_edition\n"
    "from grader.grading.mutmut_driver import audit_install_hint\n"
    "assert is_student_edition()\n"
    "print(audit_install_hint())\n"
)
