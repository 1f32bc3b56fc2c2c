"""A class on the staff's engines: shards that resume, logs that speak, a release gate
people can read, overrides that last.

A small class (cheap to grade: no mutant runs) graded by ``grader batch``
stopped part way, then run again; then ``grader regrade``, ``manifest``,
``merge`` and ``override`` over it.

Without a terminal (a pod's log, an Actions log, ``nohup``), batch writes one
line per student as each is done, flushed at once: this test reads them from
a pipe while the batch runs and stops it with SIGTERM after the second line.
Run again into the same ``--out``, the batch keeps every row already written
with the key of the files and kit it would grade now, says so per student,
and grades only the rest; ``--no-resume`` grades again. A row is data to
check, not to trust: a cell, a report or a key that does not hold up, or a
row graded at a weaker isolation than this run's, is graded again.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import make_submission
from rich.console import Console

from grader.commands.batch import row_of
from grader.commands.resume import kept_row
from grader.course.gradebook import GRADEBOOK, read_gradebook, text_cell, with_cell, write_gradebook
from grader.grading.jobs import Limits
from grader.inputs.catalog import load_chapter
from grader.inputs.provenance import key_from_dict
from grader.output.regrade_json import REGRADE_SCHEMA, regrade_data
from grader.output.terminal import render_regrade
from grader.results.batch import Override
from grader.results.replay import Regrade, Replay
from grader.sandbox.host.pool import require_isolation
from grader.sandbox.levels import IsolationLevel

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
KIT = Path(__file__).resolve().parents[2]
CLASS = {  # cheap to grade: no mutant runs
    "ann": "missing_test_file",
    "ben": "syntax_error_in_tests",
    "cat": "missing_test_file",
}
REFUSED = "dan"  # two radix.py: refused before any run, a row with no report
STUDENTS = [*CLASS, REFUSED]
LINE = re.compile(r"^batch (\d+)/(\d+) (\w+): (.*)$")
LOG = re.compile(r"^regrade (\d+)/(\d+) (\w+): (.*)$")


def lay_out(root: Path) -> list[Path]:
    for student, example in CLASS.items():
        make_submission(root, example).rename(root / student)
    for where in ("a", "b"):
        (root / REFUSED).mkdir(exist_ok=True)
        make_submission(root / REFUSED, "missing_test_file").rename(root / REFUSED / where)
    return [root / student for student in STUDENTS]


def batch(*arguments: str | Path) -> list[str]:
    return [sys.executable, "-m", "grader", "batch", "--jobs", "1", *map(str, arguments)]


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / GRADEBOOK).open(encoding="utf-8", newline="") as stream:
        return {row["student"]: row for row in csv.DictReader(stream)}


def steps(stderr: str) -> dict[str, str]:
    """Each student's outcome, from the log lines."""
    found = [LINE.match(line) for line in stderr.splitlines()]
    return {match[3]: match[4] for match in found if match}


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A batch of four stopped by SIGTERM once its log said the second student was done,
    then the same batch run again into the same folder."""
    root = tmp_path_factory.mktemp("class")
    folders, out = lay_out(root), root / "out"
    process = subprocess.Popen(
        batch("--out", out, *folders),
        cwd=KIT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    seen = []
    for text in process.stderr:  # read while it runs: a line held back would hang here
        seen.append(text.rstrip("\n"))
        match = LINE.match(seen[-1])
        if match and match[1] == "2":
            process.send_signal(signal.SIGTERM)
            break
    _, rest = process.communicate(timeout=300)
    before = rows(out)
    again = subprocess.run(  # the same batch again, into the same folder
        batch("--out", out, *folders),
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return {
        "root": root,
        "folders": folders,
        "out": out,
        "code": process.returncode,
        "seen": seen,
        "rest": rest,
        "rows": before,
        "again": again,
    }


def test_without_a_terminal_each_student_is_a_line_as_it_is_done(
    stopped: dict[str, Any],
) -> None:
    first, second = (LINE.match(text) for text in stopped["seen"][-2:])
    assert first is not None and second is not None, stopped["seen"]
    assert (first[1], first[2], first[3]) == ("1", "4", "ann")
    assert (second[1], second[2], second[3]) == ("2", "4", "ben")
    # the verdict and grade, the seconds the student took, the time left
    assert re.fullmatch(r"fail, 50 points \(\d+\.\d s\); about \d+ (s|min) left", first[4]), first[
        4
    ]
    assert stopped["code"] == 128 + signal.SIGTERM, stopped["rest"]
    assert "stopped by SIGTERM" in stopped["rest"]


def test_a_stopped_batch_run_again_grades_only_the_rest(stopped: dict[str, Any]) -> None:
    out, before = stopped["out"], stopped["rows"]
    assert {"ann", "ben"} <= set(before), before  # every row finished was written
    again = stopped["again"]
    assert again.returncode == 0, again.stderr
    said = steps(again.stderr)
    assert set(said) == set(STUDENTS), again.stderr
    kept = {name for name, outcome in said.items() if outcome.startswith("kept: ")}
    # a check cut short by the signal is a row "not graded: ...", graded again
    cut = {name for name, row in before.items() if row["problem"].startswith("not graded: ")}
    assert {"ann", "ben"} <= kept == set(before) - cut, (before, said)
    after = rows(out)
    assert list(after) == STUDENTS
    for name in kept:  # kept as it was: not graded again
        assert after[name]["graded_at"] == before[name]["graded_at"]
        assert after[name]["key"] == before[name]["key"]
    for name in set(STUDENTS) - kept:
        assert not said[name].startswith("kept"), said[name]


def test_no_resume_grades_again(stopped: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(stopped["out"], out)
    ann = stopped["root"] / "ann"
    done = subprocess.run(
        batch("--no-resume", "--out", out, ann),
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert steps(done.stderr)["ann"].startswith("fail, 50 points (")


# ----------------------------------------------------------------------
# A row is data to check


def keep(out: Path, name: str, level: IsolationLevel | None = None) -> Any:
    cells = read_gradebook(out / GRADEBOOK).get(text_cell(name))
    limits = Limits(120.0, 120.0, every_kill=True)  # grader batch's defaults
    level = level or require_isolation("none")
    return kept_row(CHAPTER, out.parent / name, name, out, cells, limits, level, row_of)


@pytest.fixture
def graded(stopped: dict[str, Any], tmp_path: Path) -> Path:
    """A copy of the class graded whole (stopped, then run again), the folders beside it."""
    for name in STUDENTS:
        shutil.copytree(stopped["root"] / name, tmp_path / name)
    shutil.copytree(stopped["out"], tmp_path / "out")
    return tmp_path / "out"


def edit_cell(out: Path, name: str, column: str, value: str) -> None:
    book = read_gradebook(out / GRADEBOOK)
    book[text_cell(name)] = with_cell(book[text_cell(name)], column, value)
    write_gradebook(out / GRADEBOOK, book.values())


def test_an_untouched_row_is_kept(graded: Path) -> None:
    assert keep(graded, "ann") is not None
    assert keep(graded, "dan") is not None  # refused: kept by its key alone


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("grade", "100"),
        ("verdict", "pass"),
        ("key", "0" * 32),
        ("key", ""),
        ("problem", "x"),
        ("report", "students/ben.json"),  # another student's report: never read for ann
    ],
)
def test_a_cell_that_disagrees_is_graded_again(graded: Path, column: str, value: str) -> None:
    edit_cell(graded, "ann", column, value)
    assert keep(graded, "ann") is None


def test_a_changed_file_or_report_is_graded_again(graded: Path) -> None:
    tests = graded.parent / "ben" / CHAPTER.student_tests
    tests.write_text(tests.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert keep(graded, "ben") is None  # the student's file changed: another key
    report = graded / "students" / "ann.json"
    report.write_text("{not json", encoding="utf-8")
    assert keep(graded, "ann") is None
    shutil.rmtree(graded / "submissions" / "cat")
    assert keep(graded, "cat") is None  # the copy of the files graded is gone


def test_a_row_of_a_weaker_isolation_is_graded_again(graded: Path) -> None:
    """A row whose key, report and cells agree but whose runs got isolation ``none`` is
    kept by a run at ``none``, never by a run at a stronger level."""
    report = graded / "students" / "ann.json"
    data = json.loads(report.read_text(encoding="utf-8"))
    data["provenance"]["isolation"] = data["isolation"] = "none"
    digest = key_from_dict(data["provenance"]).digest
    report.write_text(json.dumps(data), encoding="utf-8")
    edit_cell(graded, "ann", "key", digest)
    edit_cell(graded, "ann", "isolation", "none")  # the gradebook names each row's level
    assert keep(graded, "ann", "none") is not None  # the forgery is otherwise consistent
    if os.geteuid() == 0:
        assert keep(graded, "ann", "uid") is None


# ----------------------------------------------------------------------
# The release gate people can read


def test_regrade_prints_a_table_then_only_what_moved(
    stopped: dict[str, Any], tmp_path: Path
) -> None:
    """Plant a difference in one kept report (ann's said pass, 100): regrade's table shows
    every student before and now, the details below name ann alone, the JSON says the same
    and follows its schema, and without a terminal each student is a log line."""
    out = tmp_path / "out"
    shutil.copytree(stopped["out"], out)
    report = out / "students" / "ann.json"
    data = json.loads(report.read_text(encoding="utf-8"))
    data["verdict"], data["grade"]["points"] = "pass", 100.0
    report.write_text(json.dumps(data), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "grader", "regrade", str(out), "--json", str(tmp_path / "r.json")],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 1, done.stdout + done.stderr  # a row would change
    logged = [LOG.match(line) for line in done.stderr.splitlines()]
    assert sorted(m[3] for m in logged if m) == ["ann", "ben", "cat"], done.stderr
    table, _, below = done.stdout.partition("ann: changed")
    for name in ("ann", "ben", "cat", "dan"):  # dan: refused, no report to regrade
        assert re.search(rf"^│ {name} ", table, re.M), table
    assert re.search(
        r"^│ ann +│ pass -> fail +│ 100\.0 -> 50\.0 +│ changed: verdict, grade", table, re.M
    )
    assert re.search(r"^│ ben +│ fail +│ 50\.0 +│ the same", table, re.M), table
    assert below and "verdict: pass -> fail" in below
    assert "ben:" not in below and "cat:" not in below  # nothing of theirs moved
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    jsonschema.validate(written, json.loads(REGRADE_SCHEMA.read_text(encoding="utf-8")))
    assert written["moved"] == ["ann"]
    by_student = {entry["student"]: entry for entry in written["students"]}
    assert by_student["ann"]["verdict"] == {"before": "pass", "after": "fail"}
    assert by_student["ben"]["identical"] and not by_student["ben"]["moved"]
    assert [entry["student"] for entry in written["skipped"]] == ["dan"]


def grader(*arguments: str | Path) -> subprocess.CompletedProcess[str]:
    """``grader ARGUMENTS`` run as a log would see it: no terminal."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, arguments)],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_manifest_and_merge_log_a_line_per_student(stopped: dict[str, Any], tmp_path: Path) -> None:
    listed = grader("manifest", *stopped["folders"], "-o", tmp_path / "m.json")
    assert listed.returncode == 0, listed.stderr
    lines = [line for line in listed.stderr.splitlines() if line.startswith("manifest ")]
    assert [line.split(":")[0] for line in lines] == [
        f"manifest {n}/4 {name}" for n, name in enumerate(STUDENTS, start=1)
    ]
    assert lines[0].startswith("manifest 1/4 ann: hashed (") and "refused" in lines[3]
    merged = grader("merge", tmp_path / "class", stopped["out"])
    assert merged.returncode == 0, merged.stderr
    lines = [line for line in merged.stderr.splitlines() if line.startswith("merge ")]
    assert [line.partition(" (")[0] for line in lines] == [
        f"merge {n}/4 {name}: added" for n, name in enumerate(STUDENTS, start=1)
    ]
    assert "; all done in " in lines[-1]


# ----------------------------------------------------------------------
# Overrides that last


def roster(path: Path) -> Path:
    rows = "".join(f"{name},{n}\n" for n, name in enumerate(STUDENTS, start=101))
    path.write_text("submission,id\n" + rows, encoding="utf-8")
    return path


def test_an_override_is_shown_everywhere_and_kept_by_batch_and_merge(
    stopped: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(stopped["out"], out)
    canvas, listed = tmp_path / "canvas.csv", roster(tmp_path / "roster.csv")
    why = "the late penalty is waived: the server was down"
    done = grader(
        "override", out, "ann", "--grade", "95", "--why", why,
        "--roster", listed, "--canvas", canvas,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ann's grade is now 95 (the grader gave 50)" in " ".join(done.stdout.split())

    def shown(out: Path, canvas: Path | None = None) -> None:
        """ann's 95 in every place a grade is read, each saying it was set by hand."""
        (record,) = json.loads((out / "overrides.json").read_text("utf-8"))["overrides"]
        assert (record["student"], record["grade"], record["graded"]) == ("ann", 95, 50)
        assert record["by"] == pwd.getpwuid(os.getuid()).pw_name and record["why"] == why
        book = rows(out)
        assert book["ann"]["grade"] == "50"  # the grader's, beside the grade of record
        assert book["ann"]["override"].startswith(f"95, set by {record['by']} at ")
        assert book["ann"]["override"].endswith(why)
        assert all(not book[name]["override"] for name in STUDENTS if name != "ann")
        figures = json.loads((out / "class.json").read_text(encoding="utf-8"))
        assert [o["student"] for o in figures["overrides"]] == ["ann"]
        bins = {b["label"]: b["count"] for b in figures["grades"]["histogram"]}
        nineties, fifties = "90\N{EN DASH}99", "50\N{EN DASH}59"  # bins labelled as ranges
        assert bins[nineties] == 1 and bins[fifties] == 2  # ann counts 95; ben and cat 50
        page = (out / "class.html").read_text(encoding="utf-8")
        assert "grades set by hand" in page and html.escape(why, quote=False) in page
        assert f">{nineties}</text>" in page and ">100</text>" in page
        note = (out / "students" / "ann.override.txt").read_text(encoding="utf-8")
        assert "your grade is 95 (the grader gave 50)" in note and why in note
        if canvas is not None:
            with canvas.open(encoding="utf-8", newline="") as stream:
                scores = {line["ID"]: line[CHAPTER.id] for line in csv.DictReader(stream)}
            assert (scores["101"], scores["102"]) == ("95", "50")  # ann's and ben's ids

    shown(out, canvas)
    # graded again (its row replaced by a new grading): the override stays
    again = grader("batch", "--no-resume", "--out", out, stopped["root"] / "ann")
    assert again.returncode == 0, again.stderr
    assert "1 grade(s) set by hand" in " ".join(again.stdout.split())
    shown(out)
    # merged into a new class, and a shard without it merged in: the override stays
    merged = tmp_path / "merged"
    for shard in (out, stopped["out"]):
        done = grader("merge", merged, shard, "--roster", listed, "--canvas", canvas)
        assert done.returncode == 0, done.stderr
    shown(merged, canvas)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("zed", "--grade", "90", "--why", "x"), "'zed' is not in"),
        (("ann", "--grade", "150", "--why", "x"), "grade 150 is not on the scale"),
        (("ann", "--grade", "90", "--why", " "), "--why is empty"),
    ],
)
def test_a_wrong_override_is_one_line(
    stopped: dict[str, Any], tmp_path: Path, arguments: tuple[str, ...], message: str
) -> None:
    out = tmp_path / "out"
    shutil.copytree(stopped["out"], out)
    done = grader("override", out, *arguments)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and not (out / "overrides.json").exists()


