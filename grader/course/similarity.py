"""Copies in a class: text fingerprints (winnowing over syntax trees) and behaviour fingerprints.

Text. A file that parses is read as its syntax tree, brought to one
canonical form first, as Dolos reads files as trees: docstrings and assert
messages dropped, ``self.assertEqual(a, b)`` (and unittest's other
comparisons) written ``assert a == b``, the two sides of ``==``, ``!=``,
``is`` and ``is not`` put in one order and ``a > b`` written ``b < a``, a
test parametrized with ``pytest.mark.parametrize`` written as a loop over
its cases. The tree is then written out as a run of tokens, one per node
(its type; no names, strings or numbers, only the attribute and keyword
names of the interface and libraries): renaming, reformatting, rewording,
adding or dropping assert messages, swapping a comparison and unrolling a
loop into parametrize change nothing. A file that does not parse is cut
into Python tokens instead (names ``N``, strings ``S``). Each run of
``kgram`` tokens is hashed (a stable hash: the same file gives the same
fingerprints on every run and machine) and winnowing keeps the smallest hash
of every ``window`` consecutive runs, so any shared passage of ``window +
kgram - 1`` tokens or more is found wherever it sits: reordering functions
moves passages, it does not hide them. Every run of tokens found in what
every student was given (the stub, the test skeleton with the required
names) is boilerplate and never counts. The text score of two files is the
share of the smaller file's fingerprints the other has.

Behaviour. A valid test file has a behavioural fingerprint no renaming
hides: for each of its tests, the vector of outcomes over every planted
mutant (killed or not) and every wheat (passed: validity requires it), names
dropped. Tests that kill nothing are left out (every weak file has them).
The behaviour score of two files is the share of those vectors they have in
common, counted with repeats, over the larger file's.

Known sources. Besides each other, a class's files are compared with the
kit's own: the reference, the model answer and the course tests
(``known_sources`` does it for one file at every ``check``). Staff see the
pairs and the flags; nothing here changes a grade.
"""

from __future__ import annotations

import ast
import bisect
import io
import keyword
import tokenize
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal, NamedTuple

from grader.inputs import python_source
from grader.inputs.catalog import SimilaritySettings as Settings

Kind = Literal["implementation", "tests"]
REFERENCE = "reference"
MODEL_ANSWER = "model-answer"
COURSE_TESTS = "course-tests"
WITNESS_TESTS = "witness-tests"
INTERFACE = "interface"
"""A known source that is no file: a module the chapter needs that defines the chapter's own
interface (``defines_interface``)."""
KIT_FILES = frozenset({REFERENCE, MODEL_ANSWER, COURSE_TESTS, WITNESS_TESTS})
"""The names of the kit's own files in a pair: ``reference`` (radix.py), the model answer,
the course tests and the witnesses' killing tests (``grader.grading.witness``), all in one."""


def module_owner(student: str, file: str) -> str:
    """The owner of a student's other module in a pair (``mia/robin_hood.py``): a student's
    name never holds a ``/`` (``gradebook.checked_name``)."""
    return f"{student}/{file}"


def student_of(owner: str) -> str:
    """The student (or kit file) an owner names: ``mia`` for ``mia/robin_hood.py``."""
    return owner.split("/", 1)[0]


def defines_interface(text: str, file: str, interface: Sequence[str]) -> str | None:
    """One line saying that ``file``, a module the chapter needs from an earlier chapter,
    defines a name of this chapter's own ``interface`` (the tree hidden in the map's file);
    ``None`` if it defines none, or does not parse."""
    try:
        tree = python_source.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defined = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            defined.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined += [t.id for t in targets if isinstance(t, ast.Name)]
    found = [name for name in interface if name in defined]
    if not found:
        return None
    return (
        f"{file} defines {', '.join(found)}, this chapter's own interface: a module needed "
        "from an earlier chapter should hold that chapter's code, not this one's"
    )


