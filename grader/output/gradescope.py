"""A ``CheckReport`` as Gradescope's ``results.json``.

The format is Gradescope's autograder specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/): a top-level
``score`` (the grade of ``grader.grading.grade``), an ``output`` for the whole
submission, and ``tests``: one entry per course test (with its points), one
for the validity of the student's tests, one carrying the mutation points, and
one per planted mutant (passed when killed; no points of its own, since the
mutation points depend on the count of kills, not on which). When the kit
itself fails, ``not_graded_json`` is the file instead: score 0, the reason, no
tests. The tests hold every file this writes to
``grader/output/schemas/gradescope-results.schema.json``.
"""

from __future__ import annotations

import json
from typing import Any

from grader.grading.grade import Grade, course_test_points, grade
from grader.grading.witness import chapter_witnesses
from grader.grading.wording import (
    NOT_MEASURED,
    away_from_the_kit,
    course_test_outcome,
    course_test_rule,
    grade_breakdown,
    mutant_name,
    mutant_outcome,
    practice_note,
    student_tests_outcome,
    unmodified_notes,
    verdict_sentence,
)
from grader.inputs.catalog import Chapter
from grader.results.check import CheckReport
from grader.sandbox.protocol.status import TestStatus

VISIBLE = "visible"
HIDDEN = "hidden"
"""Gradescope's visibility for entries only staff see."""
STAFF_ENTRY = "For staff: the files handed in against the kit's own"
"""The hidden entry that flags a copy of the kit's own tests; its status is no verdict."""


def gradescope_results(chapter: Chapter, report: CheckReport) -> dict[str, Any]:
    """The results as plain data, in Gradescope's key names."""
    points = grade(chapter, report)
    shown = chapter.gradescope
    tests = _course_test_entries(chapter, report)
    tests.append(
        {
            "name": f"Your tests ({chapter.student_tests}) are valid",
            "status": "passed" if report.student_tests.valid else "failed",
            "output": away_from_the_kit(report, student_tests_outcome(chapter, report)),
            "visibility": shown.student_tests,
        }
    )
    tests.append(
        {
            "name": "Mutation score of your tests",
            "score": points.mutation_points,
            "max_score": points.mutation_max,
            "status": "passed" if report.mutation and report.mutation.passed else "failed",
            "output": _mutation_output(report),
            "visibility": shown.mutation_score,
        }
    )
    tests += _mutant_entries(chapter, report)
    if report.known_sources:
        tests.append(_known_sources_entry(report))
    results = _results(points.points, _summary(chapter, report, points), tests, shown.overall)
    results["execution_time"] = round(report.timings.get("total", 0.0))
    return results


def _course_test_entries(chapter: Chapter, report: CheckReport) -> list[dict[str, Any]]:
    """One entry per course test, scored by its points."""
    worth = course_test_points(chapter)
    tests: list[dict[str, Any]] = []
    for name, status in report.course_tests.results.items():
        passed = status == TestStatus.PASSED
        entry: dict[str, Any] = {
            "name": f"Course test {name}",
            "score": worth.get(name, 0.0) if passed else 0.0,
            "max_score": worth.get(name, 0.0),
            "status": "passed" if passed else "failed",
            "visibility": chapter.gradescope.of("course_tests", name),
        }
        if not passed:
            entry["output"] = _course_test_output(chapter, report, name)
        tests.append(entry)
    return tests


def _mutant_entries(chapter: Chapter, report: CheckReport) -> list[dict[str, Any]]:
    """One entry per planted mutant: passed when detected; all failed when none ran."""
    witnesses = chapter_witnesses(chapter)
    if report.mutation is None:
        rows = [(m.id, mutant_name(chapter, m), "failed", NOT_MEASURED) for m in chapter.mutants]
    else:
        rows = [
            (
                m.id,
                mutant_name(chapter, m),
                "passed" if m.detected else "failed",
                mutant_outcome(chapter, m, witnesses.get(m.id)),
            )
            for m in report.mutation.mutants
        ]
    return [
        {
            "name": f"Planted mutant {name}",
            "status": mutant_status,
            "output": output,
            "visibility": chapter.gradescope.of("mutants", mutant_id),
        }
        for mutant_id, name, mutant_status, output in rows
    ]


