"""Copies in a class: every file against the others and the kit's own, flagged for staff.

Each pair of files of one kind (``grader.course.fingerprints.Kind``) gets a
text score (``grader.course.fingerprints``: winnowing over the canonical
syntax tree) and, for two valid test files, a behaviour score
(``grader.course.behaviour``: which mutants each test kills); a pair is
flagged at the catalog's thresholds, and flagged pairs join into groups.

Known sources. Besides each other, a class's files are compared with the
kit's own: the reference, the model answer and the course tests
(``known_sources`` does it for one file at every ``check``). A module the
chapter needs from an earlier chapter that defines this chapter's interface
is flagged with its reason. Staff see the pairs and the flags; nothing here
changes a grade. ``benchmarks/copy_detection.py`` weighs the text score
against PyPI's copydetect (docs/copies.md).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from grader.course.behaviour import Behaviour, behaviour, behaviour_score
from grader.course.fingerprints import Fingerprint, Fingerprinter, Kind, fingerprint, text_score
from grader.inputs import python_source
from grader.inputs.catalog import SimilaritySettings as Settings

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
