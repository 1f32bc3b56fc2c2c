"""The staff view of a class after ``grader batch``: ``class.json`` and ``class.html``.

One set of figures, two forms: the distribution of grades and of mutation
scores; for each planted mutant, the share of the class whose tests killed it
(one everybody kills teaches nothing; one nobody kills may be unfair), and the share of
those kills that hold across seeds where batch reran them (``[robustness]``); for
each course test, its pass rate; the most common reasons student tests were
not valid, each with the students it hit; and the flagged similarity pairs.
The page is self-contained (inline CSS and SVG drawn here, no script, no
network) and escapes every name and message it shows.
"""

from __future__ import annotations

import html
import json
import re
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from grader.course.similarity import Similarity, clusters
from grader.grading.wording import PRACTICE_CLASS
from grader.inputs.catalog import Chapter
from grader.output.class_charts import bar_chart, column_chart, figure, table
from grader.output.similarity import SIMILARITY_PAGE, group_anchor
from grader.results.batch import Override
from grader.results.check import CheckReport, MutationResult
from grader.sandbox.protocol.status import TestStatus, Verdict, is_kill

BINS = 10
"""Bars of each histogram below its top: tenths of the grade scale, tenths of the mutation
score; the top itself (a full grade, every mutant killed) has a bar of its own."""


def reason_of(problem: str, tests: Sequence[str]) -> str:
    """A problem's reason, shared between students: their own test names, line numbers, paths
    and the detail after the first colon left out (``test_x fails on the reference (a correct
    tree), so the test is wrong: assert 1 == 2`` becomes ``a test fails on the reference (a
    correct tree), so the test is wrong``)."""
    reason = re.sub(r"^\S+ line \d+: ", "", problem)
    reason = re.sub(r"(?<![\w/])/[^\s:]*", "the submission folder", reason)  # a student's own path
    for name in sorted(tests, key=len, reverse=True):
        reason = re.sub(rf"\b{re.escape(name)}\b", "a test", reason)
    return _before_detail(reason).strip()


def _before_detail(reason: str) -> str:
    """``reason`` up to its first ``": "`` outside brackets and quotes: the detail after it is
    the student's own (``import of 'pathlib' is not allowed (allowed: collections, ...)`` keeps
    its list whole)."""
    depth, quote = 0, ""
    for i, char in enumerate(reason):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"" and (i == 0 or not reason[i - 1].isalnum()):
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif reason.startswith(": ", i) and depth == 0:
            return reason[:i]
    return reason


def _histogram(values: Sequence[float], top: float) -> list[dict[str, Any]]:
    """``BINS`` bars from 0 up to (not including) ``top``, then one of ``top`` alone, each
    labelled as the range it holds (``90-99``, ``100``; ``0.9-0.99``, ``1``; with an en dash)."""
    width = top / BINS
    step = 1.0 if width >= 1 and float(width).is_integer() else 0.01
    counts = [0] * (BINS + 1)
    for value in values:
        at_top = value >= top - 1e-9
        counts[BINS if at_top else max(0, min(BINS - 1, int(value / width + 1e-9)))] += 1
    bins: list[dict[str, Any]] = [
        {
            "from": round(i * width, 4),
            "to": round((i + 1) * width, 4),
            "label": f"{i * width:g}\N{EN DASH}{round((i + 1) * width - step, 4):g}",
            "count": counts[i],
        }
        for i in range(BINS)
    ]
    bins.append({"from": top, "to": top, "label": f"{top:g}", "count": counts[BINS]})
    return bins


def _summary(values: Sequence[float], top: float) -> dict[str, Any]:
    return {
        "count": len(values),
        "mean": round(statistics.fmean(values), 4) if values else None,
        "median": round(statistics.median(values), 4) if values else None,
        "histogram": _histogram(values, top),
    }


def class_data(
    chapter: Chapter,
    grades: Mapping[str, float],
    reports: Mapping[str, CheckReport | None],
    similarity: Similarity | None,
    overrides: Mapping[str, Override] | None = None,
    practice: bool = False,
) -> dict[str, Any]:
    """The class's figures as plain data (``class.json``); ``grades`` and ``reports`` by
    student, in gradebook order (a student the grader could not grade has no report);
    ``grades`` hold the grades set by hand, listed in ``overrides``; ``practice``: a row
    was graded at level ``none`` (``gradebook.is_practice``)."""
    graded = {name: r for name, r in reports.items() if r is not None}
    measured = {name: r.mutation for name, r in graded.items() if r.mutation is not None}
    mutants = _mutant_rates(chapter, measured)
    course = _course_rates(chapter, graded)
    invalid = _invalid_reasons(graded)
    flags, groups = _copies(similarity)
    return {
        "chapter": chapter.id,
        "practice": practice,
        "students": len(reports),
        "graded": len(graded),
        "passed": sum(r.verdict == Verdict.PASS for r in graded.values()),
        "valid_tests": len(measured),
        "grades": {
            "scale": chapter.grade_scale,
            **_summary(list(grades.values()), chapter.grade_scale),
        },
        "mutation_scores": _summary([m.score for m in measured.values()], 1.0),
        "mutants": mutants,
        "course_tests": course,
        "invalid_reasons": invalid,
        "flags": flags,
        "groups": groups,
        "overrides": [
            {
                "student": o.student,
                "grade": o.grade,
                "graded": o.graded,
                "by": o.by,
                "at": o.at,
                "why": o.why,
            }
            for name, o in (overrides or {}).items()
            if name in grades
        ],
    }


