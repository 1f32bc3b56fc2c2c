"""What a batch hands back, and what a student's own check shows (docs/security.md, issue 34).

Route 5 of issue 34: ``students/NAME.txt`` and ``NAME.html``, documented as the
report to hand back, were written at the staff's tier (``full``): each
survivor with a test that would kill it. And a student's own report carried
``known_sources``, copy scores against the kit's own tests: an oracle to tune
a disguise against. Here ``grader batch`` grades one student whose report
(made here, so no sandboxed run is needed) has a survivor, and ``grader
check``'s outputs are read for any copy score.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_submission

import grader.cli
from grader.catalog import load_chapter
from grader.commands import batch as batch_module
from grader.errors import EXIT_PASS
from grader.results.check import (
    CheckReport,
    CourseTestsResult,
    MutantResult,
    MutationResult,
    StudentTestsResult,
)
from grader.witness import read_witnesses

CHAPTER = load_chapter()
assert CHAPTER.witnesses is not None
WITNESSES = read_witnesses(CHAPTER.witnesses.path)
SURVIVOR = "s01"
KILLING_TEST = WITNESSES[SURVIVOR].test.splitlines()[3].strip()  # "def test_what_s01_breaks..."


def report_with_a_survivor(
    chapter: object, folder: Path, *args: object, **kwargs: object
) -> CheckReport:
    """What ``check`` gives in place of a graded run: every course test passed, the tests
    valid, every mutant killed but s01."""
    course = CourseTestsResult({t.name: "passed" for t in CHAPTER.course_tests}, {}, None)
    student = StudentTestsResult(True, (), (), ("test_a",), 0.1)
    mutants = tuple(
        MutantResult(m.id, m.title, "survived", ())
        if m.id == SURVIVOR
        else MutantResult(m.id, m.title, "killed", ("test_a",))
        for m in CHAPTER.mutants
    )
    mutation = MutationResult(0.7, (), mutants)
    files: dict[str, str | None] = {"implementation": CHAPTER.implementation}
    files["tests"] = CHAPTER.student_tests
    return CheckReport(CHAPTER.id, str(folder), course, student, mutation, {}, files=files)


@pytest.fixture()
def graded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "class").mkdir()
    make_submission(tmp_path / "class", "weak").rename(tmp_path / "class" / "mia")
    monkeypatch.setattr(batch_module, "check", report_with_a_survivor)
    return tmp_path


def batch(graded: Path, *options: str) -> Path:
    out = graded / "out"
    code = grader.cli.main(["batch", str(graded / "class" / "mia"), "--out", str(out), *options])
    assert code == EXIT_PASS
    return out / "students"


def test_the_hand_back_files_show_the_students_tier(graded: Path) -> None:
    """NAME.txt and NAME.html at ``calls`` (the calls, no killing test); the staff's tier in a
    file whose name says so."""
    assert KILLING_TEST.startswith("def test_what_s01_breaks")
    students = batch(graded)
    text = (students / "mia.txt").read_text(encoding="utf-8")
    page = (students / "mia.html").read_text(encoding="utf-8")
    assert "Your tests never make these calls" in text  # the tier students see: calls
    first_call = WITNESSES[SURVIVOR].calls[0].code
    assert first_call in text
    for hand_back in (text, page):
        assert KILLING_TEST not in hand_back and "A test that would kill it" not in hand_back
        assert "correct tree:" not in hand_back
    staff = (students / "mia.staff-only.txt").read_text(encoding="utf-8")
    assert KILLING_TEST in staff and "correct tree:" in staff
    record = json.loads((students / "mia.json").read_text(encoding="utf-8"))
    assert record["mutation"]["mutants"][SURVIVOR]["witness"]["calls"][0]["reference"]


def test_staff_may_hand_back_another_tier(graded: Path) -> None:
    students = batch(graded, "--tier", "title")
    text = (students / "mia.txt").read_text(encoding="utf-8")
    assert "Your tests never make these calls" not in text and KILLING_TEST not in text
    full = batch(graded, "--tier", "full")
    assert KILLING_TEST in (full / "mia.txt").read_text(encoding="utf-8")
