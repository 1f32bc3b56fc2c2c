"""Regrade only what changed: a reused phase gives the very result a fresh run gives.

``grader.grading.result_cache`` keys each phase of ``check`` by the content that decides
it. These tests grade one submission cold, unchanged, and with only
``radix.py`` changed, and hold every reused result to the recomputed one.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from grader.commands import check as check_module
from grader.commands.check import ValidationPhase, check
from grader.commands.diff import diff_against_reference
from grader.grading.course_tests import CoursePhase
from grader.grading.result_cache import ResultCache, content_key, from_data, kit_fingerprint
from grader.inputs.catalog import load_chapter
from grader.output.check_json import report_to_dict
from grader.results.check import MutantResult, MutationResult, StudentTestsResult
from grader.sandbox.protocol.status import MutantStatus

CHAPTER = load_chapter()
KIT = kit_fingerprint(CHAPTER)


def without_timings(report: Any) -> dict[str, Any]:
    data = report_to_dict(report, CHAPTER)
    del data["timings"], data["graded_at"]
    return data


def test_a_phase_survives_its_round_trip(tmp_path: Path) -> None:
    student = StudentTestsResult(
        True, ("p",), ("m",), ("test_a",), 1.5, ("n",), ("why",), (), {"reference": {"a": 0.5}}
    )
    mutation = MutationResult(
        0.7,
        ("s11",),
        (MutantResult("s01", "t", MutantStatus.KILLED, ("test_a",), "", {"test_a": 0.1}),),
    )
    phase = ValidationPhase(student, mutation, "uid", 2.0, 3.0)
    cache = ResultCache(tmp_path)
    cache.put("k", phase, "uid")
    again = cache.get("k", ValidationPhase, "uid")
    assert again == phase and asdict(again) == asdict(phase)  # the seconds too
    assert isinstance(again.student.tests, tuple) and isinstance(again.mutation, MutationResult)


def test_an_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    (tmp_path / "k.json").write_text("{not json", encoding="utf-8")
    assert cache.get("k", CoursePhase, "uid") is None
    (tmp_path / "k.json").write_text(json.dumps({"result": 1}), encoding="utf-8")
    assert cache.get("k", CoursePhase, "uid") is None and cache.hits == set()
    with pytest.raises(TypeError):
        from_data(dict[str, float], [1, 2])


def test_a_key_changes_with_every_input_that_decides_it() -> None:
    base = content_key(KIT, "course_tests", "source", 120.0, "none")
    assert base == content_key(KIT, "course_tests", "source", 120.0, "none")
    others = {
        content_key(KIT, "tests", "source", 120.0, "none"),
        content_key(KIT, "course_tests", "source ", 120.0, "none"),
        content_key(KIT, "course_tests", "source", 60.0, "none"),
        content_key(KIT, "course_tests", "source", 120.0, "uid"),
    }
    assert base not in others and len(others) == 4


@pytest.mark.slow
def test_a_reused_result_is_the_recomputed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold, every phase runs; unchanged, none does (no worker starts); with radix.py
    changed, only the phases that read it run again. Each report equals a fresh one, and a
    diff after the check runs nothing."""
    folder = tmp_path / "submission"
    (folder / "tests").mkdir(parents=True)
    shutil.copyfile(CHAPTER.reference, folder / CHAPTER.implementation)
    shutil.copyfile(CHAPTER.model_tests, folder / CHAPTER.student_tests)
    for need in CHAPTER.needs:  # the student's own map from the earlier chapter
        shutil.copyfile(need.reference, folder / need.implementation)
    cache = ResultCache(tmp_path / "cache")

    cold = check(CHAPTER, folder, cache=cache)
    assert cold.reused == () and cold.verdict == "pass"

    class NoWorkers:
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("an unchanged submission must start no worker")

    with monkeypatch.context() as patched:
        patched.setattr(check_module, "WorkerPool", NoWorkers)
        unchanged = check(CHAPTER, folder, cache=ResultCache(tmp_path / "cache"))
    assert unchanged.reused == ("course_tests", "tests", "yours")
    assert without_timings(unchanged) == without_timings(cold)

    radix = folder / CHAPTER.implementation
    radix.write_text(radix.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    changed = check(CHAPTER, folder, cache=ResultCache(tmp_path / "cache"))
    assert changed.reused == ("tests",)
    fresh = check(CHAPTER, folder)
    assert fresh.reused == ()
    assert without_timings(changed) == without_timings(fresh)

    with monkeypatch.context() as patched:  # diff takes the course tests' verdict from check
        patched.setattr(check_module, "WorkerPool", NoWorkers)
        shown = diff_against_reference(CHAPTER, folder, cache=ResultCache(tmp_path / "cache"))
    assert "-# a comment" in shown.splitlines()
