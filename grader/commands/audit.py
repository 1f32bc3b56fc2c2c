"""``audit``: mutmut's generated mutants of the reference, against the course tests or a student's.

The 18 planted mutants are the grade; they are few, and a test file can be
tuned to them. mutmut generates hundreds of small mutants of the reference
mechanically, a second measure that nobody chose. The audit runs in phases
and stops with a clear message when one fails:

1. lay out a temporary copy of the kit: the reference as a top-level
   ``radix.py`` (so that ``import radix`` names the module mutmut mutates),
   the one test file under ``tests/``, a ``conftest.py`` that runs tests in
   file order with hypothesis derandomized and not shrinking, and the mutmut
   configuration. mutmut 3 writes its working copy into ``mutants/`` of the
   project root, which must not be the kit's own ``mutants/``;
2. ``mutmut run`` there (see ``grader.grading.mutmut_driver``); mutmut itself first
   checks that the tests pass on the unmutated code and fail when every
   function raises;
3. read mutmut's result for each mutant and each mutant's diff, and set
   aside the mutants that ``mutants/equivalent.toml`` lists as unable to
   change behaviour, each with its reason.

The kill rate counts killed, timed-out and crashed mutants over every mutant
not set aside; a mutant no test reaches (mutmut's "no tests") counts as not
killed. For a submission the score is information shown beside the
planted-mutant grade, never part of the verdict.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import tomllib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.commands.check import check
from grader.errors import EXIT_FAIL, GraderError
from grader.grading.jobs import Limits
from grader.grading.mutmut_driver import (
    Progress,
    SourceFunction,
    change_of,
    function_key,
    lay_out,
    mutmut_version,
    run_mutmut,
    selected_by,
    source_functions,
    status_of,
)
from grader.inputs.catalog import Chapter
from grader.inputs.submission import read_submission
from grader.results.audit import (
    AuditReport,
    EquivalentFunction,
    EquivalentMutant,
    Equivalents,
    GeneratedMutant,
    StaleEntry,
    Suite,
)
from grader.results.check import MutationResult
from grader.sandbox.host.mutmut_run import read_mutmut_diffs

EQUIVALENTS_FILE = "equivalent.toml"


def equivalents_path(chapter: Chapter) -> Path:
    """``equivalent.toml`` in the kit's ``mutants/``, beside the planted mutants."""
    return chapter.reference.parent.parent / "mutants" / EQUIVALENTS_FILE


def load_equivalents(path: Path) -> Equivalents:
    """Read the list of equivalent mutants; a missing file lists none."""
    if not path.exists():
        return Equivalents()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return Equivalents(
            tuple(
                EquivalentFunction(str(e["name"]), str(e["reason"]))
                for e in data.get("function", [])
            ),
            tuple(
                EquivalentMutant(
                    *(str(e[k]) for k in ("id", "function", "original", "mutated", "reason"))
                )
                for e in data.get("mutant", [])
            ),
        )
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as error:
        raise GraderError(f"the kit is broken: cannot read {path}: {error!r}") from error


def _selected(
    functions: dict[str, SourceFunction], only: Sequence[str], excluded: Sequence[str]
) -> list[SourceFunction]:
    """The functions to mutate: ``only`` (qualified or bare names) if given, minus ``excluded``."""
    chosen = list(functions.values())
    if only:
        unknown = [n for n in only if not any(n in (f.qualname, _bare(f)) for f in chosen)]
        if unknown:
            raise GraderError(f"no function {', '.join(unknown)} in the reference")
        chosen = [f for f in chosen if f.qualname in only or _bare(f) in only]
    return [f for f in chosen if f.qualname not in excluded]


def _bare(function: SourceFunction) -> str:
    return function.qualname.rpartition(".")[2]


def _text(lines: Sequence[str]) -> str:
    return "\n".join(line.strip() for line in lines)


