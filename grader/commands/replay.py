"""``replay`` and ``regrade``: grade a graded submission again and say what changed.

``replay REPORT`` answers a grade inquiry: it grades the files the report
graded (the copy batch keeps under ``submissions/NAME/``, or a folder given)
with the settings the report recorded, then says whether the verdict, the
grade and every kill are the same. A report is data a student may have made
or edited, compared, never obeyed (docs/security.md): the runs get the level
this machine gives (at least the staff's ``--isolation``), never less than
the level the report records, and nothing in the report lowers it. ``regrade OUT``
is the release gate: every student of a graded class graded again with the
kit installed now, and, per student, whose verdict, grade, course tests or
kills would change, and which part of the key (``grader.inputs.provenance``) moved.
Neither writes anything.
"""

from __future__ import annotations

import dataclasses
import json
import time
import typing
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from grader.commands.check import check
from grader.course.gradebook import (
    GRADEBOOK,
    SUBMISSIONS,
    cell,
    checked_name,
    read_gradebook,
    untext,
)
from grader.errors import GraderError
from grader.grading.jobs import Limits, limits_from_settings
from grader.inputs.catalog import Chapter
from grader.inputs.locate import RefusedSubmission, locate
from grader.inputs.provenance import key_from_dict
from grader.output.check_json import SCHEMA_VERSION, report_to_dict, stable_part
from grader.results.batch import Step
from grader.results.replay import Change, Regrade, Replay
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.levels import LEVELS, IsolationLevel, level_at_least


def compare_reports(before: dict[str, Any], after: dict[str, Any]) -> tuple[Change, ...]:
    """What differs between two reports' data, timings aside: the verdict, the grade, each
    course test, each mutant (its status and killers), then any other key."""
    changes: list[Change] = []

    def note(what: str, a: Any, b: Any) -> None:
        if a != b:
            changes.append(Change(what, _shown(a), _shown(b)))

    note("verdict", before.get("verdict"), after.get("verdict"))
    note("grade", before.get("grade", {}).get("points"), after.get("grade", {}).get("points"))
    old_course = before.get("course_tests", {}).get("results", {})
    new_course = after.get("course_tests", {}).get("results", {})
    for name in dict.fromkeys([*old_course, *new_course]):
        note(f"course test {name}", old_course.get(name), new_course.get(name))
    old_mutants = (before.get("mutation") or {}).get("mutants", {})
    new_mutants = (after.get("mutation") or {}).get("mutants", {})
    for mutant in dict.fromkeys([*old_mutants, *new_mutants]):
        note(f"mutant {mutant}", _kill(old_mutants.get(mutant)), _kill(new_mutants.get(mutant)))
    said = {"verdict", "grade", "course_tests", "mutation", "provenance", "schema_version"}
    said |= {"kit_version", "isolation"}  # parts of the key, said as key changes
    a, b = stable_part(before), stable_part(after)
    for key in dict.fromkeys([*a, *b]):
        if key not in said:
            note(key, a.get(key), b.get(key))
    if a.get("course_tests") != b.get("course_tests") and not any(
        c.what.startswith("course test ") for c in changes
    ):
        note("course_tests", a.get("course_tests"), b.get("course_tests"))
    if a.get("mutation") != b.get("mutation") and not any(
        c.what.startswith("mutant ") for c in changes
    ):
        note("mutation", a.get("mutation"), b.get("mutation"))
    return tuple(changes)


def _kill(mutant: dict[str, Any] | None) -> str | None:
    if mutant is None:
        return None
    killers = ", ".join(mutant.get("killed_by", ()))
    return f"{mutant.get('status')}" + (f" by {killers}" if killers else "")


def _shown(value: Any) -> str:
    if value is None or isinstance(value, str):
        return "none" if value is None else value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _key_changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    old, new = before.get("provenance"), after.get("provenance")
    if not old or not new:
        return ("key",) if old != new else ()
    return tuple(key_from_dict(old).differences(key_from_dict(new)))


