"""Editions and bundles by allow-list, per audience, read back (docs/security.md, issue 34).

Route 3 of issue 34: the student edition kept ``mutants/witnesses.json``, with
a ready killing test for each of the 18 mutants; pasted as a student's own
tests they gave PASS 100, 18/18. These tests list the exact contents of the
student edition and of the Gradescope bundle, hold the witnesses in the
students' hands to the tier the catalog gives them before the due date, and
plant files off the list to see the read-back check stop the build.
"""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import pytest

import grader.cli
from grader.commands.bundle import kit_files
from grader.commands.release import build_release
from grader.errors import EXIT_PASS, GraderError
from grader.grading.witness import read_witnesses, students_tier, witnesses_from
from grader.inputs import editions
from grader.inputs.catalog import kit_root, load_chapter

CHAPTER = load_chapter()
ROOT = kit_root()
WITNESSES = read_witnesses(CHAPTER.witnesses.path) if CHAPTER.witnesses else {}
KILLING_TESTS = [w.test for w in WITNESSES.values()]

CONTENT = sorted(
    [
        "chapter/catalog.toml",
        "chapter/ds07-radix-tree.md",
        "course_tests/conftest.py",
        "course_tests/test_ds07.py",
        "docs/dependencies.md",
        "docs/security.md",
        "docs/static-check.md",
        "docs/students.md",
        "docs/witnesses.md",
        "mutants/equivalent.toml",
        "mutants/witnesses.json",
        *(f"mutants/{mutant.id}.patch" for mutant in CHAPTER.mutants),
        "reference/radix.py",
        "reference/robin_hood.py",
        "student/radix.py",
        "student/tests/test_ds07_radix.py",
        *(f"wheats/{wheat.id}.patch" for wheat in CHAPTER.wheats),
    ]
)
"""The course content students may hold, file by file."""
STAFF = ["mutants/witnesses.json", "reference/tests/test_ds07_radix.py"]
"""What only staff may hold, file by file."""
CODE = sorted(
    path.relative_to(ROOT).as_posix()
    for path in kit_files(ROOT)
    if path.relative_to(ROOT).parts[0] == "grader"
)
"""The grader's code: every file of ``grader/`` in the checkout (caches aside)."""


