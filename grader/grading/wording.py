"""The sentences every report format shows a student, written once.

Whether a mutant's title (the hint naming the planted bug) is shown follows
``chapter.show_mutant_titles``; ``grader check --mutant-titles`` overrides the
catalog by handing the formats a chapter with the other setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath

from grader.grading.grade import course_test_points, grade, mutation_credit
from grader.grading.jobs import Limits
from grader.grading.witness import Witness, shows
from grader.inputs.catalog import Chapter, Mutant
from grader.inputs.submission import LOCAL_HINTS
from grader.results.check import (
    CheckReport,
    FlakyAcrossSeeds,
    MutantResult,
    MutationResult,
    SeededKill,
)
from grader.sandbox.protocol.status import MutantStatus, TestStatus, Verdict

PRACTICE = (
    "Practice check, not a grade of record: the runs had no isolation (level none, the "
    "grader was not root), so test code ran as your user; grades for marks come from a "
    "check run as root (docs/security.md)"
)
"""The first line of every format of a report whose runs were at level ``none``."""

PRACTICE_CLASS = (
    "Practice grading, not grades of record: rows marked isolation none were graded with no "
    "isolation (the grader was not root), so test code ran as the grader's user; grades for "
    "marks come from a batch run as root (docs/security.md)"
)
"""The first line of every export of a class (page, gradebook) that holds a row graded at
level ``none``."""


def practice_note(report: CheckReport) -> str | None:
    """``PRACTICE`` where the report's runs had no isolation, else ``None``."""
    return PRACTICE if report.isolation == "none" else None


NOT_MEASURED = (
    "Not run: your tests are not valid yet, so no kill could be trusted "
    "(see the problems with your tests)."
)


def too_slow(
    limit: float, running: str, durations: Mapping[str, float], confirmed: bool = False
) -> str:
    """A run stopped at its time limit, said as slowness (it may not hang at all): the limit,
    the test that was running, the slowest of those that finished, and whether a second run
    alone timed out too (``confirmed``)."""
    where = f" while running {running}" if running else ""
    done = [(name, s) for name, s in durations.items() if name != running and s >= 0.05]
    slowest = max(done, key=lambda item: item[1], default=None)
    before = (
        f"; the slowest test before it took {slowest[1]:.1f} s ({slowest[0]})" if slowest else ""
    )
    return (
        f"too slow: stopped after {limit:g} s{where} (the time limit of that run"
        f"{'; confirmed: it timed out again, run alone' if confirmed else ''}){before}: "
        "make the test do less, since a test that takes seconds here is run again on every "
        "mutant"
    )


def mutant_limit(limits: Limits) -> str:
    """How long a run on a mutant may take: ``5 times your tests' time on the reference, at
    least 5 s``."""
    return (
        f"{limits.mutant_factor:g} times your tests' time on the reference, "
        f"at least {limits.mutant_floor:g} s"
    )


def limits_sentence(limits: Limits) -> str:
    """Every time limit of a check in one sentence (``--help`` and the chapter state it)."""
    return (
        f"time limits: the course tests {limits.course_tests:g} s, your tests on the reference "
        f"{limits.student_tests:g} s, on each mutant {mutant_limit(limits)}; a run past its "
        "limit is stopped (on a mutant, that counts as a kill)"
    )


def mutant_name(chapter: Chapter, mutant: Mutant | MutantResult) -> str:
    """``s01`` or, when titles are shown, ``s01: the bug it plants``."""
    return f"{mutant.id}: {mutant.title}" if chapter.show_mutant_titles else mutant.id


