"""The student's edge paths (issue 35, items 3 to 8 and 10), each as a student meets it.

Each test drives ``grader`` as a student would and reads what the terminal says:
run from inside the submission folder, a bug in the student's own map, a test
that a correct variant refuses, a flaky file, several problems at once, a failing
model-based test, and ``grader diff``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import add_dependencies
from terminal import plain_wide_terminal, run  # noqa: F401  (autouse)

from grader.errors import EXIT_FAIL
from grader.inputs.catalog import load_chapter

CHAPTER = load_chapter()


def flat(text: str) -> str:
    """``text`` with its lines joined and a box's borders left out, as a sentence wrapped by
    the terminal reads."""
    return re.sub(r"\s+", " ", re.sub(r"\s*│\s*", " ", text))


# ----------------------------------------------------------------------
# Item 3: inside the submission folder.


@pytest.mark.slow
def test_inside_the_submission_folder_the_kit_says_so_and_nests_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From inside ``submission/``: every command says this is the submission folder and to
    run from its parent or pass ``--submission .``; none advises ``grader start``, which
    would nest a new stub, and ``start`` itself refuses; a second check claims no reuse of
    a ``radix.py`` it never found; ``--submission .`` grades the folder."""
    assert run(capsys, "start")[0] == 0
    inside = tmp_path / "submission"
    monkeypatch.chdir(inside)
    advice = "run grader from the folder above it, or pass --submission ."
    for _ in range(2):  # the second check finds the first one's results in the cache
        code, out, err = run(capsys, "check")
        assert code == EXIT_FAIL, err
        said = flat(out)
        assert advice in said and "radix.py is in the current folder" in said
        assert "grader start" not in said
        assert "Reused" not in said and "unchanged" not in said
        assert "is missing: write it" not in said  # not six missing tests: one missing folder
    for command in (["tdd", "red"], ["tdd", "green"], ["diff"]):
        code, out, err = run(capsys, *command)
        assert code == EXIT_FAIL
        assert advice in flat(out + err) and "grader start" not in out + err, command
    code, out, err = run(capsys, "start")
    assert code == EXIT_FAIL and advice in err and "start wrote nothing" in err
    assert not (inside / "submission").exists()

    code, out, err = run(capsys, "check", "--submission", ".")
    assert code == EXIT_FAIL
    assert "radix.py is the unmodified stub" in out and advice not in flat(out)


# ----------------------------------------------------------------------
# Items 5, 6 and 7: what makes a test file invalid, every reason at once, in the file's order.

EXTRAS = """

def test_extra_wrong_on_the_reference() -> None:
    assert RadixTree(1).node_count() == 1


def test_extra_reads_the_environment() -> None:
    import os

    assert os.sep


def test_extra_reuses_the_last_freed_id() -> None:
    tree: RadixTree[int] = RadixTree(1)
    tree.insert((0,), [1])
    second, _ = tree.insert((1,), [2])
    assert tree.evict(2, lambda value: None) == 2
    third, _ = tree.insert((2,), [3])
    assert third == second


ORDER: list[str] = []


def test_extra_first_in_order() -> None:
    ORDER.append("first")


def test_extra_second_in_order() -> None:
    assert ORDER == ["first"]
"""


def with_extras(folder: Path) -> Path:
    """A submission of the reference and the model answer with ``EXTRAS`` after it: an extra
    test wrong on the reference, one the rules refuse, one wrong on the correct variant w01
    only, and two whose outcome depends on their order."""
    folder.mkdir()
    shutil.copyfile(CHAPTER.reference, folder / CHAPTER.implementation)
    add_dependencies(folder)
    tests = folder / CHAPTER.student_tests
    tests.parent.mkdir()
    tests.write_text(CHAPTER.model_tests.read_text(encoding="utf-8") + EXTRAS, encoding="utf-8")
    return folder


def test_tests_lists_each_correct_variant_with_its_choice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "tests")
    assert code == 0
    (wheat,) = CHAPTER.wheats
    assert wheat.choice.startswith("reuses freed ids oldest first")
    assert f"{wheat.id}: a correct tree that {wheat.choice}" in flat(out)


