"""A class graded in one batch and again as three shards merged: the same class, row for row.

Twelve students, from a few distinct submissions (two students often hand in
the same files, so sandboxed runs repeat and ``ReusedRuns`` replays them): the
manifest lists them, one batch grades the whole class, three batches grade
shards 0/3, 1/3 and 2/3, and ``grader merge`` joins the shards. The
gradebooks, every student's reports, the kept files and the class pages must
be the same, timings aside. Then the merge's rules (idempotent, a disagreeing
copy flagged, a newer key winning), ``grader replay`` (a row reproduced, a
planted difference found) and ``grader regrade`` (a planted kit change named
for exactly the students it affects), all from the folders graded here.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import ReusedRuns, make_submission

import grader.cli
from grader.commands.batch import student_names
from grader.commands.manifest import parse_shard, shard
from grader.commands.merge import merge_outputs
from grader.commands.replay import regrade_class
from grader.course.gradebook import COLUMNS, UNSTABLE_COLUMNS
from grader.errors import EXIT_FAIL, EXIT_PASS, GraderError
from grader.inputs.catalog import load_chapter
from grader.inputs.provenance import key_from_dict
from grader.output.check_json import stable_part
from grader.results.batch import Entry, Manifest

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
CLASS = {
    "amy": "strong",
    "bea": "strong",
    "cal": "weak",
    "dan": "weak",
    "eli": "misses_s11",
    "fox": "misses_s11",
    "gil": "buggy_radix",
    "hal": "buggy_radix",
    "ida": "syntax_error_in_tests",
    "joe": "missing_test_file",
}
EMPTY, TWO_COPIES = "kim", "lou"
STUDENTS = sorted([*CLASS, EMPTY, TWO_COPIES])


def lay_out(root: Path) -> list[Path]:
    (root / TWO_COPIES).mkdir(parents=True)
    for student, example in CLASS.items():
        make_submission(root, example).rename(root / student)
    (root / EMPTY).mkdir()
    for where in ("a", "b"):  # two radix.py: refused, never guessed
        make_submission(root / TWO_COPIES, "strong").rename(root / TWO_COPIES / where)
    return [root / student for student in STUDENTS]


def run(*arguments: str) -> tuple[int, str]:
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        code = grader.cli.main(list(arguments))
    return code, shown.getvalue()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (backups aside: a stamp names them), by relative path."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "backups" not in path.relative_to(folder).parts
    }


def gradebook(folder: Path) -> list[dict[str, str]]:
    with (folder / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def comparable(folder: Path) -> dict[str, Any]:
    """What two gradings of one class must share: every file, with the gradebook's and the
    reports' timings and times left out."""
    files: dict[str, Any] = {}
    for relative, data in snapshot(folder).items():
        if relative == "gradebook.csv":
            files[relative] = [
                {k: v for k, v in row.items() if k not in UNSTABLE_COLUMNS}
                for row in gradebook(folder)
            ]
        elif relative.startswith("students/") and relative.endswith(".json"):
            files[relative] = stable_part(json.loads(data))
        else:
            files[relative] = data
    return files


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, reused_runs: ReusedRuns) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("shards")
    lay_out(root / "class")
    manifest = root / "class" / "manifest.json"
    outs: dict[str, Any] = {"root": root, "manifest": manifest}
    with pytest.MonkeyPatch.context() as monkeypatch:
        reused_runs.install(monkeypatch)
        monkeypatch.setenv("COLUMNS", "80")
        folders = [str(root / "class" / s) for s in STUDENTS]
        assert run("manifest", *folders, "-o", str(manifest))[0] == EXIT_PASS
        whole = root / "whole"
        whole_code, shown = run("batch", "--manifest", str(manifest), "--out", str(whole))
        outs.update(whole_code=whole_code, shown=shown)
        for k in range(3):
            arguments = ["--manifest", str(manifest), "--shard", f"{k}/3"]
            assert run("batch", *arguments, "--out", str(root / f"shard-{k}"))[0] == EXIT_PASS
        merged = root / "merged"
        shards = [str(root / f"shard-{k}") for k in range(3)]
        outs["merge_code"], outs["merge_shown"] = run("merge", str(merged), *shards)
    outs.update(whole=whole, merged=merged, shards=[Path(s) for s in shards])
    return outs


def test_the_shards_split_the_class_without_overlap(graded: dict[str, Any]) -> None:
    students = [[row["student"] for row in gradebook(path)] for path in graded["shards"]]
    assert sorted(s for shard_students in students for s in shard_students) == STUDENTS
    assert all(students) and max(map(len, students)) - min(map(len, students)) <= 2


