"""Copy detection: the kit's own text similarity against PyPI's ``copydetect``, flag for flag.

Run from the repository root (``pip install -e '.[bench]'`` first: the kit
itself does not depend on copydetect)::

    .venv/bin/python benchmarks/copy_detection.py                  # about 10 s
    .venv/bin/python benchmarks/copy_detection.py --noise 25 60 100  # copydetect's k too

Both detectors see the same files with the same boilerplate (what every
student is given: the stub, the test skeleton, the kit's map) and each flags
at the threshold it would use:

the kit
    ``grader.course.fingerprints``: winnowing over the canonical syntax tree,
    a pair flagged at the catalog's ``flag_text`` (text alone: the
    behaviour score needs the sandbox, and it only ever adds a flag to a
    pair whose text already scores ``flag_text_with_behaviour``).
copydetect
    0.5.0's ``CodeFingerprint`` and ``compare_files`` at its defaults
    (noise and guarantee thresholds 25 characters of its filtered text, so
    every 25-gram is a fingerprint; ``--noise`` tries others, the guarantee
    following; boilerplate fingerprinted as its ``CopyDetector`` does), a
    pair flagged when either file's share exceeds ``display_t`` 0.33, as
    its report lists a pair.

Three sets of files, each a class of files compared pair by pair as
``grader batch`` compares them (one kind with the same kind; the kit's files
not with each other):

tests
    ``tests/unit/test_similarity.py``'s class: the model answer and the
    course tests under each disguise of ``tests/disguise.py`` and all at once
    (12 copies), the witnesses' killing tests pasted under the skeleton (1),
    and 15 honest files (13 styles, 2 submissions) written independently.
implementations
    The reference under ``disguise_tree`` (helpers renamed, methods
    shuffled, docstrings stripped; seeds 0 to 2), and that tree hidden after
    the kit's map in ``robin_hood.py`` (4 copies); honest: the tree written
    from the chapter alone, a radix.py that does not parse, the stub.
class
    ``tests/e2e/test_class.py``'s class of six (ben and cy, dee and the
    model answer, eve and the reference are the copies; ana and fay are
    kit fixtures written one from the other, which that test wants listed,
    not flagged).

For each detector and set it prints the copies flagged (each against the
file it copies), the honest files flagged (against anything), the flagged
pairs that are no copy, the lowest score of a copy and the highest of an
honest pair (a threshold between the two would separate them). The scores
are the same on every run (copydetect's salted ``hash`` only names
fingerprints: with a window of one, none is chosen by its value).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(KIT))
sys.path.insert(0, str(KIT / "tests"))

from disguise import DISGUISES, disguise, disguise_tree, every_disguise  # noqa: E402

from grader.course.fingerprints import Fingerprinter, Kind, text_score  # noqa: E402
from grader.course.similarity import (  # noqa: E402
    COURSE_TESTS,
    KIT_FILES,
    MODEL_ANSWER,
    REFERENCE,
    WITNESS_TESTS,
    is_flagged,
    student_of,
)
from grader.grading.witness import killing_tests  # noqa: E402
from grader.inputs.catalog import Chapter, SimilaritySettings, load_chapter  # noqa: E402

FIXTURES = KIT / "tests" / "fixtures"
COPYDETECT_NOISE = 25
COPYDETECT_DISPLAY = 0.33


@dataclass(frozen=True)
class File:
    owner: str
    kind: Kind
    text: str
    source: str | None = None
    """The kit's file it copies; ``None`` for a file of the student's own."""

    @property
    def key(self) -> tuple[Kind, str]:
        return self.kind, self.owner


Pair = frozenset[tuple[Kind, str]]


@dataclass(frozen=True)
class Case:
    """One set of files, and which pairs are copies: ``copies`` (each copy with what it
    copies: to be flagged), ``alike`` (two copies of one file: a flag is no error), and
    ``related`` (neither copies nor independent: counted apart)."""

    name: str
    files: tuple[File, ...]
    copies: frozenset[Pair]
    alike: frozenset[Pair] = frozenset()
    related: frozenset[Pair] = frozenset()


Scorer = Callable[[File, File], float]


@dataclass(frozen=True)
class Detector:
    name: str
    threshold: str
    score: Scorer
    flags: Callable[[float], bool]


def kit_detector(chapter: Chapter, given: Sequence[str]) -> Detector:
    settings = chapter.similarity
    assert isinstance(settings, SimilaritySettings)
    fingerprints = Fingerprinter(given, settings)

    def score(a: File, b: File) -> float:
        return text_score(fingerprints(a.text, a.kind), fingerprints(b.text, b.kind), settings)

    return Detector(
        "kit (tree winnowing)",
        f"text >= {settings.flag_text}",
        score,
        lambda value: is_flagged(value, None, settings),
    )


def copydetect_detector(given: Sequence[str], noise: int = COPYDETECT_NOISE) -> Detector:
    """copydetect at its defaults; it reads each text from a ``StringIO`` (``fp``), the file
    name only telling its lexer the language."""
    try:
        from copydetect import CodeFingerprint, compare_files
    except ImportError:
        sys.exit("copy_detection.py compares with copydetect: pip install -e '.[bench]'")

    def fingerprinted(text: str, boilerplate: object = None, window: int = 1) -> CodeFingerprint:
        return CodeFingerprint("file.py", noise, window, boilerplate, fp=io.StringIO(text))

    hashes = [h for text in given for h in fingerprinted(text).hashes]
    boilerplate = sorted(set(hashes))  # what its CopyDetector passes: each hash once, sorted
    seen: dict[str, CodeFingerprint] = {}

    def score(a: File, b: File) -> float:
        for text in (a.text, b.text):
            if text not in seen:
                seen[text] = fingerprinted(text, boilerplate)
        _, shares, _ = compare_files(seen[a.text], seen[b.text])
        return round(float(max(shares)), 4)

    return Detector(
        f"copydetect 0.5.0 (noise {noise})",
        f"share > {COPYDETECT_DISPLAY}",
        score,
        lambda value: value > COPYDETECT_DISPLAY,
    )


def test_files(chapter: Chapter) -> Case:
    model = chapter.model_tests.read_text("utf-8")
    course = chapter.course_test_file.read_text("utf-8")
    files = [File(MODEL_ANSWER, "tests", model), File(COURSE_TESTS, "tests", course)]
    witnesses = killing_tests(chapter)
    files.append(File(WITNESS_TESTS, "tests", witnesses))
    for source, text in ((MODEL_ANSWER, model), (COURSE_TESTS, course)):
        for number, change in enumerate(DISGUISES.values()):
            files.append(File(f"{source}-{number}", "tests", change(text, chapter), source))
        files.append(File(f"{source}-all", "tests", every_disguise(text, chapter), source))
    pasted = chapter.stub_tests.read_text("utf-8") + "\n\n" + witnesses
    files.append(File("witnesses-pasted", "tests", pasted, WITNESS_TESTS))
    honest = sorted((FIXTURES / "honest").glob("*.py"))
    honest += [FIXTURES / "submissions" / e / chapter.student_tests for e in ("weak", "misses_s11")]
    files += [File(f"honest-{_name(p)}", "tests", p.read_text("utf-8")) for p in honest]
    return Case("tests", tuple(files), *_by_source(files))


def implementations(chapter: Chapter) -> Case:
    reference = chapter.reference.read_text("utf-8")
    files = [File(REFERENCE, "implementation", reference)]
    for seed in range(3):
        files.append(
            File(f"tree-{seed}", "implementation", disguise_tree(reference, seed), REFERENCE)
        )
    (need,) = chapter.needs
    tree = disguise_tree(reference, 3).replace("from __future__ import annotations\n", "")
    hidden = need.reference.read_text("utf-8") + tree.replace(
        f"from {need.module} import RobinHoodMap\n", ""
    )
    files.append(File("hidden/robin_hood.py", "implementation", hidden, REFERENCE))
    own = FIXTURES / "written_from_the_chapter" / "radix.py"
    files.append(File("honest-from-the-chapter", "implementation", own.read_text("utf-8")))
    broken = FIXTURES / "submissions" / "syntax_error_in_radix" / "radix.py"
    files.append(File("honest-syntax-error", "implementation", broken.read_text("utf-8")))
    files.append(File("honest-stub", "implementation", chapter.stub.read_text("utf-8")))
    return Case("implementations", tuple(files), *_by_source(files))


def the_class(chapter: Chapter) -> Case:
    """``tests/e2e/test_class.py``'s ``lay_out_class``, without grading it."""
    stub = chapter.stub.read_text("utf-8")

    def tests_of(example: str) -> str:
        return (FIXTURES / "submissions" / example / chapter.student_tests).read_text("utf-8")

    model = chapter.model_tests.read_text("utf-8")
    reference = chapter.reference.read_text("utf-8")
    tests = {
        "ana": tests_of("weak"),
        "ben": tests_of("misses_s11"),
        "cy": disguise(tests_of("misses_s11"), chapter, seed=1),
        "dee": disguise(model, chapter, seed=2),
        "fay": tests_of("fails_on_reference"),
    }
    files = [File(name, "tests", text) for name, text in tests.items()]
    files += [File(n, "implementation", stub) for n in ("ana", "ben", "cy", "dee", "fay")]
    files.append(File("eve", "implementation", disguise(reference, chapter, seed=3)))
    files.append(File(REFERENCE, "implementation", reference))
    files.append(File(MODEL_ANSWER, "tests", model))
    files.append(File(COURSE_TESTS, "tests", chapter.course_test_file.read_text("utf-8")))
    files.append(File(WITNESS_TESTS, "tests", killing_tests(chapter)))
    copies: list[tuple[Kind, str, str]] = [("tests", "ben", "cy"), ("tests", "dee", MODEL_ANSWER)]
    copies.append(("implementation", "eve", REFERENCE))
    pairs = frozenset(frozenset({(k, a), (k, b)}) for k, a, b in copies)
    ana_fay: Pair = frozenset({("tests", "ana"), ("tests", "fay")})
    return Case("class", tuple(files), pairs, related=frozenset({ana_fay}))