def _known_sources_entry(report: CheckReport) -> dict[str, Any]:
    """For staff only (hidden from students): the test file against the kit's own test files,
    flagged when it comes as close as a copy; no score, so the grade stays what grading gave."""
    flagged = [k for k in report.known_sources if k.flagged]
    scores = ", ".join(
        f"{k.file} ~ {k.source} {k.score:.2f}" for k in report.known_sources if k.score is not None
    )
    if flagged:
        names = "; ".join(
            k.reason or f"{k.file} is as close to the kit's {k.source} as a copy" for k in flagged
        )
        output = (
            f"FLAGGED for staff: {names} (text scores: {scores}); look at it beside them "
            "before the grade stands"
        )
    else:
        output = f"not flagged: every file is its own (text scores: {scores})"
    return {
        "name": STAFF_ENTRY,
        "status": "failed" if flagged else "passed",
        "output": output,
        "visibility": HIDDEN,
        "tags": ["staff", "similarity"] + (["flagged"] if flagged else []),
        "extra_data": {
            f"{k.file} ~ {k.source}": {"score": k.score, "flagged": k.flagged}
            for k in report.known_sources
        },
    }


def _course_test_output(chapter: Chapter, report: CheckReport, name: str) -> str:
    """Why a course test did not pass; when none ran, that is said once, in the overall output."""
    course = report.course_tests
    if course.problem and not course.failures.get(name, "").strip():
        return (
            f"{course.results[name]}: not run, since {chapter.implementation} could not be used "
            "(the overall output above says why)"
        )
    rule = course_test_rule(chapter, name)
    outcome = course_test_outcome(report, name)
    return away_from_the_kit(report, f"{course.results[name]}: {rule}\n{outcome}")


def gradescope_json(
    chapter: Chapter, report: CheckReport, extra_data: dict[str, Any] | None = None
) -> str:
    """The results file; ``extra_data`` (Gradescope keeps it with the submission, and hands it
    to later runs) records what the submission was shown."""
    results = gradescope_results(chapter, report)
    if extra_data is not None:
        results["extra_data"] = extra_data
    return _as_json(results)


def not_graded_json(message: str) -> str:
    """The results file when the kit itself failed: score 0, and why, with no tests."""
    output = (
        "The autograder could not grade this submission, through no fault of "
        f"the submission's own; staff have been told. ({message})"
    )
    return _as_json(_results(0.0, output, []))


def refused_json(message: str) -> str:
    """The results file when the submission is not graded by its own fault: score 0, and what
    to change (``message``, as ``grader.inputs.locate`` says it)."""
    return _as_json(_results(0.0, f"Not graded: {message}, then submit again.", []))


def _results(
    score: float, output: str, tests: list[dict[str, Any]], visibility: str = VISIBLE
) -> dict[str, Any]:
    """The top level of every results file: students see it, not the autograder's log."""
    return {
        "score": score,
        "output": output,
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def _as_json(results: dict[str, Any]) -> str:
    return json.dumps(results, indent=2, ensure_ascii=False) + "\n"


def _mutation_output(report: CheckReport) -> str:
    mutation = report.mutation
    if mutation is None:
        return NOT_MEASURED
    needed = mutation.needed
    text = (
        f"Your tests killed {mutation.killed} of {mutation.total} planted mutants "
        f"(score {mutation.score:.2f}); the threshold {mutation.threshold:.2f} asks for "
        f"{needed}, and each kill up to {needed} earns an equal part of these points."
    )
    if mutation.missed_required:
        text += (
            f" Required mutant {', '.join(mutation.missed_required)} survived, "
            "so these points stop one kill short of full."
        )
    return text


def _summary(chapter: Chapter, report: CheckReport, points: Grade) -> str:
    course = report.course_tests
    practice = practice_note(report)
    lines = [f"{practice}."] if practice else []
    lines.append(f"{chapter.id}: {verdict_sentence(chapter, report)}")
    lines += [f"{note}." for note in unmodified_notes(chapter, report)]
    lines.append(
        f"Course tests {points.course_points:g} of {points.course_max:g} points "
        f"({course.passed}/{course.total} passed); your tests against the planted mutants "
        f"{points.mutation_points:g} of {points.mutation_max:g}."
    )
    lines.append(f"Where the points came from: {grade_breakdown(chapter, report)}.")
    if course.problem:
        lines.append(away_from_the_kit(report, course.problem))
    graded = [path for path in report.files.values() if path]
    graded += [use.file for use in report.dependencies if use.file]
    if graded:
        lines.append(f"Files graded: {', '.join(graded)}.")
    return "\n".join(lines)
