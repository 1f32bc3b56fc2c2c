"""An ``AuditReport`` as JSON and in the mutation testing report format.

Each format is built by one function here (the terminal's is
``grader.output.terminal.render_audit``). The mutation testing report
(schemaVersion 2, the format Stryker and the mutation-testing-elements viewer
share) holds the generated mutants of the reference, so the viewer that shows
``grader check --mutation-report``'s planted mutants shows these too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from grader.output.mutation_report import mutation_report_json, report_envelope, shared_start
from grader.results.audit import AuditReport, GeneratedMutant
from grader.sandbox.protocol.status import AuditStatus


def audit_to_dict(report: AuditReport) -> dict[str, Any]:
    """The report as plain data, in a stable key order (``timings`` is the only varying part)."""

    def entry(mutant: GeneratedMutant) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": mutant.id,
            "function": mutant.function,
            "line": mutant.line,
            "status": mutant.status,
            "original": mutant.original,
            "mutated": mutant.mutated,
            "diff": mutant.diff,
        }
        if mutant.equivalent is not None:
            data["reason"] = mutant.equivalent
        return data

    planted = report.planted
    return {
        "schema_version": SCHEMA_VERSION,
        "chapter": report.chapter,
        "suite": report.suite,
        "tests": report.tests,
        "reference": report.reference,
        "tool": report.tool,
        "kill_rate": report.kill_rate,
        "counts": {
            "generated": len(report.mutants) + report.not_run,
            "not_run": report.not_run,
            "run": len(report.mutants),
            "counted": len(report.counted),
            "detected": report.detected,
            **{status.replace(" ", "_"): report.count(status) for status in STATUS_ORDER},
            "equivalent": len(report.mutants) - len(report.counted),
        },
        "excluded_functions": [{"name": f.name, "reason": f.reason} for f in report.excluded],
        "survivors": [entry(m) for m in report.survivors],
        "equivalent": [entry(m) for m in report.mutants if m.equivalent is not None],
        "stale_equivalents": [
            {"id": s.id, "function": s.function, "problem": s.problem} for s in report.stale
        ],
        "planted": None
        if planted is None
        else {"score": planted.score, "killed": planted.killed, "total": planted.total},
        "timings": dict(report.timings),
    }


SCHEMA_VERSION = 1
"""The version of the audit's JSON report."""

STATUS_ORDER: tuple[AuditStatus, ...] = tuple(AuditStatus)


def audit_to_json(report: AuditReport) -> str:
    return json.dumps(audit_to_dict(report), indent=2, ensure_ascii=False) + "\n"


REPORT_STATUS: dict[AuditStatus, str] = {
    AuditStatus.KILLED: "Killed",
    AuditStatus.TIMEOUT: "Timeout",
    AuditStatus.CRASHED: "RuntimeError",
    AuditStatus.SURVIVED: "Survived",
    AuditStatus.NO_TESTS: "NoCoverage",
    AuditStatus.ERROR: "Survived",
}
"""The audit's statuses in the mutation testing report's words."""


def audit_mutation_report(report: AuditReport) -> dict[str, Any]:
    """The generated mutants in the mutation testing report format (schemaVersion 2).

    The file is the reference as the mutants were made from it; equivalent
    mutants are ``Ignored`` with their reason; the mutants of a function set
    aside whole were not run and are not listed.
    """
    lines = report.source.splitlines()
    mutants = []
    for mutant in report.mutants:
        old, new, location = _span(mutant, lines)
        entry: dict[str, Any] = {
            "id": mutant.id,
            "mutatorName": _mutator_name(old, new),
            "location": location,
            "replacement": new,
            "description": f"{mutant.function}: {old or '(nothing)'} -> {new or '(nothing)'}",
            "status": "Ignored" if mutant.equivalent else REPORT_STATUS[mutant.status],
            "duration": round(mutant.seconds * 1000),
        }
        if mutant.equivalent:
            entry["statusReason"] = f"equivalent: {mutant.equivalent}"
        elif mutant.status == AuditStatus.ERROR:
            entry["statusReason"] = f"mutmut could not classify the run (exit {mutant.exit_code})"
        mutants.append(entry)
    tool, _, version = report.tool.partition(" ")
    return report_envelope(
        thresholds=(100, 80),
        file_name=report.reference.rpartition("/")[2],
        source=report.source,
        mutants=mutants,
        test_file=report.tests,
        test_names=(),
        framework=(tool, version),
        config={"chapter": report.chapter, "suite": report.suite, "kind": "generated"},
    )


def audit_mutation_report_json(report: AuditReport) -> str:
    return mutation_report_json(audit_mutation_report(report))


TOKEN = re.compile(
    r"""[rbfuRBFU]*("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')"""  # a string literal
    r"|\w+|\s+|==|!=|<=|>=|->|:=|//=?|\*\*=?|<<|>>|[-+*/%&|^<>]=|[^\w\s]"
)


def _span(mutant: GeneratedMutant, lines: list[str]) -> tuple[str, str, dict[str, Any]]:
    """The changed tokens before and after, and their 1-based location in the module."""
    removed = mutant.original.split("\n") if mutant.original else []
    added = mutant.mutated.split("\n") if mutant.mutated else []
    line = min(max(mutant.line, 1), len(lines))
    text = lines[line - 1]
    indent = len(text) - len(text.lstrip())
    if len(removed) == 1 and len(added) == 1 and text.strip() == removed[0]:
        old = [t.group() for t in TOKEN.finditer(removed[0])]
        new = [t.group() for t in TOKEN.finditer(added[0])]
        prefix = shared_start(old, new)
        suffix = shared_start(old[prefix:][::-1], new[prefix:][::-1])
        before, after = (
            "".join(old[prefix : len(old) - suffix]),
            "".join(new[prefix : len(new) - suffix]),
        )
        start = indent + len("".join(old[:prefix])) + 1
        location = {
            "start": {"line": line, "column": start},
            "end": {"line": line, "column": start + max(len(before), 1)},
        }
        return before, after, location
    last = min(line + max(len(removed), 1) - 1, len(lines))
    location = {
        "start": {"line": line, "column": indent + 1},
        "end": {"line": last, "column": len(lines[last - 1]) + 1},
    }
    return "\n".join(removed), "\n".join(added), location


def _mutator_name(old: str, new: str) -> str:
    """A category for the viewer, read off the change (mutmut itself names none)."""
    pair = {old.strip(), new.strip()}
    if pair <= {"and", "or"}:
        return "LogicalOperator"
    if pair <= {"==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in"}:
        return "EqualityOperator"
    if pair <= {"+", "-", "*", "/", "//", "%", "**"}:
        return "ArithmeticOperator"
    if pair <= {"=", "+=", "-=", "*=", "/=", "//="}:
        return "AssignmentOperator"
    if pair <= {"not", ""}:
        return "UnaryOperator"
    if not new.strip():
        return "Removal"
    if new.strip() == "None":
        return "NoneReplacement"
    if new.startswith(f"({old})") and new.endswith((" and False", " or True")):
        return "ConditionalExpression"
    if pair <= {"True", "False"}:
        return "BooleanLiteral"
    if pair <= {"break", "continue", "return"}:
        return "ControlFlow"
    if all(re.fullmatch(r"-?\d+(\.\d+)?", p) for p in pair):
        return "NumberLiteral"
    if any(re.match(r"[rbfuRBFU]*['\"]", p) or "XX" in p for p in pair):
        return "StringLiteral"
    return "Mutation"
