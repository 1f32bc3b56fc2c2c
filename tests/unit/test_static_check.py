"""The static check on snippets: what it refuses, with line and rule, and what it lets through.

Each refused snippet is a known way around the interface or the grader's
judgement; each accepted one is something an honest student writes. The whole
honest files live in ``fixtures/honest/`` (see ``test_student_test_files``).
"""

from __future__ import annotations

import re
import textwrap
import threading
from pathlib import Path

import pytest

from grader.inputs.catalog import load_chapter
from grader.static.checker import (
    check_test_source,
    describe_overrides,
    function_name,
    overridden_settings,
)
from grader.static.lists import ALLOWED_MODULES

CHAPTER = load_chapter()
KIT = Path(__file__).resolve().parents[2]


def violations(source: str) -> list[str]:
    found, _ = check_test_source(textwrap.dedent(source), CHAPTER.module, CHAPTER.interface)
    return [v.describe("t") for v in found]


def nested_forward_reference(depth: int) -> str:
    """``list['list["...int..."]']``: a type whose forward references nest ``depth`` deep."""
    inner = "int"
    for _ in range(depth):
        inner = f"list[{inner!r}]"
    return inner


HONEST = {
    "a local variable named id": """
        from radix import RadixTree
        def test_x():
            tree = RadixTree(1)
            id, _ = tree.insert([1], ["a"])
            tree.lock(id)
        """,
    "a parameter named id": """
        def helper(tree, id):
            return tree.key(id)
        """,
    "repr and ascii in messages": """
        def test_x():
            value = [1]
            assert value == [1], repr(value) + ascii(value)
        """,
    "str.format on a literal with plain fields": """
        def test_x():
            assert "{} and {name} {0:>{1}}".format(1, 2, name=3)
        """,
    "self.time and self.io on a model of one's own": """
        class Model:
            def __init__(self):
                self.time = 0
                self.io = []
        """,
    "super().__init__() and self._model in a state machine": """
        from hypothesis.stateful import RuleBasedStateMachine, rule
        class Machine(RuleBasedStateMachine):
            def __init__(self):
                super().__init__()
                self._model = {}
            @rule()
            def step(self):
                self._model.clear()
        """,
    "the main guard, with pytest.main and __file__ inside": """
        import pytest
        if __name__ == "__main__":
            raise SystemExit(pytest.main([__file__]))
        """,
    "re, and unittest.TestCase with its assertions": """
        import re
        import unittest
        from unittest import TestCase
        class T(unittest.TestCase):
            def test_x(self):
                self.assertRegex("a1", re.escape("a") + r"\\d")
        class U(TestCase):
            pass
        """,
    "the hypothesis settings the docs suggest for CI": """
        from hypothesis import given, settings, strategies as st
        @settings(derandomize=True, database=None, deadline=None, max_examples=10)
        @given(st.integers())
        def test_x(n):
            assert n == n
        """,
    "a parametrized fixture through request.param": """
        import pytest
        @pytest.fixture(params=[1, 2])
        def granule(request):
            return request.param
        """,
    "a match statement with class patterns on one's own dataclass": """
        from dataclasses import dataclass
        @dataclass
        class Edge:
            key: tuple
        def test_x():
            match Edge((1,)):
                case Edge(key=(1,)):
                    pass
        """,
    "strings that read like code but only call the interface": """
        NOTE = "tree.lock(ROOT) does nothing"
        CALL = "tree.insert([1, 2], ['a', 'b'])"
        """,
    "typing with forward references to one's own classes": """
        from typing import List, Optional
        def f(x: "List[Edge]", y: Optional["Edge"] = None) -> "list[int]":
            return []
        class Edge:
            pass
        """,
    "pytest.param with custom marks and ids": """
        import pytest
        @pytest.mark.parametrize("n", [pytest.param(1, id="one", marks=pytest.mark.slow)])
        def test_x(n):
            assert n
        """,
    "forward references nested three deep": f"T = {nested_forward_reference(3)}\n",
    "a 496-term sum": "def test_x():\n    total = " + " + ".join(["1"] * 496) + "\n",
}


@pytest.mark.parametrize("source", HONEST.values(), ids=HONEST.keys())
def test_honest_code_passes(source: str) -> None:
    assert violations(source) == []


