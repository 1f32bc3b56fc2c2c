"""A test file as pytest runs it, compiled once by the grader rather than in every run.

pytest rewrites a test file's ``assert`` statements before it imports the
file, and rewriting is slow: about 200 ms for the model answer's tests and 300
for the course tests, in every run, while the tests themselves take less. A
check runs one file some 25 times, so the grader rewrites it once (here, by
pytest's own rewriter, from the very bytes the run writes) and each run gets
the result as the checked-hash ``.pyc`` pytest itself caches: pytest in the run
loads it only if its hash matches the file's bytes, and otherwise rewrites the
file as it always does. Nothing is executed here: the source is parsed and
compiled, which the static check does already.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import marshal
import threading
import warnings

from _pytest.assertion.rewrite import rewrite_asserts

CHECKED_HASH_FLAGS = b"\x03\x00\x00\x00"
"""PEP 552's flags of a pyc checked by its source's hash, the only kind pytest reads."""
MAX_DEPTH = 100
"""The deepest syntax tree compiled here. How deep Python compiles, and pytest rewrites,
depends on the process's recursion limit, which is not the run's here (the static check
raises it): a file nested deeper is left for the run to compile, as it always was. Honest
test files nest under 40 levels."""

_warnings_lock = threading.Lock()


@functools.lru_cache(maxsize=16)
def rewritten_pyc(source: bytes) -> bytes:
    """pytest's cached form of the test file ``source``; empty if pytest would not compile it
    (the run then reports why, as it did before)."""
    try:
        with _warnings_lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the runs ignore them too (``-W ignore``)
            tree = ast.parse(source, filename="test_file.py")
            if _deeper_than(tree, MAX_DEPTH):
                return b""
            rewrite_asserts(tree, source, "test_file.py")
            code = compile(tree, "test_file.py", "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return b""
    header = importlib.util.MAGIC_NUMBER + CHECKED_HASH_FLAGS
    return header + importlib.util.source_hash(source)[:8] + marshal.dumps(code)


def _deeper_than(tree: ast.AST, bound: int) -> bool:
    """Whether ``tree`` nests deeper than ``bound`` levels (walked without recursion)."""
    todo = [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        if depth > bound:
            return True
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False