def takes_interface(
    text: str, file: str, modules: Sequence[str], interface: Sequence[str]
) -> str | None:
    """One line saying that ``file`` (the chapter's own implementation) takes a name of the
    chapter's ``interface`` from one of ``modules`` (those needed from earlier chapters), under
    any name (``from robin_hood import _Tree as RadixTree``); ``None`` if it takes none."""
    try:
        tree = python_source.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in modules:
            taken = [a.asname or a.name for a in node.names]
            found = [name for name in interface if name in taken or "*" in taken]
            if found:
                return (
                    f"{file} takes {', '.join(found)} from {node.module}, a module needed from "
                    "an earlier chapter: the chapter's own code is not in it"
                )
    return None


_MODULUS = (1 << 61) - 1
_BASE = 1_000_003
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


def _runs(found: Sequence[Token]) -> Iterator[Sequence[Token]]:
    """``found`` cut into maximal runs of tokens of one segment."""
    start = 0
    for at in range(1, len(found) + 1):
        if at == len(found) or found[at].segment != found[start].segment:
            yield found[start:at]
            start = at


def _file_tokens(text: str) -> list[Token]:
    """What a file is fingerprinted by: its tree's tokens, or its Python tokens when it does
    not parse."""
    canonical = tree_tokens(text)
    return canonical if canonical is not None else tokens(text)


def _gram_hashes(words: Sequence[str], k: int) -> list[int]:
    """A stable hash of every run of ``k`` tokens (a polynomial rolling hash of CRC-32s)."""
    if len(words) < k:
        return []
    codes = [zlib.crc32(word.encode("utf-8")) + 1 for word in words]
    top = pow(_BASE, k - 1, _MODULUS)
    value = 0
    for code in codes[:k]:
        value = (value * _BASE + code) % _MODULUS
    hashes = [value]
    for leaving, entering in zip(codes, codes[k:], strict=False):
        value = ((value - leaving * top) * _BASE + entering) % _MODULUS
        hashes.append(value)
    return hashes


def _winnow(hashes: Sequence[int], window: int) -> Iterator[int]:
    """The positions winnowing keeps: the rightmost smallest hash of each window of ``window``
    hashes (a file shorter than one window keeps its smallest), each once."""
    candidates: deque[int] = deque()  # positions whose hashes rise from left to right
    last = -1
    for at, value in enumerate(hashes):
        while candidates and hashes[candidates[-1]] >= value:
            candidates.pop()
        candidates.append(at)
        if candidates[0] <= at - window:
            candidates.popleft()
        if (at >= window - 1 or at == len(hashes) - 1) and candidates[0] != last:
            last = candidates[0]
            yield last


@dataclass(frozen=True)
class Fingerprint:
    """A file's fingerprints, each with the character spans of the passages it stands for."""

    text: str
    spans: Mapping[int, tuple[tuple[int, int], ...]]

    @cached_property
    def hashes(self) -> frozenset[int]:
        return frozenset(self.spans)


def boilerplate_hashes(texts: Sequence[str], settings: Settings) -> frozenset[int]:
    """Every run of tokens in the files every student was given (not only the winnowed ones)."""
    found: set[int] = set()
    for text in texts:  # every run within a segment is one of these too
        found.update(_gram_hashes([t.text for t in _file_tokens(text)], settings.kgram))
    return frozenset(found)


def fingerprint(
    text: str, settings: Settings, boilerplate: frozenset[int], by_function: bool = False
) -> Fingerprint:
    """``text``'s fingerprints; ``by_function``, each function's and class's own code
    fingerprinted apart, so the order of methods changes nothing (an implementation's methods
    are long; a test file's tests too short to be fingerprinted alone)."""
    spans: dict[int, list[tuple[int, int]]] = {}
    found = _file_tokens(text)
    for run in _runs(found) if by_function else [found]:
        hashes = _gram_hashes([t.text for t in run], settings.kgram)
        for at in _winnow(hashes, settings.window):
            value = hashes[at]
            if value in boilerplate:
                continue
            span = (run[at].start, run[at + settings.kgram - 1].end)
            spans.setdefault(value, []).append(span)
    return Fingerprint(text, {value: tuple(places) for value, places in spans.items()})


def text_score(a: Fingerprint, b: Fingerprint, settings: Settings) -> float:
    """The share of the smaller file's fingerprints the other file has; a file with fewer than
    ``min_fingerprints`` counts as having that many, so a near-empty file matches nothing."""
    shared = len(a.hashes & b.hashes)
    smaller = max(min(len(a.hashes), len(b.hashes)), settings.min_fingerprints, 1)
    return round(shared / smaller, 4)


