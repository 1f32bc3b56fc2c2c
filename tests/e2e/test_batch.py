"""``grader batch``: many submission folders into a gradebook, and nothing stops it.

One batch runs through the real command, in-process, over a class laid out
like a GitHub Classroom clone: two real submissions (one with the kit's
layout, one with its files side by side, as a Gradescope upload leaves them)
and broken or hostile ones. Sandboxed runs are shared with the rest of the
session (``ReusedRuns``).
"""

from __future__ import annotations

import csv
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import ReusedRuns, make_submission

import grader.cli
import grader.commands.batch
import grader.commands.check
from grader.commands.batch import COLUMNS, grade_batch, gradebook_csv, row_of
from grader.errors import EXIT_PASS, EXIT_USAGE, GraderError
from grader.grading.jobs import Limits
from grader.inputs.catalog import load_chapter
from grader.inputs.locate import MAX_DEPTH, AmbiguousSubmission, OnlyKitFiles, locate
from grader.inputs.submission import start_submission
from grader.output.check_json import SCHEMA_PATH
from grader.results.batch import BatchRow, Step
from grader.results.check import CheckReport, CourseTestsResult, StudentTestsResult
from grader.sandbox.confine.probe import isolation_level
from grader.sandbox.protocol.status import TestStatus, Verdict

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
KILL_THE_PARENT = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
STUDENTS = ("alice", "bob", "carol", "dave", "=erin", "frank", "gina", "hank", "ivy")
KIT = Path(__file__).resolve().parents[2]
NOT_THE_KIT = shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "reports", "submission")


def clone_of_the_kit(folder: Path) -> Path:
    """A whole copy of the kit, model answer included, with an untouched stub in submission/."""
    shutil.copytree(KIT, folder, ignore=NOT_THE_KIT, symlinks=True)
    start_submission(CHAPTER, folder / "submission")
    return folder


def lay_out_class(root: Path) -> list[Path]:
    """One folder per student, each teaching the batch something."""
    classroom = root / "classroom"
    classroom.mkdir()
    # alice: the model answer, in the kit's layout
    make_submission(classroom, "strong").rename(classroom / "alice")
    # bob: weak tests, both files side by side (a Gradescope upload)
    bob = make_submission(classroom, "weak").rename(classroom / "bob")
    (bob / CHAPTER.student_tests).rename(bob / "test_ds07_radix.py")
    (bob / "tests").rmdir()
    # carol: an empty repository
    (classroom / "carol").mkdir()
    # dave: radix.py links to a system file; the test file is not text
    dave = classroom / "dave"
    (dave / "tests").mkdir(parents=True)
    (dave / "radix.py").symlink_to("/etc/passwd")
    (dave / CHAPTER.student_tests).write_bytes(b"\xff\xfe\x00")
    # =erin: a name a spreadsheet would run; radix.py kills the process that runs it
    erin = classroom / "=erin"
    erin.mkdir()
    (erin / "radix.py").write_text(KILL_THE_PARENT, encoding="utf-8")
    # frank: a file where a folder should be
    (classroom / "frank").write_text("not a folder\n", encoding="utf-8")
    # gina: a link loop and a deep tree, and no radix.py anywhere
    gina = classroom / "gina"
    deep = gina.joinpath(*["deeper"] * 12)
    deep.mkdir(parents=True)
    (gina / "loop").symlink_to(".")
    (deep / "radix.py").write_text("ROOT = 0\n", encoding="utf-8")
    # hank: a whole clone of the kit, reference/ included, with the stub untouched in submission/
    clone_of_the_kit(classroom / "hank")
    # ivy: real work in work/, and an old stub in backup/
    (classroom / "ivy").mkdir()
    make_submission(classroom, "strong").rename(classroom / "ivy" / "work")
    start_submission(CHAPTER, classroom / "ivy" / "backup")
    return [classroom / name for name in STUDENTS]


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory, reused_runs: ReusedRuns) -> dict[str, Any]:
    """The real command over the class; returns its exit code, gradebook rows and output folder."""
    root = tmp_path_factory.mktemp("batch")
    folders = lay_out_class(root)
    out = root / "out"
    with pytest.MonkeyPatch.context() as monkeypatch:
        reused_runs.install(monkeypatch)
        arguments = ["batch", "ds.07", *map(str, folders), "--out", str(out), "--jobs", "2"]
        code = grader.cli.main(arguments)
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    return {"code": code, "rows": {row["student"].lstrip("'"): row for row in rows}, "out": out}


