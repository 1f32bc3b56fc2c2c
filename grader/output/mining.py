"""``grader mine``'s outputs, drawn from its result alone: ``mining.json`` and ``mining.html``.

The JSON (schema ``schemas/mining.schema.json``, version 1) is for the
release gate: the ranked groups first, each a candidate mutant or not with
its line, then every real bug and the whole matrix. The page shows the same,
self-contained (inline CSS, no script, no network), every name, call and
result escaped: a result of a student's tree is the student's data.
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from grader.results.mining import BugGroup, MinedWitness, MiningResult

MINING_JSON = "mining.json"
MINING_PAGE = "mining.html"
MINING_VERSION = 1
MINING_SCHEMA = Path(__file__).with_name("schemas") / "mining.schema.json"


def mining_data(result: MiningResult) -> dict[str, Any]:
    """The result as plain data, in the schema's shape."""
    return {
        "schema_version": MINING_VERSION,
        "chapter": result.chapter,
        "named": result.named,
        "isolation": result.isolation,
        "runs": {"made": result.ran, "reused": result.reused},
        "groups": [_group(group) for group in result.groups],
        "test_files": [asdict(column) for column in result.test_files],
        "bugs": [
            {
                "student": bug.student,
                "failed": list(bug.failed),
                "caught_by": list(bug.caught_by),
                "share": bug.share,
                "signature": bug.signature,
                "witness": _witness(bug.witness),
                "why_no_witness": bug.why_no_witness,
            }
            for bug in result.bugs
        ],
        "matrix": [asdict(cell) for cell in result.cells],
        "left_out": [{"student": name, "why": why} for name, why in result.left_out],
    }


def _group(group: BugGroup) -> dict[str, Any]:
    return {
        "rank": group.rank,
        "candidate": group.candidate,
        "line": group.line,
        "signature": group.signature,
        "students": list(group.students),
        "failed": list(group.failed),
        "share": group.share,
        "strong_share": group.strong_share,
        "witness": _witness(group.witness),
    }


def _witness(witness: MinedWitness | None) -> dict[str, Any] | None:
    if witness is None:
        return None
    return {"granule": witness.granule, "calls": [dict(call) for call in witness.calls]}


def mining_json(result: MiningResult) -> str:
    return json.dumps(mining_data(result), indent=2, ensure_ascii=False) + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 64rem; color: #1b1b1b; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
td, th { padding: .2rem .5rem; text-align: left; }
tr:nth-child(even) { background: #f5f5f5; } .note { color: #555; } code { font-size: .9em; }
td.caught { background: #cfe8cf; } td.missed { background: #f6d4c8; } td.error { background: #ddd; }
tr.candidate td:first-child { border-left: 4px solid #d9822b; }
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _groups_html(result: MiningResult) -> str:
    rows = []
    for group in result.groups:
        program = ""
        if group.witness is not None:
            calls = "<br>".join(_e(call["code"]) for call in group.witness.calls)
            program = f"<code>RadixTree({group.witness.granule})<br>{calls}</code>"
        rows.append(
            f"<tr class='{'candidate' if group.candidate else 'covered'}'>"
            f"<td>{group.rank}</td><td>{'yes' if group.candidate else 'no'}</td>"
            f"<td>{_e(group.line)}</td><td>{program}</td>"
            f"<td>{_e(', '.join(group.students))}</td></tr>"
        )
    head = "<tr><th>rank</th><th>candidate</th><th>the bug</th><th>program</th><th>who</th></tr>"
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _matrix_html(result: MiningResult) -> str:
    status = {(cell.tests, cell.bug): cell for cell in result.cells}
    head = "".join(
        f"<th>{_e(f.student)}<br>{f.mutation_score:.2f}{' strong' if f.strong else ''}</th>"
        for f in result.test_files
    )
    rows = []
    for bug in result.bugs:
        cells = "".join(
            f"<td class='{status[(f.student, bug.student)].status}' "
            f"title='{_e(status[(f.student, bug.student)].by)}'>"
            f"{_e(status[(f.student, bug.student)].status)}</td>"
            for f in result.test_files
        )
        rows.append(f"<tr><td>{_e(bug.student)}</td><td>{bug.share:.2f}</td>{cells}</tr>")
    return (
        f"<table><thead><tr><th>real bug</th><th>caught by</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def mining_html(result: MiningResult) -> str:
    """The page: the ranked groups, then the matrix, then who was left out and why."""
    chapter = _e(result.chapter)
    strong = sum(f.strong for f in result.test_files)
    left = "".join(f"<li>{_e(name)}: {_e(why)}</li>" for name, why in result.left_out)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{chapter}: the class's own bugs</title><style>{_STYLE}</style></head><body>"
        f"<h1>{chapter}: the class's own bugs as mutants</h1>"
        f"<p>{len(result.bugs)} real bugs (trees that fail a course test) in "
        f"{len(result.groups)} groups, against {len(result.test_files)} valid test files "
        f"({strong} strong: they reach the threshold on the planted mutants). Runs at "
        f"isolation {_e(result.isolation)}: {result.ran} made, {result.reused} taken again. "
        "Nothing here changes a grade.</p>"
        "<h2>Real bugs by failure signature, ranked</h2>"
        "<p class='note'>First the bugs the strong test files catch least: a candidate "
        "(orange edge) is one the planted mutants do not stand for, a mutant for next term."
        "</p>" + _groups_html(result) + "<h2>Which test files catch which real bugs</h2>"
        "<p class='note'>A row per real bug, a column per valid test file (its mutation "
        "score); hover a cell for the first test that failed.</p>"
        + _matrix_html(result)
        + (f"<h2>Left out</h2><ul>{left}</ul>" if left else "")
        + "</body></html>\n"
    )
