"""The JSON form of a ``CheckReport``: one function, a schema version, a stable key order.

Everything but the last two keys, ``timings`` and ``graded_at``, is a function
of the submission and the kit alone, so the same submission gives the same
bytes on every run up to them. The JSON Schema lives beside
this module (``schemas/check-report.schema.json``) and the tests hold every
report to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader import __version__
from grader.catalog import Chapter
from grader.commands.check import CheckReport
from grader.grade import grade

SCHEMA_VERSION = 2
SCHEMA_PATH = Path(__file__).with_name("schemas") / "check-report.schema.json"


def report_to_dict(report: CheckReport, chapter: Chapter) -> dict[str, Any]:
    """The report as plain data, in the documented key order; ``chapter`` gives the grade."""
    course = report.course_tests
    student = report.student_tests
    mutation = report.mutation
    points = grade(chapter, report)
    return {
        "schema_version": SCHEMA_VERSION,
        "chapter": report.chapter,
        "kit_version": __version__,
        "verdict": report.verdict,
        "isolation": report.isolation,
        "grade": {
            "points": points.points,
            "scale": points.scale,
            "course_tests": points.course_points,
            "course_tests_max": points.course_max,
            "mutation": points.mutation_points,
            "mutation_max": points.mutation_max,
        },
        "files": {
            "implementation": report.files.get("implementation"),
            "tests": report.files.get("tests"),
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
        },
        "mutation": None
        if mutation is None
        else {
            "score": mutation.score,
            "threshold": mutation.threshold,
            "killed": mutation.killed,
            "total": mutation.total,
            "required": list(mutation.required),
            "missed_required": list(mutation.missed_required),
            "passed": mutation.passed,
            "mutants": {
                m.id: {"status": m.status, "killed_by": list(m.killed_by), "title": m.title}
                for m in mutation.mutants
            },
            "worth": {
                w.name: {"kills": list(w.kills), "covered_by": list(w.covered_by)}
                for w in mutation.worth(student.tests)
            },
        },
        "known_sources": [
            {"source": k.source, "score": k.score, "flagged": k.flagged}
            for k in report.known_sources
        ],
        "timings": dict(report.timings),
        "graded_at": report.graded_at,
    }


def report_to_json(report: CheckReport, chapter: Chapter) -> str:
    return json.dumps(report_to_dict(report, chapter), indent=2, ensure_ascii=False) + "\n"