def test_three_shards_merged_are_the_class_graded_at_once(graded: dict[str, Any]) -> None:
    assert (graded["whole_code"], graded["merge_code"]) == (EXIT_PASS, EXIT_PASS)
    whole, merged = comparable(graded["whole"]), comparable(graded["merged"])
    assert [row["student"] for row in whole["gradebook.csv"]] == STUDENTS
    assert whole.keys() == merged.keys()
    for relative in whole:
        assert merged[relative] == whole[relative], relative
    reports = {r for r in whole if r.startswith("students/")}
    suffixes = {r.split(".", 1)[1] for r in reports}
    assert suffixes == {"json", "txt", "html", "staff-only.txt"}
    assert len(reports) == 4 * (len(CLASS) + 1)  # the refused student has no report
    assert any(row["flags"] for row in whole["gradebook.csv"])  # copies found across shards


def test_each_row_is_keyed_by_its_report(graded: dict[str, Any]) -> None:
    for row in gradebook(graded["merged"]):
        assert len(row["key"]) == 32 and row["graded_at"], row
        if row["report"]:
            report = json.loads((graded["merged"] / row["report"]).read_text("utf-8"))
            assert report["provenance"]["key"] == row["key"]
            assert report["provenance"]["isolation"] == report["isolation"]
    text = (graded["merged"] / "students" / "cal.txt").read_text(encoding="utf-8")
    assert "FAIL, grade" in text and "\x1b[" not in text


def test_merging_a_shard_again_changes_nothing(graded: dict[str, Any], tmp_path: Path) -> None:
    merged = tmp_path / "merged"
    shutil.copytree(graded["merged"], merged)
    before = snapshot(merged)
    code, shown = run("merge", str(merged), str(graded["shards"][1]))
    assert code == EXIT_PASS and "0 added, 0 replaced" in " ".join(shown.split())
    assert snapshot(merged) == before


def test_a_row_whose_copies_disagree_is_flagged_not_chosen(
    graded: dict[str, Any], tmp_path: Path
) -> None:
    merged, other = tmp_path / "merged", tmp_path / "other"
    shutil.copytree(graded["merged"], merged)
    shard = next(p for p in graded["shards"] if "cal" in {r["student"] for r in gradebook(p)})
    shutil.copytree(shard, other)
    report = other / "students" / "cal.json"
    data = json.loads(report.read_text(encoding="utf-8"))
    data["mutation"]["mutants"]["s11"]["status"] = "killed"  # the same key, another result
    report.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    kept = (merged / "students" / "cal.json").read_bytes()
    code, shown = run("merge", str(merged), str(other))
    said = " ".join(shown.split())
    assert code == EXIT_FAIL and "cal: two copies disagree (report mutation)" in said
    row = next(r for r in gradebook(merged) if r["student"] == "cal")
    assert row["conflict"].startswith("conflicts/cal-") and (merged / row["conflict"]).is_file()
    assert (merged / "students" / "cal.json").read_bytes() == kept
    before = snapshot(merged)
    assert run("merge", str(merged), str(other))[0] == EXIT_FAIL
    assert snapshot(merged) == before  # flagged once, however often it is merged


def test_a_newer_key_wins(graded: dict[str, Any], tmp_path: Path) -> None:
    merged, other = tmp_path / "merged", tmp_path / "other"
    shutil.copytree(graded["merged"], merged)
    shutil.copytree(graded["merged"], other)
    rows = gradebook(other)
    report = other / "students" / "dan.json"  # graded again, under other settings
    data = json.loads(report.read_text(encoding="utf-8"))
    data["provenance"]["settings"] = "f" * 64
    data["provenance"]["key"] = key_from_dict(data["provenance"]).digest
    report.write_text(json.dumps(data), encoding="utf-8")
    for row in rows:
        if row["student"] == "dan":
            key = data["provenance"]["key"]
            row.update(key=key, graded_at="2999-01-01T00:00:00+00:00", grade="99")
    with (other / "gradebook.csv").open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    code, shown = run("merge", str(merged), str(other))
    assert code == EXIT_PASS and "0 added, 1 replaced" in " ".join(shown.split())
    assert next(r for r in gradebook(merged) if r["student"] == "dan")["grade"] == "99"
    assert run("merge", str(merged), str(graded["merged"]))[0] == EXIT_PASS  # older: kept
    assert next(r for r in gradebook(merged) if r["student"] == "dan")["grade"] == "99"