@pytest.fixture(scope="module")
def student_edition(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("release")
    return zipfile.ZipFile(build_release("student", out).wheel)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    path = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert grader.cli.main(["gradescope-bundle", "--output", str(path)]) == EXIT_PASS
    return zipfile.ZipFile(path)


def test_the_student_edition_holds_exactly_its_list(student_edition: zipfile.ZipFile) -> None:
    assert CHAPTER.witnesses is not None
    info = "ds07_grader-0.1.0+student.dist-info/"
    metadata = [info + name for name in ("METADATA", "RECORD", "WHEEL", "entry_points.txt")]
    expected = sorted([*metadata, *CODE, *(f"grader/kit/{c}" for c in CONTENT)])
    assert sorted(student_edition.namelist()) == expected


def test_the_student_edition_holds_no_killing_test(student_edition: zipfile.ZipFile) -> None:
    """The witnesses as the catalog shows them students before the due date (``calls``: the
    calls, no result, no test), and no killing test in any file."""
    assert CHAPTER.witnesses is not None and KILLING_TESTS and all(KILLING_TESTS)
    tier = students_tier(CHAPTER.witnesses)
    assert tier == "calls"
    shipped = witnesses_from(json.loads(student_edition.read("grader/kit/mutants/witnesses.json")))
    assert set(shipped) == set(WITNESSES)
    for mutant, witness in shipped.items():
        assert witness.test == "" and witness.calls, mutant
        assert all(call.reference == {} == call.mutant for call in witness.calls), mutant
        assert [c.code for c in witness.calls] == [c.code for c in WITNESSES[mutant].calls]
    model = CHAPTER.model_tests.read_bytes()
    for name in student_edition.namelist():
        data = student_edition.read(name)
        assert data != model, name
        for test in KILLING_TESTS:
            assert test.encode() not in data and json.dumps(test).encode() not in data, name


def test_an_after_due_edition_carries_the_killing_tests_only_when_asked(tmp_path: Path) -> None:
    release = build_release("student", tmp_path, after_due=True)
    with zipfile.ZipFile(release.wheel) as wheel:
        shipped = witnesses_from(json.loads(wheel.read("grader/kit/mutants/witnesses.json")))
        assert shipped == WITNESSES
        assert not [n for n in wheel.namelist() if "reference/tests" in n]


def test_the_bundle_holds_exactly_its_list(bundle: zipfile.ZipFile) -> None:
    """The scripts and pins; kit/ as the student edition; staff/ the staff material alone,
    each of its files mode 0600."""
    kit = ["pyproject.toml", "README.md", *CODE, *CONTENT]
    expected = ["setup.sh", "run_autograder", "constraints.txt"]
    expected += [f"kit/{relative}" for relative in kit] + [f"staff/{s}" for s in STAFF]
    assert sorted(bundle.namelist()) == sorted(expected)
    for name in STAFF:
        info = bundle.getinfo(f"staff/{name}")
        assert stat.S_IMODE(info.external_attr >> 16) == 0o600, name
    assert (
        bundle.read("staff/reference/tests/test_ds07_radix.py") == CHAPTER.model_tests.read_bytes()
    )
    assert witnesses_from(json.loads(bundle.read("staff/mutants/witnesses.json"))) == WITNESSES
    for name in bundle.namelist():
        if name.startswith("kit/"):
            data = bundle.read(name)
            assert not [t for t in KILLING_TESTS if json.dumps(t).encode() in data], name


def test_setup_installs_the_staff_material_for_root_alone() -> None:
    """What setup.sh does with staff/ (the layout docs/deploy.md draws)."""
    setup = (ROOT / "deploy" / "gradescope" / "setup.sh").read_text(encoding="utf-8")
    assert 'install -D -m 0600 "$SOURCE/staff/$file" "$KIT/$file"' in setup
    assert 'chmod -R go= "$SOURCE"' in setup


def audience() -> editions.Audience:
    return editions.students(ROOT)


def test_the_read_back_stops_a_file_off_the_list() -> None:
    with pytest.raises(GraderError, match="on no allow-list"):
        editions.prove_contents("x.whl", [("a/notes.txt", "notes.txt", b"hi")], audience(), [])


def test_the_read_back_stops_staff_material_under_any_name() -> None:
    model = CHAPTER.model_tests.read_bytes()
    entries = [("grader/kit/student/radix.py", "student/radix.py", model)]
    with pytest.raises(GraderError, match="staff-only file's content"):
        editions.prove_contents("x.whl", entries, audience(), [model])
    entries = [("t.py", "reference/tests/test_ds07_radix.py", b"")]
    with pytest.raises(GraderError, match="is staff-only"):
        editions.prove_contents("x.whl", entries, audience(), [])


def test_the_read_back_stops_a_witness_beyond_the_students_tier() -> None:
    whole = CHAPTER.witnesses.path.read_bytes() if CHAPTER.witnesses else b""
    entries = [("w.json", "mutants/witnesses.json", whole)]
    with pytest.raises(GraderError, match="than the students' tier 'calls'"):
        editions.prove_contents("x.whl", entries, audience(), [])


def test_staff_only_wins_over_the_allow_list() -> None:
    """A student list that names the model answer's folder still never lets it through."""
    loose = editions.Audience(("*",), CHAPTER.staff_only, audience().witnesses)
    kept = editions.student_files(ROOT, list(kit_files(ROOT)), loose)
    assert "reference/tests/test_ds07_radix.py" not in kept and "reference/radix.py" in kept
    exact = editions.student_files(ROOT, list(kit_files(ROOT)), audience())
    assert set(exact) == {"pyproject.toml", "README.md", *CODE, *CONTENT}
