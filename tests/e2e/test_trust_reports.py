"""Reports and shards are data to compare, never authorities (docs/security.md, issue 34).

Route 2 of issue 34: ``grader replay REPORT`` graded at the isolation the
report named, at most, so a report a student made on a laptop (``none``)
had a TA's replay run the student's code as root with every capability on a
machine that offers ``namespaces``. These tests hand ``replay``, ``regrade``
and ``merge`` reports and gradebook rows a student could write, and hold each
command to the level the machine gives and the class requires. The pool is a
stand-in that records what it was asked for, so no student code runs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

import grader.cli
from grader.commands import replay as replay_module
from grader.commands.merge import merge_outputs
from grader.commands.replay import regrade_class, replay_report
from grader.course.gradebook import COLUMNS, read_gradebook
from grader.errors import EXIT_FAIL, GraderError
from grader.grading.jobs import Limits
from grader.inputs.catalog import load_chapter
from grader.inputs.provenance import result_key
from grader.output.check_json import SCHEMA_VERSION
from grader.sandbox.host.pool import require_isolation

CHAPTER = load_chapter()


class Asked(GraderError):
    """The replay asked for its pool: what it asked is in ``kwargs`` (the CLI turns it into
    a message and exit 2, as any ``GraderError``)."""

    def __init__(self, kwargs: dict[str, Any]) -> None:
        super().__init__(f"asked for a pool: {kwargs}")
        self.kwargs = kwargs


class RecordingPool:
    def __init__(self, **kwargs: Any) -> None:
        raise Asked(kwargs)


def report_data(isolation: str) -> dict[str, Any]:
    """A report as a student could write it: the kit's own shape, ``isolation`` in its
    provenance."""
    key = result_key(CHAPTER, {"radix.py": "x"}, Limits().settings(), isolation)
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": "pass",
        "isolation": isolation,
        "provenance": {"key": key.digest, **key.as_dict(), "run_settings": Limits().settings()},
    }


def written_report(tmp_path: Path, isolation: str) -> Path:
    (tmp_path / "submissions" / "mia").mkdir(parents=True)
    path = tmp_path / "students" / "mia.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(report_data(isolation)), encoding="utf-8")
    return path


def asked_pool(path: Path, monkeypatch: pytest.MonkeyPatch, isolation: str = "none") -> Any:
    monkeypatch.setattr(replay_module, "WorkerPool", RecordingPool)
    with pytest.raises(Asked) as asked:
        replay_report(CHAPTER, path, isolation=isolation)  # type: ignore[arg-type]
    return asked.value.kwargs


def test_a_replay_of_a_report_made_at_none_runs_at_the_machines_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's ``none`` never caps the level: the pool takes the machine's best."""
    kwargs = asked_pool(written_report(tmp_path, "none"), monkeypatch)
    assert "at_most" not in kwargs and kwargs["minimum"] == "none"


def test_a_replay_never_runs_below_the_reports_level_or_the_staffs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert asked_pool(written_report(tmp_path, "uid"), monkeypatch)["minimum"] == "uid"
    path = tmp_path / "students" / "mia.json"
    path.write_text(json.dumps(report_data("none")), encoding="utf-8")
    assert asked_pool(path, monkeypatch, "namespaces")["minimum"] == "namespaces"


def test_a_replay_refuses_a_level_the_kit_does_not_know(tmp_path: Path) -> None:
    path = written_report(tmp_path, "root-with-every-capability")
    with pytest.raises(GraderError, match="records no isolation level the kit knows"):
        replay_report(CHAPTER, path)


def test_the_replay_command_takes_the_staffs_isolation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = written_report(tmp_path, "none")
    monkeypatch.setattr(replay_module, "WorkerPool", RecordingPool)
    assert grader.cli.main(["replay", str(path), "--isolation", "required"]) == 2
    assert "asked for a pool: {'minimum': 'uid'}" in capsys.readouterr().err


class UidPool:
    """A pool on a machine that gives runs ``uid`` at most."""

    isolation = "uid"

    def __init__(self, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> UidPool:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def write_class(out: Path, rows: list[dict[str, str]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "gradebook.csv").open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, COLUMNS, lineterminator="\n", restval="")
        writer.writeheader()
        writer.writerows(rows)


def row(student: str, report: str, key: str, grade: str = "100", verdict: str = "pass") -> Any:
    return {
        "student": student,
        "verdict": verdict,
        "grade": grade,
        "report": report,
        "key": key,
        "graded_at": "2026-01-01T00:00:00+00:00",
    }


def test_regrade_skips_a_student_it_cannot_grade_at_the_recorded_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    path = written_report(out, "namespaces")
    write_class(out, [row("mia", "students/mia.json", "k")])
    monkeypatch.setattr(replay_module, "WorkerPool", UidPool)
    regrade = regrade_class(CHAPTER, out)
    assert regrade.students == ()
    ((student, why),) = regrade.skipped
    assert student == "mia" and "graded at 'namespaces'" in why and "'uid'" in why
    assert path.is_file()


def shard_with(tmp_path: Path, isolation: str, key: str | None = None) -> Path:
    shard = tmp_path / "shard"
    written_report(shard, isolation)
    data = report_data(isolation)
    write_class(shard, [row("mia", "students/mia.json", key or data["provenance"]["key"])])
    return shard


def test_merge_refuses_a_row_graded_below_the_class_requirement(tmp_path: Path) -> None:
    shard = shard_with(tmp_path, "none")
    result = merge_outputs(CHAPTER, tmp_path / "out", [shard], Limits(isolation="uid"))
    assert result.added == () and read_gradebook(tmp_path / "out" / "gradebook.csv") == {}
    ((student, why),) = result.refused
    assert student == "mia" and "graded at isolation 'none'" in why and "'uid'" in why


def test_merge_refuses_a_row_whose_key_its_report_does_not_bear_out(tmp_path: Path) -> None:
    shard = shard_with(tmp_path, require_isolation("none"), key="f" * 32)
    result = merge_outputs(CHAPTER, tmp_path / "out", [shard], Limits())
    ((student, why),) = result.refused
    assert student == "mia" and "not the row's" in why and result.added == ()


def test_merge_refuses_a_grade_with_no_report_and_says_so(tmp_path: Path) -> None:
    shard = tmp_path / "shard"
    write_class(shard, [row("mia", "", "k"), row("ned", "", "k", grade="0", verdict="fail")])
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        code = grader.cli.main(["merge", str(tmp_path / "out"), str(shard)])
    said = " ".join(shown.getvalue().split())
    assert code == EXIT_FAIL
    assert "mia: not merged: its row claims a grade with no report behind it" in said
    assert list(read_gradebook(tmp_path / "out" / "gradebook.csv")) == ["ned"]


def test_merge_takes_a_row_that_meets_the_requirement(tmp_path: Path) -> None:
    shard = shard_with(tmp_path, "uid")
    result = merge_outputs(CHAPTER, tmp_path / "out", [shard], Limits(isolation="uid"))
    assert result.added == ("mia",) and result.refused == ()