def test_replay_reproduces_a_row(
    graded: dict[str, Any], reused_runs: ReusedRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    reused_runs.install(monkeypatch)
    code, shown = run("replay", str(graded["merged"] / "students" / "eli.json"))
    assert code == EXIT_PASS, shown
    for line in ("verdict: identical", "grade: identical", "kills: identical"):
        assert line in shown


def test_replay_finds_a_planted_difference(
    graded: dict[str, Any],
    reused_runs: ReusedRuns,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    shutil.copytree(graded["merged"], out)
    report = out / "students" / "eli.json"
    data = json.loads(report.read_text(encoding="utf-8"))
    mutants = data["mutation"]["mutants"]
    killed = next(m for m in mutants if mutants[m]["status"] == "killed")
    mutants[killed] = {"status": "survived", "killed_by": [], "title": mutants[killed]["title"]}
    report.write_text(json.dumps(data), encoding="utf-8")
    reused_runs.install(monkeypatch)
    code, shown = run("replay", str(report))
    assert code == EXIT_FAIL
    assert "verdict: identical" in shown and "kills: changed" in shown
    assert f"mutant {killed}: survived -> killed by" in " ".join(shown.split())


def test_replay_refuses_a_report_without_provenance(tmp_path: Path) -> None:
    report = tmp_path / "old.json"
    report.write_text(json.dumps({"schema_version": 2, "verdict": "pass"}), encoding="utf-8")
    code = grader.cli.main(["replay", str(report)])
    assert code == 2


def test_the_release_gate_names_exactly_the_students_a_kit_change_affects(
    graded: dict[str, Any], reused_runs: ReusedRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plant a kit change: mutant s11 becomes s02's bug. The students affected are those whose
    tests treated the two differently, read from their old reports."""
    s02 = CHAPTER.mutant("s02")
    planted = dataclasses.replace(
        CHAPTER,
        mutants=tuple(
            dataclasses.replace(m, patch=s02.patch) if m.id == "s11" else m for m in CHAPTER.mutants
        ),
    )
    affected = set()
    for student in [*CLASS, EMPTY]:
        report = json.loads((graded["merged"] / "students" / f"{student}.json").read_text())
        mutants = (report["mutation"] or {}).get("mutants")
        if mutants and mutants["s11"] != mutants["s02"] | {"title": mutants["s11"]["title"]}:
            affected.add(student)
    assert affected and affected != set(CLASS)  # the plant tells students apart
    reused_runs.install(monkeypatch)
    regrade = regrade_class(planted, graded["merged"])
    assert {replay.student for replay in regrade.changed} == affected
    for replay in regrade.changed:
        assert {change.what for change in replay.changes} & {"mutant s11"}, replay
        assert "chapter" in replay.key_changes
    assert {student for student, _ in regrade.skipped} == {TWO_COPIES}
    unchanged = regrade_class(CHAPTER, graded["merged"])
    assert unchanged.changed == () and len(unchanged.students) == len(CLASS) + 1


def test_a_shard_is_a_fixed_balanced_slice() -> None:
    entries = tuple(
        Entry(f"s{i:02}", Path(f"s{i:02}"), "0" * 64, seconds)
        for i, seconds in enumerate([100.0, 90.0, 10.0, 10.0, 10.0, 80.0, 1.0])
    )
    manifest = Manifest(CHAPTER.id, entries)
    slices = [shard(manifest, k, 3) for k in range(3)]
    assert [[e.student for e in s] for s in slices] == [
        ["s00", "s06"],
        ["s01", "s03"],
        ["s02", "s04", "s05"],
    ]
    assert slices == [shard(manifest, k, 3) for k in range(3)]  # a rerun grades the same
    assert parse_shard("2/3") == (2, 3)
    for bad in ("3/3", "-1/3", "1", "a/b", "0/0"):
        with pytest.raises(GraderError):
            parse_shard(bad)


def test_a_stale_manifest_is_refused(graded: dict[str, Any], tmp_path: Path) -> None:
    root = tmp_path / "class"
    shutil.copytree(graded["root"] / "class", root)
    (root / "cal" / CHAPTER.implementation).write_text("changed = True\n", encoding="utf-8")
    arguments = ["--manifest", str(root / "manifest.json"), "--shard", "0/1"]
    code = grader.cli.main(["batch", *arguments, "--out", str(tmp_path / "o")])
    assert code == 2 and not (tmp_path / "o").exists()


def test_the_batch_table_fits_80_columns(graded: dict[str, Any]) -> None:
    """Piped at 80 columns, no cell is cut: each problem is a whole line below the table."""
    shown = graded["shown"]
    assert "…" not in shown
    table = [line for line in shown.splitlines() if set(line) & set("┃│┏┗━─")]
    assert len(table) > len(STUDENTS) and all(len(line) <= 80 for line in table)
    assert "found 2 files named radix.py" in " ".join(shown.split())


def test_a_name_that_would_leave_the_class_is_refused(tmp_path: Path) -> None:
    """A folder named ``..`` (``class/..``) or a gradebook row naming ``../x`` would make the
    batch or the merge write, or remove, outside the class: refused with one line."""
    with pytest.raises(GraderError, match="cannot be a student's name"):
        student_names([tmp_path / "class" / ".."])
    shard_out = tmp_path / "shard"
    shard_out.mkdir()
    header = ",".join(COLUMNS)
    (shard_out / "gradebook.csv").write_text(f"{header}\n../evil,fail,0\n", encoding="utf-8")
    with pytest.raises(GraderError, match="cannot be a student's name"):
        merge_outputs(CHAPTER, tmp_path / "out", [shard_out])
    assert not (tmp_path / "evil.json").exists() and not (tmp_path / "out").exists()
