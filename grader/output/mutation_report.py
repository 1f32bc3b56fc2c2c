"""A ``CheckReport`` in the mutation testing report format (schemaVersion 2).

The format Stryker, the PIT and Infection plugins and the
mutation-testing-elements viewer share; its JSON Schema is vendored as
``grader/output/schemas/mutation-testing-report-schema.json`` and the tests hold
every report to it. Here the one mutated file is the reference
implementation, each planted mutant sits where its patch changes the
reference, and ``killedBy`` names the student's tests that failed on it.

A mutant's ``location`` covers the whole lines its patch replaces, and its
``replacement`` is the lines the patch puts there, so that replacing the
location with the replacement turns the reference into the mutant exactly.
When mutant titles are hidden from students, ``replacement`` is left out,
and ``description`` holds only what the witness tier shows (the symptom, and
for a survivor its witness: ``grader.grading.witness``); below ``symptom`` it is left
out too: the report then says where each mutant is, not what it does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from grader import DISTRIBUTION, __version__
from grader.grading.witness import chapter_witnesses
from grader.grading.wording import NOT_MEASURED, survivor_details
from grader.inputs.catalog import Chapter
from grader.inputs.patching import mutant_sources
from grader.results.check import CheckReport
from grader.sandbox.protocol.status import MutantStatus

SCHEMA_VERSION = "2"
STATUS: dict[MutantStatus, Literal["Killed", "Survived", "Timeout", "RuntimeError"]] = {
    MutantStatus.KILLED: "Killed",
    MutantStatus.SURVIVED: "Survived",
    MutantStatus.TIMEOUT: "Timeout",
    MutantStatus.ERROR: "RuntimeError",
}
"""The grader's mutant statuses in the report format's words."""


@dataclass(frozen=True)
class Change:
    """Where a mutant differs from the reference: 1-based lines, end exclusive."""

    start_line: int
    end_line: int
    replacement: str

    def location(self) -> dict[str, dict[str, int]]:
        return {
            "start": {"line": self.start_line, "column": 1},
            "end": {"line": self.end_line, "column": 1},
        }


def shared_start(a: list[str], b: list[str]) -> int:
    """How many items ``a`` and ``b`` share at their start."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def change_between(reference: str, mutant: str) -> Change:
    """The smallest run of whole lines that turns ``reference`` into ``mutant``.

    >>> change_between("a\\nb\\nc\\n", "a\\nB\\nc\\n")
    Change(start_line=2, end_line=3, replacement='B\\n')
    """
    old = reference.splitlines(keepends=True)
    new = mutant.splitlines(keepends=True)
    prefix = shared_start(old, new)
    suffix = shared_start(old[prefix:][::-1], new[prefix:][::-1])
    removed = len(old) - suffix - prefix
    return Change(prefix + 1, prefix + removed + 1, "".join(new[prefix : len(new) - suffix]))


def mutation_report(chapter: Chapter, report: CheckReport) -> dict[str, Any]:
    """The report as plain data, in the format's key names."""
    reference = chapter.reference.read_text(encoding="utf-8")
    sources = mutant_sources(chapter)
    results = {m.id: m for m in report.mutation.mutants} if report.mutation else {}
    witnesses = chapter_witnesses(chapter)
    mutants = []
    for planted in chapter.mutants:
        change = change_between(reference, sources[planted.id])
        entry: dict[str, Any] = {
            "id": planted.id,
            "mutatorName": planted.function,
            "location": change.location(),
        }
        result = results.get(planted.id)
        survived = result is not None and result.status == MutantStatus.SURVIVED
        details = survivor_details(chapter, planted.id, witnesses.get(planted.id), survived)
        description = [planted.title] if chapter.show_mutant_titles else []
        if description or details:
            entry["description"] = "\n".join(description + details)
        if chapter.show_mutant_titles:
            entry["replacement"] = change.replacement
        if result is None:
            entry["status"] = "Ignored"
            entry["statusReason"] = NOT_MEASURED
        else:
            entry["status"] = STATUS[result.status]
            entry["killedBy"] = list(result.killed_by)
        mutants.append(entry)
    percent = round(chapter.threshold * 100)
    return report_envelope(
        thresholds=(percent, percent),
        file_name=chapter.implementation,
        source=reference,
        mutants=mutants,
        test_file=chapter.student_tests,
        test_names=report.student_tests.tests,
        framework=(DISTRIBUTION, __version__),
        config={
            "chapter": chapter.id,
            "threshold": chapter.threshold,
            "required": list(chapter.required),
            "verdict": report.verdict,
        },
    )


def report_envelope(
    *,
    thresholds: tuple[int, int],
    file_name: str,
    source: str,
    mutants: list[dict[str, Any]],
    test_file: str,
    test_names: Sequence[str],
    framework: tuple[str, str],
    config: dict[str, Any],
) -> dict[str, Any]:
    """A whole report of this format around one mutated file, for ``check`` and ``audit``.

    ``thresholds`` is (high, low) in percent; ``mutants`` the entries of the
    file's mutants; ``framework`` the tool's name and version.
    """
    return {
        "schemaVersion": SCHEMA_VERSION,
        "thresholds": {"high": thresholds[0], "low": thresholds[1]},
        "files": {file_name: {"language": "python", "source": source, "mutants": mutants}},
        "testFiles": {test_file: {"tests": [{"id": name, "name": name} for name in test_names]}},
        "framework": {"name": framework[0], "version": framework[1]},
        "config": config,
    }


def mutation_report_json(data: dict[str, Any]) -> str:
    """A mutation report's data (``mutation_report``, or the audit's) as the file's text."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
