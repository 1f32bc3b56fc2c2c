"""Survivor witnesses: what a student is shown of a mutant that survived, and at which tier.

Each planted mutant has a witness, made by ``tools/refresh_witnesses.py`` and
kept beside the catalog (its ``[witnesses] file``): the granule of a new tree
and a short program of public calls, the last of which (``differs_at``, from
0) gives the mutant a result other than the reference's. The tiers, each
showing what the one before shows and more:

- ``none``: that the mutant survived;
- ``title``: the planted bug;
- ``symptom``: what it does to a prefix cache;
- ``calls``: the program of calls, without results ("your tests never do this");
- ``full``: each call's result on the reference and on the mutant, and a test
  that would kill it.

The catalog gives a tier per context (``local``: ``grader check`` on a
student's machine; ``autograder``: Gradescope before the due date;
``after_due``: after it; ``staff``: ``grader batch``); ``grader check
--witness`` may lower it, never raise it. A witness is the kit's, the same
for every student: nothing here reads a submission.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.errors import GraderError

if TYPE_CHECKING:
    from grader.inputs.catalog import Chapter

TIERS = ("none", "title", "symptom", "calls", "full")
"""From least to most shown."""
CONTEXTS = ("local", "autograder", "after_due", "staff")
"""Where a check runs, each with its tier in the catalog."""


def rank(tier: str) -> int:
    """The place of ``tier`` in ``TIERS``; an unknown tier is a broken kit."""
    if tier not in TIERS:
        raise ValueError(f"unknown witness tier {tier!r}: use one of {', '.join(TIERS)}")
    return TIERS.index(tier)


def lower(tier: str, requested: str | None) -> str:
    """``requested`` where it shows less than ``tier``; ``tier`` otherwise (never raised)."""
    if requested is None or rank(requested) >= rank(tier):
        return tier
    return requested


@dataclass(frozen=True)
class Call:
    """One call of a witness: the method, its plain arguments, and what each tree gave."""

    method: str
    args: list[Any]
    reference: dict[str, Any] = field(default_factory=dict)
    mutant: dict[str, Any] = field(default_factory=dict)
    code: str = ""
    """The call as a line of a test (``tree.lock(1)``)."""


@dataclass(frozen=True)
class Witness:
    mutant: str
    granule: int
    calls: tuple[Call, ...]
    differs_at: int
    test: str = ""
    """A test that passes on the reference and fails on the mutant, as source text."""
    setup: str = ""
    """The line that makes the tree the calls run on (``tree = RadixTree(1)``)."""


@dataclass(frozen=True)
class Budget:
    """Gradescope's daily budget: the first ``per_day`` graded submissions of a day are shown
    ``tier``, later ones ``then``."""

    per_day: int
    tier: str
    then: str


@dataclass(frozen=True)
class WitnessSettings:
    """The catalog's ``[witnesses]`` table."""

    path: Path
    tiers: dict[str, str]
    budget: Budget | None = None

    def tier(self, context: str) -> str:
        return self.tiers[context]


def settings_from(table: dict[str, Any], mutants_dir: Path) -> WitnessSettings:
    """The ``[witnesses]`` table checked: a tier of ``TIERS`` for every context."""
    tiers = {context: str(table.get(context, "title")) for context in CONTEXTS}
    budget_table = table.get("budget")
    budget = None
    if budget_table is not None:
        budget = Budget(
            int(budget_table["per_day"]), str(budget_table["tier"]), str(budget_table["then"])
        )
    for tier in [*tiers.values(), *((budget.tier, budget.then) if budget else ())]:
        rank(tier)
    return WitnessSettings(mutants_dir / str(table.get("file", "witnesses.json")), tiers, budget)


def at_tier(chapter: Chapter, tier: str) -> Chapter:
    """``chapter`` showing survivors at ``tier``: titles too are hidden below ``title``."""
    shows_title = chapter.show_mutant_titles and rank(tier) >= rank("title")
    return dataclasses.replace(chapter, witness_tier=tier, show_mutant_titles=shows_title)


def for_context(chapter: Chapter, context: str, requested: str | None = None) -> Chapter:
    """``chapter`` at the catalog's tier for ``context``, lowered to ``requested`` if asked;
    a catalog without witnesses shows titles at most."""
    tier = chapter.witnesses.tier(context) if chapter.witnesses else "title"
    return at_tier(chapter, lower(tier, requested))


def shows(chapter: Chapter, tier: str) -> bool:
    """Whether the chapter's tier shows what ``tier`` adds."""
    return rank(chapter.witness_tier) >= rank(tier)


