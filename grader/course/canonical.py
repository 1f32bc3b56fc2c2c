"""What a file is fingerprinted by: its syntax tree in one canonical form, one token a node.

A file that parses is read as its syntax tree, brought to one canonical form
first, as Dolos reads files as trees: docstrings and assert messages
dropped, ``self.assertEqual(a, b)`` (and unittest's other comparisons)
written ``assert a == b``, the two sides of ``==``, ``!=``, ``is`` and
``is not`` put in one order and ``a > b`` written ``b < a``, a test
parametrized with ``pytest.mark.parametrize`` written as a loop over its
cases. The tree is then written out as a run of tokens, one per node (its
type; no names, strings or numbers, only the attribute and keyword names of
the interface and libraries): renaming, reformatting, rewording, adding or
dropping assert messages, swapping a comparison and unrolling a loop into
parametrize change nothing. A file that does not parse is cut into Python
tokens instead (names ``N``, strings ``S``). ``grader.course.fingerprints``
winnows the tokens.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from collections.abc import Iterator
from typing import NamedTuple

from grader.inputs import python_source

_DROPPED = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
)


class Token(NamedTuple):
    text: str
    start: int
    end: int
    """Character offsets of the token in the file's text."""
    segment: int = 0
    """The function or class whose own code the token is (0: the module's): runs of tokens
    are fingerprinted within one segment, so the order of functions and methods changes
    nothing."""


def tokens(text: str) -> list[Token]:
    """The normalised tokens of Python source ``text``; a file that does not tokenize to the end
    keeps the tokens before the fault (a student's syntax error is still compared)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    starts.append(starts[-1])  # the end marker's row, one past the last line
    found: list[Token] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _DROPPED:
                continue
            (row, column), (end_row, end_column) = token.start, token.end
            start, end = starts[row - 1] + column, starts[end_row - 1] + end_column
            found.append(Token(_normalised(token), start, end))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return found


def _normalised(token: tokenize.TokenInfo) -> str:
    if token.type == tokenize.NAME:
        return token.string if keyword.iskeyword(token.string) else "N"
    if token.type == tokenize.STRING or tokenize.tok_name[token.type].startswith("FSTRING"):
        return "S"
    if token.type == tokenize.NEWLINE:
        return ";"
    return token.string


UNITTEST_COMPARISONS: dict[str, type[ast.cmpop]] = {
    "assertEqual": ast.Eq,
    "assertEquals": ast.Eq,
    "assertNotEqual": ast.NotEq,
    "assertIs": ast.Is,
    "assertIsNot": ast.IsNot,
    "assertIn": ast.In,
    "assertNotIn": ast.NotIn,
    "assertLess": ast.Lt,
    "assertLessEqual": ast.LtE,
    "assertGreater": ast.Gt,
    "assertGreaterEqual": ast.GtE,
}
"""unittest's assertions of a comparison, and the comparison ``assert`` writes instead."""
_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_SYMMETRIC = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
_CONTEXTS = (ast.Load, ast.Store, ast.Del)