def test_the_batch_grades_every_folder_in_order(batch: dict[str, Any]) -> None:
    assert batch["code"] == EXIT_PASS
    assert list(batch["rows"]) == list(STUDENTS)
    gradebook = (batch["out"] / "gradebook.csv").read_text(encoding="utf-8")
    assert gradebook.splitlines()[0] == ",".join(COLUMNS)


def test_real_submissions_get_their_grades(batch: dict[str, Any]) -> None:
    alice, bob = batch["rows"]["alice"], batch["rows"]["bob"]
    assert alice["verdict"] == "pass" and alice["grade"] == "100"
    assert (alice["course_tests_passed"], alice["mutation_score"], alice["survivors"]) == (
        "11",
        "1.0000",
        "",
    )
    assert bob["verdict"] == "fail" and bob["mutation_score"] == "0.1667"
    assert (bob["killed"], bob["mutants"]) == ("3", "18")
    survivors = {m.id for m in CHAPTER.mutants} - {"s02", "s05", "m03"}
    assert set(bob["survivors"].split()) == survivors
    assert bob["problem"] == "mutation score 0.17 below 0.70; required mutant s11 survived"


def test_broken_and_hostile_submissions_fail_with_one_line(batch: dict[str, Any]) -> None:
    rows = batch["rows"]
    expected = {
        "carol": "radix.py is missing from",
        "dave": "radix.py links to a file outside the submission",
        # Confined to another user, radix.py cannot kill the grader's worker: the kill fails.
        "=erin": "the course tests did not finish"
        if isolation_level() == "none"
        else "radix.py could not be imported: PermissionError",
        "frank": "is a file, not a folder",
        "gina": "radix.py is missing from",
    }
    for student, fragment in expected.items():
        row = rows[student]
        assert row["verdict"] == "fail" and row["grade"] == "0", student
        assert fragment in row["problem"] and "\n" not in row["problem"], (student, row)


def test_a_clone_of_the_kit_is_graded_from_its_submission_not_its_reference(
    batch: dict[str, Any],
) -> None:
    """The model answer in a cloned kit's reference/ is never graded: the stub is, and fails."""
    hank = batch["rows"]["hank"]
    assert hank["verdict"] == "fail" and hank["grade"] == "0", hank
    assert (hank["implementation_file"], hank["tests_file"]) == (
        "submission/radix.py",
        "submission/tests/test_ds07_radix.py",
    )
    report = json.loads((batch["out"] / hank["report"]).read_text(encoding="utf-8"))
    assert report["files"] == {
        "implementation": "submission/radix.py",
        "tests": "submission/tests/test_ds07_radix.py",
    }
    assert report["unmodified"] == ["submission/radix.py", "submission/tests/test_ds07_radix.py"]


def test_two_candidates_are_refused_with_both_named(batch: dict[str, Any]) -> None:
    """Real work in work/ and an old stub in backup/: not graded by a guess, but a fail row
    that names both files and says what to do."""
    ivy = batch["rows"]["ivy"]
    assert ivy["verdict"] == "fail" and ivy["grade"] == "0" and ivy["report"] == ""
    assert ivy["problem"].startswith(
        "found 2 files named radix.py (backup/radix.py, work/radix.py) and cannot tell which"
    )
    assert "keep only that one" in ivy["problem"]


