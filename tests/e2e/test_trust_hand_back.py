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
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import make_submission
from test_trust_cache import NoWorkers, PhaseRan, forged_phases

import grader.cli
from grader.commands import batch as batch_module
from grader.commands import check as check_module
from grader.commands.check import check
from grader.errors import EXIT_INTERNAL, EXIT_PASS
from grader.grading.result_cache import ResultCache
from grader.grading.witness import read_witnesses
from grader.inputs.catalog import load_chapter
from grader.output.gradescope import STAFF_ENTRY, gradescope_json
from grader.results.check import (
    CheckReport,
    CourseTestsResult,
    MutantResult,
    MutationResult,
    StudentTestsResult,
)
from grader.sandbox.host.pool import require_isolation
from grader.sandbox.protocol.status import MutantStatus, TestStatus

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
    course = CourseTestsResult({t.name: TestStatus.PASSED for t in CHAPTER.course_tests}, {}, None)
    student = StudentTestsResult(True, (), (), ("test_a",), 0.1)
    mutants = tuple(
        MutantResult(m.id, m.title, MutantStatus.SURVIVED, ())
        if m.id == SURVIVOR
        else MutantResult(m.id, m.title, MutantStatus.KILLED, ("test_a",))
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


def cached_copy_of_the_model_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A submission whose test file is the model answer, its phases in a signed cache as an
    earlier check left them (so nothing runs here); the CLI's cache is that one."""
    folder = tmp_path / "submission"
    (folder / "tests").mkdir(parents=True)
    shutil.copyfile(CHAPTER.reference, folder / CHAPTER.implementation)
    shutil.copyfile(CHAPTER.model_tests, folder / CHAPTER.student_tests)
    for need in CHAPTER.needs:
        shutil.copyfile(need.reference, folder / need.implementation)
    cache = tmp_path / "xdg" / "ds07-grader"
    asked: list[str] = []
    real_get = ResultCache.get

    def get(self: ResultCache, key: str, *args: Any) -> Any:
        asked.append(key)
        return real_get(self, key, *args)

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with monkeypatch.context() as patched:  # the keys of the API's check and the CLI's
        patched.setattr(ResultCache, "get", get)
        patched.setattr(check_module, "WorkerPool", NoWorkers)
        with pytest.raises(PhaseRan):
            check(CHAPTER, folder, cache=ResultCache(cache))
        assert grader.cli.main(["check", "--submission", str(folder)]) == EXIT_INTERNAL
    level = require_isolation("none")
    phases = list(forged_phases(level).values()) * 2
    for key, phase in zip(asked, phases, strict=True):
        ResultCache(cache).put(key, phase, level)
    monkeypatch.setattr(check_module, "WorkerPool", NoWorkers)
    return folder


def test_a_students_own_check_shows_no_copy_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model answer handed in: staff see it flagged; the student's own check, in the
    terminal and in its JSON, shows neither a score nor a flag."""
    folder = cached_copy_of_the_model_answer(tmp_path, monkeypatch)
    staff = check(CHAPTER, folder, cache=ResultCache(tmp_path / "xdg" / "ds07-grader"))
    assert staff.known_sources == ()  # a check compares nothing unless staff ask
    staff = check(
        CHAPTER, folder, cache=ResultCache(tmp_path / "xdg" / "ds07-grader"), compare_copies=True
    )
    assert [k.source for k in staff.known_sources if k.flagged] == ["model-answer", "reference"]
    report = tmp_path / "report.json"
    code = grader.cli.main(["check", "--submission", str(folder), "--json", str(report)])
    captured = capsys.readouterr()
    shown = captured.out
    assert code == EXIT_PASS, captured.err + shown
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["timings"]["reused"] == ["course_tests", "tests", "yours"]
    assert data["known_sources"] == []
    for text in (shown, report.read_text(encoding="utf-8")):
        assert "model-answer" not in text and "flagged" not in text.lower().replace('"flagged"', "")


def test_gradescope_keeps_copy_scores_in_the_staffs_hidden_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = cached_copy_of_the_model_answer(tmp_path, monkeypatch)
    report = check(
        CHAPTER, folder, cache=ResultCache(tmp_path / "xdg" / "ds07-grader"), compare_copies=True
    )
    results = json.loads(gradescope_json(CHAPTER, report))
    assert "model-answer" not in results["output"]
    mentions = [t for t in results["tests"] if "model-answer" in json.dumps(t)]
    assert [t["name"] for t in mentions] == [STAFF_ENTRY]
    assert mentions[0]["visibility"] == "hidden" and "FLAGGED" in mentions[0]["output"]