REFUSED = {
    "match class pattern reading a dunder": (
        """
        import radix
        def test_x():
            match radix.RadixTree.insert:
                case object(__code__=code):
                    pass
        """,
        "t line 5: attribute '__code__' is private",
    ),
    "match class pattern reading a frame": (
        "def f(error):\n    match error:\n        case Exception(tb_frame=f):\n            pass\n",
        "t line 3: attribute 'tb_frame' inspects code or objects",
    ),
    "typing.List forward reference running code": (
        "import typing\nT = typing.List[\"open('radix.py').read()\"]\n",
        "t line 2: 'open' is not allowed",
    ),
    "builtin list forward reference": (
        'T = list["radix.__loader__"]\n',
        "t line 1: attribute '__loader__' is private",
    ),
    "TypeVar bound as code": (
        'from typing import TypeVar\nT = TypeVar("T", bound="eval(\'1\')")\n',
        "t line 2: 'eval' is not allowed",
    ),
    "forward references nested deeper than the check reads": (
        f"T = {nested_forward_reference(7)}\n",
        "t line 1: a string nested this deep in strings is not allowed",
    ),
    "a forward reference built at run time": (
        'import typing\nT = typing.List["op" + "en(1)"]\n',
        "t line 2: a type must be written out, not built from strings at run time",
    ),
    "skipif with a string condition": (
        'import pytest\n@pytest.mark.skipif("1")\ndef test_x():\n    pass\n',
        "t line 2: the mark 'skipif' is not allowed",
    ),
    "mark imported from pytest": (
        "from pytest import mark\n@mark.xfail\ndef test_x():\n    pass\n",
        "t line 2: the mark 'xfail' is not allowed",
    ),
    "from pytest import xfail": (
        "from pytest import xfail\n",
        "t line 1: pytest.xfail is not allowed",
    ),
    "from pytest import exit": (
        "from pytest import exit\n",
        "t line 1: pytest.exit is not allowed",
    ),
    "from pytest import main as run": (
        "from pytest import main as run\n",
        "t line 1: pytest.main is not allowed",
    ),
    "pytest imported under another name": (
        "import pytest as p\np.skip()\n",
        "t line 2: pytest.skip is not allowed",
    ),
    "pytest.mark stored": (
        "import pytest\nm = pytest.mark\n",
        "t line 2: 'pytest.mark' is used here as a value",
    ),
    "a module passed as a value": (
        "import radix\ndef f(m=radix):\n    return m\n",
        "t line 2: 'radix' is used here as a value",
    ),
    "settings aliased": (
        "from hypothesis import settings\ns = settings\n",
        "t line 2: 'settings' is used here as a value",
    ),
    "settings(**...)": (
        'from hypothesis import settings\n@settings(**{"derandomize": False})\ndef f(): ...\n',
        "t line 2: settings(**...) hides which settings it sets",
    ),
    "derandomize=False": (
        "from hypothesis import settings\nS = settings(derandomize=False)\n",
        "t line 2: derandomize=False makes hypothesis draw other examples each run",
    ),
    "a real database": (
        "from hypothesis import settings\nS = settings(database=1)\n",
        "t line 2: a hypothesis database carries examples from one run to the next",
    ),
    "settings.get_profile": (
        'from hypothesis import settings\nS = settings(settings.get_profile("default"))\n',
        "t line 2: settings.get_profile is not allowed",
    ),
    "star import": ("from pytest import *\n", "t line 1: 'from pytest import *' is not allowed"),
    "unittest.mock": ("from unittest import mock\n", "t line 1: unittest.mock is not allowed"),
    "unittest.skip": (
        "import unittest\n@unittest.skip('no')\ndef test_x():\n    pass\n",
        "t line 2: unittest.skip is not allowed",
    ),
    "skipTest": (
        "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n"
        "        self.skipTest('no')\n",
        "t line 4: attribute 'skipTest' is not allowed",
    ),
    "the builtin id of an object": (
        "def test_x():\n    assert id(object())\n",
        "t line 2: id() of an object is its memory address",
    ),
    "id shadowed in another function only": (
        "def f():\n    id = 1\n    return id\ndef g():\n    return id(f)\n",
        "t line 5: id() of an object is its memory address",
    ),
    "open bound to itself": (
        "open = open\ndef g():\n    return open('radix.py')\n",
        "t line 1: 'open' is not allowed",
    ),
    "self._x in a unittest.TestCase, whose _outcome leads to pytest": (
        "import unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n"
        "        self._outcome.result\n",
        "t line 4: attribute '_outcome' is private",
    ),
    "open bound by a comprehension elsewhere": (
        "X = [open for open in ()]\ndef g():\n    return open('radix.py')\n",
        "t line 3: 'open' is not allowed",
    ),
    "format on a variable": (
        "def f(t, x):\n    return t.format(x)\n",
        "t line 2: attribute 'format' is not allowed",
    ),
    "format reading an attribute": (
        'def f(x):\n    return "{0.__class__}".format(x)\n',
        "t line 2: attribute 'format' is not allowed",
    ),
    "self._x in a subclass of the tree": (
        "from radix import RadixTree\nclass Mine(RadixTree):\n    def f(self):\n"
        "        return self._values\n",
        "t line 4: attribute '_values' is private",
    ),
    "self._x in a class that inherits the tree through a class of the file": (
        "from radix import RadixTree\nclass A(RadixTree):\n    pass\nclass B(A):\n"
        "    def f(self):\n        return self._values\n",
        "t line 6: attribute '_values' is private",
    ),
    "self._x in a class whose base the check cannot name": (
        "class B(type(1)):\n    def f(self):\n        return self._values\n",
        "t line 3: attribute '_values' is private",
    ),
    "self rebound to another object": (
        "class B:\n    def f(self, tree):\n        self = tree\n        return self._values\n",
        "t line 4: attribute '_values' is private",
    ),
    "self as a lambda's parameter": (
        "class B:\n    leak = staticmethod(lambda self: self._values)\n",
        "t line 2: attribute '_values' is private",
    ),
    "self in a function nested in a method": (
        "class B:\n    def f(self):\n        def g(self):\n            return self._values\n"
        "        return g\n",
        "t line 4: attribute '_values' is private",
    ),
    "super() with arguments": (
        "class B:\n    def f(self, tree):\n        super(B, tree).__init__()\n",
        "t line 3: attribute '__init__' is private",
    ),
    "a private attribute of another object": (
        "def f(tree):\n    return tree._values\n",
        "t line 2: attribute '_values' is private",
    ),
    "request used beyond request.param": (
        "import pytest\n@pytest.fixture\ndef f(request):\n    return request.config\n",
        "t line 3: the fixture 'request' is not allowed",
    ),
    "hasattr with a private name": (
        "def f(x):\n    return hasattr(x, '_values')\n",
        "t line 2: hasattr takes a public attribute's name",
    ),
    "code after a main guard's else": (
        'if __name__ == "__main__":\n    pass\nelse:\n    open("radix.py")\n',
        "t line 4: 'open' is not allowed",
    ),
    "__name__ bound by a match pattern, which would run the main block": (
        'match "__main__":\n    case __name__:\n        pass\n'
        'if __name__ == "__main__":\n    open("radix.py")\n',
        "t line 5: 'open' is not allowed",
    ),
    "__name__ rebound to reach the main block": (
        '__name__ = "__main__"\n',
        "t line 1: assigning '__name__' is not allowed",
    ),
    "a module reached from hypothesis": (
        "import hypothesis\nX = hypothesis.core\n",
        "t line 2: attribute 'core' reaches beyond",
    ),
    "a dunder in a string": ('X = "__loader__"\n', "t line 1: strings naming dunder attributes"),
    "a string annotation that is no type": (
        'def f(x: "open the file") -> None:\n    pass\n',
        "t line 1: a string annotation must be a type",
    ),
}