def test_an_overrides_file_that_does_not_hold_up_is_refused(
    stopped: dict[str, Any], tmp_path: Path
) -> None:
    """overrides.json is read as data: a grade off the scale is refused, never used."""
    out = tmp_path / "out"
    shutil.copytree(stopped["out"], out)
    entry = {"student": "ann", "grade": 1000, "why": "x", "by": "y", "at": "z", "graded": 1}
    data = {"schema_version": 1, "overrides": [entry]}
    (out / "overrides.json").write_text(json.dumps(data), encoding="utf-8")
    before = (out / GRADEBOOK).read_bytes()
    for arguments in (("merge", out, stopped["out"]), ("batch", "--out", out, *stopped["folders"])):
        done = grader(*arguments)
        assert done.returncode == 2 and "is not a file of overrides" in done.stderr, done.stderr
        assert (out / GRADEBOOK).read_bytes() == before  # stopped before changing anything


def test_regrade_shows_an_override_it_keeps(stopped: dict[str, Any]) -> None:
    override = Override("ann", 95.0, "why", "root", "2026-12-02T07:00:00+00:00", 50.0)
    same = Replay("ann", (), (), "", "fail", "50.0", 1.0)
    regrade = Regrade(stopped["out"], (same,), (), 1.0)
    data = regrade_data(regrade, {"ann": override})
    jsonschema.validate(data, json.loads(REGRADE_SCHEMA.read_text(encoding="utf-8")))
    assert data["students"][0]["override"] == {
        "grade": 95.0, "by": "root", "at": "2026-12-02T07:00:00+00:00", "why": "why"
    }  # fmt: skip
    console = Console(file=io.StringIO(), width=200, color_system=None, record=True)
    render_regrade(console, regrade, overrides={"ann": override})
    assert "the grade of record stays 95, set by hand by root" in console.export_text()
