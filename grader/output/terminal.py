"""Terminal output: every result type is drawn by exactly one function here."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from grader.course.roster import RosterMatch
from grader.course.similarity import Similarity
from grader.grading.timing import cost_sentence, duration, runs_per_check, slow_tests, slowest
from grader.grading.witness import chapter_witnesses, shows
from grader.grading.wording import (
    course_test_rule,
    flaky_across_seeds,
    grade_breakdown,
    practice_note,
    seeded_kills,
    seeds_header,
    survivor_details,
    unmodified_notes,
    verdict_sentence,
)
from grader.grading.worth import worth_of_tests
from grader.inputs.catalog import EXTRA_TESTS, Chapter, Dependency, step_line
from grader.inputs.chapter_text import without_markers
from grader.inputs.dependencies import DependencyUse
from grader.inputs.submission import StartResult
from grader.output.audit import STATUS_ORDER
from grader.output.failures import FailureGroup, checker_step, group_failures, through_a_map
from grader.results.audit import AuditReport, GeneratedMutant
from grader.results.batch import BatchResult, Manifest, MergeResult, Override, OverrideResult
from grader.results.check import CheckReport, MutationResult
from grader.results.kit import Bundle, DiffResult, MethodDiff, Release, TddResult
from grader.results.mining import MiningResult
from grader.results.replay import Regrade, Replay
from grader.sandbox.protocol.status import AuditStatus, MutantStatus, TestStatus, Verdict
from grader.static.rules import Rule

STATUS_STYLE: dict[str, str] = {
    TestStatus.PASSED: "green",
    MutantStatus.KILLED: "green",
    TestStatus.TIMEOUT: "yellow",
    MutantStatus.SURVIVED: "red",
    TestStatus.FAILED: "red",
    TestStatus.ERROR: "red",
    TestStatus.SKIPPED: "yellow",
    TestStatus.NOT_RUN: "yellow",
    AuditStatus.CRASHED: "yellow",
    AuditStatus.NO_TESTS: "red",
}


def _styled(status: str) -> str:
    return f"[{STATUS_STYLE.get(status, 'white')}]{status}[/]"


def _status(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, "white"))


def _mark(console: Console, text: str, mark: str = "✗", style: str = "red") -> None:
    """``✗ text`` (or another mark), wrapped to the console with every word whole and the
    lines after the first indented: a test name is never cut, whatever the width."""
    lines = textwrap.wrap(
        f"{mark} {text}",
        width=max(console.width, 40),
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    body = Text("\n".join(lines))
    body.stylize(style, 0, len(mark))
    console.print(body, soft_wrap=True)


def _name_table(
    console: Console, title: str, headers: tuple[str, ...], rows: Sequence[tuple[Text, ...]]
) -> None:
    """A table whose cells are never broken: drawn as a table when every cell fits whole on
    the console, else as one line per row (``header: cell``), wrapped between words."""
    widths = [
        max([len(header)] + [max(map(len, row[at].plain.splitlines() or [""])) for row in rows])
        for at, header in enumerate(headers)
    ]
    if sum(widths) + 3 * len(headers) + 1 <= console.width:
        table = Table(title=title)
        for header in headers:
            table.add_column(header, no_wrap=True)
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return
    console.print(Text(title, style="italic"))
    for row in rows:
        first, *rest = row
        parts = [f"{header}: {cell.plain}" for header, cell in zip(headers[1:], rest, strict=True)]
        fields = "; ".join(
            part.replace(":\n", ": ").replace("\n", ", ")
            for part in parts
            if not part.endswith(": ")
        )
        _indented(console, 2, f"{first.plain}  ", fields, label_style="bold")


def render_start(console: Console, chapter: Chapter, result: StartResult) -> None:
    for name in result.saved:
        console.print(f"saved your old file as {result.folder / name}")
    for name in result.created:
        console.print(f"created {result.folder / name}")
    for name in result.kept:
        console.print(
            f"left {result.folder / name} alone (it exists; --force replaces it after a backup)"
        )
    steps = [
        (step_line(chapter, step, result.folder), step.what)
        for step in chapter.workflow
        if step.command != "grader start"
    ]
    for need in chapter.needs:
        console.print(
            f"{chapter.implementation} may use your {need.implementation} ({need.id}): copy it "
            f"beside it yourself (start never writes it), or pass --ref-deps for the kit's"
        )
    console.print("\nNext steps:")
    for number, (command, why) in enumerate(steps, 1):
        _whole(console, Text(f"  {number}. {command}"))
        _indented(console, 7, "", why)


def _whole(console: Console, line: Text) -> None:
    """Print ``line`` unbroken and uncut (the terminal may wrap it, rich does not): a
    command or a test name must survive any terminal width whole."""
    console.print(line, soft_wrap=True)


def _indented(
    console: Console, indent: int, label: str, text: str, label_style: str = "dim"
) -> None:
    """``label`` and ``text`` wrapped to the console, every line indented by ``indent``;
    words stay whole (a word longer than the line too), no padding after the last word."""
    lines = textwrap.wrap(
        label + text,
        width=max(console.width, indent + 20),
        initial_indent=" " * indent,
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    body = Text("\n".join(lines), style="" if label else "dim")
    body.stylize(label_style, indent, indent + len(label))
    console.print(body, soft_wrap=True)


def _fields(console: Console, fields: list[tuple[str, str]], names: tuple[str, ...] = ()) -> None:
    """The body of a catalog entry: each field wrapped and indented, then each of
    ``names`` (course tests that catch it) on a line of its own, whole."""
    for label, text in fields:
        _indented(console, 4, f"{label}: ", text)
    for name in names:
        _whole(console, Text.assemble(("    caught by: ", "dim"), name))


def render_catalog(console: Console, chapter: Chapter) -> None:
    """The test catalog in full at any width: entries, not table cells, so nothing is cut."""
    console.print(Text.assemble((chapter.id, "bold"), f": {chapter.title}"))
    for need in chapter.needs:
        console.print()
        _indented(console, 0, "Needs: ", f"{need.id}, {need.title}", label_style="bold underline")
        _fields(
            console,
            [
                ("uses", need.uses),
                ("operations", need.operations),
                ("where", _need_where(chapter, need)),
            ],
        )
    console.print(
        Text.assemble(
            "\n",
            (f"The course tests ({len(chapter.course_tests)})", "bold underline"),
            f": run against your {chapter.implementation}; they judge your code",
        )
    )
    for test in chapter.course_tests:
        _whole(console, Text.assemble((test.name, "bold"), f"  ({test.kind})"))
        _fields(console, [("checks", test.checks), ("why", test.why)])
    console.print(
        Text.assemble(
            "\n",
            (f"Your tests ({len(chapter.required_tests)} required)", "bold underline"),
            f": in {chapter.student_tests}",
        )
    )
    for required in chapter.required_tests:
        _whole(console, Text(required.name, style="bold"))
        _fields(console, [("pins", required.checks)])
    _indented(console, 0, "", f"{EXTRA_TESTS[0].upper()}{EXTRA_TESTS[1:]}.")
    _render_wheats(console, chapter)
    _render_mutant_catalog(console, chapter)
    console.print(
        f"\nPass: every course test passes, your tests are valid, they kill at least "
        f"{chapter.threshold:.0%} of the mutants, and they kill {', '.join(chapter.required)}."
    )
    _render_tiers(console, chapter)
    _indented(
        console,
        0,
        "",
        f"Time: check runs your tests {runs_per_check(chapter)} times (the reference thrice, "
        "each correct variant, the stub, your code, each mutant), so keep each test under "
        f"{chapter.slow_test_seconds:g} s on the reference; tdd and check name slower ones.",
    )
    order = ", then ".join(step_line(chapter, step) for step in chapter.workflow)
    _indented(console, 0, "", f"In order: {order}.")
    console.print("The whole chapter, with the interface and a worked example: grader chapter")


def _render_wheats(console: Console, chapter: Chapter) -> None:
    """The correct variants: each a choice the contract leaves open, which every test of
    the student's must accept as well as the reference's."""
    if not chapter.wheats:
        return
    console.print(
        Text.assemble(
            "\n",
            (f"The correct variants ({len(chapter.wheats)})", "bold underline"),
            ": every one of your tests must pass on each, as on the reference",
        )
    )
    for wheat in chapter.wheats:
        what = f"a correct tree that {wheat.choice}" if wheat.choice else wheat.title
        _indented(console, 0, f"{wheat.id}: ", what, label_style="bold")


def _render_mutant_catalog(console: Console, chapter: Chapter) -> None:
    """The planted mutants, each with its title, symptom and catchers where they are shown."""
    console.print(
        Text.assemble(
            "\n",
            (f"The planted mutants ({len(chapter.mutants)})", "bold underline"),
            ": your tests are graded by how many they catch",
        )
    )
    for mutant in chapter.mutants:
        flag = " (required)" if mutant.id in chapter.required else ""
        if not chapter.show_mutant_titles:
            console.print(Text.assemble((mutant.id, "bold"), flag))
            continue
        _indented(console, 0, f"{mutant.id}{flag}: ", mutant.title, label_style="bold")
        symptom = [("symptom", mutant.symptom)] if shows(chapter, "symptom") else []
        _fields(console, symptom, mutant.caught_by)


def _render_tiers(console: Console, chapter: Chapter) -> None:
    """How much of a survivor each place shows (the catalog's witness tiers)."""
    settings = chapter.witnesses
    if settings is None:
        return
    before = f"{settings.tier('autograder')} on Gradescope before the due date"
    if settings.budget is not None:
        budget = settings.budget
        before = (
            f"{budget.tier} on Gradescope before the due date for the first {budget.per_day} "
            f"graded submissions of a day, {budget.then} for later ones"
        )
    text = (
        f"How much you are shown of a surviving mutant: {chapter.witness_tier} from grader "
        f"check here, {before}, {settings.tier('after_due')} after it. Tiers: none (that it "
        "survived), title (the planted bug), symptom (what it does), calls (calls your tests "
        "never make, after which it gives another result than a correct tree), full (those "
        "calls' results, and a test that kills it)."
    )
    _indented(console, 0, "", text, label_style="")


def render_rules(
    console: Console, chapter: Chapter, rules: tuple[Rule, ...], examples: bool
) -> None:
    """Every static rule: code and name on a line, whole, then why; with ``examples``, a
    file that breaks it and one that keeps it, for this chapter's module."""
    console.print(
        Text.assemble(
            (f"The rules of {chapter.student_tests} ({len(rules)})", "bold underline"),
            ": a message that refuses your file ends with the rule's code",
        )
    )
    for rule in rules:
        _whole(console, Text.assemble((rule.code, "bold"), f"  {rule.name}"))
        _indented(console, 4, "", rule.explanation, label_style="")
        if not examples:
            continue
        for label, text in (("breaks it", rule.bad), ("keeps it", rule.good)):
            shown = rule.example(text, chapter.module, chapter.interface)
            console.print(Text(f"    {label}:", style="dim"))
            for line in shown.splitlines() or [""]:
                _whole(console, Text(f"        {line}"))


def _need_where(chapter: Chapter, need: Dependency) -> str:
    """Where a student's own copy of ``need`` goes, and what to do without one."""
    return (
        f"your own {need.implementation} beside {chapter.implementation}; `grader start` never "
        f"writes it. Without one, pass --ref-deps to check, tdd and diff to use the kit's"
    )


def render_chapter(console: Console, text: str) -> None:
    """The chapter as Markdown drawn for a terminal; piped, the Markdown itself, unwrapped."""
    plain = without_markers(text)
    if console.is_terminal:
        console.print(Markdown(plain))
    else:
        console.out(plain, end="", highlight=False)


_DOC_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<topic>[\w-]+)\.md(?:#[\w-]+)?\)")


def help_text(text: str, topics: tuple[str, ...]) -> str:
    """A doc as ``grader help`` shows it: a link to another doc this edition carries becomes
    the command that shows it; a link to one it does not carry, its words alone."""

    def pointer(link: re.Match[str]) -> str:
        text, topic = str(link["text"]), str(link["topic"])
        return f"{text} (`grader help {topic}`)" if topic in topics else text

    return _DOC_LINK.sub(pointer, text)


def render_help(console: Console, text: str, topics: tuple[str, ...]) -> None:
    """One doc, drawn as the chapter is (Markdown on a terminal, the text itself piped)."""
    render_chapter(console, help_text(text, topics))


def render_help_topics(console: Console, docs: dict[str, str]) -> None:
    """Each topic ``grader help TOPIC`` shows, with its doc's title."""
    console.print("grader help TOPIC shows one of these:")
    width = max((len(topic) for topic in docs), default=0)
    for topic, text in docs.items():
        title = next((line.lstrip("# ") for line in text.splitlines() if line.strip()), "")
        _whole(console, Text.assemble((f"  {topic:<{width}}", "bold"), f"  {title}"))


def render_tdd(console: Console, chapter: Chapter, result: TddResult) -> None:
    for name, status in result.outcomes.items():
        _whole(console, Text.assemble(f"  {name}: ", _status(status)))
    for problem in result.problems:
        _mark(console, problem)
    _render_time(console, chapter, result.durations, red=result.stage == "red")
    goal = (
        "every required test fails on the stub and passes on the reference"
        if result.stage == "red"
        else "every test passes"
    )
    if result.ok:
        _whole(console, Text(f"tdd {result.stage}: {goal}.", style="green"))
    else:
        _whole(console, Text(f"tdd {result.stage}: not yet: {goal} is the goal.", style="red"))


def _render_time(
    console: Console, chapter: Chapter, durations: dict[str, float], red: bool = True
) -> None:
    """What the student's tests cost: on the reference, in a whole check; the slow ones."""
    if red:
        sentence = cost_sentence(chapter, durations)
        if sentence:
            _mark(console, sentence[0].upper() + sentence[1:] + ".", "⏱", "dim")
    elif durations:
        top = ", ".join(f"{name} {duration(s)}" for name, s in slowest(durations) if s > 0)
        if top:
            _mark(console, f"Slowest on your {chapter.implementation}: {top}.", "⏱", "dim")
    for name, seconds in slow_tests(chapter, durations):
        _mark(
            console,
            f"{name} is slow: {duration(seconds)}, over the {chapter.slow_test_seconds:g} s "
            "a test should take; a check runs it on every mutant, so make it do less",
            "!",
            "yellow",
        )


def render_diff(console: Console, chapter: Chapter, result: DiffResult) -> None:
    """The summary (which functions and methods differ, by how many lines, which are the
    student's own), then the unified diff."""
    diff = result.diff
    if not diff:
        console.print(f"your {chapter.implementation} is the same as the reference")
        return
    for line in diff_summary(chapter, result.methods):
        _whole(console, Text(line))
    console.print()
    if console.is_terminal:
        console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
    else:
        console.out(diff, end="", highlight=False)


def diff_summary(chapter: Chapter, methods: tuple[MethodDiff, ...]) -> list[str]:
    """The lines that open ``grader diff``: each function or method that differs."""
    last = f"The diff, from your {chapter.implementation} (-) to the reference (+):"
    if not methods:
        return [
            f"Your {chapter.implementation} differs from the reference outside its functions "
            "and methods only (imports, constants, docstrings).",
            last,
        ]

    def lines(count: int) -> str:
        return f"{count} line{'s' if count != 1 else ''}"

    many = len(methods) != 1
    said = [
        f"{len(methods)} function{'s' if many else ''} or method{'s' if many else ''} "
        f"differ{'' if many else 's'} from the reference:"
    ]
    for method in methods:
        if method.where == "yours":
            what = f"your own helper ({lines(method.removed)}), not in the reference"
        elif method.where == "reference":
            what = f"only in the reference ({lines(method.added)}), not in yours"
        else:
            what = (
                f"{lines(method.removed)} of yours against {lines(method.added)} of the reference's"
            )
        said.append(f"  {method.name}: {what}")
    return [*said, last]


def render_check(console: Console, chapter: Chapter, report: CheckReport) -> None:
    course = report.course_tests
    practice = practice_note(report)
    if practice:
        _mark(console, f"{practice}.", "!", "bold yellow")
    for note in unmodified_notes(chapter, report):
        _mark(console, note)
    console.print(
        f"[bold]Course tests on your {chapter.implementation}[/]: "
        f"{course.passed}/{course.total} passed"
    )
    for use in report.dependencies:
        _mark(console, _map_used(chapter, use), "·", "dim")
    if course.problem:
        _mark(console, course.problem)
    for name, status in course.results.items():
        if status != TestStatus.PASSED:
            _whole(console, Text.assemble(f"  {name}: ", _status(status)))
    maps = tuple(use.file for use in report.dependencies if use.file)
    for group in group_failures(course.failures):
        _render_failure_group(console, chapter, group, maps)

    student = report.student_tests
    console.print(
        f"\n[bold]Your tests[/] ({chapter.student_tests}): "
        + ("valid" if student.valid else "[red]not valid[/]")
    )
    for problem in student.problems:
        _mark(console, problem)
    for note in student.notes:
        _mark(console, note, "note:", "yellow")
    reasons = student.missing_reasons or tuple(f"{n} is missing: write it" for n in student.missing)
    if "tests" in report.files and report.files["tests"] is None:  # its problem says it all
        reasons = ()
    for reason in reasons:
        _mark(console, reason)
    _render_on_yours(console, chapter, report)
    _render_time(console, chapter, student.durations.get("reference", {}))

    mutation = report.mutation
    if mutation is not None:
        rows = [
            (Text(m.id), _status(m.status), Text("\n".join(m.killed_by))) for m in mutation.mutants
        ]
        _name_table(console, "Planted mutants", ("mutant", "status", "killed by"), rows)
        _render_worth(console, report)
        _render_seeds(console, mutation)
        _render_survivors(console, chapter, mutation)
        required = ", ".join(f"{m} {_styled(mutation.status(m))}" for m in mutation.required)
        console.print(
            f"Mutation score {mutation.score:.2f} ({mutation.killed}/{mutation.total}), "
            f"threshold {mutation.threshold:.2f}; required: {required}"
        )
    else:
        console.print("Mutation score: not measured until your tests are valid")
    _render_reused(console, chapter, report)
    _mark(console, f"Where the points came from: {grade_breakdown(chapter, report)}.", "=", "")
    console.print(_verdict_line(chapter, report))


def _render_seeds(console: Console, mutation: MutationResult) -> None:
    """The kills rerun with further seeds: the robust ones, each lucky one, each test flaky
    across seeds (``grader.grading.robustness``)."""
    header = seeds_header(mutation)
    if not header or mutation.robustness is None:
        return
    console.print(f"{header}:")
    robust, lucky = seeded_kills(mutation)
    if robust:
        _mark(console, f"robust: {', '.join(robust)}", "✓", "green")
    if not robust and not lucky:
        _indented(console, 2, "", "no kill was made by a test that draws examples")
    for sentence in lucky:
        _mark(console, sentence, "!", "yellow")
    for flaky in mutation.robustness.flaky:
        _mark(console, flaky_across_seeds(flaky), "!", "yellow")


def _render_survivors(console: Console, chapter: Chapter, mutation: MutationResult) -> None:
    """Each survivor as far as the witness tier shows it (``grader.grading.witness``): its planted
    bug, its symptom, the calls that tell it from a correct tree, their results."""
    witnesses = chapter_witnesses(chapter)
    shown = [
        (mutant, survivor_details(chapter, mutant.id, witnesses.get(mutant.id)))
        for mutant in mutation.survivors
    ]
    shown = [(mutant, details) for mutant, details in shown if mutant.title or details]
    if not shown:
        return
    console.print("What your tests miss (each survivor's planted bug):")
    for mutant, details in shown:
        flag = " [bold](required)[/]" if mutant.id in mutation.required else ""
        title = f": {escape(mutant.title)}" if mutant.title else ""
        console.print(f"  {mutant.id}{flag}{title}")
        for line in details:
            if line.startswith(" "):  # a line of code: whole, never wrapped
                _whole(console, Text(f"    {line}"))
            else:
                _indented(console, 4, "", line)


REUSED_PHASES = {
    "course_tests": "the course tests (your {implementation} is unchanged)",
    "tests": "the checks of your tests and the mutants (your {tests} is unchanged)",
    "yours": "your tests on your code (both files unchanged)",
}


def _render_reused(console: Console, chapter: Chapter, report: CheckReport) -> None:
    """Which phases came from an earlier check of the same files (``--no-cache`` reruns)."""
    if not report.reused:
        return
    names = {"implementation": chapter.implementation, "tests": chapter.student_tests}
    parts = [REUSED_PHASES[phase].format(**names) for phase in report.reused]
    _mark(
        console,
        f"Reused from an earlier check of the same files: {'; '.join(parts)}. "
        "grader check --no-cache runs them again.",
        "↺",
        "dim",
    )


def _render_on_yours(console: Console, chapter: Chapter, report: CheckReport) -> None:
    """The student's tests against the student's own code: valid on the reference, so a
    failure there means the two disagree, and the course tests say which one is wrong."""
    disagreeing = report.student_tests.on_yours
    if not disagreeing:
        return
    _mark(
        console,
        f"Your tests pass on the reference but not on your {chapter.implementation}: one of "
        "the two is wrong (the course tests above judge your code):",
        "!",
        "yellow",
    )
    for line in disagreeing:
        _mark(console, line, "  -", "yellow")


FIRST_KILLS = (
    "Each mutant's run stopped at the first of your tests that failed on it, in your file's "
    "order, so each mutant counts for that test alone; grader check --every-kill runs every "
    "test on every mutant and shows all that each one kills."
)


def _render_worth(console: Console, report: CheckReport) -> None:
    """Each of the student's tests with the mutants it kills; the ones that add nothing named.
    Where runs stopped at their first failure, a test's kills are those it made first."""
    if report.mutation is None:
        return
    first = report.first_kills_only
    worth = worth_of_tests(report.mutation, report.student_tests.tests)
    nothing = "adds no kill to the tests before it" if first else "kills nothing"
    rows = []
    for test in worth:
        note = Text("")
        if not test.kills:
            note = Text(nothing, style="yellow")
        elif test.covered_by:
            note = Text("every kill also made by:\n" + "\n".join(test.covered_by))
        rows.append((Text(test.name), Text(" ".join(test.kills)), note))
    columns = ("your test", "first to kill" if first else "kills", "note")
    _name_table(console, "What each of your tests is worth", columns, rows)
    idle = [test.name for test in worth if not test.kills]
    if idle:
        which = "add no kill to the tests before them" if first else "kill no mutant"
        _indented(console, 0, "", f"Tests that {which}: {', '.join(idle)}")
    if first:
        _indented(console, 0, "", FIRST_KILLS)
    covered = [test.name for test in worth if test.covered_by]
    if covered:
        _indented(
            console, 0, "", f"Tests whose every kill another test also makes: {', '.join(covered)}"
        )


def _map_used(chapter: Chapter, use: DependencyUse) -> str:
    """Which copy of an earlier chapter's module the student's tree ran with."""
    kit = f"the kit's {use.module}.py"
    if use.used == "submission" and use.file:
        return (
            f"your {chapter.implementation} ran with your {use.file} ({use.id}); "
            f"--ref-deps runs it with {kit}"
        )
    if use.used == "kit":
        return f"your {chapter.implementation} ran with {kit} (--ref-deps), not your own"
    return f"your {chapter.implementation} does not import {use.module} ({use.id})"


def _render_failure_group(
    console: Console, chapter: Chapter, group: FailureGroup, maps: tuple[str, ...] = ()
) -> None:
    """One box per way of failing: the tests that fail that way, one traceback, what to do;
    where the stack passes through the student's own map, that is said too."""
    through = through_a_map(group.detail, maps, chapter.implementation)
    checkers = chapter.course_tests_also_call
    if len(group.tests) == 1:
        rule = course_test_rule(chapter, group.tests[0])
        body = Text.assemble((rule, "italic"), "\n\n" if rule else "", group.detail.rstrip())
        damage = checker_step(group.detail, chapter.implementation, checkers)
        if through or damage:
            said = " ".join(part for part in (damage, through) if part)
            body.append_text(Text.assemble("\n\n", ("Next: ", "bold"), said))
        title = group.tests[0]
    else:
        listed = "\n".join(
            f"  {name}\n    {course_test_rule(chapter, name)}" for name in group.tests
        )
        body = Text.assemble(
            f"These {len(group.tests)} course tests all fail the same way:\n{listed}\n\n",
            group.detail.rstrip(),
            "\n\n",
            ("Next: ", "bold"),
            group.next_step(chapter.implementation, maps, checkers),
            f" {through}" if through else "",
        )
        title = f"{len(group.tests)} course tests, one failure"
    console.print(Panel(body, title=Text(title), title_align="left", border_style="red"))


def _verdict_line(chapter: Chapter, report: CheckReport) -> str:
    verdict, _, rest = verdict_sentence(chapter, report).partition(", ")
    colour = "green" if report.verdict == Verdict.PASS else "red"
    return f"[bold {colour}]{verdict}[/], {escape(rest)}"


def render_batch(console: Console, result: BatchResult) -> None:
    """The batch's rows as a table of short columns that fits 80 columns, then each
    student's problem and survivors as whole lines below it (a table cell would cut them)."""
    table = Table(title="Batch grading")
    for column in ("student", "verdict", "grade", "course", "mutation", "flags"):
        table.add_column(column, overflow="fold")
    for row in result.rows:
        verdict = "[green]pass[/]" if row.verdict == Verdict.PASS else "[red]fail[/]"
        mutation = "" if row.mutation_score is None else f"{row.mutation_score:.2f}"
        course = f"{row.course_tests_passed}/{row.course_tests_total}"
        flags = f"[yellow]{escape(' '.join(row.flags))}[/]" if row.flags else ""
        table.add_row(escape(row.student), verdict, f"{row.grade:g}", course, mutation, flags)
    console.print(table)
    for row in result.rows:
        if row.problem:
            _indented(console, 4, f"{row.student}: ", row.problem, label_style="bold")
        if row.survivors:
            _indented(console, 4, f"{row.student} survivors: ", " ".join(row.survivors))
    count = len(result.rows)
    rate = count / result.seconds * 60 if result.seconds else 0.0
    _whole(
        console,
        Text(
            f"{result.passed} of {count} passed, in {result.seconds:.1f} s ({rate:.1f} per "
            f"minute); gradebook: {result.gradebook}; each student's report (JSON, text, "
            f"page): {result.reports}"
        ),
    )
    if result.kept:
        console.print(f"{result.kept} earlier rows of the gradebook kept as they were")
    if result.resumed:
        _whole(
            console,
            Text(
                f"{len(result.resumed)} of the {count} not graded again: their rows were graded "
                "from the same files and kit (--no-resume grades them again)"
            ),
        )
    if result.backup is not None:
        console.print(f"the gradebook and reports replaced are saved in {result.backup}")
    _render_class(console, result.gradebook.parent, result.students, result.similarity)
    _render_overrides(console, result.overrides)
    _render_roster(console, result.gradebook.parent, result.roster, result.canvas)


def _render_overrides(console: Console, overrides: Sequence[Override]) -> None:
    """The grades set by hand, each on a line: they stand in place of the grader's."""
    if overrides:
        console.print(
            f"{len(overrides)} grade(s) set by hand, in the class page, the Canvas file and "
            "the gradebook's override column in place of the grader's:"
        )
    for override in overrides:
        _indented(console, 4, f"{override.student}: ", override.describe(), label_style="bold")


def render_override(console: Console, result: OverrideResult) -> None:
    override = result.override
    graded = "" if override.graded is None else f" (the grader gave {override.graded:g})"
    _whole(
        console,
        Text(
            f"{override.student}'s grade is now {override.grade:g}{graded}, set by {override.by} "
            f"at {override.at}; recorded in {result.out / 'overrides.json'}, kept by every later "
            "batch, merge and regrade"
        ),
    )
    console.print(f"the class page, with every grade set by hand: {result.out / 'class.html'}")
    _render_overrides(console, result.view.overrides)
    _render_roster(console, result.out, result.view.roster, result.view.canvas)


def _render_class(
    console: Console, folder: Path, students: int, similarity: Similarity | None
) -> None:
    if similarity is not None:
        flagged = sum(pair.flagged for pair in similarity.pairs)
        _whole(
            console,
            Text(
                f"{flagged} flagged pair(s) of similar files among the {students} students of "
                f"the gradebook: {folder / 'similarity.csv'}, side by side in "
                f"{folder / 'similarity.html'}; flags change no grade"
            ),
        )
        for finding in similarity.findings:
            _indented(console, 4, f"{finding.owner}: ", finding.reason, label_style="yellow")
    _whole(
        console,
        Text(f"the class at a glance ({students} students): {folder / 'class.html'} (class.json)"),
    )


def _render_roster(
    console: Console, folder: Path, roster: RosterMatch | None, canvas: Path | None
) -> None:
    if roster is None:
        return
    console.print(f"roster: {len(roster.matched)} submissions matched to a student id")
    if roster.unknown:
        console.print(
            f"[yellow]not in the roster[/] (left out of the Canvas file): "
            f"{escape(', '.join(roster.unknown))}"
        )
    if roster.missing:
        names = ", ".join(entry.name or entry.id for entry in roster.missing)
        console.print(
            f"[yellow]no submission[/] (in the Canvas file with no score): {escape(names)}"
        )
    listed = folder / "roster-check.csv"
    shown = f"; Canvas import file: {canvas}" if canvas else ""
    console.print(f"both lists in {listed}{shown}")


def render_manifest(console: Console, manifest: Manifest, path: Path) -> None:
    seconds = sum(entry.seconds for entry in manifest.entries)
    _whole(
        console,
        Text(
            f"wrote {path}: {len(manifest.entries)} submissions, about {seconds:.0f} s of "
            "grading; grade shard K of N with grader batch --manifest FILE --shard K/N"
        ),
    )


def render_merge(console: Console, result: MergeResult) -> None:
    _whole(
        console,
        Text(
            f"merged into {result.out}: {len(result.added)} added, {len(result.replaced)} "
            f"replaced by a newer grading, {result.unchanged} unchanged; "
            f"{result.students} students in the gradebook"
        ),
    )
    for conflict in result.conflicts:
        _indented(
            console,
            4,
            f"{conflict.student}: ",
            f"two copies disagree ({', '.join(conflict.differs)}); the row kept is flagged in "
            f"the gradebook's conflict column, the other copy is {conflict.copy}",
            label_style="bold red",
        )
    for student, why in result.refused:
        _indented(console, 4, f"{student}: ", f"not merged: {why}", label_style="bold red")
    if result.backup is not None:
        console.print(f"the gradebook and reports replaced are saved in {result.backup}")
    view = result.view
    _render_class(console, result.out, result.students, view.similarity)
    _render_overrides(console, view.overrides)
    _render_roster(console, result.out, view.roster, view.canvas)


def _render_changes(console: Console, replay: Replay) -> None:
    for change in replay.changes:
        _indented(console, 6, f"{change.what}: ", f"{change.before} -> {change.after}")


def render_replay(console: Console, replay: Replay) -> None:
    if replay.problem:
        console.print(f"[red]✗[/] {escape(replay.problem)}")
        return
    for what in ("verdict", "grade", "kills"):
        same = replay.same(what)
        mark = "[green]identical[/]" if same else "[red]changed[/]"
        console.print(f"{what}: {mark}")
    if replay.key_changes:
        console.print(
            f"[yellow]graded under another key[/]: {escape(', '.join(replay.key_changes))} "
            "differ from the report's"
        )
    _render_changes(console, replay)
    if replay.identical and not replay.key_changes:
        console.print("[bold green]replayed: the same result, every kill included[/]")
    else:
        console.print("[bold red]replayed: not the same[/]")


def render_regrade(
    console: Console,
    regrade: Regrade,
    details: bool = False,
    overrides: Mapping[str, Override] | None = None,
) -> None:
    """The release gate: a table of every student (verdict and grade before and now, the
    one-line reason, a grade set by hand), then the changes of the rows that moved (of
    every row with ``details``), each value cut to one line unless ``details``."""
    overrides = overrides or {}
    moved = [replay for replay in regrade.students if replay.moved]
    changed = regrade.changed
    _whole(
        console,
        Text(
            f"regraded {len(regrade.students)} students of {regrade.out} with the kit installed "
            f"now, in {regrade.seconds:.1f} s: {len(moved)} moved (verdict, grade or a kill), "
            f"{len(changed) - len(moved)} more with another report"
        ),
    )
    table = Table(title="Regrade: before -> now")
    for column in ("student", "verdict", "grade", "reason"):
        table.add_column(column, overflow="fold")
    for replay in regrade.students:
        style = "red" if replay.moved else "" if replay.identical else "yellow"
        table.add_row(
            Text(replay.student, style="bold" if replay.moved else ""),
            Text(_before_now(replay.verdict, replay.now("verdict")), style=style),
            Text(_before_now(replay.grade, replay.now("grade")), style=style),
            Text(replay.reason + _overridden(overrides.get(replay.student))),
        )
    for student, why in regrade.skipped:
        table.add_row(Text(student), Text("-"), Text("-"), Text(f"not regraded: {why}"))
    console.print(table)
    shown = [r for r in regrade.students if r.moved or (details and r.changes)]
    for replay in shown:
        _indented(console, 2, f"{replay.student}: ", replay.reason, label_style="bold")
        for change in replay.changes:
            before, after = change.before, change.after
            if not details:
                before, after = _one_line(before), _one_line(after)
            _indented(console, 6, f"{change.what}: ", f"{before} -> {after}")
    hidden = len([r for r in changed if not r.moved]) if not details else 0
    if hidden:
        console.print(
            f"{hidden} row(s) whose verdict, grade and kills stayed have other changes: "
            "grader regrade --details shows them"
        )


def _overridden(override: Override | None) -> str:
    if override is None:
        return ""
    return f"; the grade of record stays {override.grade:g}, set by hand by {override.by}"


def _before_now(before: str, now: str) -> str:
    return before if before == now else f"{before} -> {now}"


def _one_line(value: str, width: int = 120) -> str:
    """``value`` on one line, cut at ``width`` characters with a note of what was cut."""
    flat = " ".join(value.split())
    return flat if len(flat) <= width else f"{flat[:width]}... ({len(flat)} characters)"


def render_bundle(console: Console, bundle: Bundle) -> None:
    console.print(
        f"wrote {bundle.path}: setup.sh, run_autograder and the kit "
        f"({len(bundle.files)} files), with {len(bundle.constraints)} dependencies pinned"
    )
    console.print(
        "Upload it as the autograder of a Gradescope programming assignment "
        "(Configure Autograder > Zip file upload)."
    )


def render_release(console: Console, release: Release) -> None:
    console.print(f"wrote {release.wheel} ({release.edition} edition) and {release.constraints}")
    if release.edition == "student":
        console.print(
            f"  read back: {len(release.contents)} files, each on the catalog's [release] "
            "student list, none staff-only, the witnesses at the students' tier"
        )
    for relative in release.left_out:
        console.print(f"  left out (not for students): {relative}")
    if release.edition == "student":
        console.print(
            "Hand this folder to students; they install it with "
            f"pip install {release.wheel.name} -c {release.constraints.name}"
        )


def render_audit(console: Console, report: AuditReport) -> None:
    """The audit in the terminal: the kill rate, then what needs attention, by function."""
    whose = "the course tests" if report.suite == "course" else "your tests"
    console.print(
        f"[bold]Generated mutants[/] of {report.reference} ({report.tool}) against {whose} "
        f"({escape(report.tests)})"
    )
    counted = len(report.counted)
    breakdown = ", ".join(
        f"{report.count(s)} {s}"
        for s in STATUS_ORDER
        if report.count(s) or s in (AuditStatus.SURVIVED, AuditStatus.NO_TESTS)
    )
    rate = report.detected / counted if counted else 0.0
    console.print(f"Kill rate {rate:.1%} ({report.detected}/{counted} counted): {breakdown}")
    aside = len(report.mutants) - counted
    if aside:
        mutants = "mutant" if aside == 1 else "mutants"
        console.print(f"Set aside: {aside} {mutants} listed as equivalent, each with its reason")
    for whole in report.excluded:
        console.print(f"Not run: the mutants of {escape(whole.name)}: {escape(whole.reason)}")
    if report.planted is not None:
        planted = report.planted
        console.print(
            f"[bold]Planted mutants[/] (your grade): {planted.killed}/{planted.total} killed, "
            f"score {planted.score:.2f}. The generated mutants' kill rate is information: "
            "it is never part of the verdict."
        )
    by_function: dict[str, list[GeneratedMutant]] = {}
    for mutant in report.survivors:
        by_function.setdefault(mutant.function, []).append(mutant)
    if by_function:
        console.print(f"\n[bold]Not killed[/], by function ({len(report.survivors)}):")
    for function, survivors in by_function.items():
        total = sum(m.function == function and m.equivalent is None for m in report.mutants)
        console.print(f"[bold]{escape(function)}[/]: {len(survivors)} of {total} not killed")
        for mutant in survivors:
            console.print(f"  {escape(mutant.id)}  line {mutant.line}  {_styled(mutant.status)}")
            if report.suite == "submission":
                console.print(
                    f"    {escape(mutant.original)}  ->  {escape(mutant.mutated)}", highlight=False
                )
            elif console.is_terminal:
                console.print(
                    Syntax(mutant.diff, "diff", theme="ansi_dark", background_color="default")
                )
            else:
                console.out(mutant.diff, highlight=False)
    for entry in report.stale:
        console.print(
            f"[yellow]equivalent.toml[/]: {escape(entry.id)} ({escape(entry.function)}) "
            f"{escape(entry.problem)}"
        )
    took, mutation, each = (report.timings.get(k, 0.0) for k in ("total", "mutation", "per_mutant"))
    console.print(
        f"\nThe audit took {took:.0f} s: {mutation:.0f} s for {len(report.mutants)} mutants "
        f"({each:.2f} s each), the rest for mutmut's runs of the tests on the reference."
    )


def render_mining(console: Console, result: MiningResult) -> None:
    """A mine in a few lines: what ran, then each ranked group, candidates marked."""
    if result.shard:
        _whole(
            console,
            Text(
                f"mine shard {result.shard}: {result.ran} runs made, {result.reused} taken again "
                f"(isolation {result.isolation}); run grader mine {result.out} to draw the page"
            ),
        )
        return
    _whole(
        console,
        Text(
            f"{len(result.bugs)} real bugs in {len(result.groups)} groups against "
            f"{len(result.test_files)} valid test files; {result.ran} runs made, "
            f"{result.reused} taken again (isolation {result.isolation})"
        ),
    )
    for group in result.groups:
        label = f"{group.rank}. {'candidate' if group.candidate else 'covered'}: "
        style = "bold yellow" if group.candidate else "bold"
        _indented(console, 4, label, group.line, label_style=style)
    for student, why in result.left_out:
        _indented(console, 4, f"{student}: ", f"left out: {why}", label_style="bold red")
    console.print(f"the page: {result.out / 'mining.html'}; the data: {result.out / 'mining.json'}")