@pytest.mark.parametrize(("source", "expected"), REFUSED.values(), ids=REFUSED.keys())
def test_known_ways_round_are_refused_with_line_and_rule(source: str, expected: str) -> None:
    found = violations(source)
    assert any(line.startswith(expected) for line in found), found


def test_a_file_nested_deeper_than_python_parses_is_a_message_even_in_a_thread() -> None:
    """No RecursionError escapes, and no crash, in the main thread or a worker thread."""
    results: list[list[str]] = []
    sources = [
        "x = " + " + ".join(["1"] * 2990),
        "x = " + " + ".join(["1"] * 30_000),
        "x = " + "-" * 100_000 + "1",
        "x = 1\x00",
    ]

    def run() -> None:
        results.extend(violations(source) for source in sources)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert results[0] == []
    assert results[1] and "nested too deeply" in results[1][0]
    assert results[2] and "nested too deeply" in results[2][0]
    assert results[3] and "null bytes" in results[3][0]


def test_tests_are_named_as_pytest_reports_them() -> None:
    source = """
        import unittest
        def test_top(): pass
        def helper(): pass
        class TestGroup:
            def test_inner(self): pass
            class TestNested:
                def test_deep(self): pass
        class Plain:
            def test_not_collected(self): pass
        class Case(unittest.TestCase):
            def test_case(self): pass
        """
    _, names = check_test_source(textwrap.dedent(source), CHAPTER.module, CHAPTER.interface)
    assert names == [
        "test_top",
        "TestGroup::test_inner",
        "TestGroup::TestNested::test_deep",
        "Case::test_case",
    ]
    assert [function_name(n) for n in names[1:3]] == ["test_inner", "test_deep"]
    assert function_name("TestGroup::test_inner[2-3]") == "test_inner"


def test_overridden_settings_make_one_note_and_equal_values_none() -> None:
    source = textwrap.dedent(
        """
        from hypothesis import HealthCheck, settings
        A = settings(deadline=200)
        B = settings(deadline=None, print_blob=False)
        C = settings(suppress_health_check=[HealthCheck.too_slow])
        """
    )
    overrides = overridden_settings(source)
    assert [(o.line, o.setting) for o in overrides] == [
        (3, "deadline"),
        (5, "suppress_health_check"),
    ]
    note = describe_overrides(overrides)
    assert note is not None and "deadline (line 3), suppress_health_check (line 5)" in note
    assert describe_overrides([]) is None


def test_the_skeleton_header_lists_exactly_the_allowed_modules() -> None:
    """The rules a student reads first name the modules the grader allows, no more, no fewer."""
    header = CHAPTER.stub_tests.read_text(encoding="utf-8").split("\nimport ", 1)[0]
    bullet = header.split("# - Import only ", 1)[1].split("\n# - ", 1)[0]
    words = set(re.findall(r"(?<![\w.])[a-z_][a-z_.]*[a-z]", bullet.replace("#", " ")))
    prose = {"with", "and", "the", "standard", "modules", "its"}
    assert words - prose == (ALLOWED_MODULES - {"__future__"}) | {CHAPTER.module}
    assert "Test..." in header and "at the top level" in header