Behaviour = Counter[tuple[bool, ...]]
"""A test file's behavioural fingerprint: the outcome vectors of its tests, names dropped."""


def behaviour(killed_by: Mapping[str, Sequence[str]], wheats: int) -> Behaviour:
    """Each test's vector: killed or not for each mutant (in ``killed_by``'s order), then
    ``wheats`` passes. Only tests that kill something have one: the rest say nothing."""
    vectors: Behaviour = Counter()
    killers = [set(names) for names in killed_by.values()]
    for test in dict.fromkeys(name for names in killed_by.values() for name in names):
        vectors[tuple(test in names for names in killers) + (False,) * wheats] += 1
    return vectors


def behaviour_score(a: Behaviour | None, b: Behaviour | None) -> float | None:
    """The share of outcome vectors the two files have in common; ``None`` when either file has
    no behavioural fingerprint (not valid, or no test kills anything)."""
    if not a or not b:
        return None
    shared = sum((a & b).values())
    return round(shared / max(a.total(), b.total()), 4)


@dataclass(frozen=True)
class Entry:
    """One file to compare: a student's (or the kit's) implementation or test file."""

    owner: str
    kind: Kind
    fingerprint: Fingerprint
    behaviour: Behaviour | None = None


@dataclass(frozen=True)
class Pair:
    kind: Kind
    a: str
    b: str
    text_score: float
    behaviour_score: float | None
    flagged: bool
    shared: frozenset[int]
    """The fingerprints both files have (for the side-by-side page)."""


def is_flagged(text: float, same_behaviour: float | None, settings: Settings) -> bool:
    if text >= settings.flag_text:
        return True
    alike = same_behaviour is not None and same_behaviour >= settings.flag_behaviour
    return alike and text >= settings.flag_text_with_behaviour


def compare(entries: Sequence[Entry], settings: Settings) -> list[Pair]:
    """Every pair of entries of one kind, both not the kit's, or one the kit's; those at or above
    the floor or flagged, in the entries' order."""
    pairs = []
    for i, first in enumerate(entries):
        for second in entries[i + 1 :]:
            if first.kind != second.kind or {first.owner, second.owner} <= KIT_FILES:
                continue
            if student_of(first.owner) == student_of(second.owner):  # one student's files
                continue
            text = text_score(first.fingerprint, second.fingerprint, settings)
            same = behaviour_score(first.behaviour, second.behaviour)
            flagged = is_flagged(text, same, settings)
            if text >= settings.floor or flagged:
                shared = first.fingerprint.hashes & second.fingerprint.hashes
                pairs.append(
                    Pair(first.kind, first.owner, second.owner, text, same, flagged, shared)
                )
    return pairs


def marked_spans(fingerprint: Fingerprint, shared: frozenset[int]) -> list[tuple[int, int]]:
    """The passages of a file that ``shared`` fingerprints stand for, merged where they touch."""
    spans = sorted(span for value in shared for span in fingerprint.spans.get(value, ()))
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class Passage(NamedTuple):
    start: int
    end: int
    number: int
    """The same number on both sides of a pair: the passages that share fingerprints."""


def paired_passages(
    a: Fingerprint, b: Fingerprint, shared: frozenset[int]
) -> tuple[list[Passage], list[Passage]]:
    """The passages of ``a`` and ``b`` that ``shared`` fingerprints stand for, numbered in
    ``a``'s order; a passage of ``b`` takes the smallest number of the passages of ``a`` it
    shares a fingerprint with, so the two sides pair up."""
    first = marked_spans(a, shared)
    second = marked_spans(b, shared)
    number_of: dict[int, int] = {}
    for value in shared:
        numbers = [_containing(first, span) + 1 for span in a.spans.get(value, ())]
        if numbers:
            number_of[value] = min(numbers)
    b_numbers = [len(first) + 1] * len(second)
    for value in shared:
        for span in b.spans.get(value, ()):
            at = _containing(second, span)
            b_numbers[at] = min(b_numbers[at], number_of.get(value, len(first) + 1))
    left = [Passage(start, end, n + 1) for n, (start, end) in enumerate(first)]
    right = [Passage(start, end, n) for (start, end), n in zip(second, b_numbers, strict=True)]
    return left, right


