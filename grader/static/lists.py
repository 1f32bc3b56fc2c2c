"""The static check's allow- and deny-lists: the data its rules read, and nothing else.

Each list says which names a student's test file may or may not use. The rules
that read them live in ``grader.static.rules``; a change of policy is a change
here, with no change to a rule.
"""

from __future__ import annotations

ALLOWED_MODULES = frozenset(
    {
        "pytest",
        "hypothesis",
        "hypothesis.strategies",
        "hypothesis.stateful",
        "math",
        "itertools",
        "functools",
        "collections",
        "collections.abc",
        "dataclasses",
        "typing",
        "__future__",
        "random",
        "string",
        "operator",
        "copy",
        "enum",
        "re",
        "unittest",
    }
)
"""Modules a test file may import besides the module under test; the skeleton's header lists
the same (a kit test checks)."""

ALLOWED_PYTEST = frozenset(
    {
        "raises",
        "approx",
        "fixture",
        "mark",
        "param",
        "fail",
        "warns",
        "deprecated_call",
        "RaisesExc",
        "RaisesGroup",
    }
)
"""pytest's names a test file may use: assertions, fixtures and parametrizing."""
FORBIDDEN_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings"})
ALLOWED_UNITTEST = frozenset({"TestCase"})
"""``unittest.TestCase`` and its assertions; its skips, ``main`` and ``mock`` stay out."""
FORBIDDEN_SETTINGS_METHODS = frozenset({"load_profile", "register_profile", "get_profile"})

MODULE_ATTRIBUTES = frozenset(
    {
        "sys",
        "os",
        "inspect",
        "builtins",
        "importlib",
        "subprocess",
        "signal",
        "io",
        "pathlib",
        "shutil",
        "socket",
        "types",
        "gc",
        "ctypes",
        "marshal",
        "pickle",
        "dis",
        "ast",
        "linecache",
        "tokenize",
        "threading",
        "multiprocessing",
        "time",
        "datetime",
        "hashlib",
        "platform",
        "resource",
        "tempfile",
        "glob",
        "atexit",
        "code",
        "runpy",
        "weakref",
        "warnings",
        "abc",
        "reprlib",
        "keyword",
        "contextlib",
        "mock",
        # hypothesis's own modules, beyond strategies, stateful and errors
        "internal",
        "database",
        "configuration",
        "control",
        "core",
        "entry_points",
        "reporting",
        "statistics",
        "utils",
        "vendor",
    }
)
"""Attribute names that lead from an imported module to one outside the allow-list
(``hypothesis.core.os``...). On the student's own objects (``self.time``) they are fine."""

INTROSPECTION_ATTRIBUTES = frozenset(
    {
        # frames, tracebacks and their text: they lead to the implementation's code
        "tb",
        "frame",
        "traceback",
        "getrepr",
        "mro",
        # dynamic attribute access, which would get round every rule on names
        "attrgetter",
        "methodcaller",
        "format_map",
        "Formatter",
        # evaluating strings as code
        "get_type_hints",
        "ForwardRef",
        "get_annotations",
        # a test that skips itself
        "skipTest",
    }
)
INTROSPECTION_PREFIXES = ("f_", "tb_", "co_", "gi_", "cr_", "ag_")
"""Attributes of frames, tracebacks, code objects, generators and coroutines."""
DYNAMIC_ACCESS_FIX = {
    "format": "a str.format field can read any attribute; use an f-string, or plain fields",
    "format_map": "str.format fields can read any attribute; use an f-string",
    "attrgetter": "it reads attributes named at run time; call the methods themselves",
    "methodcaller": "it calls methods named at run time; call the methods themselves",
    "skipTest": "a test must pass or fail on its own",
}
"""For the rules a student may trip over without meaning harm: what to write instead."""

FORBIDDEN_BUILTINS = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "globals",
        "locals",
        "vars",
        "dir",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "exit",
        "quit",
        "memoryview",
        "id",
        "hash",
        "help",
    }
)
"""Builtins that read files, run code or read objects by name."""
ADDRESS_BUILTINS = frozenset({"id", "hash"})
"""The builtins a variable of the student's own may be named after: they only give addresses,
which a repr shows too. The others stay refused under any binding (``open = open``)."""
OWN_ATTRIBUTE_BASES = frozenset(
    {
        "hypothesis.stateful.RuleBasedStateMachine",
        "typing.Generic",
        "typing.NamedTuple",
        "enum.Enum",
    }
)
"""Imported base classes under which ``self._x`` is the student's own attribute."""

FORBIDDEN_FIXTURES = frozenset(
    {
        "request",
        "pytestconfig",
        "monkeypatch",
        "tmp_path",
        "tmp_path_factory",
        "tmpdir",
        "tmpdir_factory",
        "pytester",
        "testdir",
        "cache",
        "record_property",
        "record_xml_attribute",
        "record_testsuite_property",
        "doctest_namespace",
        # capturing output would let a test read help() or reprs it printed
        "capsys",
        "capsysbinary",
        "capfd",
        "capfdbinary",
        "capteesys",
    }
)
"""Fixtures that reach pytest's session, the file system or the process. ``request`` is
allowed where the only use of it is ``request.param`` (a parametrized fixture)."""

GENERIC_BUILTINS = frozenset({"list", "dict", "tuple", "set", "frozenset", "type"})
"""Builtins whose subscripts are types: ``list["..."]`` holds a forward reference too."""
MAIN_GUARD = "__main__"
"""The one dunder a string may name: the main guard's."""
PYTEST_VARIABLES = frozenset({"pytest_plugins", "pytestmark"})
"""Module variables pytest reads to change how it runs the whole file."""
STRING_NESTING = 4
"""How deep strings in strings are read as code; deeper is refused, since typing evaluates a
forward reference inside a forward reference too."""