def mutant_outcome(chapter: Chapter, mutant: MutantResult, witness: Witness | None = None) -> str:
    """What a mutant's status means for the student, and what to do about a survivor: its
    symptom and ``witness`` as far as the chapter's tier shows them."""
    if mutant.status == MutantStatus.KILLED:
        killers = ", ".join(mutant.killed_by) or "your test run, which crashed on it"
        return f"Killed by {killers}."
    if mutant.status == MutantStatus.ERROR:
        return f"Not counted: {mutant.message}. Make every test report an outcome."
    if mutant.status == MutantStatus.TIMEOUT:
        return (
            "Killed: your tests ran past the time limit on this mutant "
            f"({mutant_limit(Limits())}), so the bug it plants (a loop that never ends, or "
            "one far too slow) was noticed."
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
    if status == TestStatus.PASSED:
        return ""
    detail = course.failures.get(name, "").strip()
    return detail or course.problem or f"{name}: {status}"


def course_test_rule(chapter: Chapter, name: str) -> str:
    """The chapter's rule a course test holds code to, as the catalog states it."""
    test = next((t for t in chapter.course_tests if t.name == name), None)
    return f"It checks {test.checks}: {test.why}." if test is not None else ""


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


def grade_breakdown(chapter: Chapter, report: CheckReport) -> str:
    """Where the points came from, in one sentence (the formula of ``grader.grading.grade``)::

    96.15 of 100 = course tests 50 of 50 (11 of 11 passed, 4.55 each) + your tests
    46.15 of 50 (12 kills counted of the 13 needed, 3.85 each: 70% of 18 mutants)
    """
    points = grade(chapter, report)
    course = report.course_tests
    worth = sorted(set(course_test_points(chapter).values()))
    each = f"{worth[0]:g}" if len(worth) == 1 else f"{worth[0]:g} to {worth[-1]:g}"
    head = (
        f"course tests {points.course_points:g} of "
        f"{points.course_max:g} ({course.passed} of {course.total} passed, {each} each)"
    )
    mutation = report.mutation
    shares = f"{points.mutation_points:g} of {points.mutation_max:g}"
    if not report.student_tests.valid or mutation is None:
        return f"{head} + your tests {shares} (not valid yet, so no kill counts)"
    needed = mutation.needed
    per_kill = points.mutation_max / needed if needed else points.mutation_max
    rule = (
        f"{per_kill:.2f} each: {chapter.threshold:.0%} of {len(chapter.mutants)} mutants, "
        "more kills add nothing"
    )
    counted = round(mutation_credit(mutation) * needed)
    tail = f"{head} + your tests {shares} ({counted} kills counted of the {needed} needed, {rule})"
    if mutation.missed_required:
        tail += (
            f"; while {', '.join(mutation.missed_required)} survives (required) the count stops "
            f"at {max(needed - 1, 0)}"
        )
    return tail


def verdict_sentence(chapter: Chapter, report: CheckReport) -> str:
    """``PASS, grade 100 of 100: …`` or ``FAIL, grade 50 of 100: why``, without markup."""
    if report.verdict == Verdict.PASS:
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


def seeds_header(mutation: MutationResult) -> str:
    """What the robustness reruns were (``grader.grading.robustness``); empty without them."""
    result = mutation.robustness
    if result is None:
        return ""
    return (
        f"Kills across seeds: each kill by a test that draws examples was run again with "
        f"{len(result.seeds)} further seeds, the same for everyone; the grade uses the first "
        "seed alone"
    )


def seeded_kills(mutation: MutationResult) -> tuple[list[str], list[str]]:
    """The killed mutants whose best kill by a test that draws examples held on every seed
    asked (robust: ``s02 (test_x)``), and a sentence for each of the others (lucky)."""
    result = mutation.robustness
    if result is None:
        return [], []
    robust, lucky = [], []
    flaky = {f.test for f in result.flaky}
    for mutant in mutation.mutants:
        best = result.best(mutant.id)
        if best is None or not mutant.detected:
            continue
        if result.robust(best):
            robust.append(f"{mutant.id} ({best.test}, {best.held} of {best.seeds})")
        else:
            lucky.append(lucky_kill(best, mutant.title, best.test in flaky))
    return robust, lucky


def lucky_kill(kill: SeededKill, title: str, flaky: bool = False) -> str:
    """A kill that held on too few seeds: how few, and the case the strategy rarely builds
    (the mutant's ``title``, the planted bug, where titles are shown); or, for a test
    ``flaky`` across seeds, that a seed where it fails on the reference too counts for
    nothing."""
    if flaky:
        return (
            f"kills {kill.mutant} with {kill.held} of {kill.seeds} seeds ({kill.test}): with "
            "a seed where it fails on the reference too, its kill counts for nothing (flaky "
            "across seeds, below)"
        )
    how = "rarely builds" if 2 * kill.held <= kill.seeds else "does not always build"
    bug = f": {title}" if title else ""
    return (
        f"kills {kill.mutant} with {kill.held} of {kill.seeds} seeds ({kill.test}): your "
        f"strategy {how} the case that shows the bug{bug}; draw that case more often "
        "(narrower ranges, shorter keys, more steps) or pin it with @example, so the kill "
        "does not rest on one seed"
    )


def flaky_across_seeds(flaky: FlakyAcrossSeeds) -> str:
    """A test that fails on the reference with a further seed: a warning, no change of grade."""
    example = "; ".join(flaky.example.splitlines())
    shown = f"; shrunk example: {example}" if example else ""
    return (
        f"flaky across seeds: {flaky.test} passes on the reference (a correct tree) with the "
        f"graded seed but fails there with seed {flaky.seed}: {flaky.reason}{shown}; a "
        "property must hold for every example its strategy draws (a warning: the grade "
        "stays as it is)"
    )