@pytest.mark.slow
def test_every_invalidity_at_once_in_the_files_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One check names every problem of the file, each once, in the order of its lines: the
    extra test wrong on the reference (and that removing it is a fix too), the rule broken,
    the test only the correct variant refuses (described, not a bare id), and the flaky pair
    with the rerun that disagreed and how."""
    folder = with_extras(tmp_path / "extras")
    code, out, err = run(capsys, "check", "--submission", str(folder))
    assert code == EXIT_FAIL, err
    problems = [flat(line) for line in re.split(r"\n(?=\S)", out) if line.startswith("✗ ")]
    said = "\n".join(problems)
    wheat = CHAPTER.wheats[0]
    expected = [
        "✗ test_extra_wrong_on_the_reference fails on the reference (a correct tree), so the "
        "test is wrong: assert 0 == 1",
        f"✗ {CHAPTER.student_tests} line ",
        f"✗ test_extra_reuses_the_last_freed_id fails on {wheat.id}, a correct tree that "
        f"{wheat.choice}, so the test is wrong: assert ",
        "✗ flaky: on the reference, the file run again in reverse order and with another hash "
        "seed gave other outcomes: test_extra_second_in_order passed first, failed then",
    ]
    assert len(problems) == len(expected), said
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start), said
    assert "import of 'os' is not allowed" in problems[1]
    assert problems[0].endswith(
        "test_extra_wrong_on_the_reference is not a required test, so removing it also makes "
        "the file valid"
    )
    assert "Mutation score: not measured until your tests are valid" in out


@pytest.mark.slow
def test_tdd_refuses_what_check_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``tdd red`` and ``tdd green`` hold the file to check's validity checks: the flaky pair,
    the test a correct variant refuses and the rule broken stop both stages, though every
    required test fails on the stub and every test passes on the student's (correct) tree."""
    folder = with_extras(tmp_path / "extras")
    wheat = CHAPTER.wheats[0]
    for stage in ("red", "green"):
        code, out, err = run(capsys, "tdd", stage, "--submission", str(folder))
        said = flat(out)
        assert code == EXIT_FAIL, err
        assert f"tdd {stage}: not yet" in said
        assert "✗ flaky: on the reference, the file run again in reverse order" in said
        assert f"test_extra_reuses_the_last_freed_id fails on {wheat.id}, a correct tree" in said
        assert "import of 'os' is not allowed" in said


# ----------------------------------------------------------------------
# Item 4: the map blamed when it is the map.


def with_a_broken_map(folder: Path) -> Path:
    """The reference radix.py beside a copy of the kit's map whose ``del`` raises once it
    holds more than two keys, and the untouched test skeleton (not valid: no mutant runs)."""
    folder.mkdir()
    shutil.copyfile(CHAPTER.reference, folder / CHAPTER.implementation)
    (need,) = CHAPTER.needs
    source = need.reference.read_text(encoding="utf-8")
    healthy = "            raise KeyError(key)\n        self._shift_back(slot)"
    assert source.count(healthy) == 1
    broken = source.replace(
        healthy,
        "            raise KeyError(key)\n        if self._size > 2:\n"
        '            raise IndexError("slot out of range")\n        self._shift_back(slot)',
    )
    (folder / need.implementation).write_text(broken, encoding="utf-8")
    tests = folder / CHAPTER.student_tests
    tests.parent.mkdir()
    shutil.copyfile(CHAPTER.stub_tests, tests)
    return folder