def test_a_regrade_into_the_same_folder_keeps_every_row(
    batch: dict[str, Any], reused_runs: ReusedRuns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``grader batch class/bob --out same``: bob's new grade replaces his old row in place,
    every other row stays, and the old gradebook and bob's old report are kept as backups."""
    out = tmp_path / "out"
    shutil.copytree(batch["out"], out)
    before = (out / "gradebook.csv").read_text(encoding="utf-8")
    old_report = (out / "students" / "bob.json").read_text(encoding="utf-8")
    bob = make_submission(tmp_path, "strong").rename(tmp_path / "bob")  # bob improved his tests
    reused_runs.install(monkeypatch)
    result = grade_batch(CHAPTER, [bob], out)
    assert (result.kept, [row.student for row in result.rows]) == (len(STUDENTS) - 1, ["bob"])
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        rows = {row["student"].lstrip("'"): row for row in csv.DictReader(stream)}
    assert list(rows) == list(STUDENTS)
    assert (rows["bob"]["verdict"], rows["bob"]["grade"]) == ("pass", "100")

    def graded(row: dict[str, str]) -> dict[str, str]:  # flags are drawn over the class
        return {column: cell for column, cell in row.items() if column != "flags"}

    assert {k: graded(v) for k, v in rows.items() if k != "bob"} == {
        k: graded(v) for k, v in batch["rows"].items() if k != "bob"
    }
    # The class view still covers the whole class: bob's new tests are alice's.
    assert "tests~bob" in rows["alice"]["flags"].split()
    figures = json.loads((out / "class.json").read_text(encoding="utf-8"))
    assert (figures["students"], result.students) == (len(STUDENTS), len(STUDENTS))
    assert result.backup is not None and result.backup.parent == out / "backups"
    assert (result.backup / "gradebook.csv").read_text(encoding="utf-8") == before
    assert (result.backup / "students" / "bob.json").read_text(encoding="utf-8") == old_report
    assert json.loads((out / "students" / "bob.json").read_text("utf-8"))["verdict"] == "pass"


def test_an_interrupted_regrade_loses_no_row(
    batch: dict[str, Any], reused_runs: ReusedRuns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C after the first student of a regrade: the old rows and that student's new one
    are all in the gradebook."""
    out = tmp_path / "out"
    shutil.copytree(batch["out"], out)
    reused_runs.install(monkeypatch)

    def grade_one(
        chapter: Any, folder: Path, name: str, *rest: Any
    ) -> tuple[BatchRow, None, tuple[None, None]]:
        if name == "zed":
            raise KeyboardInterrupt
        row = BatchRow(name, Verdict.FAIL, 1.5, 0, 11, None, None, None, (), "x", "")
        return row, None, (None, None)

    monkeypatch.setattr(grader.commands.batch, "_grade_one", grade_one)
    folders = [tmp_path / "alice", tmp_path / "zed"]
    with pytest.raises(KeyboardInterrupt):
        grade_batch(CHAPTER, folders, out, jobs=1)
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        rows = {row["student"].lstrip("'"): row for row in csv.DictReader(stream)}
    assert list(rows) == list(STUDENTS)
    assert rows["alice"]["grade"] == "1.5" and rows["bob"] == batch["rows"]["bob"]


def test_a_file_that_is_not_a_gradebook_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "gradebook.csv").write_text("name,points\nx,1\n", encoding="utf-8")
    with pytest.raises(GraderError, match="is not a gradebook of this kit"):
        grade_batch(CHAPTER, [tmp_path / "x"], tmp_path)
    assert (tmp_path / "gradebook.csv").read_text(encoding="utf-8") == "name,points\nx,1\n"


def test_each_student_gets_a_json_report(batch: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    for student, row in batch["rows"].items():
        if student == "ivy":  # refused before any check: no report
            continue
        report = json.loads((batch["out"] / row["report"]).read_text(encoding="utf-8"))
        jsonschema.validate(report, schema)
        assert report["verdict"] == row["verdict"], student
        assert report["grade"]["points"] == float(row["grade"]), student
        assert report["files"]["implementation"] == (row["implementation_file"] or None)
    assert batch["rows"]["alice"]["report"] == "students/alice.json"


def test_a_spreadsheet_formula_in_a_name_is_defused(batch: dict[str, Any]) -> None:
    gradebook = (batch["out"] / "gradebook.csv").read_text(encoding="utf-8")
    assert "\n'=erin,fail," in gradebook


def test_two_folders_of_one_name_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for parent in ("a", "b"):
        (tmp_path / parent / "sam").mkdir(parents=True)
    code = grader.cli.main(["batch", str(tmp_path / "a/sam"), str(tmp_path / "b/sam")])
    assert code == EXIT_USAGE
    assert "two submission folders are named 'sam'" in capsys.readouterr().err


def test_an_error_of_the_grader_becomes_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even a failure of the kit on one folder leaves the others graded."""
    folders = [tmp_path / name for name in ("one", "two", "three")]
    for folder in folders:
        folder.mkdir()
    real = grader.commands.check.check  # what grader.commands.batch imported, patched below
    together = threading.Barrier(2, timeout=30)

    def check(
        chapter: Any, folder: Path, limits: Limits, pool: Any, compare_copies: bool
    ) -> CheckReport:
        if folder.name in ("one", "two"):
            together.wait()  # both are graded at once, or this times out
        if folder.name == "two":
            raise GraderError("the kit is broken: a grading worker stopped unexpectedly")
        if folder.name == "three":
            raise ValueError("a bug")
        return real(chapter, folder, limits, pool=pool, compare_copies=compare_copies)

    monkeypatch.setattr(grader.commands.batch, "check", check)
    seen: list[Step] = []
    result = grade_batch(CHAPTER, folders, tmp_path / "out", progress=seen.append)
    problems = [row.problem for row in result.rows]
    assert problems[0].startswith("radix.py is missing from")
    assert problems[1] == "not graded: the kit is broken: a grading worker stopped unexpectedly"
    assert problems[2] == "not graded: ValueError('a bug')"
    assert sorted(step.done for step in seen) == [1, 2, 3]
    assert result.gradebook.read_text(encoding="utf-8").count("\n") == 4


def test_a_problem_takes_one_line_of_the_gradebook() -> None:
    course = CourseTestsResult({"t": TestStatus.ERROR}, {}, "line one\nline two")
    student = StudentTestsResult(False, ("p",), (), (), 0.0)
    report = CheckReport("ds.07", "x", course, student, None, {}, isolation="uid")  # no practice
    text = gradebook_csv([row_of(CHAPTER, "x", report, "x.json")])
    assert text.count("\n") == 2 and ",line one line two," in text


# ----------------------------------------------------------------------
# Finding the files of a submission


def test_locate_keeps_the_kit_layout(tmp_path: Path) -> None:
    folder = make_submission(tmp_path, "strong")
    (folder / "old").mkdir()
    (folder / "old" / "radix.py").write_text("# an old copy\n", encoding="utf-8")
    located = locate(CHAPTER, folder)
    assert (located.implementation, located.student_tests) == (
        "radix.py",
        "tests/test_ds07_radix.py",
    )


def test_locate_finds_files_side_by_side_or_one_folder_down(tmp_path: Path) -> None:
    (tmp_path / "repo" / "src").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "radix.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "repo" / "test_ds07_radix.py").write_text("x = 1\n", encoding="utf-8")
    located = locate(CHAPTER, tmp_path / "repo")
    assert (located.implementation, located.student_tests) == ("src/radix.py", "test_ds07_radix.py")
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b" / "radix.py").write_text("x = 2\n", encoding="utf-8")
    with pytest.raises(AmbiguousSubmission) as refused:
        locate(CHAPTER, tmp_path / "repo")
    assert refused.value.candidates == ("a/b/radix.py", "src/radix.py")


def test_locate_never_takes_the_kits_own_files(tmp_path: Path) -> None:
    """reference/, student/, course_tests/ anywhere, and a copy of the kit's other folders."""
    repo = tmp_path / "repo"
    for kit_folder in ("reference", "student", "course_tests", "deep/reference"):
        (repo / kit_folder).mkdir(parents=True)
        shutil.copyfile(CHAPTER.reference, repo / kit_folder / "radix.py")
    with pytest.raises(OnlyKitFiles) as refused:  # none taken, and the student told why
        locate(CHAPTER, repo)
    assert refused.value.candidates == (
        "course_tests/radix.py",
        "deep/reference/radix.py",
        "reference/radix.py",
        "student/radix.py",
    )
    assert "is only in the kit's own folders" in refused.value.message
    (repo / "mine").mkdir()
    (repo / "mine" / "radix.py").write_text("x = 1\n", encoding="utf-8")
    assert locate(CHAPTER, repo).implementation == "mine/radix.py"
    (repo / "mine" / "radix.py").unlink()
    (repo / "kit" / "chapter").mkdir(parents=True)
    (repo / "kit" / "chapter" / "catalog.toml").write_text("", encoding="utf-8")
    (repo / "kit" / "tests" / "hostile" / "x").mkdir(parents=True)
    (repo / "kit" / "tests" / "hostile" / "x" / "radix.py").write_text("x = 1\n", "utf-8")
    (repo / "tests").mkdir()
    (repo / "tests" / "radix.py").write_text("x = 1\n", encoding="utf-8")  # not a kit: taken
    assert locate(CHAPTER, repo).implementation == "tests/radix.py"


def test_locate_follows_no_link_and_stops_at_its_depth(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "radix.py").write_text("x = 1\n", encoding="utf-8")
    folder = tmp_path / "submission"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "radix.py").symlink_to(outside / "radix.py")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    deep = folder.joinpath(*["d"] * (MAX_DEPTH + 1))
    deep.mkdir(parents=True)
    (deep / "radix.py").write_text("x = 1\n", encoding="utf-8")
    assert locate(CHAPTER, folder).implementation == "radix.py"  # none found: reported missing
    (deep.parent / "radix.py").write_text("x = 1\n", encoding="utf-8")
    assert locate(CHAPTER, folder).implementation == "/".join(["d"] * MAX_DEPTH + ["radix.py"])