def _assemble(
    meta: dict[str, Any], diffs: dict[str, str], source: str, functions: dict[str, SourceFunction]
) -> list[GeneratedMutant]:
    lines = source.splitlines()
    mutants = []
    for name, diff in diffs.items():
        function = functions[function_key(name)]
        change = change_of(diff, lines, function.def_line)
        code = meta["exit_code_by_key"][name]
        mutants.append(
            GeneratedMutant(
                id=name,
                function=function.qualname,
                line=change.line,
                status=status_of(code),
                exit_code=code,
                diff=diff,
                original=_text(change.removed),
                mutated=_text(change.added),
                seconds=round(float(meta.get("durations_by_key", {}).get(name) or 0.0), 3),
            )
        )
    return sorted(mutants, key=lambda m: (m.line, _number(m.id)))


def _number(mutant_id: str) -> int:
    return int(mutant_id.rpartition("__mutmut_")[2] or 0)


def mark_equivalents(
    mutants: Sequence[GeneratedMutant], listed: Sequence[EquivalentMutant], functions: set[str]
) -> tuple[list[GeneratedMutant], list[StaleEntry]]:
    """Set aside the listed mutants; an entry is found by its id, else by its change.

    Returns the mutants (listed ones carrying their reason) and the entries
    that need an edit: found under another id, found nowhere, or killed
    after all (then it counts as killed). Entries of functions outside
    ``functions`` are not judged.
    """
    by_id = {m.id: m for m in mutants}
    reasons: dict[str, str] = {}
    stale = []
    for entry in listed:
        if entry.function not in functions:
            continue
        candidates = [by_id[entry.id]] if entry.id in by_id else []
        candidates += [m for m in mutants if m.function == entry.function and m.id != entry.id]
        found = next(
            (m for m in candidates if (m.original, m.mutated) == (entry.original, entry.mutated)),
            None,
        )
        if found is None:
            stale.append(StaleEntry(entry.id, entry.function, "matches no generated mutant"))
            continue
        if found.id != entry.id:
            stale.append(StaleEntry(entry.id, entry.function, f"is now {found.id}"))
        if found.detected:  # counted as the kill it is
            problem = f"the tests kill {found.id} ({found.status}): it is not equivalent"
            stale.append(StaleEntry(entry.id, entry.function, problem))
        else:
            reasons[found.id] = entry.reason
    marked = [replace(m, equivalent=reasons[m.id]) if m.id in reasons else m for m in mutants]
    return marked, stale


def run_audit(
    chapter: Chapter,
    submission: Path | None = None,
    *,
    functions: Sequence[str] = (),
    jobs: int | None = None,
    grade: bool = True,
    progress: Progress | None = None,
) -> AuditReport:
    """Run mutmut's mutants of the reference against the course tests, or a submission's tests.

    ``functions`` restricts the audit to some functions (``RadixTree.insert``
    or ``insert``); ``jobs`` is mutmut's number of parallel runs (default:
    the CPUs). For a submission with ``grade`` (the default), ``check`` runs
    first: its tests must be valid, and the report carries the planted-mutant
    grade beside the generated mutants' kill rate. mutmut itself refuses tests
    that fail on the reference.
    """
    started = time.monotonic()
    version = mutmut_version()
    jobs = _jobs(jobs)
    listed = load_equivalents(equivalents_path(chapter))
    suite, test_name, tests_text, shown = _suite(chapter, submission)
    planted = _planted(chapter, submission) if submission is not None and grade else None
    source = chapter.reference.read_text(encoding="utf-8")
    known = source_functions(source)
    excluded = [f.name for f in listed.functions]
    chosen = _selected(known, functions, excluded)
    if not chosen:
        raise GraderError("no function left to mutate after the exclusions")
    restricted = bool(functions) or len(chosen) < len(known)
    module = chapter.reference.stem
    names = [f"{module}.{f.key}__mutmut_*" for f in chosen] if restricted else []
    meta, diffs, began = _run_in_scratch(
        chapter, source, test_name, tests_text, names, jobs, progress
    )
    mutants, stale = mark_equivalents(
        _assemble(meta, diffs, source, known), listed.mutants, {f.qualname for f in chosen}
    )
    stale = [] if suite == "submission" else stale + _stale_functions(listed, known)
    in_scope = {f.qualname for f in _selected(known, functions, ())}
    set_aside = tuple(f for f in listed.functions if f.name in in_scope)
    not_run = sum(known[function_key(n)].qualname in in_scope for n in meta["exit_code_by_key"])
    timings = _timings(started, began, len(mutants))
    return AuditReport(
        chapter.id,
        suite,
        shown,
        f"reference/{chapter.reference.name}",
        source,
        f"mutmut {version}",
        tuple(mutants),
        set_aside,
        not_run - len(mutants),
        tuple(stale),
        planted,
        timings,
    )


