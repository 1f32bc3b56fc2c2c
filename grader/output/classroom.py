"""A ``CheckReport`` as the result a GitHub Classroom test runner hands its reporter.

GitHub Classroom's ``autograding-grading-reporter`` action adds up the points
of the runners named in its ``runners`` input: each runner's result is read
from the environment variable ``<RUNNER>_RESULTS``, a base64 encoding of this
JSON (``version``, ``status``, ``max_score`` and ``tests``, each test with a
``score``), and the total is what the classroom shows. Two tests carry the
grade's two parts (``grader.grading.grade``), so their scores add up to the grade.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from grader.grading.grade import grade
from grader.grading.wording import student_tests_outcome, verdict_sentence
from grader.inputs.catalog import Chapter
from grader.results.check import CheckReport
from grader.sandbox.protocol.status import Verdict


def classroom_result(chapter: Chapter, report: CheckReport) -> dict[str, Any]:
    """The runner result: ``pass`` exactly when the verdict is pass, the grade as the score."""
    points = grade(chapter, report)
    course = report.course_tests
    status = "pass" if report.verdict == Verdict.PASS else "fail"
    return {
        "version": 1,
        "status": status,
        "max_score": points.scale,
        "tests": [
            {
                "name": f"course tests on {chapter.implementation}",
                "status": "pass" if course.passed == course.total else "fail",
                "message": f"{course.passed}/{course.total} passed",
                "score": points.course_points,
            },
            {
                "name": f"your tests against the planted mutants ({chapter.student_tests})",
                "status": "pass" if report.mutation and report.mutation.passed else "fail",
                "message": student_tests_outcome(chapter, report),
                "score": points.mutation_points,
            },
        ],
        "message": verdict_sentence(chapter, report),
    }


def classroom_encoded(chapter: Chapter, report: CheckReport) -> str:
    """The result as the reporter reads it: base64 of its JSON, one line."""
    text = json.dumps(classroom_result(chapter, report), ensure_ascii=False)
    return base64.b64encode(text.encode()).decode() + "\n"
