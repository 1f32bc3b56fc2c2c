"""The mutation testing report as one self-contained HTML page.

The page carries the mutation-testing-elements viewer (vendored in
``grader/output/vendor``, about 230 KB) and the report itself, so it opens
offline, from a CI artifact, an e-mail or an LMS, and never depends on a CDN
being up, reachable from a campus network, or trustworthy. The report JSON is
embedded with every ``<`` escaped, so no text in it can close the script.

A grade report opens with a summary above the viewer (the viewer is a web
component, and the page around it is ours): the verdict and the grade, the
course tests, whether the student's tests are valid and why not, the mutation
score against the threshold, and the required mutants. The viewer shows only
survivors until its "Killed" filter is ticked; a small script ticks it, as a
click would, so the kills are shown too.
"""

from __future__ import annotations

import html
import json
from functools import cache
from pathlib import Path
from typing import Any

from grader.grading.witness import chapter_witnesses
from grader.grading.wording import (
    NOT_MEASURED,
    practice_note,
    survivor_details,
    unmodified_notes,
    verdict_sentence,
)
from grader.inputs.catalog import Chapter
from grader.results.check import CheckReport
from grader.sandbox.protocol.status import TestStatus, Verdict

VIEWER = Path(__file__).with_name("vendor") / "mutation-test-elements.js"

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
{style}
</style>
<script>
{viewer}
</script>
</head>
<body>
{header}<mutation-test-report-app title-postfix="{title}"></mutation-test-report-app>
<script>
document.querySelector("mutation-test-report-app").report = {report};
</script>
<script>
{show_killed}
</script>
</body>
</html>
"""

STYLE = """#grade-summary { font-family: system-ui, sans-serif; max-width: 60rem; margin: 1rem auto;
  padding: 0 1rem; line-height: 1.4; }
#grade-summary h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
#grade-summary .pass { color: #15803d; } #grade-summary .fail { color: #b91c1c; }
#grade-summary ul { margin: .25rem 0 .75rem; padding-left: 1.25rem; }"""

SHOW_KILLED = """// The viewer lists survivors only until its "Killed" filter is ticked:
// tick it once for each file view it draws, as a click would, so kills show by default.
(() => {
  const ticked = new WeakSet();
  const filters = (node, found) => {
    if (node.localName === "mte-state-filter") found.push(node);
    if (node.shadowRoot) filters(node.shadowRoot, found);
    for (const child of node.children || []) filters(child, found);
    return found;
  };
  setInterval(() => {
    for (const filter of filters(document.body, [])) {
      const box = filter.shadowRoot && filter.shadowRoot.querySelector("#filter-Killed");
      if (!box || ticked.has(box)) continue;
      ticked.add(box);
      if (!box.checked) {
        box.checked = true;
        box.dispatchEvent(new Event("input", { bubbles: true }));
      }
    }
  }, 200);
})();"""


@cache
def _viewer() -> str:
    return VIEWER.read_text(encoding="utf-8")


