"""Course-test failures grouped by where they end, so one cause is shown once.

A fresh stub fails every course test the same way (each dies in
``RadixTree.__init__``), and eleven copies of one traceback hide the one
thing to do. Failures whose report ends at the same frame with the same error
are one group: the tests are listed together, the traceback is shown once,
and the group says what to fix first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from grader.grading.model_program import PROGRAM_HEADER, last_call

SHRUNK_PROGRAM = ("Failing test case:", PROGRAM_HEADER)
"""How a report opens the shrunk program of a failing model-based test (hypothesis's words,
or the chapter's): a group that holds one shows that report, so the program is never hidden
behind another test's."""
LOCATION = re.compile(r"^(?P<file>\S+?):(?P<line>\d+): in (?P<function>\S+)")
"""A frame line of pytest's report: ``radix.py:58: in __init__``."""


@dataclass(frozen=True)
class FailureGroup:
    """Course tests whose failures end at the same frame with the same error."""

    tests: tuple[str, ...]
    detail: str
    """The one traceback shown for the group: the first report with a shrunk program of
    calls, else the first test's."""
    where: str
    """The last frame, ``radix.py:58 in __init__``, or empty when the report names none."""
    error: str
    """The error's first line, ``NotImplementedError: …``, or empty."""

    def next_step(
        self, implementation: str, maps: Sequence[str] = (), checkers: Sequence[str] = ()
    ) -> str:
        """What to do about this group, in one sentence; ``maps`` are the student's own
        earlier chapters' modules the implementation ran with (``robin_hood.py``),
        ``checkers`` the names of an implementation's own invariant check (``_check``)."""
        if not self.where:
            return "Read the first report above: the others fail the same way."
        count = "every test listed stops" if len(self.tests) > 1 else "the test stops"
        damage = checker_step(self.detail, implementation, checkers)
        if damage:
            return damage
        if self.where.split(":", 1)[0] in (implementation, *maps):
            return f"Fix {self.where} first: {count} there, so one change may clear them all."
        return (
            f"{count.capitalize()} at {self.where}, in the course tests: the error says what "
            f"your {implementation} did that they did not expect."
        )


def checker_step(detail: str, implementation: str, checkers: Sequence[str]) -> str:
    """Where a failure stops in the student's own invariant check (``_check``), which only
    reports damage done earlier: the first frame of the student's code below the call that
    failed, when that is not the check; else the last call before the check, said as the
    likely place (the check itself may be wrong: said too). ``""`` otherwise."""
    own = [
        (frame["line"], frame["function"])
        for frame in map(LOCATION.match, detail.splitlines())
        if frame and frame["file"] == implementation
    ]
    if not own or not any(function in checkers for _, function in own):
        return ""
    check = next(f"{implementation}:{line} in {name}" for line, name in own if name in checkers)
    line, function = own[0]
    if function not in checkers:
        return (
            f"Fix {implementation}:{line} in {function} first: your own invariant check "
            f"({check}) found the damage it did."
        )
    before = last_call(detail)
    where = f" ({before} in the program above)" if before else " (the test's line above it)"
    return (
        f"{check} is your own invariant check: it found the tree broken, it did not break it. "
        f"The bug is most likely in the last call before the check{where}; fix the check "
        "instead only if the tree it rejects is a correct one."
    )


def through_a_map(detail: str, maps: Sequence[str], implementation: str) -> str:
    """The sentence for a failure whose stack passes through one of the student's own
    earlier chapters' modules (``maps``: ``robin_hood.py``), naming its last frame there;
    ``""`` when it does not pass through one."""
    last = ""
    for line in detail.splitlines():
        frame = LOCATION.match(line)
        if frame and frame["file"] in maps:
            last = f"{frame['file']}:{frame['line']} in {frame['function']}"
    if not last:
        return ""
    file = last.split(":", 1)[0]
    return (
        f"This failure passes through your {file} ({last}): the bug may be in your {file}, "
        f"not in your {implementation}. grader check --ref-deps runs your {implementation} "
        f"with the kit's {file}: if the course tests pass then, fix your {file}."
    )


def signature(detail: str) -> tuple[str, str]:
    """The last frame and the first error line of a pytest report (empty when absent)."""
    where = ""
    error = ""
    for line in detail.splitlines():
        frame = LOCATION.match(line)
        if frame:
            where = f"{frame['file']}:{frame['line']} in {frame['function']}"
            error = ""
        elif line.startswith("E ") and not error:
            error = line[1:].strip()
    return where, error


def group_failures(failures: Mapping[str, str]) -> list[FailureGroup]:
    """The reports of ``failures`` (test name → pytest's report) grouped by ``signature``,
    in the order of each group's first test. Reports with no frame and no error stay alone."""
    groups: dict[tuple[str, str] | str, list[str]] = {}
    for name, detail in failures.items():
        if not detail.strip():
            continue
        key: tuple[str, str] | str = signature(detail)
        if key == ("", ""):
            key = name
        groups.setdefault(key, []).append(name)
    result = []
    for key, tests in groups.items():
        where, error = key if isinstance(key, tuple) else ("", "")
        # The report shown for the group: one with hypothesis's program of calls, if any.
        shown = next(
            (t for t in tests if any(mark in failures[t] for mark in SHRUNK_PROGRAM)), tests[0]
        )
        result.append(FailureGroup(tuple(tests), failures[shown], where, error))
    return result