def _mutant_rates(chapter: Chapter, measured: Mapping[str, MutationResult]) -> list[dict[str, Any]]:
    """Each mutant: how many of the students whose tests ran killed it, and who did not."""
    mutants = []
    for mutant in chapter.mutants:
        killers = [
            name for name, mutation in measured.items() if is_kill(mutation.status(mutant.id))
        ]
        mutants.append(
            {
                "id": mutant.id,
                "title": mutant.title,
                "required": mutant.id in chapter.required,
                "killed": len(killers),
                "of": len(measured),
                "fraction": round(len(killers) / len(measured), 4) if measured else None,
                "survived_in": [name for name in measured if name not in killers],
                **robust_share_of(mutant.id, [measured[name] for name in killers]),
            }
        )
    return mutants


def robust_share_of(mutant: str, kills: Sequence[MutationResult]) -> dict[str, Any]:
    """Of the kills of ``mutant`` whose reports reran kills with further seeds, how many are
    robust (``RobustnessResult.holds``)."""
    seeded = [m.robustness for m in kills if m.robustness is not None]
    robust = sum(result.holds(mutant) for result in seeded)
    share = round(robust / len(seeded), 4) if seeded else None
    return {"seeded_kills": len(seeded), "robust_kills": robust, "robust_fraction": share}


def _course_rates(chapter: Chapter, graded: Mapping[str, CheckReport]) -> list[dict[str, Any]]:
    """Each course test: how many graded students' code passes it."""
    course = []
    for test in chapter.course_tests:
        passed = [
            n
            for n, r in graded.items()
            if r.course_tests.results.get(test.name) == TestStatus.PASSED
        ]
        rate = round(len(passed) / len(graded), 4) if graded else None
        course.append({"name": test.name, "passed": len(passed), "of": len(graded), "rate": rate})
    return course


def _invalid_reasons(graded: Mapping[str, CheckReport]) -> list[dict[str, Any]]:
    """Why test files were not valid, each reason with its students, the commonest first."""
    reasons: dict[str, list[str]] = {}
    for name, report in graded.items():
        student = report.student_tests
        if student.valid:
            continue
        found = [reason_of(p, student.tests) for p in student.problems]
        if student.tests:  # a file with no tests (missing, unreadable) misses them all: said once
            found += [f"missing required test {missing}" for missing in student.missing]
        for reason in dict.fromkeys(found):
            reasons.setdefault(reason, []).append(name)
    return [
        {"reason": reason, "students": names}
        for reason, names in sorted(reasons.items(), key=lambda item: (-len(item[1]), item[0]))
    ]