@pytest.mark.slow
def test_a_bug_in_the_students_map_is_blamed_on_the_map(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The course tests fail through the student's robin_hood.py: the report names its file
    and line, says the bug may be there and how --ref-deps tells the two apart; the terminal
    says which map each check used, and with the kit's the course tests pass."""
    (need,) = CHAPTER.needs
    folder = with_a_broken_map(tmp_path / "map")
    code, out, err = run(capsys, "check", "--submission", str(folder))
    said = flat(out)
    assert code == EXIT_FAIL, err
    assert f"your radix.py ran with your {need.implementation} ({need.id}); --ref-deps" in said
    frame = re.search(rf"{re.escape(need.implementation)}:(\d+): in __delitem__", out)
    assert frame is not None, out
    assert (
        f"This failure passes through your {need.implementation} "
        f"({need.implementation}:{frame[1]} in __delitem__): the bug may be in your "
        f"{need.implementation}, not in your radix.py. grader check --ref-deps"
    ) in said
    assert "grader.sandbox" not in out

    code, out, err = run(capsys, "check", "--submission", str(folder), "--ref-deps")
    said = flat(out)
    total = len(CHAPTER.course_tests)
    assert f"Course tests on your radix.py: {total}/{total} passed" in said
    assert f"your radix.py ran with the kit's {need.module}.py (--ref-deps)" in said


# ----------------------------------------------------------------------
# Item 10: grader diff opens with a summary.


@pytest.mark.slow
def test_diff_opens_with_a_summary_of_what_differs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A correct tree with a helper of its own and an edited method: the diff opens with the
    methods that differ, by how many lines, and names the student's own helper, then the
    unified diff."""
    folder = tmp_path / "submission"
    folder.mkdir()
    add_dependencies(folder)
    reference = CHAPTER.reference.read_text(encoding="utf-8")
    taken = "            node = self._free.pop()"
    method = "    def _new_node(self,"
    assert reference.count(taken) == 1 and reference.count(method) == 1
    own = reference.replace(taken, "            node = self._take_free()").replace(
        method,
        '    def _take_free(self) -> NodeId:\n        """The oldest freed slot."""\n'
        "        return self._free.pop(0)\n\n" + method,
    )
    (folder / CHAPTER.implementation).write_text(own, encoding="utf-8")
    code, out, err = run(capsys, "diff", "--submission", str(folder))
    assert (code, err) == (0, "")
    summary, _, diff = out.partition("\n\n")
    assert summary.splitlines() == [
        "2 functions or methods differ from the reference:",
        "  RadixTree._take_free: your own helper (3 lines), not in the reference",
        "  RadixTree._new_node: 1 line of yours against 1 line of the reference's",
        "The diff, from your radix.py (-) to the reference (+):",
    ]
    assert diff.startswith("--- yours/radix.py\n+++ reference/radix.py\n@@ ")
    assert "-    def _take_free(self) -> NodeId:" in diff.splitlines()


# ----------------------------------------------------------------------
# Item 8: the model test's shrunk program in the chapter's words.


@pytest.mark.slow
def test_the_shrunk_program_reads_as_interface_calls_and_the_check_is_not_blamed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A tree that forgets to free an evicted slot: its own _check (the reference's) finds
    the damage in the model-based test. The program reads as the interface calls the rules
    make, and the hint sends the student to the call before the check, not into _check."""
    folder = tmp_path / "submission"
    folder.mkdir()
    add_dependencies(folder)
    reference = CHAPTER.reference.read_text(encoding="utf-8")
    freeing = "        self._free.append(leaf)\n"
    assert reference.count(freeing) == 1
    (folder / CHAPTER.implementation).write_text(
        reference.replace(freeing, "        pass\n"), encoding="utf-8"
    )
    (folder / "tests").mkdir()
    shutil.copyfile(CHAPTER.stub_tests, folder / CHAPTER.student_tests)
    code, out, err = run(capsys, "check", "--submission", str(folder))
    assert code == EXIT_FAIL, err
    said = flat(out)
    assert "Failing program, in the chapter's calls" in said
    assert "tree = RadixTree(1) E tree.insert(key=(" in said
    assert "state." not in out and "insert_some" not in out
    assert "in _check is your own invariant check: it found the tree broken" in said
    assert "The bug is most likely in the last call before the check (tree.evict(n=" in said
    assert not re.search(r"Fix radix\.py:\d+ in _check", said)


# ----------------------------------------------------------------------
# Item 9, in this (staff) edition: grader help reads only the docs the kit carries.


@pytest.mark.parametrize("topic", ["../README", "/etc/passwd", "nope", "students.md"])
def test_help_shows_only_a_doc_the_kit_carries(
    capsys: pytest.CaptureFixture[str], topic: str
) -> None:
    code, out, err = run(capsys, "help", topic)
    assert (code, out) == (2, "")
    assert err.startswith(f"grader: no help on {topic!r}: the topics are ")


def test_help_shows_a_doc_with_its_links_as_help_pointers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "help", "students")
    assert (code, err) == (0, "")
    assert out.startswith("# For students")
    assert "(`grader help witnesses`)" in out and "](witnesses.md)" not in out
