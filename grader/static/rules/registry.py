"""The static check's rule registry: what a rule is (``Rule``), every rule by code
(``RULES``) and by the node types it looks at (``BY_TYPE``), and how a family's module
registers one (``register``, ``file_rule``)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.static.walk import Checker

Check = Callable[[Any, "Checker"], Iterator[str]]


@dataclass(frozen=True)
class Limits:
    """How much the check reads and how long it may take, beyond which a file is refused."""

    max_bytes: int
    seconds: float


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    explanation: str
    bad: str
    good: str
    types: tuple[type[ast.AST], ...]
    check: Check | None
    """``None`` for a rule on the whole file, which the checker applies itself."""
    example_limits: Limits | None = None
    """Limits under which the examples show the rule (a size or time limit made small)."""

    def example(self, text: str, module: str, interface: frozenset[str]) -> str:
        """``text`` (``bad`` or ``good``) for a chapter: its module and one public name."""
        name = min(interface) if interface else "NAME"
        return text.replace("{module}", module).replace("{name}", name)


RULES: dict[str, Rule] = {}
"""Every rule by code, in the order they were registered."""
BY_TYPE: dict[type[ast.AST], list[Rule]] = {}
"""The rules each node type is handed to."""


def register(
    code: str,
    name: str,
    explanation: str,
    bad: str,
    good: str,
    types: tuple[type[ast.AST], ...] = (),
    example_limits: Limits | None = None,
) -> Callable[[Check], Check]:
    """Register the decorated function as the rule ``code`` for nodes of ``types``."""

    def add(check: Check) -> Check:
        file_rule(code, name, explanation, bad, good, example_limits, types, check)
        return check

    return add


def file_rule(
    code: str,
    name: str,
    explanation: str,
    bad: str,
    good: str,
    example_limits: Limits | None = None,
    types: tuple[type[ast.AST], ...] = (),
    check: Check | None = None,
) -> Rule:
    """Register a rule; without ``check`` it is one the checker applies to the whole file."""
    if code in RULES or any(r.name == name for r in RULES.values()):
        raise ValueError(f"the rule {code} {name} is registered twice")
    rule = Rule(code, name, explanation, bad, good, types, check, example_limits)
    RULES[code] = rule
    for kind in types:
        BY_TYPE.setdefault(kind, []).append(rule)
    return rule
