"""The static check's rules: each a small function registered under a stable code,
one module per family (as ruff keeps its rules), the registry in ``registry``.

A rule has a code (``A001``), a name (``private-attribute``), the explanation
a student reads, one file that breaks it and one that keeps it, and the node
types it looks at. ``grader.static.checker`` walks a file once and hands each
node to the rules registered for its type; a rule yields the message for each
way the node breaks it. What a rule needs to know about names (what a dotted
name resolves to, whether a builtin is shadowed, whether ``self`` is a
class's own) it asks the checker, which works each out once per scope.

Codes by family: ``F`` the file itself, ``I`` imports, ``A`` attributes,
``B`` builtins and names, ``V`` what changes a verdict (pytest, unittest,
hypothesis), ``D`` what makes a grade depend on chance or order, ``S``
strings that libraries run as code, ``M`` monkeypatching.

In the examples ``{module}`` stands for the module under test and ``{name}``
for one of its public names (``Rule.example`` fills them in).
"""

# Each family registers its rules on import: in this order, the order of the codes above,
# which ``RULES`` keeps and ``grader rules`` lists (hence no sorting of this block).
from grader.static.rules import whole_file  # noqa: I001
from grader.static.rules import imports
from grader.static.rules import attributes
from grader.static.rules import names
from grader.static.rules import verdicts
from grader.static.rules import chance
from grader.static.rules import strings
from grader.static.rules import monkeypatching
from grader.static.rules.registry import BY_TYPE, RULES, Check, Limits, Rule, file_rule, register
from grader.static.rules.whole_file import DEPTH, ENCODING, SIZE, SYNTAX, TIME

__all__ = [
    "BY_TYPE",
    "DEPTH",
    "ENCODING",
    "RULES",
    "SIZE",
    "SYNTAX",
    "TIME",
    "Check",
    "Limits",
    "Rule",
    "attributes",
    "chance",
    "file_rule",
    "imports",
    "monkeypatching",
    "names",
    "register",
    "strings",
    "verdicts",
    "whole_file",
]
