"""The sentences every report format shows a student, written once.

Whether a mutant's title (the hint naming the planted bug) is shown follows
``chapter.show_mutant_titles``; ``grader check --mutant-titles`` overrides the
catalog by handing the formats a chapter with the other setting.
"""

from __future__ import annotations

from pathlib import PurePath

from grader.catalog import Chapter, Mutant
from grader.commands.check import CheckReport, MutantResult
from grader.grade import grade
from grader.submission import LOCAL_HINTS
from grader.witness import Witness, shows

NOT_MEASURED = (
    "Not run: your tests are not valid yet, so no kill could be trusted "
    "(see the problems with your tests)."
)


def mutant_name(chapter: Chapter, mutant: Mutant | MutantResult) -> str:
    """``s01`` or, when titles are shown, ``s01: the bug it plants``."""
    return f"{mutant.id}: {mutant.title}" if chapter.show_mutant_titles else mutant.id


def mutant_outcome(chapter: Chapter, mutant: MutantResult, witness: Witness | None = None) -> str:
    """What a mutant's status means for the student, and what to do about a survivor: its
    symptom and ``witness`` as far as the chapter's tier shows them."""
    if mutant.status == "killed":
        killers = ", ".join(mutant.killed_by) or "your test run, which crashed on it"
        return f"Killed by {killers}."
    if mutant.status == "error":
        return f"Not counted: {mutant.message}. Make every test report an outcome."
    if mutant.status == "timeout":
        return (
            "Killed: your tests ran past the time limit on this mutant, "
            "so the bug it plants (a loop that never ends) was noticed."
        )
    text = (
        f"Survived: every one of your tests passed on a copy of {chapter.implementation} with "
        "this bug planted, so your tests would not notice it. Write a test that passes on a "
        "correct tree and fails on this one."
    )
    if chapter.show_mutant_titles:
        text += f" The planted bug: {mutant.title}."
    if mutant.id in chapter.required:
        text += " This mutant is required: you cannot pass while it survives."
    return "\n".join([text, *survivor_details(chapter, mutant.id, witness)])


def result_phrase(result: dict[str, object]) -> str:
    """A witness call's result in words: ``returns (1, [])`` or ``raises KeyError``."""
    if "raises" in result:
        return f"raises {result['raises']}"
    return f"returns {result.get('returns')!r}"


def survivor_details(
    chapter: Chapter, mutant_id: str, witness: Witness | None, survived: bool = True
) -> list[str]:
    """What a mutant's entry says beyond its title, at the chapter's witness tier: the
    symptom from ``symptom`` on, and for a survivor the witness's calls from ``calls`` on,
    with both results and a test that would kill it at ``full``. Plain text, no markup."""
    lines = []
    if shows(chapter, "symptom"):
        lines.append(f"Symptom: {chapter.mutant(mutant_id).symptom}.")
    if not survived or witness is None or not shows(chapter, "calls"):
        return lines
    full = shows(chapter, "full")
    lines.append(
        "Your tests never make these calls, after which this mutant and a correct tree "
        "give different results:"
    )
    lines.append(f"    {witness.setup}")
    for index, call in enumerate(witness.calls):
        mark = "  <- the results differ here" if index == witness.differs_at else ""
        lines.append(f"    {index + 1}. {call.code}{mark}")
        if full:
            lines.append(
                f"         correct tree: {result_phrase(call.reference)}; "
                f"this mutant: {result_phrase(call.mutant)}"
            )
    if full and witness.test:
        lines.append("A test that would kill it (name it and say what it pins down):")
        lines += [f"    {line}" if line else "" for line in witness.test.rstrip().splitlines()]
    return lines


def course_test_outcome(report: CheckReport, name: str) -> str:
    """Why a course test did not pass (empty when it passed)."""
    course = report.course_tests
    status = course.results[name]
    if status == "passed":
        return ""
    detail = course.failures.get(name, "").strip()
    return detail or course.problem or f"{name}: {status}"


def student_tests_outcome(chapter: Chapter, report: CheckReport) -> str:
    """Whether the student's test file can be trusted, and if not, every reason why."""
    student = report.student_tests
    notes = [f"Note: {note}" for note in student.notes]
    if student.valid:
        valid = (
            f"{chapter.student_tests} is valid: it passes on the reference and on every "
            "correct variant, and each required test fails on the stub."
        )
        return "\n".join([valid, *notes])
    lines = [f"{chapter.student_tests} is not valid yet:"]
    lines += [f"- missing required test {name}" for name in student.missing]
    lines += [f"- {problem}" for problem in student.problems]
    return "\n".join([*lines, *notes])


def grade_phrase(chapter: Chapter, report: CheckReport) -> str:
    """``grade 84.62 of 100``: the points on the catalog's scale."""
    points = grade(chapter, report)
    return f"grade {points.points:g} of {points.scale:g}"


def verdict_sentence(chapter: Chapter, report: CheckReport) -> str:
    """``PASS, grade 100 of 100: …`` or ``FAIL, grade 50 of 100: why``, without markup."""
    if report.verdict == "pass":
        return (
            f"PASS, {grade_phrase(chapter, report)}: the course tests pass and your tests "
            "catch the planted bugs"
        )
    return f"FAIL, {grade_phrase(chapter, report)}: {'; '.join(report.fail_reasons())}"


def unmodified_notes(chapter: Chapter, report: CheckReport) -> list[str]:
    """One sentence per file of the submission that is still the kit's stub or skeleton:
    said before anything else, since every other problem follows from it."""
    files = report.files
    notes = []
    if files.get("implementation") in report.unmodified:
        notes.append(
            f"{files['implementation']} is the unmodified stub: no course test can pass until "
            "you write the tree"
        )
    if files.get("tests") in report.unmodified:
        notes.append(
            f"{files['tests']} is the unmodified test skeleton: each required test is still a "
            "placeholder that fails everywhere; write them"
        )
    return notes


def away_from_the_kit(report: CheckReport, text: str) -> str:
    """``text`` for a reader without the kit or the grading machine (Gradescope): the
    submission's folder on the grader becomes "your submission", and advice that needs the
    kit installed (``grader start``) is left out."""
    if PurePath(report.submission).is_absolute():  # a relative one reads as words ("submission")
        text = text.replace(report.submission, "your submission")
    for hint in LOCAL_HINTS:
        text = text.replace(hint, "")
    return text
