"""The result cache is data to check, never an authority (docs/security.md, issue 34).

The hostile student of issue 34 computes, with the installed kit's own
functions, the cache key of the test file it will hand in next and writes a
"tests" phase there: valid, every mutant killed, isolation ``namespaces``.
These tests plant such entries (and signed ones a student could make) under
the very keys a check asks for, and hold the check to running its phases
anyway: a phase that runs starts a worker pool, which a stand-in here
refuses, so a check that reused a forged phase returns a report and one that
did not raises ``PhaseRan``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from grader.commands import check as check_module
from grader.commands.check import ValidationPhase, YoursPhase, check
from grader.grading.course_tests import CoursePhase
from grader.grading.result_cache import SECRET, ResultCache
from grader.inputs.catalog import load_chapter
from grader.inputs.provenance import mac
from grader.results.check import (
    CourseTestsResult,
    MutantResult,
    MutationResult,
    StudentTestsResult,
)
from grader.sandbox.host.pool import require_isolation
from grader.sandbox.protocol.status import MutantStatus, TestStatus

CHAPTER = load_chapter()
KIT = Path(__file__).resolve().parents[2]
WEAK = KIT / "tests" / "fixtures" / "submissions" / "weak"


class PhaseRan(Exception):
    """A phase was not reused: the check asked for workers."""


class NoWorkers:
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise PhaseRan


def submission(tmp_path: Path) -> Path:
    """A weak test file beside a correct tree, as the attacker hands in."""
    folder = tmp_path / "submission"
    shutil.copytree(WEAK, folder)
    shutil.copyfile(CHAPTER.reference, folder / CHAPTER.implementation)
    for need in CHAPTER.needs:
        shutil.copyfile(need.reference, folder / need.implementation)
    return folder


def forged_phases(level: str) -> dict[str, Any]:
    """What the attack writes: every course test passed, the test file valid and every
    mutant killed, made (it says) at ``level``."""
    course = CourseTestsResult({t.name: TestStatus.PASSED for t in CHAPTER.course_tests}, {}, None)
    student = StudentTestsResult(True, (), (), ("test_x",), 0.1)
    mutants = tuple(
        MutantResult(m.id, m.title, MutantStatus.KILLED, ("test_x",)) for m in CHAPTER.mutants
    )
    mutation = MutationResult(0.0, (), mutants)
    return {
        "course_tests": CoursePhase(course, level, 1.0),  # type: ignore[arg-type]
        "tests": ValidationPhase(student, mutation, level, 1.0, 1.0),  # type: ignore[arg-type]
        "yours": YoursPhase((), {}),
    }


def asked_keys(folder: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys a check of ``folder`` looks up: what an attacker can compute with the kit."""
    asked: list[str] = []
    real_get = ResultCache.get

    def get(self: ResultCache, key: str, *args: Any) -> Any:
        asked.append(key)
        return real_get(self, key, *args)

    with monkeypatch.context() as patched:
        patched.setattr(ResultCache, "get", get)
        patched.setattr(check_module, "WorkerPool", NoWorkers)
        with pytest.raises(PhaseRan):
            check(CHAPTER, folder, cache=ResultCache(cache))
    assert len(asked) == 3
    return asked


