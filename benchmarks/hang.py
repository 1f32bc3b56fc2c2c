"""How long ``grader check`` and ``grader tdd green`` take on a tree that hangs (issue 35).

On the model-answer submission (``reference/`` and its tests), and on the same
submission whose ``radix.py`` loops for ever in ``evict`` once no leaf is left
(the infinite loop of issue 35's student), this measures as a student runs them
(a fresh process each, no result cache):

- ``check --time-limit LIMIT`` on the hanging tree, as a ratio of ``LIMIT``
  (target at most 1.5: ``--time-limit`` bounds the whole command) and of the same
  check on the correct tree (the price of the hang: the call bound, one second of
  CPU time per call that hangs);
- ``tdd green`` on each, and the hanging one's ratio to its limit plus a few seconds.

It also prints the reference's slowest call over the course tests, in process
(``pytest course_tests``, each public member timed in CPU time), beside the
catalog's ``[hang] reference_slowest_call_seconds`` and the call bound it gives
(``Chapter.call_limit``: ``factor`` times it, at least ``floor_seconds``): rerun
after a change of the reference, and update the catalog if they drift apart.

Each of ``--repeat`` rounds takes every figure once, back to back (the machine
is shared); a figure is the best of the rounds.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.commands.tdd import TIME_LIMIT as TDD_TIME_LIMIT
from grader.inputs.catalog import Chapter, load_chapter

LOOP = "        while freed < n and self._next[ROOT] != ROOT:\n"
HANGS = (
    "        while freed < n:\n            if self._next[ROOT] == ROOT:\n                continue\n"
)
TDD_MARGIN_SECONDS = 5.0
"""The "few seconds" ``tdd green`` may take past its limit."""


def submission(chapter: Chapter, root: Path, hangs: bool) -> Path:
    folder = root / ("hanging" if hangs else "correct")
    (folder / "tests").mkdir(parents=True)
    source = chapter.reference.read_text(encoding="utf-8")
    if hangs:
        assert source.count(LOOP) == 1, "the reference's evict changed: update LOOP"
        source = source.replace(LOOP, HANGS)
    (folder / chapter.implementation).write_text(source, encoding="utf-8")
    shutil.copyfile(chapter.model_tests, folder / chapter.student_tests)
    for need in chapter.needs:
        shutil.copyfile(need.reference, folder / need.implementation)
    return folder


def timed(*arguments: str) -> float:
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "grader", *arguments, "--no-cache"]
        if arguments[0] == "check"
        else [sys.executable, "-m", "grader", *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        env={**os.environ},
    )
    return time.monotonic() - started


def slowest_reference_call(chapter: Chapter) -> tuple[float, str]:
    """The reference's slowest call (CPU seconds, member) over the course tests, in process."""
    import pytest  # only this figure needs it

    sys.path[:0] = [str(chapter.reference.parent)]
    import radix

    slowest: list[tuple[float, str]] = [(0.0, "")]

    def timed_member(name: str, member: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(member)
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return member(*args, **kwargs)
            finally:
                took = time.process_time() - started
                if took > slowest[0][0]:
                    slowest[0] = (took, name)

        return call

    reachable = {name for _, members in chapter.members for name in members}
    for name in {*reachable, *chapter.course_tests_also_call, "__init__"}:
        member = vars(radix.RadixTree).get(name)
        if callable(member):
            setattr(radix.RadixTree, name, timed_member(name, member))
    pytest.main(["-q", "-p", "no:cacheprovider", str(chapter.course_test_file)])
    return slowest[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="rounds (best of)")
    parser.add_argument("--time-limit", type=float, default=20.0, help="check's --time-limit")
    args = parser.parse_args(argv)
    chapter = load_chapter()
    limit = args.time_limit
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        folders = {hangs: submission(chapter, root, hangs) for hangs in (False, True)}
        for _ in range(args.repeat):
            for hangs, folder in folders.items():
                name = "hanging" if hangs else "correct"
                at = ("--submission", str(folder))
                figures.setdefault(f"check {name}", []).append(
                    timed("check", *at, "--time-limit", f"{limit:g}")
                )
                figures.setdefault(f"tdd {name}", []).append(timed("tdd", "green", *at))
    best = {name: min(values) for name, values in figures.items()}
    print(
        f"check --time-limit {limit:g}: hanging tree {best['check hanging']:.1f} s, "
        f"correct tree {best['check correct']:.1f} s"
    )
    print(
        f"  hanging / limit: {best['check hanging'] / limit:.2f} (target <= 1.5); "
        f"hanging / correct: {best['check hanging'] / best['check correct']:.2f}"
    )
    bound = TDD_TIME_LIMIT + TDD_MARGIN_SECONDS
    print(
        f"tdd green: hanging tree {best['tdd hanging']:.1f} s, correct tree "
        f"{best['tdd correct']:.1f} s; hanging / (limit {TDD_TIME_LIMIT:g} s + "
        f"{TDD_MARGIN_SECONDS:g} s): {best['tdd hanging'] / bound:.2f} (target <= 1)"
    )
    seconds, member = slowest_reference_call(chapter)
    hang = chapter.hang
    recorded = hang.reference_slowest_call_seconds if hang else float("nan")
    print(
        f"the reference's slowest call in the course tests: {seconds * 1000:.1f} ms ({member}); "
        f"the catalog says {recorded * 1000:.1f} ms; call bound {chapter.call_limit:g} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