def _copies(similarity: Similarity | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The flagged pairs, and the groups of students they join."""
    flags = [
        {
            "kind": pair.kind,
            "a": pair.a,
            "b": pair.b,
            "text_score": pair.text_score,
            "behaviour_score": pair.behaviour_score,
        }
        for pair in (similarity.pairs if similarity else ())
        if pair.flagged
    ]
    groups = [
        {
            "anchor": group_anchor(number),
            "kind": group.kind,
            "members": list(group.members),
            "strongest": {
                "a": group.strongest.a,
                "b": group.strongest.b,
                "text_score": group.strongest.text_score,
                "behaviour_score": group.strongest.behaviour_score,
            },
        }
        for number, group in enumerate(clusters(similarity.pairs if similarity else ()), start=1)
    ]
    return flags, groups


def class_json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------
# The page

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 60rem; color: #1b1b1b; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
td, th { padding: .2rem .6rem; text-align: left; }
tr:nth-child(even) { background: #f5f5f5; } .num { text-align: right; }
svg text { font-size: 11px; fill: #1b1b1b; } .note { color: #555; }
"""


def _copies_html(data: Mapping[str, Any]) -> str:
    """The groups of copies, each linked to the similarity page, and the flagged pairs."""
    flags = table(
        ("kind", "a", "b", "text score", "behaviour score"),
        [
            (
                f["kind"],
                f["a"],
                f["b"],
                f"{f['text_score']:.2f}",
                "" if f["behaviour_score"] is None else f"{f['behaviour_score']:.2f}",
            )
            for f in data["flags"]
        ],
    )
    group_list = "".join(
        f"<li><a href='{SIMILARITY_PAGE}#{html.escape(g['anchor'])}'>"
        f"{html.escape(g['kind'])}: {html.escape(', '.join(g['members']))}</a>: strongest "
        f"{html.escape(g['strongest']['a'])} and {html.escape(g['strongest']['b'])}, text score "
        f"{g['strongest']['text_score']:.2f}</li>"
        for g in data["groups"]
    )
    groups = f"<p>Groups of copies, each on {SIMILARITY_PAGE}:</p><ol>{group_list}</ol>"
    return groups + flags


def _overrides_html(data: Mapping[str, Any]) -> str:
    """The grades set by hand, which the figures above count in place of the grader's."""
    overrides = data.get("overrides") or []
    if not overrides:
        return ""
    rows = [
        (
            o["student"],
            "" if o["graded"] is None else f"{o['graded']:g}",
            f"{o['grade']:g}",
            o["by"],
            o["at"],
            o["why"],
        )
        for o in overrides
    ]
    return (
        f"<p class='note'>{len(overrides)} grades set by hand (grader override), counted "
        "above in place of the grader's:</p>"
        + table(("student", "graded", "set by hand", "by", "at", "why"), rows)
    )


def _mutant_table(mutants: Sequence[Mapping[str, Any]]) -> str:
    """Each mutant's kills, robust kills, planted bug and the students it survived in."""
    return table(
        ("mutant", "killed", "robust kills", "the planted bug", "survived in"),
        [
            (
                m["id"],
                f"{m['killed']}/{m['of']}",
                _robust_cell(m),
                m["title"],
                ", ".join(m["survived_in"]),
            )
            for m in mutants
        ],
    )


def _robust_cell(mutant: Mapping[str, Any]) -> str:
    """The share of a mutant's kills that hold across seeds, or why there is none."""
    seeded, robust = mutant.get("seeded_kills"), mutant.get("robust_kills")
    return f"{robust}/{seeded} ({mutant['robust_fraction']:.0%})" if seeded else "not measured"


def class_html(data: Mapping[str, Any]) -> str:
    """The page of ``class_data``'s figures."""
    chapter = html.escape(str(data["chapter"]))
    practice = bool(data.get("practice"))
    grades, scores = data["grades"], data["mutation_scores"]

    mutant_rows = [
        (
            f"{m['id']}{' (required)' if m['required'] else ''}",
            m["fraction"],
            m["fraction"] in (0.0, 1.0),
        )
        for m in data["mutants"]
    ]
    course_rows = [(c["name"], c["rate"], False) for c in data["course_tests"]]
    reasons = table(
        ("reason", "students", "who"),
        [
            (r["reason"], len(r["students"]), ", ".join(r["students"]))
            for r in data["invalid_reasons"]
        ],
    )
    titles = _mutant_table(data["mutants"])
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{chapter}: the class</title><style>{_STYLE}</style></head><body>"
        + (f"<p class='practice'><strong>{PRACTICE_CLASS}.</strong></p>" if practice else "")
        + f"<h1>{chapter}: the class</h1>"
        f"<p>{data['students']} submissions, {data['graded']} graded, {data['passed']} passed; "
        f"{data['valid_tests']} with valid tests.</p>"
        f"<h2>Grades</h2><p>{figure(grades)}, out of {grades['scale']:g}</p>"
        + column_chart("Grades", grades["histogram"], f"grade (out of {grades['scale']:g})")
        + _overrides_html(data)
        + f"<h2>Mutation scores</h2><p>{figure(scores)} (valid tests only)</p>"
        + column_chart("Mutation scores", scores["histogram"], "mutation score")
        + "<h2>Planted mutants: share of the class that killed each</h2>"
        "<p class='note'>Orange: killed by everybody (it teaches nothing) or by nobody (it may be "
        "unfair).</p>"
        + bar_chart("Share of the class killing each mutant", mutant_rows)
        + "<p class='note'>Robust kills: of the kills rerun with further seeds ([robustness]), "
        "those made by a test that draws no example or holding on enough seeds.</p>"
        + titles
        + "<h2>Course tests: pass rate</h2>"
        + bar_chart("Pass rate of each course test", course_rows)
        + "<h2>Why student tests were not valid</h2>"
        + (reasons if data["invalid_reasons"] else "<p>Every graded test file was valid.</p>")
        + "<h2>Flagged similarity</h2>"
        + (_copies_html(data) if data["flags"] else "<p>No pair is flagged.</p>")
        + "<p class='note'>similarity.csv lists every pair above the floor; similarity.html "
        "shows each flagged pair side by side. Flags change no grade.</p>"
        "</body></html>\n"
    )