def _name(path: Path) -> str:
    """An honest file's name: its stem, or its submission's for a submission's test file."""
    return path.parents[1].name if path.parent.name == "tests" else path.stem


def _by_source(files: Sequence[File]) -> tuple[frozenset[Pair], frozenset[Pair]]:
    """Every copy with the file it copies; every two copies of one file."""
    copies = {frozenset({f.key, (f.kind, f.source)}) for f in files if f.source is not None}
    alike = set()
    for first in files:
        for second in files:
            if first is not second and first.source is not None and first.source == second.source:
                alike.add(frozenset({first.key, second.key}))
    return frozenset(copies), frozenset(alike)


@dataclass(frozen=True)
class Measured:
    copies_flagged: int
    copies: int
    honest_flagged: int
    honest: int
    false_pairs: tuple[str, ...]
    """Each pair flagged that is no copy, with its score."""
    missed: tuple[str, ...]
    """Each copy not flagged, with its score."""
    related: tuple[str, ...]
    copy_scores: tuple[float, ...]
    highest_other: float
    """The highest score of a pair that is no copy (``related`` and ``alike`` aside)."""

    @property
    def separable(self) -> int:
        """The copies a threshold just above every pair that is no copy would flag."""
        return sum(score > self.highest_other for score in self.copy_scores)


