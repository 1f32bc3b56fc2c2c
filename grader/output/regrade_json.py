"""``grader regrade --json``: the release gate as data, the same table the terminal shows.

One entry per student: the verdict and grade before (the report kept) and
now, whether anything that counts moved (verdict, grade, a kill), the
one-line reason, the parts of the key that changed, every change found, and
the grade set by hand if there is one; then the students not regraded, each
with why. Its schema is
``schemas/regrade.schema.json``; the tests hold every output to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grader.results.batch import Override
from grader.results.replay import Regrade

REGRADE_VERSION = 1
REGRADE_SCHEMA = Path(__file__).with_name("schemas") / "regrade.schema.json"


def regrade_data(
    regrade: Regrade, overrides: Mapping[str, Override] | None = None
) -> dict[str, Any]:
    """The regrade as plain data (see the module docstring); ``overrides``: the grades set by
    hand in the class, which a regrade never changes."""
    overrides = overrides or {}
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
                "override": _override(overrides.get(replay.student)),
            }
            for replay in regrade.students
        ],
        "skipped": [{"student": student, "why": why} for student, why in regrade.skipped],
        "moved": [replay.student for replay in regrade.students if replay.moved],
    }


def _override(override: Override | None) -> dict[str, Any] | None:
    if override is None:
        return None
    return {"grade": override.grade, "by": override.by, "at": override.at, "why": override.why}


def regrade_json(regrade: Regrade, overrides: Mapping[str, Override] | None = None) -> str:
    return json.dumps(regrade_data(regrade, overrides), indent=2, ensure_ascii=False) + "\n"
