"""A ``CheckReport`` as the Markdown of a GitHub Actions job summary.

GitHub shows the Markdown a step appends to the file named by
``GITHUB_STEP_SUMMARY`` on the run's page: here the verdict, the grade, the
course tests, the mutation score and every survivor, with its hint when
mutant titles are shown.

Text a run produced (a failure message, an import error: the student's own
words, whatever they hold) goes in only as a code span (``_code``), so no
link, image or emphasis of theirs renders on the run's page: only the kit's
own Markdown does.
"""

from __future__ import annotations

import re

from grader.grading.grade import grade
from grader.grading.wording import NOT_MEASURED, practice_note, unmodified_notes
from grader.inputs.catalog import Chapter
from grader.results.check import CheckReport, MutantResult
from grader.sandbox.protocol.status import MutantStatus, TestStatus, Verdict

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"


def report_to_markdown(chapter: Chapter, report: CheckReport) -> str:
    """The job summary: a heading with the verdict, a table of the parts, the survivors."""
    points = grade(chapter, report)
    course = report.course_tests
    mutation = report.mutation
    if report.verdict == Verdict.PASS:
        heading = f"## ✅ {chapter.id}: PASS"
    else:
        heading = f"## ❌ {chapter.id}: FAIL ({_cell('; '.join(report.fail_reasons()))})"
    if mutation is None:
        score = "not measured: your tests are not valid"
    else:
        score = (
            f"{mutation.score:.2f} ({mutation.killed}/{mutation.total} killed), "
            f"threshold {mutation.threshold:.2f}"
        )
    notes = [f"**{_cell(note)}.**" for note in unmodified_notes(chapter, report)]
    practice = practice_note(report)
    lines = [
        *([f"> **{_cell(practice)}.**", ""] if practice else []),
        heading,
        "",
        *[line for note in notes for line in (note, "")],
        "| part | result |",
        "| --- | --- |",
        f"| grade | {points.points:g} / {points.scale:g} |",
        f"| course tests on `{chapter.implementation}` | {course.passed}/{course.total} passed |",
        f"| your tests (`{chapter.student_tests}`) | "
        f"{'valid' if report.student_tests.valid else '**not valid**'} |",
        f"| mutation score | {score} |",
    ]
    if mutation is not None and mutation.required:
        required = ", ".join(_required_status(m, mutation.status(m)) for m in mutation.required)
        lines.append(f"| required mutants | {required} |")
    failing = [name for name, status in course.results.items() if status != TestStatus.PASSED]
    if failing:
        lines += ["", "### Course tests not passing", ""]
        lines += [f"- `{name}`: {course.results[name]}" for name in failing]
        if course.problem:
            lines.append(f"- {_code(course.problem)}")
    problems = [f"missing required test {_code(n)}" for n in report.student_tests.missing]
    problems += [_code(problem) for problem in report.student_tests.problems]
    if problems:
        lines += ["", "### Problems with your tests", ""]
        lines += [f"- {problem}" for problem in problems]
        lines += ["", NOT_MEASURED] if mutation is None else []
    survivors = mutation.survivors if mutation else ()
    if survivors:
        lines += ["", "### Surviving mutants", "", SURVIVOR_ADVICE.format(chapter.implementation)]
        lines += ["", "| mutant | the planted bug |", "| --- | --- |"]
        lines += [f"| {_survivor(chapter, m)} |" for m in survivors]
    return "\n".join(lines) + "\n"


SURVIVOR_ADVICE = (
    "Each mutant below is a copy of `{}` with one bug planted, and every one of your tests "
    "passed on it: write a test that passes on a correct tree and fails on the bug."
)
"""Said once above the survivors' table, not once per row."""


def _survivor(chapter: Chapter, mutant: MutantResult) -> str:
    """A survivor's row: its id, marked when required, and its title when titles are shown."""
    flag = " (**required**: no pass while it survives)" if mutant.id in chapter.required else ""
    title = _cell(mutant.title) if chapter.show_mutant_titles else "(hidden)"
    return f"{mutant.id}{flag} | {title}"


def _required_status(mutant_id: str, status: MutantStatus) -> str:
    """``s11 killed``; a status that fails the verdict in bold."""
    shown = f"**{status}**" if status in (MutantStatus.SURVIVED, MutantStatus.ERROR) else status
    return f"{mutant_id} {shown}"


def _code(text: str) -> str:
    """``text`` on one line as a Markdown code span: nothing in it renders as Markdown or HTML.

    The fence is one backtick longer than the longest run of backticks in
    the text, with a space inside each end when the text begins or ends
    with a backtick (CommonMark strips one such space). For list items, not
    table cells (GitHub splits a row on ``|`` even in a code span).
    """
    flat = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _cell(text: str) -> str:
    """``text`` on one line, safe inside a Markdown table cell or list item."""
    flat = " ".join(text.split())
    return flat.replace("|", "\\|").replace("<", "&lt;")
