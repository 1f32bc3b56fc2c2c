"""The JSON form of a ``CheckReport``: one function, a schema version, a stable key order.

Everything but the last two keys, ``timings`` (with every run's seconds per test) and
``graded_at``, is a function
of the submission and the kit alone, so the same submission gives the same
bytes on every run up to them. ``provenance`` says what decided the result
(``grader.inputs.provenance``) and the settings that replay it; ``report_from_dict``
reads a report back, so that a class can be drawn and merged from the reports
of earlier runs. The JSON Schema lives beside
this module (``schemas/check-report.schema.json``) and the tests hold every
report to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader import __version__
from grader.course.similarity import KnownSource
from grader.grading.grade import Grade, grade
from grader.grading.witness import Witness, chapter_witnesses, shows, witness_view
from grader.grading.wording import grade_breakdown
from grader.grading.worth import worth_of_tests
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import DependencyUse
from grader.inputs.provenance import key_from_dict
from grader.results.check import (
    CheckReport,
    CourseTestsResult,
    FlakyAcrossSeeds,
    MutantResult,
    MutationResult,
    RobustnessResult,
    SeededKill,
    StudentTestsResult,
)
from grader.sandbox.confine.report import what_runs_get
from grader.sandbox.protocol.status import MutantStatus

SCHEMA_VERSION = 5
UNSTABLE_KEYS = ("timings", "graded_at")
"""The keys that differ between two runs of the same submission: comparisons leave them out."""
SCHEMA_PATH = Path(__file__).with_name("schemas") / "check-report.schema.json"


def report_to_dict(report: CheckReport, chapter: Chapter) -> dict[str, Any]:
    """The report as plain data, in the documented key order; ``chapter`` gives the grade."""
    course = report.course_tests
    student = report.student_tests
    points = grade(chapter, report)
    return {
        "schema_version": SCHEMA_VERSION,
        "chapter": report.chapter,
        "kit_version": __version__,
        "verdict": report.verdict,
        "isolation": report.isolation,
        "practice": report.isolation == "none",
        "confinement": what_runs_get(report.isolation),
        "grade": _grade(chapter, report, points),
        "files": {
            "implementation": report.files.get("implementation"),
            "tests": report.files.get("tests"),
        },
        "dependencies": {
            use.id: {"module": use.module, "used": use.used, "file": use.file}
            for use in report.dependencies
        },
        "unmodified": list(report.unmodified),
        "course_tests": {
            "passed": course.passed,
            "total": course.total,
            "problem": course.problem,
            "results": dict(course.results),
            "failures": dict(course.failures),
        },
        "student_tests": {
            "valid": student.valid,
            "problems": list(student.problems),
            "missing": list(student.missing),
            "tests": list(student.tests),
            "notes": list(student.notes),
            "missing_reasons": list(student.missing_reasons),
            "on_yours": list(student.on_yours),
        },
        "mutation": _mutation(chapter, report),
        "known_sources": [
            {
                "file": k.file,
                "source": k.source,
                "score": k.score,
                "flagged": k.flagged,
                "reason": k.reason,
            }
            for k in report.known_sources
        ],
        "provenance": _provenance(chapter, report),
        "timings": {
            **report.timings,
            "per_test": test_seconds(report),
            "reused": list(report.reused),
        },
        "graded_at": report.graded_at,
    }


def _grade(chapter: Chapter, report: CheckReport, points: Grade) -> dict[str, Any]:
    """The grade's entry: the points of each part and how they were reached."""
    return {
        "points": points.points,
        "scale": points.scale,
        "course_tests": points.course_points,
        "course_tests_max": points.course_max,
        "mutation": points.mutation_points,
        "mutation_max": points.mutation_max,
        "explanation": grade_breakdown(chapter, report),
    }


def _mutation(chapter: Chapter, report: CheckReport) -> dict[str, Any] | None:
    """The mutant phase's entry; ``None`` when no mutant ran."""
    mutation = report.mutation
    if mutation is None:
        return None
    witnesses = chapter_witnesses(chapter)
    return {
        "score": mutation.score,
        "threshold": mutation.threshold,
        "killed": mutation.killed,
        "total": mutation.total,
        "required": list(mutation.required),
        "missed_required": list(mutation.missed_required),
        "passed": mutation.passed,
        "mutants": {m.id: _mutant(chapter, m, witnesses) for m in mutation.mutants},
        "worth": {
            w.name: {"kills": list(w.kills), "covered_by": list(w.covered_by)}
            for w in worth_of_tests(mutation, report.student_tests.tests)
        },
        "robustness": robustness_to_dict(mutation.robustness),
    }


def robustness_to_dict(result: RobustnessResult | None) -> dict[str, Any] | None:
    """The kills rerun with further seeds (``grader.grading.robustness``); ``None``: none
    were asked for."""
    if result is None:
        return None
    return {
        "seeds": list(result.seeds),
        "robust_share": result.robust_share,
        "kills": [
            {
                "mutant": kill.mutant,
                "test": kill.test,
                "held": kill.held,
                "of": kill.seeds,
                "robust": result.robust(kill),
            }
            for kill in result.kills
        ],
        "flaky": [
            {"test": f.test, "seed": f.seed, "reason": f.reason, "example": f.example}
            for f in result.flaky
        ],
    }


