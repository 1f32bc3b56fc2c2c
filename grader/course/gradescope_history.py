"""The witness tier of one Gradescope submission, from the history Gradescope gives it.

Gradescope writes ``/autograder/submission_metadata.json`` before each run
(https://gradescope-autograders.readthedocs.io/en/latest/submission_metadata/):
``created_at`` (this submission's time, with the course's UTC offset),
``assignment.due_date`` and ``assignment.late_due_date``, and
``previous_submissions``, each with its ``submission_time`` and the
``results`` this kit wrote for it. After the (late) due date a submission is
shown the catalog's ``after_due`` tier. Before it, the ``autograder`` tier,
or, when the catalog sets a ``[witnesses.budget]``, the budget's ``tier`` for
the first ``per_day`` submissions of the calendar day (in the offset of
``created_at``) that spent it, and ``then`` for later ones. A submission
spends the budget when it was shown the budget's tier and its tests were
valid, so that survivors were shown: its results say so in ``extra_data``,
which is how a later run counts it. A submission that could not be graded,
or whose tests were not valid, spends nothing; nor does a results file that
does not say it spent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from grader.grading.witness import WitnessSettings

SPENT = "witness_budget_spent"
"""The key of a results file's ``extra_data`` that says the submission spent the budget."""
TIER = "witness_tier"
"""The key of ``extra_data`` that records the tier a submission was shown."""


@dataclass(frozen=True)
class SubmissionTier:
    """The tier a submission is shown, and whether it is the budget's (so a valid run spends)."""

    tier: str
    budgeted: bool = False
    why: str = ""

    def extra_data(self, valid: bool) -> dict[str, Any]:
        """What the results file records for the next submissions to count."""
        return {TIER: self.tier, SPENT: self.budgeted and valid}


def read_metadata(path: Path) -> dict[str, Any] | None:
    """The metadata file as data, or ``None`` when it is missing or not a JSON object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def submission_tier(
    settings: WitnessSettings | None, metadata: dict[str, Any] | None
) -> SubmissionTier:
    """The tier of the submission ``metadata`` describes (``None``: no metadata was found)."""
    if settings is None:
        return SubmissionTier("title", why="the catalog has no witnesses")
    before_due = SubmissionTier(settings.tier("autograder"), why="before the due date")
    now = _time((metadata or {}).get("created_at"))
    if metadata is None or now is None:
        return SubmissionTier(before_due.tier, why="no submission metadata")
    assignment = metadata.get("assignment")
    assignment = assignment if isinstance(assignment, dict) else {}
    due = _time(assignment.get("late_due_date")) or _time(assignment.get("due_date"))
    if due is not None and now > due:
        return SubmissionTier(settings.tier("after_due"), why="after the due date")
    budget = settings.budget
    if budget is None:
        return before_due
    spent = spent_on_the_day(metadata.get("previous_submissions"), now)
    if spent < budget.per_day:
        why = f"submission {spent + 1} of {budget.per_day} today shown {budget.tier}"
        return SubmissionTier(budget.tier, budgeted=True, why=why)
    return SubmissionTier(budget.then, why=f"the {budget.per_day} of today are spent")


def spent_on_the_day(previous: object, now: datetime) -> int:
    """How many of ``previous`` submissions on the calendar day of ``now`` (in its offset)
    spent the budget, as their own results say."""
    if not isinstance(previous, list):
        return 0
    count = 0
    for entry in previous:
        if not isinstance(entry, dict):
            continue
        when = _time(entry.get("submission_time"))
        results = entry.get("results")
        extra = results.get("extra_data") if isinstance(results, dict) else None
        if when is None or not isinstance(extra, dict) or extra.get(SPENT) is not True:
            continue
        if when.astimezone(now.tzinfo).date() == now.date():
            count += 1
    return count
