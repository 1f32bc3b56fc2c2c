"""``grader regrade --json``: the release gate as data, the same table the terminal shows.

One entry per student: the verdict and grade before (the report kept) and
now, whether anything that counts moved (verdict, grade, a kill), the
one-line reason, the parts of the key that changed, and every change found;
then the students not regraded, each with why. Its schema is
``schemas/regrade.schema.json``; the tests hold every output to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader.results.replay import Regrade

REGRADE_VERSION = 1
REGRADE_SCHEMA = Path(__file__).with_name("schemas") / "regrade.schema.json"


def regrade_data(regrade: Regrade) -> dict[str, Any]:
    """The regrade as plain data (see the module docstring)."""
    return {
        "schema_version": REGRADE_VERSION,
        "out": str(regrade.out),
        "seconds": regrade.seconds,
        "students": [
            {
                "student": replay.student,
                "verdict": {"before": replay.verdict, "after": replay.now("verdict")},
                "grade": {"before": replay.grade, "after": replay.now("grade")},
                "moved": replay.moved,
                "identical": replay.identical,
                "reason": replay.reason,
                "key_changes": list(replay.key_changes),
                "changes": [
                    {"what": c.what, "before": c.before, "after": c.after} for c in replay.changes
                ],
                "problem": replay.problem,
            }
            for replay in regrade.students
        ],
        "skipped": [{"student": student, "why": why} for student, why in regrade.skipped],
        "moved": [replay.student for replay in regrade.students if replay.moved],
    }


def regrade_json(regrade: Regrade) -> str:
    return json.dumps(regrade_data(regrade), indent=2, ensure_ascii=False) + "\n"