def _containing(merged: list[tuple[int, int]], span: tuple[int, int]) -> int:
    """The index of the merged span that holds ``span`` (merged spans are sorted, disjoint)."""
    return bisect.bisect_right(merged, (span[0], float("inf"))) - 1


@dataclass(frozen=True)
class Cluster:
    """Files of one kind that flagged pairs join: one group to review, not every pair."""

    kind: Kind
    members: tuple[str, ...]
    pairs: tuple[Pair, ...]
    """The flagged pairs within, the strongest evidence first."""

    @property
    def strongest(self) -> Pair:
        return self.pairs[0]


def _strength(pair: Pair) -> tuple[float, float]:
    return pair.text_score, pair.behaviour_score or 0.0


def clusters(pairs: Sequence[Pair]) -> tuple[Cluster, ...]:
    """The flagged pairs joined into groups (files linked by flags, however indirectly), the
    group with the strongest evidence first."""
    parent: dict[tuple[Kind, str], tuple[Kind, str]] = {}

    def root(item: tuple[Kind, str]) -> tuple[Kind, str]:
        while parent.setdefault(item, item) != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    flagged = [pair for pair in pairs if pair.flagged]
    for pair in flagged:
        parent[root((pair.kind, pair.a))] = root((pair.kind, pair.b))
    groups: dict[tuple[Kind, str], list[Pair]] = {}
    for pair in flagged:
        groups.setdefault(root((pair.kind, pair.a)), []).append(pair)
    found = []
    for (kind, _), members in groups.items():
        ordered = tuple(sorted(members, key=lambda p: (_strength(p), p.a, p.b), reverse=True))
        names = tuple(sorted({name for p in members for name in (p.a, p.b)}))
        found.append(Cluster(kind, names, ordered))
    found.sort(key=lambda c: (_strength(c.strongest), c.kind, c.members), reverse=True)
    return tuple(found)


@dataclass(frozen=True)
class ClassFile:
    """A file of the class as batch hands it over: whose, which kind, its text, and for a test
    file graded valid, each mutant's killers."""

    owner: str
    kind: Kind
    text: str
    killed_by: Mapping[str, Sequence[str]] | None = None


class Finding(NamedTuple):
    """A flag that is no pair: a student's file that is what it should not be."""

    owner: str
    file: str
    reason: str
    """One line on what is wrong (``defines_interface``)."""


@dataclass(frozen=True)
class Similarity:
    pairs: tuple[Pair, ...]
    entries: Mapping[tuple[Kind, str], Entry]
    """Every file compared, by kind and owner (the side-by-side page reads its text)."""
    findings: tuple[Finding, ...] = ()
    """Flags that are no pair: a needed module that defines the chapter's interface."""

    def flags(self, owner: str) -> tuple[str, ...]:
        """``kind~other`` for each flagged pair one of ``owner``'s files is in (``FILE~other``
        for a file besides the chapter's own two), then ``FILE~interface`` for each finding."""
        found = []
        for pair in self.pairs:
            if not pair.flagged or owner not in (student_of(pair.a), student_of(pair.b)):
                continue
            mine, other = (pair.a, pair.b) if student_of(pair.a) == owner else (pair.b, pair.a)
            label = mine.split("/", 1)[1] if "/" in mine else pair.kind
            found.append(f"{label}~{other}")
        found += [f"{f.file}~{INTERFACE}" for f in self.findings if f.owner == owner]
        return tuple(found)


class Fingerprinter:
    """Fingerprints against one boilerplate, each distinct text once (many students hand in
    the same file: the stub, often)."""

    def __init__(self, boilerplate: Sequence[str], settings: Settings) -> None:
        self.settings = settings
        self.boilerplate = boilerplate_hashes(boilerplate, settings)
        self._seen: dict[tuple[str, Kind], Fingerprint] = {}

    def __call__(self, text: str, kind: Kind = "tests") -> Fingerprint:
        """``text``'s fingerprints as a file of ``kind``: an implementation by function."""
        found = self._seen.get((text, kind))
        if found is None:
            by_function = kind == "implementation"
            found = fingerprint(text, self.settings, self.boilerplate, by_function)
            self._seen[(text, kind)] = found
        return found


