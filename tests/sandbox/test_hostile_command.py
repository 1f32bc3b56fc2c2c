"""Layer 5 and the command as a whole: the report is the grader's, the same run after run,
when two checks run at once, and after a stop signal.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hostile_harness import (
    CASES,
    CHAPTER,
    HOSTILE,
    KIT,
    LIMITS,
    REFERENCE,
    lay_out,
    report_back,
    reported,
    run,
    snapshot,
    stray_processes,
    wait_until_gone,
)

import grader.cli
import grader.grading.validation
from grader.commands.check import check
from grader.errors import EXIT_FAIL, EXIT_INTERRUPTED
from grader.grading.jobs import student_tests_job
from grader.inputs.catalog import Chapter
from grader.output.check_json import SCHEMA_PATH, report_to_json
from grader.results.check import CheckReport
from grader.sandbox.host.pool import WorkerPool

pytest_plugins = ["hostile_harness"]
pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)


# ----------------------------------------------------------------------
# Layer 5 and the command as a whole.


@pytest.mark.usefixtures("without_static_check")
def test_the_report_is_the_graders_even_if_a_test_forges_one(
    chapter: Chapter,
    reachable_tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Layer 5: a passing report written by the tests, and rewritten ten times a second by a
    process meant to outlive them, is replaced by the grader's, which stays."""
    monkeypatch.setattr(grader.cli, "load_chapter", lambda chapter_id: chapter)
    report = reachable_tmp_path / "out" / "results.json"
    folder = lay_out({"name": "writes_results"}, reachable_tmp_path)
    (folder / CHAPTER.student_tests).write_text(
        (HOSTILE / "writes_results" / CHAPTER.student_tests).read_text()
        + textwrap.dedent(
            f"""

            import os, time

            def test_forge_now_and_later():
                with open({str(report)!r}, "w") as out:
                    out.write(FAKE)
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        for _ in range(300):
                            time.sleep(0.1)
                            with open({str(report)!r}, "w") as out:
                                out.write(FAKE)
                    os._exit(0)
            """
        )
    )
    report.parent.mkdir()
    code = grader.cli.main(
        ["check", "--submission", str(folder), "--json", str(report), "--tests-time-limit", "3"]
    )
    capsys.readouterr()
    assert code == EXIT_FAIL
    written = report.read_text(encoding="utf-8")
    time.sleep(0.5)
    assert report.read_text(encoding="utf-8") == written
    data = json.loads(written)
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert data["verdict"] == "fail"
    # Confined, the forging test cannot write outside its folder and fails on the reference.
    assert data["mutation"] is None or data["mutation"]["killed"] == 0
    assert sorted(p.name for p in report.parent.iterdir()) == ["results.json"]
    assert stray_processes() == []


def test_a_process_left_by_radix_py_never_rewrites_the_report(reachable_tmp_path: Path) -> None:
    """Issue 11, case 5, as a student would run it: ``grader check --json`` on a radix.py
    that leaves a detached, re-executed process and kills its worker. Once the grader
    has exited, no process of the submission is left and the report stays the grader's."""
    case = next(case for case in CASES if case["name"] == "orphan_rewrites_report")
    folder = lay_out(case, reachable_tmp_path)
    report = reachable_tmp_path / "out" / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "check", "--submission", folder, "--json", report],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == EXIT_FAIL, done.stderr
    written = report.read_text(encoding="utf-8")
    assert wait_until_gone("orphan-rewrites-report", seconds=1.0) == []
    time.sleep(1.0)  # the process polled every 50 ms for the grader to be gone
    assert report.read_text(encoding="utf-8") == written
    data = json.loads(written)
    assert data["verdict"] == "fail" and data["course_tests"]["passed"] == 0
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.json"]