def graded_with(folder: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check of ``folder`` with ``cache``: raises ``PhaseRan`` unless it reused every phase."""
    with monkeypatch.context() as patched:
        patched.setattr(check_module, "WorkerPool", NoWorkers)
        report = check(CHAPTER, folder, cache=ResultCache(cache))
    raise AssertionError(f"a forged entry was served: {report.verdict}, reused {report.reused}")


def test_an_unsigned_forged_entry_earns_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack of issue 34, route 1: plain JSON under the computed keys."""
    folder, cache = submission(tmp_path), tmp_path / "cache"
    keys = asked_keys(folder, cache, monkeypatch)
    cache.mkdir(mode=0o700, exist_ok=True)
    for key, phase in zip(keys, forged_phases("namespaces").values(), strict=True):
        (cache / f"{key}.json").write_text(json.dumps(dataclasses.asdict(phase)))
    with pytest.raises(PhaseRan):
        graded_with(folder, cache, monkeypatch)


def test_an_entry_signed_with_another_secret_earns_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry in the cache's own format, its MAC made with a secret the attacker chose."""
    folder, cache = submission(tmp_path), tmp_path / "cache"
    keys = asked_keys(folder, cache, monkeypatch)
    level = require_isolation("none")
    cache.mkdir(mode=0o700, exist_ok=True)
    for key, phase in zip(keys, forged_phases(level).values(), strict=True):
        body = json.dumps({"key": key, "level": level, "result": dataclasses.asdict(phase)})
        signature = mac(b"a secret of the student's own choice", body.encode())
        (cache / f"{key}.json").write_text(signature + "\n" + body)
    with pytest.raises(PhaseRan):
        graded_with(folder, cache, monkeypatch)


def test_a_signed_entry_serves_only_its_own_level(tmp_path: Path) -> None:
    """A phase made at a weaker level never serves a stronger one (nor the other way)."""
    cache = ResultCache(tmp_path / "cache")
    phase = forged_phases("uid")["course_tests"]
    cache.put("k", phase, "uid")
    assert cache.get("k", CoursePhase, "uid") == phase
    assert cache.get("k", CoursePhase, "namespaces") is None
    cache.put("j", forged_phases("none")["course_tests"], "namespaces")  # a phase's own word
    assert cache.get("j", CoursePhase, "namespaces") is None


def test_a_tampered_entry_is_ignored(tmp_path: Path) -> None:
    """One byte of the body changed (an outcome turned round): the MAC no longer matches."""
    cache = ResultCache(tmp_path / "cache")
    cache.put("k", forged_phases("uid")["course_tests"], "uid")
    entry = tmp_path / "cache" / "k.json"
    entry.write_text(entry.read_text().replace('"passed"', '"failed"', 1))
    assert cache.get("k", CoursePhase, "uid") is None and cache.hits == set()


def test_the_secret_is_the_grader_users_alone(tmp_path: Path) -> None:
    """Made on first use, mode 0600, in a folder of mode 0700; a folder or secret others may
    read (or a symbolic link in place of the secret) turns the cache off."""
    folder = tmp_path / "cache"
    cache = ResultCache(folder)
    cache.put("k", forged_phases("uid")["course_tests"], "uid")
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / SECRET).stat().st_mode & 0o777 == 0o600
    assert len((folder / SECRET).read_bytes()) == 32
    folder.chmod(0o755)
    assert ResultCache(folder).get("k", CoursePhase, "uid") is None
    folder.chmod(0o700)
    (folder / SECRET).chmod(0o644)
    assert ResultCache(folder).get("k", CoursePhase, "uid") is None
    (folder / SECRET).chmod(0o600)
    assert ResultCache(folder).get("k", CoursePhase, "uid") is not None
    planted = tmp_path / "planted"
    planted.write_bytes(b"x" * 32)
    planted.chmod(0o600)
    (folder / SECRET).unlink()
    (folder / SECRET).symlink_to(planted)
    assert ResultCache(folder).get("k", CoursePhase, "uid") is None


def test_root_at_level_none_neither_reads_nor_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root at ``none`` a run is root and could read the secret: no cache at all."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    cache = ResultCache(tmp_path / "cache")
    cache.put("k", forged_phases("none")["course_tests"], "none")
    assert not (tmp_path / "cache").exists()
    assert cache.get("k", CoursePhase, "none") is None
    cache.put("j", forged_phases("uid")["course_tests"], "uid")  # the secret read once
    assert cache.get("j", CoursePhase, "uid") is not None
    cache.put("k", forged_phases("none")["course_tests"], "none")  # and still nothing at none
    assert not (tmp_path / "cache" / "k.json").exists()


def test_a_cache_folder_another_user_owns_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root graded with a user's own cache folder (``sudo`` keeping ``XDG_CACHE_HOME``): the
    user's code, at ``none`` earlier, could have written anything there, a valid secret and
    signed entries included. A folder another user owns turns the cache off (here the grader
    is made another user than the folder's owner)."""
    folder = tmp_path / "cache"
    ResultCache(folder).put("k", forged_phases("uid")["course_tests"], "uid")
    assert ResultCache(folder).get("k", CoursePhase, "uid") is not None
    owner = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    assert ResultCache(folder).get("k", CoursePhase, "uid") is None
    ResultCache(folder).put("j", forged_phases("uid")["course_tests"], "uid")
    assert not (folder / "j.json").exists()
