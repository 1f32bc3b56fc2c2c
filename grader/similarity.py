"""Copies in a class: text fingerprints (MOSS's winnowing) and behaviour fingerprints.

Text. Each file is cut into Python tokens with comments, blank lines,
indentation and line breaks inside brackets dropped, every name (a
variable, a function, a test) written ``N`` and every string ``S``: renaming,
reformatting, rewording comments and docstrings change nothing. Each run of
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

Staff see the pairs and the flags; nothing here changes a grade.
"""

from __future__ import annotations

import io
import keyword
import tokenize
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

from grader.catalog import SimilaritySettings as Settings

Kind = Literal["implementation", "tests"]
REFERENCE = "reference"
MODEL_ANSWER = "model-answer"
"""The names of the kit's own files in a pair: ``reference`` (radix.py) and the model answer."""

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
    for text in texts:
        found.update(_gram_hashes([t.text for t in tokens(text)], settings.kgram))
    return frozenset(found)


def fingerprint(text: str, settings: Settings, boilerplate: frozenset[int]) -> Fingerprint:
    found = tokens(text)
    hashes = _gram_hashes([t.text for t in found], settings.kgram)
    spans: dict[int, list[tuple[int, int]]] = {}
    for at in _winnow(hashes, settings.window):
        value = hashes[at]
        if value in boilerplate:
            continue
        span = (found[at].start, found[at + settings.kgram - 1].end)
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
            kit = {REFERENCE, MODEL_ANSWER}
            if first.kind != second.kind or (first.owner in kit and second.owner in kit):
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


@dataclass(frozen=True)
class ClassFile:
    """A file of the class as batch hands it over: whose, which kind, its text, and for a test
    file graded valid, each mutant's killers."""

    owner: str
    kind: Kind
    text: str
    killed_by: Mapping[str, Sequence[str]] | None = None


@dataclass(frozen=True)
class Similarity:
    pairs: tuple[Pair, ...]
    entries: Mapping[tuple[Kind, str], Entry]
    """Every file compared, by kind and owner (the side-by-side page reads its text)."""

    def flags(self, owner: str) -> tuple[str, ...]:
        """``kind~other`` for each flagged pair ``owner`` is in."""
        return tuple(
            f"{pair.kind}~{pair.b if pair.a == owner else pair.a}"
            for pair in self.pairs
            if pair.flagged and owner in (pair.a, pair.b)
        )


class Fingerprinter:
    """Fingerprints against one boilerplate, each distinct text once (many students hand in
    the same file: the stub, often)."""

    def __init__(self, boilerplate: Sequence[str], settings: Settings) -> None:
        self.settings = settings
        self._given = boilerplate_hashes(boilerplate, settings)
        self._seen: dict[str, Fingerprint] = {}

    def __call__(self, text: str) -> Fingerprint:
        found = self._seen.get(text)
        if found is None:
            found = self._seen[text] = fingerprint(text, self.settings, self._given)
        return found


def find_copies(
    files: Sequence[ClassFile],
    fingerprints: Fingerprinter,
    wheats: int,
    model_answer_killed_by: Callable[[], Mapping[str, Sequence[str]] | None],
) -> Similarity:
    """Compare every file of one kind with every other (the kit's files not with each other).

    ``model_answer_killed_by`` (the model answer's kills, which cost a mutant run) is asked
    only when a test file comes near the model answer (a text score at the floor or above).
    """
    settings = fingerprints.settings
    entries = [
        Entry(
            file.owner,
            file.kind,
            fingerprints(file.text),
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
    return Similarity(tuple(pairs), {(e.kind, e.owner): e for e in entries})