def six_required_tests(folder: Path) -> Path:
    """A submission: the reference and the model answer's six required tests (and its helper)."""
    tree = ast.parse(CHAPTER.model_tests.read_text(encoding="utf-8"))
    required = {test.name for test in CHAPTER.required_tests}
    tree.body = [
        node
        for node in tree.body
        if not isinstance(node, ast.FunctionDef)
        or not node.name.startswith("test_")
        or node.name in required
    ]
    (folder / "tests").mkdir(parents=True)
    (folder / CHAPTER.student_tests).write_text(ast.unparse(tree), encoding="utf-8")
    (folder / "radix.py").write_text(REFERENCE, encoding="utf-8")
    for need in CHAPTER.needs:
        shutil.copyfile(need.reference, folder / need.implementation)
    return folder


def without_timings(report: CheckReport) -> str:
    """The JSON report's bytes up to its last two keys, ``timings`` and ``graded_at``, the ones
    that vary."""
    text = report_to_json(report, CHAPTER)
    before, found, _ = text.partition('  "timings": {')
    assert found and before.endswith("},\n")
    return before


def test_the_same_submission_gives_byte_identical_reports_20_times(
    tiny_chapter: Chapter, pool: WorkerPool, reachable_tmp_path: Path
) -> None:
    """Reproducible: 20 checks write the same bytes, timings aside.

    They share warm workers, as batch grading does; the next test shows that
    checks with workers of their own write the same bytes too.
    """
    folder = six_required_tests(reachable_tmp_path / "submission")
    reports = set()
    for _ in range(20):
        report = check(tiny_chapter, folder, LIMITS, pool=pool)
        assert report.verdict == "pass", report_to_json(report, CHAPTER)
        reports.add(without_timings(report))
    assert len(reports) == 1


def test_a_set_order_dependent_submission_gets_the_same_report_20_times(
    tiny_chapter: Chapter, pool: WorkerPool, reachable_tmp_path: Path
) -> None:
    """Issue 11, case 7: a test whose outcome on a mutant follows the order of a set of plain
    objects (their addresses). Graded 20 times on warm workers that ran other jobs in
    between, and once more on workers of its own, it gets the same report every time:
    runs have address-space layout randomisation off and start from the same memory."""
    folder = lay_out(
        next(case for case in CASES if case["name"] == "set_order"), reachable_tmp_path
    )
    reports = set()
    for number in range(20):
        reports.add(without_timings(check(tiny_chapter, folder, LIMITS, pool=pool)))
        if number % 5 == 0:  # other jobs in between change the workers' own memory
            assert run(pool, "def test_x():\n    assert [object() for _ in range(99)]\n").all_passed
    reports.add(without_timings(check(tiny_chapter, folder, LIMITS)))
    assert len(reports) == 1, reports


ADDRESS_DECIDES = """
from radix import ROOT, RadixTree


class Token:
    \"\"\"A plain object, hashed by its address.\"\"\"


EXPECTED = int("EXPECTED_ADDRESS", 16)


def test_address_decides() -> None:
    token = Token()
    assert id(token) == EXPECTED, f"address {id(token):016x}"
"""


@pytest.mark.usefixtures("without_static_check")
def test_a_test_that_follows_addresses_is_flaky_by_the_shifted_heap(
    tiny_chapter: Chapter, pool: WorkerPool, reachable_tmp_path: Path
) -> None:
    """Issue 33: a test whose outcome depends on where its objects lie passes on the reference
    as it runs first, and validation refuses it as flaky, naming the shifted-heap rerun,
    instead of letting a later check flip a grade. The file is made to pass on the first
    run by asking a check for the address first (a same-length constant, so the same
    allocations); the static check, which refuses ``id()``, is off."""
    folder = six_required_tests(reachable_tmp_path / "submission")
    tests = folder / CHAPTER.student_tests
    smoke = tests.read_text(encoding="utf-8")
    tests.write_text(smoke + ADDRESS_DECIDES.replace("EXPECTED_ADDRESS", "0" * 16))
    first = check(tiny_chapter, folder, LIMITS, pool=pool).student_tests.problems
    address = re.findall(r"address ([0-9a-f]{16})", "\n".join(first))[-1]
    tests.write_text(smoke + ADDRESS_DECIDES.replace("EXPECTED_ADDRESS", address))
    student = check(tiny_chapter, folder, LIMITS, pool=pool).student_tests
    assert not student.valid
    assert grader.grading.validation.SHIFTED_HEAP in student.flaky_reruns, student.problems
    shifted = [p for p in student.problems if "(a shifted heap)" in p]
    assert shifted, student.problems
    assert shifted[0].startswith(
        "flaky: on the reference, the file run again with its objects at other addresses "
        "(a shifted heap) gave other outcomes: test_address_decides passed first, failed then"
    ), shifted
    assert "tests must not depend on where objects lie in memory" in shifted[0]
    assert not any("on the reference (a correct tree)" in p for p in student.problems)