class _Canonical(ast.NodeTransformer):
    """One form for what students write several ways: see the module's docstring."""

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            body = body[1:]
        return body

    def visit_Module(self, node: ast.Module) -> ast.Module:
        node.body = self._body(node.body)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.body = self._body(node.body) or [ast.Pass()]
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.body = self._body(node.body) or [ast.Pass()]
        for decorator in list(node.decorator_list):
            cases = _parametrized(decorator)
            if cases is None:
                continue
            names, values = cases
            node.decorator_list.remove(decorator)
            node.args.args = [a for a in node.args.args if a.arg not in names]
            target: ast.expr = (
                ast.Name(names[0], ast.Store())
                if len(names) == 1
                else ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
            )
            loop = ast.For(target, values, node.body, [])
            node.body = [ast.copy_location(loop, node)]
        self.generic_visit(node)
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.Assert:
        node.msg = None
        self.generic_visit(node)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and len(call.args) >= 2
            and call.func.attr in UNITTEST_COMPARISONS
        ):
            op = UNITTEST_COMPARISONS[call.func.attr]()
            test = ast.Compare(call.args[0], [op], [call.args[1]])
            written = ast.copy_location(ast.Assert(ast.copy_location(test, call), None), node)
            self.generic_visit(written)
            return written
        self.generic_visit(node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.Compare:
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if type(op) in _FLIPPED:
            node.ops = [_FLIPPED[type(op)]()]
            node.left, node.comparators = right, [left]
        elif isinstance(op, _SYMMETRIC) and _shape(right) < _shape(left):
            node.left, node.comparators = right, [left]
        return node


def _parametrized(decorator: ast.expr) -> tuple[list[str], ast.expr] | None:
    """The argument names and cases of ``@pytest.mark.parametrize("a, b", cases)``."""
    if not (
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Attribute)
        and decorator.func.attr == "parametrize"
        and len(decorator.args) >= 2
    ):
        return None
    spec = decorator.args[0]
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        names = [name.strip() for name in spec.value.split(",") if name.strip()]
    elif isinstance(spec, ast.List | ast.Tuple):
        names = [
            e.value for e in spec.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    else:
        return None
    return (names, decorator.args[1]) if names else None


def _shape(node: ast.AST) -> tuple[int, list[str]]:
    """A key that orders two operands the same way whatever their names: size, then tokens."""
    words = [word for word, _ in _node_words(node)]
    return len(words), words


def _node_words(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """One token per node of ``node``'s tree in preorder (names, strings and numbers dropped;
    attribute and keyword names kept: the interface and libraries), each with its node."""
    todo: list[ast.AST] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, _CONTEXTS):
            continue
        word = type(current).__name__
        if isinstance(current, ast.Attribute):
            private = current.attr.startswith("_") and not current.attr.startswith("__")
            word = "._" if private else f".{current.attr}"  # a helper's name is the author's
        elif isinstance(current, ast.keyword):
            word = f"{current.arg}="
        elif isinstance(current, ast.alias):
            word = f"import {current.name}"
        elif isinstance(current, ast.Constant) and (
            current.value is None or isinstance(current.value, bool)
        ):
            word = repr(current.value)
        yield word, current
        todo.extend(reversed(list(ast.iter_child_nodes(current))))


def tree_tokens(text: str) -> list[Token] | None:
    """The canonical form's tokens of ``text``, each placed at its node (or the nearest node
    above with a place); ``None`` for a file that does not parse."""
    try:
        tree = _Canonical().visit(python_source.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    starts.append(starts[-1])
    found: list[Token] = []
    segments = _segments(tree)
    for word, node in _node_words(tree):
        lineno = getattr(node, "lineno", None)
        end_lineno = getattr(node, "end_lineno", None)
        if lineno is not None and end_lineno is not None:
            span = (
                starts[min(lineno, len(starts)) - 1] + getattr(node, "col_offset", 0),
                starts[min(end_lineno, len(starts)) - 1]
                + (getattr(node, "end_col_offset", 0) or 0),
            )
        else:
            span = (found[-1].start, found[-1].end) if found else (0, 0)
        found.append(Token(word, *span, segments.get(id(node), 0)))
    return found


def _segments(tree: ast.AST) -> dict[int, int]:
    """Each node's segment (by ``id``): a number of its own for every function and class,
    which the nodes of its body share but those of a function or class within it."""
    owner: dict[int, int] = {}
    todo: list[tuple[ast.AST, int]] = [(tree, 0)]
    while todo:
        node, segment = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            segment = len(owner) + 1
        owner[id(node)] = segment
        todo.extend((child, segment) for child in ast.iter_child_nodes(node))
    return owner


def file_tokens(text: str) -> list[Token]:
    """What a file is fingerprinted by: its tree's tokens, or its Python tokens when it does
    not parse."""
    canonical = tree_tokens(text)
    return canonical if canonical is not None else tokens(text)