def measure(case: Case, detector: Detector) -> Measured:
    """Every pair ``grader batch`` compares, scored and flagged by ``detector``."""
    highest, copy_scores = 0.0, []
    false_pairs, missed, related = [], [], []
    flagged_copies, flagged_others = 0, set[tuple[Kind, str]]()
    for i, a in enumerate(case.files):
        for b in case.files[i + 1 :]:
            pair, owners = frozenset({a.key, b.key}), {a.owner, b.owner}
            if (
                a.kind != b.kind
                or owners <= KIT_FILES
                or student_of(a.owner) == student_of(b.owner)
            ):
                continue
            score = detector.score(a, b)
            flagged, shown = detector.flags(score), f"{a.owner}~{b.owner} {score:.2f}"
            if pair in case.copies:
                copy_scores.append(score)
                flagged_copies += flagged
                if not flagged:
                    missed.append(shown)
            elif pair in case.related:
                related.append(shown)
            elif pair not in case.alike:
                highest = max(highest, score)
                if flagged:
                    false_pairs.append(shown)
                    flagged_others |= pair
    in_a_copy = {key for pair in case.copies | case.alike | case.related for key in pair}
    honest = {f.key for f in case.files if f.owner not in KIT_FILES} - in_a_copy
    return Measured(
        flagged_copies,
        len(case.copies),
        len(honest & flagged_others),
        len(honest),
        tuple(false_pairs),
        tuple(missed),
        tuple(related),
        tuple(copy_scores),
        highest,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--noise",
        type=int,
        nargs="+",
        default=[COPYDETECT_NOISE],
        help="copydetect's noise threshold(s), in characters (its default: 25)",
    )
    noises = parser.parse_args().noise
    chapter = load_chapter()
    given = [chapter.stub.read_text("utf-8"), chapter.stub_tests.read_text("utf-8")]
    given += [need.reference.read_text("utf-8") for need in chapter.needs]
    detectors = [kit_detector(chapter, given)]
    detectors += [copydetect_detector(given, noise) for noise in noises]
    cases = [test_files(chapter), implementations(chapter), the_class(chapter)]
    print(
        "| set | detector | flags at | copies flagged | honest files flagged "
        "| pairs flagged, no copy | lowest copy | highest no copy | copies above it |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    notes = []
    together: dict[str, list[Measured]] = {}
    for case in cases:
        for detector in detectors:
            m = measure(case, detector)
            together.setdefault(detector.name, []).append(m)
            print(
                f"| {case.name} | {detector.name} | {detector.threshold} | "
                f"{m.copies_flagged} of {m.copies} | {m.honest_flagged} of {m.honest} | "
                f"{len(m.false_pairs)} | {min(m.copy_scores):.2f} | {m.highest_other:.2f} | "
                f"{m.separable} of {m.copies} |"
            )
            for what, pairs in (
                ("missed", m.missed),
                ("flagged, no copy", m.false_pairs),
                ("written one from the other", m.related),
            ):
                if pairs:
                    notes.append(f"{case.name}, {detector.name}, {what}: {', '.join(pairs)}")
    print()
    for name, measured in together.items():
        highest = max(m.highest_other for m in measured)
        scores = [score for m in measured for score in m.copy_scores]
        above = sum(score > highest for score in scores)
        print(
            f"{name}: one threshold for every set, just above {highest:.2f}, "
            f"flags {above} of {len(scores)} copies and no other pair"
        )
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
