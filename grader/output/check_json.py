"""The JSON form of a ``CheckReport``: one function, a schema version, a stable key order.

Everything but ``timings`` is a function of the submission alone, so the same
submission gives the same bytes on every run. The JSON Schema lives beside
this module (``schemas/check-report.schema.json``) and the tests hold every
report to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader.commands.check import CheckReport

SCHEMA_VERSION = 2
SCHEMA_PATH = Path(__file__).with_name("schemas") / "check-report.schema.json"


def report_to_dict(report: CheckReport) -> dict[str, Any]:
    """The report as plain data, in the documented key order."""
    course = report.course_tests
    student = report.student_tests
    mutation = report.mutation
    return {
        "schema_version": SCHEMA_VERSION,
        "chapter": report.chapter,
        "verdict": report.verdict,
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
        "timings": dict(report.timings),
    }


def report_to_json(report: CheckReport) -> str:
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False) + "\n"