def read_report(path: Path) -> dict[str, Any]:
    """A JSON report of this kit, with what replays it; one line on what is wrong otherwise."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise GraderError(f"cannot read the report {path}: {error}") from error
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise GraderError(
            f"{path} is not a report of schema version {SCHEMA_VERSION}: an older kit wrote "
            "it without what replays it"
        )
    if not data.get("provenance"):
        raise GraderError(f"{path} records no provenance: nothing says how to grade it again")
    return data


def regrade_one(
    chapter: Chapter,
    before: dict[str, Any],
    folder: Path,
    limits: Limits,
    pool: WorkerPool,
) -> tuple[tuple[Change, ...], tuple[str, ...]]:
    """Grade ``folder`` again under ``limits`` and compare with the report data ``before``,
    survivors shown as they were in it."""
    run_settings = before["provenance"]["run_settings"]
    if "witness_tier" in run_settings:
        chapter = dataclasses.replace(
            chapter,
            witness_tier=str(run_settings["witness_tier"]),
            show_mutant_titles=run_settings.get("mutant_titles") is True,
        )
    located = locate(chapter, folder)
    report = check(located, folder, limits, pool=pool, compare_copies=True)
    after = report_to_dict(report, chapter)
    graded = str(before["provenance"].get("folder", ""))
    if graded and graded != str(folder):  # a message naming the folder names the one graded
        text = json.dumps(after, ensure_ascii=False)
        text = text.replace(json.dumps(str(folder))[1:-1], json.dumps(graded)[1:-1])
        after = json.loads(text)
    return compare_reports(before, after), _key_changes(before, after)


def recorded_level(report: dict[str, Any], path: Path | str) -> IsolationLevel:
    """The isolation level ``report`` says its runs got: one of the levels, or a
    ``GraderError`` naming the report."""
    level = report.get("provenance", {}).get("isolation")
    if level not in LEVELS:
        raise GraderError(
            f"{path} records no isolation level the kit knows ({level!r}): it is not a report "
            "this kit wrote; grade the submission with grader check instead"
        )
    return typing.cast(IsolationLevel, level)


def replay_level(
    report: dict[str, Any], path: Path | str, minimum: IsolationLevel
) -> IsolationLevel:
    """The least level a replay of ``report`` may run at: the staff's ``minimum`` or the level
    the report records, whichever is stronger (a report raises it, never lowers it)."""
    recorded = recorded_level(report, path)
    return recorded if level_at_least(recorded, minimum) else minimum


def replay_report(
    chapter: Chapter,
    path: Path,
    submission: Path | None = None,
    isolation: IsolationLevel = "none",
) -> Replay:
    """Grade what the report at ``path`` graded, with the settings it records, at the level
    this machine gives, at least ``isolation`` and the report's own (module docstring).

    ``submission`` defaults to the copy a batch keeps: ``OUT/submissions/NAME/`` beside
    ``OUT/students/NAME.json``.
    """
    before = read_report(path)
    student = path.stem
    folder = submission or path.parent.parent / SUBMISSIONS / student
    if not folder.is_dir():
        raise GraderError(
            f"{folder} does not exist: pass the folder that was graded with --submission"
        )
    minimum = replay_level(before, path, isolation)
    limits = limits_from_settings(before["provenance"]["run_settings"], minimum)
    with WorkerPool(minimum=minimum) as pool:
        try:
            changes, keys = regrade_one(chapter, before, folder, limits, pool)
        except RefusedSubmission as refused:
            return Replay(student, (), (), refused.message)
    return Replay(student, changes, keys)


def regrade_class(
    chapter: Chapter,
    out: Path,
    jobs: int = 2,
    isolation: IsolationLevel = "none",
    progress: Callable[[Step], None] | None = None,
) -> Regrade:
    """Every student of the class in ``out`` graded again with the kit installed now, under the
    settings each report recorded; ``out`` is only read. ``progress`` hears of each student
    as they are done."""
    started = time.monotonic()
    rows = read_gradebook(out / GRADEBOOK)
    if not rows:
        raise GraderError(f"{out} holds no gradebook: pass the --out folder of a batch")
    todo: list[tuple[str, dict[str, Any], Path]] = []
    skipped: list[tuple[str, str]] = []
    for key, cells in rows.items():
        student = checked_name(untext(key), str(out / GRADEBOOK))
        relative = untext(cell(cells, "report"))
        if not relative:
            skipped.append((student, "no report: refused or not graded"))
            continue
        try:
            before = read_report(out / relative)
            recorded_level(before, out / relative)
        except GraderError as error:
            skipped.append((student, error.message))
            continue
        todo.append((student, before, out / SUBMISSIONS / student))
    with WorkerPool(minimum=isolation) as pool, ThreadPoolExecutor(max(1, jobs)) as threads:
        weaker = [item for item in todo if not level_at_least(pool.isolation, _level(item[1]))]
        for student, before, _ in weaker:  # never graded again below the level it was
            skipped.append((student, _too_weak(before, pool.isolation)))
        todo = [item for item in todo if item not in weaker]

        def again(student: str, before: dict[str, Any], folder: Path) -> Replay:
            run_settings = before["provenance"]["run_settings"]
            limits = limits_from_settings(run_settings, pool.isolation)
            was = _shown(before.get("verdict")), _shown(before.get("grade", {}).get("points"))
            begun = time.monotonic()
            try:
                changes, keys = regrade_one(chapter, before, folder, limits, pool)
            except RefusedSubmission as refused:
                return Replay(student, (), (), refused.message, *was)
            return Replay(student, changes, keys, "", *was, time.monotonic() - begun)

        futures = [threads.submit(again, *item) for item in todo]
        for done, future in enumerate(as_completed(futures), start=1):
            if progress is not None:
                replay = future.result()
                progress(Step(done, len(futures), replay.student, _step(replay), replay.seconds))
        students = tuple(future.result() for future in futures)
    return Regrade(out, students, tuple(skipped), round(time.monotonic() - started, 3))


def _level(report: dict[str, Any]) -> IsolationLevel:
    return recorded_level(report, "the report")


def _too_weak(report: dict[str, Any], level: IsolationLevel) -> str:
    return (
        f"graded at {_level(report)!r}, and this machine gives runs only {level!r}: regrade "
        "where it gives that level, never below it"
    )


def _step(replay: Replay) -> str:
    """A regraded student in a few words: verdict and grade, before and now."""
    if replay.problem:
        return f"not regraded: {replay.problem}"
    verdict, grade = replay.now("verdict"), replay.now("grade")
    return f"{replay.verdict} -> {verdict}, {replay.grade} -> {grade} points" + (
        "" if replay.identical else "; moved" if replay.moved else "; report changed"
    )