def robustness_from_dict(data: dict[str, Any] | None) -> RobustnessResult | None:
    """The ``RobustnessResult`` of a report's ``mutation.robustness`` (``robustness_to_dict``
    undone); ``None`` where the report has none."""
    if data is None:
        return None
    return RobustnessResult(
        tuple(int(seed) for seed in data["seeds"]),
        float(data["robust_share"]),
        tuple(
            SeededKill(str(k["mutant"]), str(k["test"]), int(k["held"]), int(k["of"]))
            for k in data["kills"]
        ),
        tuple(
            FlakyAcrossSeeds(str(f["test"]), int(f["seed"]), str(f["reason"]), str(f["example"]))
            for f in data["flaky"]
        ),
    )


def _provenance(chapter: Chapter, report: CheckReport) -> dict[str, Any] | None:
    """What decided the report, and the settings a replay runs with; ``None`` without a key."""
    if report.key is None:
        return None
    return {
        "key": report.key.digest,
        **report.key.as_dict(),
        # beside the settings that grade, the tier the report shows survivors at (a
        # rendering choice, outside the key): a replay shows them the same way
        "run_settings": {
            **report.settings,
            "witness_tier": chapter.witness_tier,
            "mutant_titles": chapter.show_mutant_titles,
        },
        "folder": report.submission,
    }


def _mutant(chapter: Chapter, mutant: MutantResult, witnesses: dict[str, Witness]) -> Any:
    """One mutant's entry: its title and symptom (empty where the tier hides them), and for
    a survivor at tier ``calls`` or more its witness (``grader.grading.witness.witness_view``)."""
    entry: dict[str, Any] = {
        "status": mutant.status,
        "killed_by": list(mutant.killed_by),
        "title": mutant.title,
        "symptom": chapter.mutant(mutant.id).symptom if shows(chapter, "symptom") else "",
    }
    witness = witnesses.get(mutant.id)
    view = (
        witness_view(chapter, witness)
        if witness and mutant.status == MutantStatus.SURVIVED
        else None
    )
    if view is not None:
        entry["witness"] = view
    return entry


def test_seconds(report: CheckReport) -> dict[str, Any]:
    """Every run's seconds per test: the course tests, each validation run, each mutant's."""
    mutation = report.mutation
    return {
        "course_tests": dict(report.course_tests.durations),
        "validation": {run: dict(tests) for run, tests in report.student_tests.durations.items()},
        "mutants": {} if mutation is None else {m.id: dict(m.durations) for m in mutation.mutants},
    }


def report_to_json(report: CheckReport, chapter: Chapter) -> str:
    return json.dumps(report_to_dict(report, chapter), indent=2, ensure_ascii=False) + "\n"


def stable_part(data: dict[str, Any]) -> dict[str, Any]:
    """A report's data without ``UNSTABLE_KEYS``: what two runs of one submission share."""
    return {key: value for key, value in data.items() if key not in UNSTABLE_KEYS}


def report_from_dict(data: dict[str, Any]) -> CheckReport:
    """The ``CheckReport`` a report's data describes (``report_to_dict`` undone, but for the
    reference run's seconds, which no report keeps)."""
    course = data["course_tests"]
    student = data["student_tests"]
    mutation = data["mutation"]
    provenance = data.get("provenance")
    return CheckReport(
        chapter=data["chapter"],
        submission=str(provenance.get("folder", "")) if provenance else "",
        course_tests=CourseTestsResult(
            dict(course["results"]), dict(course["failures"]), course["problem"]
        ),
        student_tests=StudentTestsResult(
            bool(student["valid"]),
            tuple(student["problems"]),
            tuple(student["missing"]),
            tuple(student["tests"]),
            0.0,
            tuple(student.get("notes", ())),
            missing_reasons=tuple(student.get("missing_reasons", ())),
            on_yours=tuple(student.get("on_yours", ())),
        ),
        mutation=None
        if mutation is None
        else MutationResult(
            float(mutation["threshold"]),
            tuple(mutation["required"]),
            tuple(
                MutantResult(mutant_id, m["title"], m["status"], tuple(m["killed_by"]))
                for mutant_id, m in mutation["mutants"].items()
            ),
            robustness=robustness_from_dict(mutation.get("robustness")),
        ),
        timings=dict(data.get("timings", {})),
        files=dict(data.get("files", {})),
        unmodified=tuple(data.get("unmodified", ())),
        graded_at=str(data.get("graded_at", "")),
        isolation=data.get("isolation", "none"),
        known_sources=tuple(
            KnownSource(
                str(k["source"]),
                None if k["score"] is None else float(k["score"]),
                bool(k["flagged"]),
                str(k.get("file", "")),
                str(k.get("reason", "")),
            )
            for k in data.get("known_sources", ())
        ),
        key=None if provenance is None else key_from_dict(provenance),
        settings=dict(provenance["run_settings"]) if provenance else {},
        dependencies=tuple(
            DependencyUse(str(id_), str(use["module"]), use["used"], use["file"])
            for id_, use in data.get("dependencies", {}).items()
        ),
    )
