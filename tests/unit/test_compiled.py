"""Issue 25: the test file a run imports is compiled once, by the grader, as pytest would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import _read_pyc, _rewrite_test

from grader.inputs.catalog import load_chapter
from grader.sandbox.host.compiled import rewritten_pyc

CHAPTER = load_chapter()
FILES = {
    "model answer": CHAPTER.model_tests,
    "course tests": CHAPTER.course_test_file,
    "stub's skeleton": CHAPTER.stub_tests,
}


@pytest.mark.parametrize("path", FILES.values(), ids=FILES.keys())
def test_pytest_takes_the_grader_s_pyc_for_its_own_rewrite(tmp_path: Path, path: Path) -> None:
    """pytest reads the grader's pyc for a file of those bytes, and the code in it is the code
    pytest's own rewriting makes of the file."""
    source = path.read_bytes()
    test_file = tmp_path / "test_file.py"
    test_file.write_bytes(source)
    pyc = tmp_path / "test_file.pyc"
    pyc.write_bytes(rewritten_pyc(source))
    loaded = _read_pyc(test_file, pyc)
    _, rewritten = _rewrite_test(test_file, None)  # type: ignore[arg-type]
    assert loaded is not None
    assert loaded == rewritten


def test_pytest_refuses_the_pyc_of_other_bytes(tmp_path: Path) -> None:
    """A pyc is taken only for the bytes it was made from: one byte more and pytest rewrites."""
    source = b"def test_one():\n    assert 1 + 1 == 2\n"
    test_file = tmp_path / "test_file.py"
    test_file.write_bytes(source + b"\n")
    pyc = tmp_path / "test_file.pyc"
    pyc.write_bytes(rewritten_pyc(source))
    assert _read_pyc(test_file, pyc) is None


@pytest.mark.parametrize(
    "source",
    [b"def test_broken(:\n    pass\n", b"x = 1\x00\n", b"\xff\xfe not utf-8 \x80\n"],
    ids=["syntax error", "null byte", "not UTF-8"],
)
def test_a_file_python_cannot_compile_gets_no_pyc(source: bytes) -> None:
    """The run then compiles it itself and reports why it cannot, as it always did."""
    assert rewritten_pyc(source) == b""


def test_the_pyc_keeps_the_rewritten_explanation(tmp_path: Path) -> None:
    """A failing assert from the grader's pyc explains itself as pytest's rewriting does."""
    source = b"def test_sum():\n    values = [1, 2]\n    assert sum(values) == 4\n"
    test_file = tmp_path / "test_file.py"
    test_file.write_bytes(source)
    pyc = tmp_path / "test_file.pyc"
    pyc.write_bytes(rewritten_pyc(source))
    code = _read_pyc(test_file, pyc)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(code, namespace)
    with pytest.raises(AssertionError) as failure:
        namespace["test_sum"]()  # type: ignore[operator]
    assert "where 3 = sum([1, 2])" in str(failure.value)


def test_a_file_nested_deeper_than_a_run_compiles_is_left_to_the_run() -> None:
    """How deep Python compiles depends on the recursion limit, which the grader's process
    raises: a 5000-term sum compiles here but not in a run, so the run must compile it."""
    terms = " + ".join(["1"] * 5000)
    assert rewritten_pyc(f"def test_deep():\n    assert {terms} > 0\n".encode()) == b""
    shallow = " + ".join(["1"] * 50)
    assert rewritten_pyc(f"def test_shallow():\n    assert {shallow} > 0\n".encode()) != b""


def test_the_pyc_is_the_same_bytes_whatever_else_the_grader_imported() -> None:
    """Every run of a file starts from the same bytes, so from the same heap, in every grader
    process (a check, a batch, a tdd): the pyc does not depend on what else is loaded."""
    script = (
        "{imports}\n"
        "import hashlib, sys\n"
        "from grader.sandbox.host.compiled import rewritten_pyc\n"
        "print(hashlib.sha256(rewritten_pyc(open(sys.argv[1], 'rb').read())).hexdigest())\n"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", script.format(imports=imports), str(CHAPTER.model_tests)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for imports in ("", "import hypothesis, json, asyncio", "import grader.commands.batch")
    }
    assert len(digests) == 1 and len(digests.pop().strip()) == 64
