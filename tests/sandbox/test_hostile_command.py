"""Layer 5 and the command as a whole: the report is the grader's, the same run after run,
when two checks run at once, and after a stop signal.
"""

from __future__ import annotations

import ast
import json
import os
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
import grader.validation
from grader.catalog import Chapter
from grader.commands.check import check
from grader.errors import EXIT_FAIL, EXIT_INTERRUPTED
from grader.jobs import student_tests_job
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


@pytest.mark.parametrize(("signum", "code", "line"), STOPS, ids=lambda value: str(value)[:7])
def test_a_stop_signal_leaves_no_file_no_process_and_an_unchanged_submission(
    reachable_tmp_path: Path, signum: int, code: int, line: str
) -> None:
    """SIGINT, SIGTERM or SIGHUP while runs are in flight: one line, exit 128 + the signal
    (130 for Ctrl-C), no scratch file, no process, the submission unchanged."""
    folder = six_required_tests(reachable_tmp_path / "submission")
    before = snapshot(folder)
    scratch = reachable_tmp_path / "tmp"
    scratch.mkdir()
    report = reachable_tmp_path / "report.json"
    # --no-cache: the same submission graded by an earlier parameter would be reused whole,
    # and the signal would find no run in flight
    command = ["check", "--submission", str(folder), "--json", str(report), "--no-cache"]
    process = subprocess.Popen(
        [sys.executable, "-m", "grader", *command],
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not list(scratch.glob("grader-*/run-*")):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code
    assert stderr.strip().splitlines() == [line]
    assert list(scratch.iterdir()) == []
    assert wait_until_gone(str(scratch)) == []
    assert not report.exists() and list(reachable_tmp_path.glob("*.partial")) == []
    assert snapshot(folder) == before


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