def _timings(started: float, began: dict[str, float], mutants: int) -> dict[str, float]:
    """The audit's seconds: mutmut in all, its mutant runs, per mutant, and the whole audit."""
    mutmut_ended = began["ended"]
    mutation_seconds = mutmut_ended - began.get("mutants", mutmut_ended)
    return {
        "mutmut": round(mutmut_ended - began["started"], 3),
        "mutation": round(mutation_seconds, 3),
        "per_mutant": round(mutation_seconds / mutants, 3) if mutants else 0.0,
        "total": round(time.monotonic() - started, 3),
    }


def _jobs(jobs: int | None) -> int:
    """mutmut's parallel runs: ``jobs``, or the CPUs."""
    jobs = (os.cpu_count() or 2) if jobs is None else jobs
    if jobs < 1:
        raise GraderError(f"--jobs must be at least 1, got {jobs}")
    return jobs


def _stale_functions(listed: Equivalents, known: dict[str, SourceFunction]) -> list[StaleEntry]:
    """The listed functions the reference no longer defines (judged for the course tests
    only: a submission's audit reports none)."""
    defined = {f.qualname for f in known.values()}
    return [
        StaleEntry(f.name, f.name, "names no function of the reference")
        for f in listed.functions
        if f.name not in defined
    ]


def _suite(chapter: Chapter, submission: Path | None) -> tuple[Suite, str, str, str]:
    """Whose tests the audit runs: the suite, the test file's name, its text, and the file as
    the report names it."""
    if submission is None:
        test_name = chapter.course_test_file.name
        tests_text = chapter.course_test_file.read_text(encoding="utf-8")
        return "course", test_name, tests_text, f"course_tests/{test_name}"
    test_name = Path(chapter.student_tests).name
    shown = str(submission / chapter.student_tests)
    return "submission", test_name, _student_tests(chapter, submission), shown


def _run_in_scratch(
    chapter: Chapter,
    source: str,
    test_name: str,
    tests_text: str,
    names: list[str],
    jobs: int,
    progress: Progress | None,
) -> tuple[dict[str, Any], dict[str, str], dict[str, float]]:
    """mutmut in a scratch folder, removed after: its meta data, the diffs of the mutants
    run, and when each of its phases began (``started`` and ``ended``: mutmut itself)."""
    folder = Path(tempfile.mkdtemp(prefix="grader-audit-"))
    try:
        beside = [(n.implementation, n.reference.read_text("utf-8")) for n in chapter.needs]
        lay_out(folder, chapter.reference.name, source, test_name, tests_text, beside)
        started = time.monotonic()
        began = run_mutmut(folder, chapter.reference.name, names, jobs, progress)
        began = {**began, "started": started, "ended": time.monotonic()}
        meta_path = folder / "mutants" / f"{chapter.reference.name}.meta"
        meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
        run = [n for n in meta["exit_code_by_key"] if selected_by(n, names)]
        diffs = read_mutmut_diffs(folder, chapter.reference.name, run)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return meta, diffs, began


def _student_tests(chapter: Chapter, folder: Path) -> str:
    submission = read_submission(chapter, folder)
    if submission.tests is None:
        raise GraderError(f"no tests to audit: {submission.tests_problem}", exit_code=EXIT_FAIL)
    return submission.tests


def _planted(chapter: Chapter, folder: Path) -> MutationResult:
    """The planted-mutant grade; the audit needs tests that ``check`` found valid."""
    report = check(chapter, folder, Limits())
    if report.mutation is None:
        problems = [*report.student_tests.problems]
        problems += [f"missing required test {name}" for name in report.student_tests.missing]
        first = problems[0] if problems else "see grader check"
        raise GraderError(
            f"your tests are not valid yet ({first}); grader check says why", exit_code=EXIT_FAIL
        )
    return report.mutation
