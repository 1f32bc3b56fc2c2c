"""Text fingerprints: winnowing over a file's canonical tokens, and the passages they mark.

Each run of ``kgram`` tokens of ``grader.course.canonical`` is hashed (a
stable hash: the same file gives the same fingerprints on every run and
machine) and winnowing keeps the smallest hash of every ``window``
consecutive runs, so any shared passage of ``window + kgram - 1`` tokens or
more is found wherever it sits: reordering functions moves passages, it does
not hide them. Every run of tokens found in what every student was given
(the stub, the test skeleton with the required names) is boilerplate and
never counts. The text score of two files is the share of the smaller
file's fingerprints the other has.
"""

from __future__ import annotations

import bisect
import zlib
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

from grader.course.canonical import Token, file_tokens
from grader.inputs.catalog import SimilaritySettings as Settings

Kind = Literal["implementation", "tests"]
"""The two kinds of file compared: one kind only with the same kind."""
_MODULUS = (1 << 61) - 1
_BASE = 1_000_003


def _runs(found: Sequence[Token]) -> Iterator[Sequence[Token]]:
    """``found`` cut into maximal runs of tokens of one segment."""
    start = 0
    for at in range(1, len(found) + 1):
        if at == len(found) or found[at].segment != found[start].segment:
            yield found[start:at]
            start = at


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
        found.update(_gram_hashes([t.text for t in file_tokens(text)], settings.kgram))
    return frozenset(found)


def fingerprint(
    text: str, settings: Settings, boilerplate: frozenset[int], by_function: bool = False
) -> Fingerprint:
    """``text``'s fingerprints; ``by_function``, each function's and class's own code
    fingerprinted apart, so the order of methods changes nothing (an implementation's methods
    are long; a test file's tests too short to be fingerprinted alone)."""
    spans: dict[int, list[tuple[int, int]]] = {}
    found = file_tokens(text)
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