def find_copies(
    files: Sequence[ClassFile],
    fingerprints: Fingerprinter,
    wheats: int,
    model_answer_killed_by: Callable[[], Mapping[str, Sequence[str]] | None],
    interface: Sequence[str] = (),
    needed: Sequence[str] = (),
    implementation: str = "radix.py",
) -> Similarity:
    """Compare every file of one kind with every other (the kit's files not with each other,
    nor one student's files with each other), and find each student's other module
    (``module_owner``) that defines a name of ``interface``, and each ``implementation`` that
    takes one from a module of ``needed`` (the modules needed from earlier chapters).

    ``model_answer_killed_by`` (the model answer's kills, which cost a mutant run) is asked
    only when a test file comes near the model answer (a text score at the floor or above).
    """
    settings = fingerprints.settings
    entries = [
        Entry(
            file.owner,
            file.kind,
            fingerprints(file.text, file.kind),
            None if file.killed_by is None else behaviour(file.killed_by, wheats),
        )
        for file in files
    ]
    model = next((e for e in entries if e.owner == MODEL_ANSWER and e.kind == "tests"), None)
    if model is not None and model.behaviour is None:
        near = any(
            e.kind == "tests"
            and e.owner != MODEL_ANSWER
            and text_score(e.fingerprint, model.fingerprint, settings) >= settings.floor
            for e in entries
        )
        killed_by = model_answer_killed_by() if near else None
        if killed_by is not None:
            found = Entry(MODEL_ANSWER, "tests", model.fingerprint, behaviour(killed_by, wheats))
            entries = [found if e is model else e for e in entries]
    pairs = compare(entries, settings)
    findings = []
    for file in files:  # a student's other module (mia/robin_hood.py) that holds the tree
        if file.kind != "implementation" or file.owner in KIT_FILES:
            continue
        if "/" in file.owner:
            student, name = file.owner.split("/", 1)
            reason = defines_interface(file.text, name, interface)
        else:
            student, name = file.owner, implementation
            reason = takes_interface(file.text, name, needed, interface)
        if reason is not None:
            findings.append(Finding(student, name, reason))
    return Similarity(tuple(pairs), {(e.kind, e.owner): e for e in entries}, tuple(findings))


@dataclass(frozen=True)
class KnownSource:
    """How close one of a student's files comes to one of the kit's own files."""

    source: str
    """``course-tests``, ``model-answer``, ``witness-tests`` or ``reference``; ``interface`` for
    a needed module that defines the chapter's interface (no score)."""
    score: float | None
    """The text score (``text_score``) of the two files; ``None`` for ``interface``."""
    flagged: bool
    """At or above the flag: staff should look (the grade stays what grading gives)."""
    file: str = ""
    """The student's file (from the submission folder)."""
    reason: str = ""
    """One line on why it is flagged, where a score does not say it."""


def known_sources(
    file: str,
    text: str,
    kind: Kind,
    sources: Mapping[str, str],
    given: Sequence[str],
    settings: Settings,
) -> tuple[KnownSource, ...]:
    """The student's ``file`` (its ``text``, of ``kind``) against each of the kit's own files
    in ``sources`` (by name), with ``given`` (what every student was given) as boilerplate.
    The kit's fingerprints are made once per process; the student's file is fingerprinted
    each time, and never kept."""
    fingerprints = _kit_fingerprints(tuple(given), settings)
    mine = fingerprint(text, settings, fingerprints.boilerplate, kind == "implementation")
    found = []
    for name, source in sources.items():
        score = text_score(mine, fingerprints(source, kind), settings)
        found.append(KnownSource(name, score, is_flagged(score, None, settings), file))
    return tuple(found)


@lru_cache(maxsize=4)
def _kit_fingerprints(given: tuple[str, ...], settings: Settings) -> Fingerprinter:
    return Fingerprinter(given, settings)
