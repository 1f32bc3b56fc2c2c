"""``grader batch`` over a class made for it: copies found, the class at a glance.

The class: two honest students (their own test files, the stub as radix.py),
a student whose tests are a disguised copy of one of them, one whose tests
are a disguised copy of the model answer, one whose radix.py is a disguised
copy of the reference, and one whose tests are not valid. ``disguise``
renames, reorders, re-documents and re-lays-out a file the way a student
hiding a copy would. The batch must flag exactly the three copies, and leave
every grade what grading alone gives.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import SUBMISSIONS, ReusedRuns, add_dependencies
from disguise import disguise

import grader.cli
from grader.commands.batch import grade_batch
from grader.course.canonical import tokens
from grader.course.class_view import rebuild_class
from grader.course.fingerprints import Fingerprinter, boilerplate_hashes, fingerprint, text_score
from grader.course.gradebook import GRADEBOOK, read_gradebook, row_cells, write_gradebook
from grader.course.roster import read_roster
from grader.course.similarity import ClassFile, find_copies
from grader.errors import EXIT_PASS, EXIT_USAGE, GraderError
from grader.grading.jobs import Limits
from grader.grading.wording import PRACTICE_CLASS
from grader.inputs.catalog import SimilaritySettings, load_chapter
from grader.output.canvas import PRACTICE_COLUMN
from grader.output.class_report import reason_of
from grader.output.similarity import CSV_COLUMNS, similarity_html
from grader.results.batch import BatchRow
from grader.sandbox.protocol.status import Verdict

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()


def _settings() -> SimilaritySettings:
    assert CHAPTER.similarity is not None, "the kit's catalog has a [similarity] table"
    return CHAPTER.similarity


SETTINGS = _settings()
STUDENTS = ("ana", "ben", "cy", "dee", "eve", "fay")
CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def fixture_tests(example: str) -> str:
    return (SUBMISSIONS / example / CHAPTER.student_tests).read_text(encoding="utf-8")


def lay_out_class(root: Path) -> list[Path]:
    stub = CHAPTER.stub.read_text(encoding="utf-8")
    files = {
        "ana": (stub, fixture_tests("weak")),
        "ben": (stub, fixture_tests("misses_s11")),
        "cy": (stub, disguise(fixture_tests("misses_s11"), CHAPTER, seed=1)),
        "dee": (stub, disguise(CHAPTER.model_tests.read_text(encoding="utf-8"), CHAPTER, seed=2)),
        "eve": (disguise(CHAPTER.reference.read_text(encoding="utf-8"), CHAPTER, seed=3), None),
        "fay": (stub, fixture_tests("fails_on_reference")),
    }
    folders = []
    for name, (implementation, tests) in files.items():
        folder = root / name
        (folder / "tests").mkdir(parents=True)
        (folder / CHAPTER.implementation).write_text(implementation, encoding="utf-8")
        add_dependencies(folder)  # a student who built the earlier chapters
        if tests is not None:
            (folder / CHAPTER.student_tests).write_text(tests, encoding="utf-8")
        folders.append(folder)
    return folders


ROSTER = """\
Student,ID,SIS User ID,SIS Login ID,Section,submission
"Points Possible",,,,,
Ana Alves,101,s101,ana@uni,A,ana
Ben Brandt,102,s102,ben@uni,A,ben
Cy Chen,103,s103,cy@uni,B,cy
Dee Diaz,104,s104,dee@uni,B,dee
"=HYPERLINK(""x"")",105,s105,eve@uni,B,eve
Gus Gray,107,s107,gus@uni,B,gus
"""
"""Canvas's export with a submission column: fay is not in it, gus submitted nothing."""


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory, reused_runs: ReusedRuns) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("class")
    folders = lay_out_class(root / "submissions")
    out = root / "out"
    roster = root / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    canvas = root / "canvas.csv"
    arguments = ["batch", *map(str, folders), "--out", str(out), "--roster", str(roster)]
    arguments += ["--canvas", str(canvas), "--canvas-assignment", "Radix tree (4711)"]
    shown = io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stdout(shown):
        reused_runs.install(monkeypatch)
        monkeypatch.setenv("COLUMNS", "300")
        code = grader.cli.main(arguments)
    with (out / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        rows = {row["student"]: row for row in csv.DictReader(stream)}
    with (out / "similarity.csv").open(encoding="utf-8", newline="") as stream:
        pairs = list(csv.DictReader(stream))
    return {
        "code": code,
        "out": out,
        "rows": rows,
        "pairs": pairs,
        "canvas": canvas,
        "shown": shown.getvalue(),
    }


def test_the_batch_flags_exactly_the_copies(batch: dict[str, Any]) -> None:
    assert batch["code"] == EXIT_PASS
    assert list(batch["pairs"][0]) == list(CSV_COLUMNS)
    flagged = {(p["kind"], p["a"], p["b"]) for p in batch["pairs"] if p["flagged"] == "yes"}
    assert flagged == {
        ("tests", "ben", "cy"),
        ("tests", "dee", "model-answer"),
        ("implementation", "eve", "reference"),
    }
    for pair in batch["pairs"]:
        assert float(pair["text_score"]) >= SETTINGS.floor or pair["flagged"] == "yes", pair
    # ana's and fay's files are kit fixtures written one from the other: listed, not flagged
    listed = {(p["a"], p["b"]): p["flagged"] for p in batch["pairs"]}
    assert listed.get(("ana", "fay")) == "no"


def test_copied_tests_behave_the_same(batch: dict[str, Any]) -> None:
    scores = {(p["a"], p["b"]): p["behaviour_score"] for p in batch["pairs"]}
    assert scores[("ben", "cy")] == "1.0000"  # renaming cannot change what the tests kill
    assert scores[("dee", "model-answer")] == "1.0000"
    implementation = [p for p in batch["pairs"] if p["kind"] == "implementation"]
    assert all(p["behaviour_score"] == "" for p in implementation)


def test_the_gradebook_shows_flags_and_grades_stay(batch: dict[str, Any]) -> None:
    rows = batch["rows"]
    assert list(rows) == list(STUDENTS)
    assert {name: row["flags"] for name, row in rows.items()} == {
        "ana": "",
        "ben": "tests~cy",
        "cy": "tests~ben",
        "dee": "tests~model-answer",
        "eve": "implementation~reference",
        "fay": "",
    }
    assert rows["cy"]["grade"] == rows["ben"]["grade"]  # a flag changes nothing
    assert rows["dee"]["grade"] == "50"  # the model answer's kills, the stub's course tests
    assert rows["eve"]["course_tests_passed"] == "11"  # the disguised copy still works


def test_the_side_by_side_page_marks_the_shared_passages(batch: dict[str, Any]) -> None:
    page = (batch["out"] / "similarity.html").read_text(encoding="utf-8")
    assert page.count("<section") == 3  # one group per copy here, each its own section
    sections = page.split("<section")[1:]
    for section in sections:
        files = re.findall(r"<div class='file'>(.*?)</pre></div>", section, re.S)
        assert len(files) == 2 and all("<mark id=" in f for f in files)
    assert "tests: dee, model-answer" in page
    classes = (batch["out"] / "class.html").read_text(encoding="utf-8")
    assert [f"similarity.html#group-{n}" in classes for n in (1, 2, 3)] == [True] * 3
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org", "")


def test_what_every_student_was_given_never_counts() -> None:
    given = [CHAPTER.stub.read_text("utf-8"), CHAPTER.stub_tests.read_text("utf-8")]
    boilerplate = boilerplate_hashes(given, SETTINGS)
    skeleton = fingerprint(CHAPTER.stub_tests.read_text("utf-8"), SETTINGS, boilerplate)
    stub = fingerprint(CHAPTER.stub.read_text("utf-8"), SETTINGS, boilerplate)
    assert not skeleton.hashes and not stub.hashes
    weak = fingerprint(fixture_tests("weak"), SETTINGS, boilerplate)
    assert text_score(weak, skeleton, SETTINGS) == 0.0


def test_text_fingerprints_ignore_names_comments_and_layout() -> None:
    plain = "def f(a, b):\n    return a + b  # sum\n"
    other = "def g(x,\n      y):\n    '''Adds.'''\n    return (x) + y\n"
    words = [t.text for t in tokens(plain)]
    assert words == ["def", "N", "(", "N", ",", "N", ")", ":", ";", "return", "N", "+", "N", ";"]
    assert [t.text for t in tokens(other) if t.text not in ("S", "(", ")")][:6] == [
        "def",
        "N",
        "N",
        ",",
        "N",
        ":",
    ]
    broken = tokens("def f(:\n    return 1\n'''never closed")
    assert broken and broken[0].text == "def"  # a syntax error keeps what came before


def test_honest_files_of_the_kit_stay_below_the_floor() -> None:
    given = [CHAPTER.stub.read_text("utf-8"), CHAPTER.stub_tests.read_text("utf-8")]
    boilerplate = boilerplate_hashes(given, SETTINGS)
    model = fingerprint(CHAPTER.model_tests.read_text("utf-8"), SETTINGS, boilerplate)
    for example in ("weak", "misses_s11"):
        honest = fingerprint(fixture_tests(example), SETTINGS, boilerplate)
        assert text_score(honest, model, SETTINGS) < SETTINGS.floor, example
    disguised = disguise(CHAPTER.model_tests.read_text("utf-8"), CHAPTER, seed=9)
    copy = fingerprint(disguised, SETTINGS, boilerplate)
    assert text_score(copy, model, SETTINGS) >= SETTINGS.flag_text


# ----------------------------------------------------------------------
# The class report


def test_the_class_report_holds_the_figures(batch: dict[str, Any]) -> None:
    data = json.loads((batch["out"] / "class.json").read_text(encoding="utf-8"))
    assert (data["students"], data["graded"], data["passed"]) == (6, 6, 0)
    assert data["valid_tests"] == 4  # ana, ben, cy, dee; eve has no tests, fay's fail
    assert data["grades"]["count"] == 6
    assert sum(b["count"] for b in data["grades"]["histogram"]) == 6
    s11 = next(m for m in data["mutants"] if m["id"] == "s11")
    assert s11["required"] and (s11["killed"], s11["of"]) == (1, 4)
    assert s11["survived_in"] == ["ana", "ben", "cy"]
    course = {c["name"]: (c["passed"], c["of"]) for c in data["course_tests"]}
    assert course["test_hand_example_split_and_match"] == (1, 6)  # eve's copy passes
    reasons = {r["reason"]: r["students"] for r in data["invalid_reasons"]}
    assert reasons == {
        "a test fails on the reference (a correct tree), so the test is wrong": ["fay"],
        f"{CHAPTER.student_tests} is missing from the submission folder": ["eve"],
    }
    assert len(data["flags"]) == 3


def test_reasons_are_shared_between_students() -> None:
    first = reason_of("test_a failed on the reference, which is correct: assert 1 == 2", ["test_a"])
    second = reason_of("test_b failed on the reference, which is correct: assert 3", ["test_b"])
    assert first == second == "a test failed on the reference, which is correct"
    assert reason_of("tests/t.py line 4: import of os is not allowed", []) == (
        "import of os is not allowed"
    )
    # A colon inside brackets is the reason's own: it is never cut there.
    pathlib = "import of 'pathlib' is not allowed (allowed: collections, copy, 'a: b')"
    assert reason_of(f"tests/t.py line 3: {pathlib}", []) == pathlib
    assert reason_of(f"tests/t.py line 3: {pathlib}: detail", []) == pathlib
    missing = "tests/test_ds07_radix.py is missing from /tmp/x/eve: create it"
    assert (
        reason_of(missing, []) == "tests/test_ds07_radix.py is missing from the submission folder"
    )


def test_the_class_page_opens_offline_in_headless_chromium(
    batch: dict[str, Any], tmp_path: Path
) -> None:
    page = batch["out"] / "class.html"
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and not re.search(r"src=", text)
    links = re.findall(r"href=['\"]([^'\"]*)['\"]", text)  # only to the copies' page
    assert links and all(re.fullmatch(r"similarity\.html#group-\d+", link) for link in links)
    browser = next((found for name in CHROMIUMS if (found := shutil.which(name))), None)
    if browser is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    screenshot = tmp_path / "class.png"
    shot = [*command, "--window-size=1000,3000", f"--screenshot={screenshot}", page.as_uri()]
    subprocess.run(shot, capture_output=True, text=True, timeout=120, check=False)
    assert screenshot.is_file() and screenshot.stat().st_size > 10_000
    done = subprocess.run(
        [*command, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    dom = done.stdout
    assert "ds.07: the class" in dom, done.stderr[-2000:]
    assert dom.count("<svg") == 4  # two histograms, mutants, course tests
    assert dom.count('class="bar"') >= 2 * 10 + len(CHAPTER.mutants) + len(CHAPTER.course_tests)


def test_a_hostile_file_cannot_script_the_side_by_side_page() -> None:
    hostile = "x = 1  # </pre><script>alert(1)</script>\n" + fixture_tests("weak")
    given = [CHAPTER.stub_tests.read_text("utf-8")]
    files = [
        ClassFile("<b>mallory</b>", "tests", hostile),
        ClassFile("trent", "tests", fixture_tests("weak")),
    ]
    found = find_copies(files, Fingerprinter(given, SETTINGS), 0, lambda: None)
    page = similarity_html("ds.07", found)
    assert found.pairs and found.pairs[0].flagged
    assert "<script" not in page and "<b>mallory" not in page
    assert "&lt;/pre&gt;&lt;script&gt;" in page and "&lt;b&gt;mallory&lt;/b&gt;" in page


# ----------------------------------------------------------------------
# The roster and Canvas's import file


def test_the_canvas_file_grades_every_roster_student(batch: dict[str, Any]) -> None:
    with batch["canvas"].open(encoding="utf-8", newline="") as stream:
        lines = list(csv.reader(stream))
    assert lines[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Radix tree (4711)",
    ]
    assert lines[1] == ["Points Possible", "", "", "", "", "100"]
    scores = {line[1]: line[5] for line in lines[2:]}
    rows = batch["rows"]
    expected = {"101": "ana", "102": "ben", "103": "cy", "104": "dee", "105": "eve"}
    assert scores == {**{i: rows[name]["grade"] for i, name in expected.items()}, "107": ""}
    names = [line[0] for line in lines[2:]]
    assert '\'=HYPERLINK("x")' in names  # a formula in a name is defused


def test_who_is_on_one_side_only_is_listed_never_dropped(batch: dict[str, Any]) -> None:
    with (batch["out"] / "roster-check.csv").open(encoding="utf-8", newline="") as stream:
        listed = [(row["problem"][:13], row["submission"]) for row in csv.DictReader(stream)]
    assert listed == [("submission no", "fay"), ("no submission", "gus")]
    shown = " ".join(batch["shown"].split())
    assert "not in the roster (left out of the Canvas file): fay" in shown
    assert "no submission (in the Canvas file with no score): Gus Gray" in shown
    assert "roster: 5 submissions matched to a student id" in shown


@pytest.mark.parametrize(
    ("roster", "message"),
    [
        ("name,id\nAna,1\n", "has no 'submission' column"),
        ("submission,id\nana,1\nben,1\n", "names id '1' twice"),
        ("submission,id\nana,\n", "line 2 has no submission or no id"),
        ("", "is empty"),
    ],
)
def test_a_roster_that_cannot_be_read_is_one_line(
    roster: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "roster.csv"
    path.write_text(roster, encoding="utf-8")
    (tmp_path / "ana").mkdir()
    assert grader.cli.main(["batch", str(tmp_path / "ana"), "--roster", str(path)]) == EXIT_USAGE
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1, error


def test_canvas_needs_a_roster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["batch", str(tmp_path), "--canvas", str(tmp_path / "c.csv")]
    assert grader.cli.main(arguments) == EXIT_USAGE
    assert "--canvas needs --roster" in capsys.readouterr().err


def test_the_student_edition_grades_no_class(tmp_path: Path) -> None:
    """Batch compares with the model answer, which the student edition leaves out."""
    student_edition = dataclasses.replace(CHAPTER, model_tests=tmp_path / "left-out.py")
    (tmp_path / "ana").mkdir()
    with pytest.raises(GraderError, match="it is the student edition"):
        grade_batch(student_edition, [tmp_path / "ana"], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_folder_named_like_the_kits_files_is_refused(tmp_path: Path) -> None:
    """A student folder called ``reference`` would pass for the kit's file in similarity.csv."""
    for name in ("ana", "reference"):
        (tmp_path / name).mkdir()
    with pytest.raises(GraderError, match="a submission folder is named 'reference'"):
        grade_batch(CHAPTER, [tmp_path / "ana", tmp_path / "reference"], tmp_path / "out")


def test_a_class_with_a_row_graded_at_none_says_practice_first_everywhere(tmp_path: Path) -> None:
    """Issue 33: a row graded at level ``none`` (an ordinary user's batch) makes the class
    practice: the gradebook's first line, the class page's first line and ``class.json``
    say so, the Canvas column is not the assignment of record; read back, the gradebook
    keeps its rows. A class graded confined says nothing of it."""
    out, roster = tmp_path / "out", tmp_path / "roster.csv"
    out.mkdir()
    roster.write_text(ROSTER, encoding="utf-8")
    chapter = dataclasses.replace(CHAPTER, similarity=None)  # nothing to compare: no runs
    for level, practice in (("uid", False), ("none", True)):
        rows = [
            BatchRow(name, Verdict.FAIL, 1.5, 0, 11, None, None, None, (), "x", "", isolation=level)
            for name in ("ana", "ben")
        ]
        write_gradebook(out / GRADEBOOK, [row_cells(row) for row in rows])
        canvas = tmp_path / f"canvas-{level}.csv"
        rebuild_class(
            chapter, out, Limits(), roster=read_roster(roster), canvas=canvas,
            assignment="Radix tree (4711)",
        )  # fmt: skip
        first = next(csv.reader(io.StringIO((out / GRADEBOOK).read_text(encoding="utf-8"))))
        assert (first == [PRACTICE_CLASS]) == practice, first
        assert list(read_gradebook(out / GRADEBOOK)) == ["ana", "ben"]
        assert json.loads((out / "class.json").read_text(encoding="utf-8"))["practice"] is practice
        page = (out / "class.html").read_text(encoding="utf-8")
        body = page.split("<body>", 1)[1]
        assert body.startswith(f"<p class='practice'><strong>{PRACTICE_CLASS}.") == practice
        header = next(csv.reader(io.StringIO(canvas.read_text(encoding="utf-8"))))
        assert header[-1] == "Radix tree (4711)" + (PRACTICE_COLUMN if practice else "")