def read_witnesses(path: Path) -> dict[str, Witness]:
    """The stored witnesses by mutant id; a missing or malformed file is a broken kit."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return witnesses_from(data)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise GraderError(f"the kit is broken: cannot read {path}: {error!r}") from error


def witnesses_from(data: Any) -> dict[str, Witness]:
    """The witnesses of a witnesses file's parsed JSON; ``KeyError``, ``TypeError`` or
    ``ValueError`` where it is malformed."""
    return {
        mutant: Witness(
            mutant,
            int(entry["granule"]),
            tuple(Call(**call) for call in entry["calls"]),
            int(entry["differs_at"]),
            str(entry.get("test", "")),
            str(entry.get("setup", "")),
        )
        for mutant, entry in data["witnesses"].items()
    }


def witnesses_json(witnesses: dict[str, Witness]) -> str:
    """The witnesses file's text: stable key order, each call on one line."""
    head = "made by tools/refresh_witnesses.py from the reference, the wheats and the mutants"
    entries = []
    for w in witnesses.values():
        calls = ",\n".join(
            f"    {json.dumps(dataclasses.asdict(call), ensure_ascii=False)}" for call in w.calls
        )
        entries.append(
            f"  {json.dumps(w.mutant)}: {{\n"
            f'   "granule": {w.granule},\n'
            f'   "differs_at": {w.differs_at},\n'
            f'   "setup": {json.dumps(w.setup)},\n'
            f'   "calls": [\n{calls}\n   ],\n'
            f'   "test": {json.dumps(w.test, ensure_ascii=False)}\n'
            "  }"
        )
    body = ",\n".join(entries)
    return f'{{\n "about": {json.dumps(head)},\n "witnesses": {{\n{body}\n }}\n}}\n'


def students_tier(settings: WitnessSettings) -> str:
    """The most the catalog shows students before the due date: on their own machine
    (``local``), on Gradescope (``autograder``) and under a daily budget."""
    tiers = [settings.tier("local"), settings.tier("autograder")]
    if settings.budget is not None:
        tiers += [settings.budget.tier, settings.budget.then]
    return max(tiers, key=rank)


def hand_back(chapter: Chapter) -> Chapter:
    """``chapter`` at the tier of what a batch hands back to students: its ``hand_back_tier``
    (never more than the chapter's own), else the students' tier before the due date."""
    if chapter.hand_back_tier:
        return at_tier(chapter, lower(chapter.witness_tier, chapter.hand_back_tier))
    if chapter.witnesses is None:
        return at_tier(chapter, lower(chapter.witness_tier, "title"))
    return at_tier(chapter, lower(chapter.witness_tier, students_tier(chapter.witnesses)))


def cut_to_tier(witnesses: dict[str, Witness], tier: str) -> dict[str, Witness]:
    """The witnesses with nothing a report at ``tier`` does not show: none below ``calls``,
    no results and no killing test below ``full``. An edition for students holds these."""
    if rank(tier) < rank("calls"):
        return {}
    if rank(tier) >= rank("full"):
        return dict(witnesses)
    return {
        mutant: dataclasses.replace(
            w,
            test="",
            calls=tuple(dataclasses.replace(c, reference={}, mutant={}) for c in w.calls),
        )
        for mutant, w in witnesses.items()
    }


def beyond_tier(witnesses: dict[str, Witness], tier: str) -> list[str]:
    """The mutants whose witness holds more than ``tier`` shows (``cut_to_tier``)."""
    return [
        mutant
        for mutant, witness in witnesses.items()
        if cut_to_tier({mutant: witness}, tier).get(mutant) != witness
    ]


def killing_tests(chapter: Chapter) -> str:
    """Every witness's killing test, as the text of one file; empty where the kit holds none
    (the student edition): copy detection compares students' tests with it."""
    if chapter.witnesses is None or not chapter.witnesses.path.is_file():
        return ""
    tests = [w.test for w in read_witnesses(chapter.witnesses.path).values() if w.test]
    return "\n\n".join(tests)


def chapter_witnesses(chapter: Chapter) -> dict[str, Witness]:
    """The chapter's witnesses, read only when its tier shows calls."""
    if chapter.witnesses is None or not shows(chapter, "calls"):
        return {}
    return read_witnesses(chapter.witnesses.path)


def witness_view(chapter: Chapter, witness: Witness) -> dict[str, Any] | None:
    """The witness as the reports show it at the chapter's tier: ``None`` below ``calls``,
    no results below ``full``."""
    if not shows(chapter, "calls"):
        return None
    full = shows(chapter, "full")
    calls = []
    for call in witness.calls:
        shown: dict[str, Any] = {"method": call.method, "args": call.args}
        if full:
            shown["reference"], shown["mutant"] = call.reference, call.mutant
        calls.append(shown)
    return {"granule": witness.granule, "calls": calls, "differs_at": witness.differs_at}
