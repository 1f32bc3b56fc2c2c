"""The stand-in module and its wire: a test sees the tree as if it were in its own process.

The codec is tested directly; the stand-in through real runs of the
grader (a test file run against an implementation in its own process),
each asserting inside the run what a test would see.
"""

from __future__ import annotations

import marshal
import os
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from grader.grading.jobs import course_tests_job, student_tests_job
from grader.inputs.catalog import load_chapter
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.protocol import calls, frames

CHAPTER = load_chapter()
REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")
STUB = CHAPTER.stub.read_text(encoding="utf-8")


def through_a_pipe(message: object) -> object:
    read_end, write_end = os.pipe()
    try:
        calls.send(write_end, message)
        return calls.Calls(read_end).receive()
    finally:
        os.close(read_end)
        os.close(write_end)


def garbage(body: bytes) -> object:
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, len(body).to_bytes(4, "big") + body)
        return calls.Calls(read_end).receive()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_plain_data_crosses_as_it_was() -> None:
    value = [1, "two", (3, (4.5, None)), [True, False], -(10**40), "", ()]
    back = through_a_pipe(value)
    assert back == value
    assert isinstance(back, list)
    assert type(back) is list and type(back[2]) is tuple and type(back[2][1]) is tuple


class Sly(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


@pytest.mark.parametrize(
    "value", [{1}, {"a": 1}, b"bytes", object(), Sly(3), [1, (2, Sly(0))], len], ids=repr
)
def test_anything_else_is_refused_before_it_is_sent(value: object) -> None:
    with pytest.raises(calls.NotPlainData, match="cannot cross"):
        calls.encode(value)


def test_a_frame_that_is_not_plain_data_is_garbage() -> None:
    with pytest.raises(frames.WireError, match="garbage"):
        garbage(marshal.dumps({1, 2}))
    with pytest.raises(frames.WireError, match="garbage"):
        garbage(marshal.dumps(compile("1", "x", "eval")))
    with pytest.raises(frames.WireError, match="garbage"):
        garbage(b"\xff\x00not marshal")
    read_end, write_end = os.pipe()
    os.write(write_end, (1 << 31).to_bytes(4, "big"))
    os.close(write_end)
    with pytest.raises(frames.WireError, match="more than"):
        calls.Calls(read_end).receive()
    os.close(read_end)


def test_frames_cross_whatever_the_reads_bring() -> None:
    """Two frames in one write, a frame in many small writes, a frame larger than a read:
    each arrives whole and in order; a channel that ends mid-frame is a ``WireError``."""
    big = list(range(100_000))
    read_end, write_end = os.pipe()
    reader = calls.Calls(read_end)
    os.write(write_end, calls.encode(["one"]) + calls.encode(["two", 2]))
    assert [reader.receive(), reader.receive()] == [["one"], ["two", 2]]
    for byte in calls.encode(["three", (3,)]):
        os.write(write_end, bytes([byte]))
    assert reader.receive() == ["three", (3,)]
    with ThreadPoolExecutor(1) as writer:
        writer.submit(frames.write_all, write_end, calls.encode(big))
        assert reader.receive() == big
    os.write(write_end, calls.encode(["cut short"])[:-2])
    os.close(write_end)
    with pytest.raises(frames.WireError, match="ended"):
        reader.receive()
    os.close(read_end)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(workers=2) as workers:
        yield workers


def passes(pool: WorkerPool, implementation: str, source: str) -> None:
    """Run the test file ``source`` against ``implementation``: every test in it must pass."""
    job = student_tests_job(CHAPTER, textwrap.dedent(source), implementation, 60.0)
    result = pool.run(job)
    failed = {o.name: o.detail for o in result.outcomes if o.status != "passed"}
    assert result.status == "completed" and not failed and result.outcomes, (
        result.message,
        failed,
        result.output,
    )


def test_the_contracts_errors_come_back_as_themselves(pool: WorkerPool) -> None:
    passes(
        pool,
        REFERENCE,
        """
        import pytest
        from radix import ROOT, RadixTree

        def test_errors():
            with pytest.raises(ValueError):
                RadixTree(0)
            tree = RadixTree(1)
            with pytest.raises(KeyError) as missing:
                tree.key(999)
            assert missing.type is KeyError and str(missing.value) == repr(missing.value.args[0])
            with pytest.raises(ValueError):
                tree.insert([1, 2], ["a"])
            node, _ = tree.insert([1], ["a"])
            with pytest.raises(RuntimeError):
                tree.unlock(node)
            assert tree.key(node) == (1,) and tree.values(node) == ("a",)
            assert tree.children(ROOT) == [node] and tree.parent(ROOT) is None
        """,
    )


def test_the_stubs_not_implemented_is_not_implemented(pool: WorkerPool) -> None:
    passes(
        pool,
        STUB,
        """
        import pytest
        from radix import RadixTree

        def test_stub():
            with pytest.raises(NotImplementedError):
                RadixTree(1).insert([1], ["a"])
        """,
    )


def test_callbacks_run_here_in_order_and_may_call_the_tree(pool: WorkerPool) -> None:
    passes(
        pool,
        REFERENCE,
        """
        import copy
        import pytest
        from radix import RadixTree

        def test_on_evict():
            tree = RadixTree[str](1)
            tree.insert([1], ["a"])
            tree.insert([2], ["b"])
            seen = []
            def on_evict(value):
                seen.append((value, len(tree)))
            assert tree.evict(5, on_evict) == 2
            assert [value for value, _ in seen] == ["a", "b"]

        def test_an_error_in_the_callback_reaches_the_test():
            tree = RadixTree(1)
            tree.insert([1], ["a"])
            def refuse(value):
                raise LookupError("no thanks")
            with pytest.raises(LookupError, match="no thanks"):
                tree.evict(1, refuse)

        def test_a_copy_is_a_tree_of_its_own():
            tree = RadixTree(1)
            tree.insert([1], ["a"])
            twin = copy.deepcopy(tree)
            twin.insert([2], ["b"])
            assert (len(tree), len(twin)) == (1, 2)
        """,
    )


APPENDS_THEN_RAISES = (
    REFERENCE
    + """

_evict = RadixTree.evict


def _evict_then_raise(self, n, on_evict):
    if n != 99:
        return _evict(self, n, on_evict)
    on_evict("x")
    try:
        on_evict("y", "z")
    except Exception as refused:
        on_evict(type(refused).__name__)
    raise ValueError("after the appends")


RadixTree.evict = _evict_then_raise
"""
)


def test_a_lists_append_gets_every_call_in_order_even_when_the_call_raises(
    pool: WorkerPool,
) -> None:
    """``on_evict=gone.append`` (collected by the implementation, made here at the end) sees
    what a callback called back one call at a time would: every value in order, those before
    an error included, and a call ``append`` refuses refused as ``append`` refuses it."""
    passes(
        pool,
        APPENDS_THEN_RAISES,
        """
        import pytest
        from radix import RadixTree

        class Seen(list):
            pass

        def test_appends():
            tree = RadixTree(1)
            tree.insert([1], ["a"])
            tree.insert([2], ["b"])
            gone = []
            assert tree.evict(5, gone.append) == 2
            assert gone == ["a", "b"]

        @pytest.mark.parametrize("make", [list, Seen])
        def test_appends_before_an_error(make):
            gone = make()
            with pytest.raises(ValueError, match="after the appends"):
                RadixTree(1).evict(99, gone.append)
            assert gone == ["x", "CallbackFailed"]
        """,
    )


def test_other_errors_and_objects_are_implementation_errors(pool: WorkerPool) -> None:
    odd = REFERENCE.replace(
        "    def lru_order(self) -> list[NodeId]:",
        "    def lru_order(self) -> list[NodeId]:\n        return set()\n\n"
        "    def _unused(self) -> list[NodeId]:",
    ).replace(
        "    def node_count(self) -> int:",
        "    def node_count(self) -> int:\n        raise TypeError('not today')\n\n"
        "    def _unused_count(self) -> int:",
    )
    passes(
        pool,
        odd.replace("class RadixTree(Generic[V]):", "class RadixTree:"),
        """
        import pytest
        from grader.sandbox.untrusted.proxy import ImplementationError
        from radix import RadixTree

        def test_odd():
            tree = RadixTree[int](1)  # subscriptable although this tree is not Generic
            with pytest.raises(ImplementationError, match="cannot cross"):
                tree.lru_order()
            with pytest.raises(ImplementationError, match="raised TypeError: not today"):
                tree.node_count()
            with pytest.raises(TypeError, match="cannot cross"):
                tree.insert([1], [object()])
        """,
    )


def test_the_implementations_frames_reach_the_course_tests_only(
    pool: WorkerPool, tmp_path: Path
) -> None:
    """An error in a student's radix.py shows its file, line and function in the course tests'
    report; in a run of a student's test file (against the reference, a mutant) it never does."""
    broken = REFERENCE.replace(
        "    def node_count(self) -> int:",
        "    def node_count(self) -> int:\n        raise TypeError('counted wrong')\n\n"
        "    def _unused_count(self) -> int:",
    )
    line = broken.splitlines().index("        raise TypeError('counted wrong')") + 1
    source = "from radix import RadixTree\n\ndef test_count():\n    RadixTree(1).node_count()\n"
    course_file = tmp_path / CHAPTER.course_test_file.name
    course_file.write_text(source, encoding="utf-8")
    chapter = replace(CHAPTER, course_test_file=course_file)
    shown = pool.run(course_tests_job(chapter, broken, 60.0)).detail("test_count")
    assert f"radix.py:{line}: in node_count\n    raise TypeError('counted wrong')" in shown
    hidden = pool.run(student_tests_job(CHAPTER, source, broken, 60.0)).detail("test_count")
    assert "counted wrong" in hidden and "\nradix.py:" not in "\n" + hidden


def test_the_frames_of_a_module_it_imports_reach_the_course_tests(
    pool: WorkerPool, tmp_path: Path
) -> None:
    """An error raised in the student's map (a module brought beside radix.py) shows the
    map's file, line and function below radix.py's frames, so the map can be blamed."""
    implementation = (
        "import helper\n\nclass RadixTree:\n    def __init__(self, granule):\n"
        "        pass\n\n    def node_count(self):\n        return helper.count()\n"
    )
    helper = "def count():\n    raise IndexError('slot out of range')\n"
    source = "from radix import RadixTree\n\ndef test_size():\n    RadixTree(1).node_count()\n"
    course_file = tmp_path / CHAPTER.course_test_file.name
    course_file.write_text(source, encoding="utf-8")
    chapter = replace(CHAPTER, course_test_file=course_file)
    job = course_tests_job(chapter, implementation, 60.0, (("helper", helper),))
    shown = pool.run(job).detail("test_size")
    assert "radix.py:8: in node_count\n    return helper.count()" in shown, shown
    assert "helper.py:2: in count\n    raise IndexError('slot out of range')" in shown


def test_a_frame_naming_another_file_is_refused() -> None:
    """A frame whose file is not a bare module name (a path, a course test's file) is not
    drawn: the error is raised as it is, with no stand-in frame."""
    from grader.sandbox.untrusted.raised import raise_through

    for forged in ("/etc/passwd", "tests/test_ds07.py", "x.txt"):
        with pytest.raises(ValueError, match="the error") as raised:
            raise_through([[3, "f", "line", forged]], ValueError("the error"), "radix")
        files = [entry.path for entry in raised.traceback]
        assert all(forged not in str(path) for path in files)


@pytest.mark.parametrize(
    ("broken_file", "implementation", "dependencies"),
    [
        ("radix.py", "VALUE = 1\ndef broken(:\n", ()),
        ("robin_hood.py", "import robin_hood\n", (("robin_hood", "VALUE = 2\nclass (:\n"),)),
    ],
    ids=["the implementation", "a module it imports"],
)
def test_a_source_that_does_not_compile_fails_the_import_that_runs_it(
    pool: WorkerPool, broken_file: str, implementation: str, dependencies: tuple[tuple[str, str]]
) -> None:
    """The implementation process compiles its sources before the tests ask for them; one that
    does not compile still fails where Python's own import would: at the import, with the
    file and line of its error."""
    tests = f"""
        import pytest

        def test_the_import_fails():
            with pytest.raises(SyntaxError) as caught:
                import radix
            assert (caught.value.filename, caught.value.lineno) == ({broken_file!r}, 2)
        """
    job = student_tests_job(
        CHAPTER, textwrap.dedent(tests), implementation, 60.0, dependencies=dependencies
    )
    result = pool.run(job)
    assert result.all_passed, (result.message, [o.detail for o in result.outcomes])