def mutation_report_html(report: dict[str, Any], title: str, header: str = "") -> str:
    """A page that shows ``report`` (the data of ``mutation_report``) in the viewer, below
    ``header`` (HTML, already escaped), with killed mutants shown as well as survivors."""
    data = json.dumps(report, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    return PAGE.format(
        title=html.escape(title),
        style=STYLE,
        viewer=_viewer(),
        header=header,
        report=data,
        show_killed=SHOW_KILLED,
    )


def summary_header(chapter: Chapter, report: CheckReport) -> str:
    """The page's opening: the verdict and grade, then each part of the verdict with its
    numbers, the required mutants, what is wrong when the tests are not valid (the viewer
    then shows every mutant as "Ignored", which alone says nothing), and each survivor as
    far as the witness tier shows it."""
    e = html.escape
    course = report.course_tests
    student = report.student_tests
    mutation = report.mutation
    verdict, _, reasons = verdict_sentence(chapter, report).partition(": ")
    lines = ['<header id="grade-summary">']
    practice = practice_note(report)
    if practice:
        lines.append(f'<p class="practice"><strong>{e(practice)}.</strong></p>')
    lines.append(f'<h1 class="{report.verdict}">{e(chapter.id)}: {e(verdict)}</h1>')
    if reasons and report.verdict == Verdict.FAIL:
        lines.append(f"<p>Why: {e(reasons)}.</p>")
    notes = unmodified_notes(chapter, report)
    if notes:
        lines.append("<ul>" + "".join(f"<li>{e(note)}</li>" for note in notes) + "</ul>")
    lines.append(
        f"<p><strong>Course tests</strong> on your {e(chapter.implementation)}: "
        f"{course.passed}/{course.total} passed.</p>"
    )
    failing = [
        (name, status) for name, status in course.results.items() if status != TestStatus.PASSED
    ]
    if course.problem:
        lines.append(f"<p>{e(course.problem)}</p>")
    if failing:
        items = "".join(f"<li>{e(name)}: {e(status)}</li>" for name, status in failing)
        lines.append(f"<ul>{items}</ul>")
    validity = "valid" if student.valid else "not valid"
    lines.append(f"<p><strong>Your tests</strong> ({e(chapter.student_tests)}): {validity}.</p>")
    problems = [f"missing required test {name}" for name in student.missing]
    problems += list(student.problems)
    if problems:
        items = "".join(f"<li>{e(problem)}</li>" for problem in problems)
        lines.append(f"<ul>{items}</ul>")
    if mutation is None and not student.valid:
        lines.append(f"<p>{e(NOT_MEASURED)}</p>")
    required = ", ".join(chapter.required)
    if mutation is None:
        lines.append(
            f"<p><strong>Mutation score</strong>: not measured. To pass, your tests must kill "
            f"at least {chapter.threshold:.0%} of the {len(chapter.mutants)} planted mutants, "
            f"and {e(required)} (required) among them.</p>"
        )
    else:
        statuses = ", ".join(f"{m} {mutation.status(m)}" for m in mutation.required)
        lines.append(
            f"<p><strong>Mutation score</strong> {mutation.score:.2f} "
            f"({mutation.killed}/{mutation.total} killed); the threshold {mutation.threshold:.2f} "
            f"asks for {mutation.needed} kills. Required, whatever the score: {e(statuses)}.</p>"
        )
    lines += _survivors(chapter, report)
    lines.append("</header>")
    return "\n".join(lines) + "\n"


_PAGE_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:50rem;color:#1b1b1b}"
    "h1.pass{color:#1a7f37}h1.fail{color:#cf222e}"
)


def student_page(chapter: Chapter, report: CheckReport) -> str:
    """A small page of one student's result (the summary the full report opens on), for a
    TA to hand back: no script, no viewer, opens offline."""
    title = html.escape(f"{chapter.id}: {report.verdict}")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>{_PAGE_STYLE}</style></head><body>"
        f"{summary_header(chapter, report)}</body></html>\n"
    )


def _survivors(chapter: Chapter, report: CheckReport) -> list[str]:
    """Each survivor with what the witness tier shows of it (``grader.grading.witness``)."""
    e = html.escape
    survivors = report.mutation.survivors if report.mutation else ()
    witnesses = chapter_witnesses(chapter)
    items = []
    for mutant in survivors:
        details = survivor_details(chapter, mutant.id, witnesses.get(mutant.id))
        if not (mutant.title or details):
            continue
        title = f": {e(mutant.title)}" if mutant.title else ""
        body = f"<pre>{e(chr(10).join(details))}</pre>" if details else ""
        items.append(f"<li><strong>{e(mutant.id)}</strong>{title}{body}</li>")
    if not items:
        return []
    return ["<p><strong>What your tests miss</strong>:</p>", f"<ul>{''.join(items)}</ul>"]
