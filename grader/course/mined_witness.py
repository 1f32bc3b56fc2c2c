"""The witness search run on a student's tree: as a test file in a confined run, never here.

A student's ``radix.py`` never runs in the grader's process, so the kit's
witness search (``grader.grading.witness_search``) goes to it: the run's test
file is that module's own text, the reference's and each wheat's source and
the kit's copy of every module they need as strings, and one test that loads
them in the test process and searches, the student's tree reached through the
run's stand-in module like any test's. The test fails with the program it
found, one line of JSON after ``MARK``; it passes when the search finds none.

What comes back is a test's failure text: data, parsed strictly
(``witness_from_detail``), never trusted further. The test process is the
kit's and the student's code cannot reach its outcome channel, but every
result the student's tree gave is the student's: it is shown, escaped, and
decides nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader.grading import witness_search
from grader.grading.jobs import student_tests_job
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import Sources, kit_sources
from grader.inputs.patching import apply_patch
from grader.results.mining import MinedWitness
from grader.sandbox.host.job import Job
from grader.sandbox.host.result import RunResult
from grader.sandbox.protocol.status import RunStatus, TestStatus

MARK = "mined-witness: "
"""What starts the line of the failure text that holds the program found."""
TEST = "test_search_for_a_witness"
MAX_EXAMPLES = 400
"""Programs the search tries before it gives up (the kit's own search tries 3,000, then
20,000): a tree that fails a course test differs early, and every call is a round trip.
Hypothesis's explain phase, which only words a failure, is left out: it cost the search
three times its shrinking."""
METHODS = frozenset(
    {"insert", "match_prefix", "lock", "unlock", "evict"}
    | set(witness_search.TREE_READS)
    | set(witness_search.NODE_READS)
)

_DRIVER = """

import json as _json
import sys as _sys
import types as _types

import pytest as _pytest
from hypothesis import Phase as _Phase

_KIT_MODULES = {kit_modules!r}
_CORRECT = {correct!r}
_MARK = {mark!r}


def _load(name: str, source: str) -> _types.ModuleType:
    module = _types.ModuleType(name)
    exec(compile(source, name + ".py", "exec"), module.__dict__)
    return module


def {test}() -> None:
    import {module} as student

    for name, source in _KIT_MODULES:
        _sys.modules[name] = _load(name, source)
    trees = [_load("{module}", source) for source in _CORRECT]
    phases = [phase for phase in _Phase if phase.name != "explain"]
    width = settings(SEARCH, max_examples={examples}, phases=phases)
    found = search([*trees, student], (width,))
    if found is not None:
        shown = {{"granule": found.granule, "calls": found.calls}}
        _pytest.fail(_MARK + _json.dumps(shown, sort_keys=True), pytrace=False)
"""


def probe_source(chapter: Chapter) -> str:
    """The test file of the search: ``witness_search``'s own text, then its driver."""
    search = Path(witness_search.__file__).read_text(encoding="utf-8")
    reference = chapter.reference.read_text(encoding="utf-8")
    correct = [reference, *(apply_patch(reference, wheat.patch) for wheat in chapter.wheats)]
    driver = _DRIVER.format(
        kit_modules=list(kit_sources(chapter)),
        correct=correct,
        mark=MARK,
        test=TEST,
        module=chapter.module,
        examples=MAX_EXAMPLES,
    )
    return search + driver


def probe_job(chapter: Chapter, implementation: str, dependencies: Sources, limit: float) -> Job:
    """The run of the search against a student's ``implementation`` (with its own
    ``dependencies``), confined and bounded as the student's tests on their own tree are."""
    return student_tests_job(
        chapter, probe_source(chapter), implementation, limit, dependencies=dependencies,
        own_tree=True,
    )  # fmt: skip


def witness_from_run(run: RunResult) -> tuple[MinedWitness | None, str]:
    """The program the search found in ``run``, or ``None`` and why none was."""
    if run.status != RunStatus.COMPLETED and run.status != RunStatus.STOPPED:
        return None, f"the search did not finish: {run.message}"
    if run.outcome(TEST) == TestStatus.PASSED:
        return None, "no program of the search's size tells it from the reference"
    return witness_from_detail(run.detail(TEST))


def witness_from_detail(detail: str) -> tuple[MinedWitness | None, str]:
    """The witness on the ``MARK`` line of a failure text, checked for shape; else ``None``
    and the failure's last line (the search stopped: the tree hung, say)."""
    lines = [line for line in detail.splitlines() if line.strip()]
    found = [line.split(MARK, 1)[1] for line in lines if MARK in line]
    if not found:
        return None, f"the search stopped: {lines[-1].strip() if lines else 'no report'}"
    try:
        data = json.loads(found[-1])
        calls = tuple(_checked_call(call) for call in data["calls"])
        granule = data["granule"]
        if not calls or type(granule) is not int or granule not in witness_search.GRANULES:
            raise ValueError("no calls, or not a granule")
    except (ValueError, KeyError, TypeError) as error:
        return None, f"the search's report does not read: {error}"
    return MinedWitness(granule, calls), ""


def _checked_call(call: Any) -> dict[str, Any]:
    """One call of a witness as the search writes it, or ``ValueError``."""
    keys = {"method", "args", "reference", "mutant", "code"}
    if not isinstance(call, dict) or set(call) != keys or call["method"] not in METHODS:
        raise ValueError(f"not a call of the search: {str(call)[:80]}")
    if not isinstance(call["args"], list) or not isinstance(call["code"], str):
        raise ValueError("a call's arguments or code are not as the search writes them")
    for side in ("reference", "mutant"):
        result = call[side]
        if not isinstance(result, dict) or len(result) != 1 or set(result) - {"returns", "raises"}:
            raise ValueError(f"a call's {side} result is not as the search writes it")
    return dict(call)


def shape(witness: MinedWitness | None) -> str:
    """The program's shape for grouping: its calls' methods in order, and how the last
    differs (``raises`` or ``returns``); ``none`` where no program was found."""
    if witness is None:
        return "none"
    last = witness.calls[-1]
    how = "raises" if "raises" in last["mutant"] else "returns"
    return " ".join(call["method"] for call in witness.calls) + f" -> {last['method']} {how}"