ADDRESSES = f"""
import base64, json, sys, zlib

class Token:
    pass

def test_addresses():
    tokens = [Token() for _ in range(16)]
    seen = [[id(token) for token in tokens], sys.getallocatedblocks()]
    {report_back("seen")}
"""


def test_every_fresh_worker_starts_its_runs_from_the_same_heap() -> None:
    """The set-order case holds across pools only if every worker, started afresh, forks its
    runs from the same heap: the same addresses for the same test, block for block. (A
    ``typing.NamedTuple`` class made when the worker imported its modules broke this: one
    fresh worker in three started with six blocks more, and another set order.)"""
    seen = []
    for _ in range(6):
        with WorkerPool(workers=1) as own:
            seen.append(reported(run(own, ADDRESSES), "test_addresses"))
    assert all(found == seen[0] for found in seen), seen


def test_two_checks_at_once_on_one_submission_do_not_interfere(
    tiny_chapter: Chapter,
    pool: WorkerPool,
    reachable_tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two checks with workers of their own, at once, agree with each other and with a third.

    Their scratch folders go to a folder of this test's, found empty afterwards.
    """
    folder = six_required_tests(reachable_tmp_path / "submission")
    before = snapshot(folder)
    scratch = reachable_tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    results: list[str] = []

    def grade() -> None:
        results.append(without_timings(check(tiny_chapter, folder, LIMITS)))

    threads = [threading.Thread(target=grade) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and results[0] == results[1]
    assert list(scratch.iterdir()) == []
    assert results[0] == without_timings(check(tiny_chapter, folder, LIMITS, pool=pool))
    assert '"verdict": "pass"' in results[0]
    assert snapshot(folder) == before


def test_two_grader_processes_at_once_agree_and_change_neither_kit_nor_submission(
    reachable_tmp_path: Path,
) -> None:
    """Two ``grader check`` commands on one submission at once, as two terminals would run them.

    Both pass with the same report, timings aside; no file of the kit or of the
    submission changes, and their scratch folders are gone afterwards.
    """
    folder = six_required_tests(reachable_tmp_path / "submission")

    def kit() -> dict[str, str]:
        """The kit's content and code; bytecode caches, which Python itself writes, aside."""
        content = ("reference", "student", "course_tests", "mutants", "wheats", "chapter", "grader")
        files = {k: v for name in content for k, v in snapshot(KIT / name).items()}
        return {k: v for k, v in files.items() if "__pycache__" not in k}

    kit_before = kit()
    submission_before = snapshot(folder)
    scratch = reachable_tmp_path / "tmp"
    scratch.mkdir()
    reports = [reachable_tmp_path / f"report-{n}.json" for n in (1, 2)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "grader", "check", "--submission", folder, "--json", report],
            env={**os.environ, "TMPDIR": str(scratch)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for report in reports
    ]
    assert [process.wait(timeout=120) for process in processes] == [0, 0]
    first, second = (json.loads(report.read_text(encoding="utf-8")) for report in reports)
    del first["timings"], second["timings"], first["graded_at"], second["graded_at"]
    assert first == second and first["verdict"] == "pass"
    assert kit() == kit_before
    assert snapshot(folder) == submission_before
    assert list(scratch.iterdir()) == []


STOPS = [
    (signal.SIGINT, EXIT_INTERRUPTED, "grader: interrupted; no files were left behind"),
    (signal.SIGTERM, 128 + signal.SIGTERM, "grader: stopped by SIGTERM; no files were left behind"),
    (signal.SIGHUP, 128 + signal.SIGHUP, "grader: stopped by SIGHUP; no files were left behind"),
]


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler of its own for ``signum`` (``SigCgt``)."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (signum - 1) & 1)


def _runs_seen(scratch: Path) -> set[tuple[Path, int]]:
    """The run folders there now, each with the time it was made: the worker names a run's
    folder by the lowest free number (``run-0`` again and again), so only the pair tells one
    run from the next."""
    seen = set()
    for folder in scratch.glob("grader-*/run-*"):
        with contextlib.suppress(OSError):  # removed meanwhile
            seen.add((folder, folder.stat().st_ctime_ns))
    return seen


def _frozen(pid: int) -> bool:
    return (
        Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0] in "tT"
    )


MOMENTS: dict[str, Any] = {
    # the command's first line has run: its handlers are in place, nothing else is
    "start-up": lambda pid, scratch, runs: _catches(pid, signal.SIGHUP),
    # the first folder of the grader's: the isolation probe's (it forks, with the signals
    # held), else the pool's scratch folder (its workers starting, the signals deferred)
    "probe": lambda pid, scratch, runs: any(scratch.glob("grader-*")),
    # the pool's scratch folder: its workers started or starting
    "pool made": lambda pid, scratch, runs: any(
        not folder.name.startswith("grader-probe-") for folder in scratch.glob("grader-*")
    ),
    # the first run (a course test shard) is in flight
    "first run": lambda pid, scratch, runs: len(runs) >= 1,
    # the course tests and the student's tests on their own code have started, and the
    # validation's runs with them
    "sixth run": lambda pid, scratch, runs: len(runs) >= 6,
}
"""Moments of a check at which a stop signal is sent, each found from outside the command
(its handlers, its scratch folder, the run folders seen), then held still: the grader is
frozen (SIGSTOP) while the moment is checked and the signal sent, and goes on (SIGCONT) with
the signal pending at that very point."""

AT_EACH_MOMENT = [
    (moment, stop)
    for moment in MOMENTS
    for stop in (STOPS if moment in ("start-up", "probe") else STOPS[1:2])
] + [("first run", STOPS[0]), ("sixth run", STOPS[2])]


@pytest.mark.parametrize(
    ("moment", "stop"),
    AT_EACH_MOMENT,
    ids=[f"{moment}-{signal.Signals(stop[0]).name}" for moment, stop in AT_EACH_MOMENT],
)
def test_a_stop_signal_leaves_no_file_no_process_and_an_unchanged_submission(
    reachable_tmp_path: Path, moment: str, stop: tuple[int, int, str]
) -> None:
    """SIGINT, SIGTERM or SIGHUP at a moment of the check: one line, exit 128 + the signal
    (130 for Ctrl-C), no scratch file, no process, no report, the submission unchanged.

    The grader runs with every stop signal at its default, as a terminal gives it: a check
    started by a test under ``nohup`` inherited SIGHUP ignored, which the grader rightly
    keeps, ran to its end and exited 0 (issue 35, item 11). Each moment is pinned down with
    the grader frozen, so the signal arrives exactly there, not a little later."""
    signum, code, line = stop
    folder = six_required_tests(reachable_tmp_path / "submission")
    before = snapshot(folder)
    scratch = reachable_tmp_path / "tmp"
    scratch.mkdir()
    report = reachable_tmp_path / "report.json"
    # --no-cache: the same submission graded by an earlier parameter would be reused whole,
    # and the signal would find no run in flight
    command = ["check", "--submission", str(folder), "--json", str(report), "--no-cache"]

    def default_stops() -> None:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_DFL)

    process = subprocess.Popen(
        [sys.executable, "-m", "grader", *command],
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_stops,
    )
    reached = MOMENTS[moment]
    runs: set[tuple[Path, int]] = set()
    try:
        while True:
            assert process.poll() is None, f"the check ended before the moment {moment!r}"
            runs.update(_runs_seen(scratch))
            if reached(process.pid, scratch, runs):
                os.kill(process.pid, signal.SIGSTOP)
                while not _frozen(process.pid):
                    time.sleep(0.001)
                runs.update(_runs_seen(scratch))
                if reached(process.pid, scratch, runs):
                    break
                os.kill(process.pid, signal.SIGCONT)
            time.sleep(0.005)
        os.kill(process.pid, signum)
        os.kill(process.pid, signal.SIGCONT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (process.returncode, stderr.strip().splitlines()) == (code, [line])
    assert list(scratch.iterdir()) == []
    assert wait_until_gone(str(scratch)) == []
    assert not report.exists() and list(reachable_tmp_path.glob("*.partial")) == []
    assert snapshot(folder) == before


def test_a_stop_signal_held_off_is_delivered_to_the_handler_that_would_have_had_it() -> None:
    """A signal that arrives while stop signals are deferred (a pool's scratch folder and
    workers being made or closed) reaches the handler in place afterwards once the block ends,
    also when the block raised and when the block is nested in another deferral; and one
    that arrives after the command's own handling, as it returns, still gives its exit code."""
    script = textwrap.dedent(
        """
        import signal, sys
        from grader.sandbox.host.pool import _stop_deferred

        def handler(signum, frame):
            print("handled", signum, flush=True)
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGHUP, handler)
        case = sys.argv[1]
        if case == "plain":
            with _stop_deferred():
                signal.raise_signal(signal.SIGHUP)
                print("block ends", flush=True)
        elif case == "raised":
            try:
                with _stop_deferred():
                    signal.raise_signal(signal.SIGHUP)
                    raise ValueError("the block failed")
            except ValueError:
                print("lost", flush=True)
        elif case == "nested":
            with _stop_deferred():
                with _stop_deferred():
                    signal.raise_signal(signal.SIGHUP)
                print("outer block ends", flush=True)
        print("not stopped", flush=True)
        """
    )
    expected = {
        "plain": (129, ["block ends", "handled 1"]),
        "raised": (129, ["handled 1"]),
        "nested": (129, ["outer block ends", "handled 1"]),
    }
    for case, (code, lines) in expected.items():
        done = subprocess.run(
            [sys.executable, "-c", script, case], capture_output=True, text=True, timeout=60
        )
        assert (case, done.returncode, done.stdout.splitlines()) == (case, code, lines)
    at_the_end = textwrap.dedent(
        """
        import signal, sys
        import grader.__main__, grader.cli

        def main():
            signal.raise_signal(signal.SIGTERM)  # as main returns, its handlers given back
            return 0

        grader.cli.main = main
        sys.exit(grader.__main__.run())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", at_the_end], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr.splitlines()) == (
        128 + signal.SIGTERM,
        ["grader: stopped by SIGTERM; no files were left behind"],
    )


def test_no_route_reaches_the_implementations_source(pool: WorkerPool) -> None:
    """A test file tries a dozen routes to the source of the implementation it runs against.

    Each test of ``tests/fixtures/source_routes.py`` passes when its route
    found nothing. The same search over this process, which has read the
    reference, finds the line: the search itself works.
    """
    routes = KIT / "tests" / "fixtures" / "source_routes.py"
    line = max(
        (line.strip() for line in REFERENCE.splitlines() if "self._" in line),
        key=lambda line: (REFERENCE.count(line) == 1, len(line)),
    )
    half = len(line) // 2
    source = (
        routes.read_text(encoding="utf-8")
        .replace("HEAD OF A LINE OF THE IMPLEMENTATION", line[:half].replace('"', '\\"'))
        .replace("TAIL OF THAT LINE", line[half:].replace('"', '\\"'))
    )
    result = pool.run(student_tests_job(CHAPTER, source, REFERENCE, 60.0))
    assert result.status == "completed", (result.message, result.output)
    found = {o.name: o.detail for o in result.outcomes if o.status != "passed"}
    assert found == {}, found
    assert len(result.outcomes) >= 12
    without_the_module = source.replace("import radix\nfrom radix import RadixTree\n", "")
    probe: dict[str, Any] = {}
    exec(compile(without_the_module, str(routes), "exec"), probe)
    assert probe["holds_the_line"](REFERENCE)
    with pytest.raises(AssertionError):
        probe["test_the_memory_of_this_process"]()
