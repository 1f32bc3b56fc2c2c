"""Copy detection against the disguises students use, and the kit's own tests as known sources.

A class made of the kit's honest test files (every everyday style, written
independently) and of copies: the model answer and the course tests under each
disguise of ``disguise.DISGUISES`` (renamed, reordered and re-laid-out; assert
messages added or dropped; comparisons turned round; ``assert ==`` as
``assertEqual``; loops as ``parametrize``) and all of them at once. Every copy
is flagged, against the file it copies; no honest file is flagged, against
anything.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from disguise import DISGUISES, disguise_tree, every_disguise

from grader.course.canonical import tree_tokens
from grader.course.fingerprints import Fingerprinter, paired_passages, text_score
from grader.course.kit_sources import compare_with_the_kit
from grader.course.similarity import (
    COURSE_TESTS,
    INTERFACE,
    MODEL_ANSWER,
    WITNESS_TESTS,
    ClassFile,
    KnownSource,
    clusters,
    find_copies,
)
from grader.course.similarity import REFERENCE as REFERENCE_NAME
from grader.grading.witness import killing_tests
from grader.inputs.catalog import SimilaritySettings, load_chapter
from grader.inputs.dependencies import DependencyUse, Resolved
from grader.inputs.submission import Submission
from grader.output.class_report import class_data, class_html
from grader.output.similarity import SIMILARITY_PAGE, similarity_html

CHAPTER = load_chapter()
KIT = Path(__file__).resolve().parents[2]
HONEST = sorted((KIT / "tests" / "fixtures" / "honest").glob("*.py")) + [
    KIT / "tests" / "fixtures" / "submissions" / example / CHAPTER.student_tests
    for example in ("weak", "misses_s11")
]
MODEL = CHAPTER.model_tests.read_text(encoding="utf-8")
COURSE = CHAPTER.course_test_file.read_text(encoding="utf-8")
REFERENCE = CHAPTER.reference.read_text(encoding="utf-8")
REFERENCE_STUB = CHAPTER.stub.read_text(encoding="utf-8")


def settings() -> SimilaritySettings:
    assert CHAPTER.similarity is not None
    return CHAPTER.similarity


def copies() -> dict[str, tuple[str, str]]:
    """Each disguised copy by student name: its text and the kit's file it copies."""
    found = {}
    for source, text in ((MODEL_ANSWER, MODEL), (COURSE_TESTS, COURSE)):
        for number, change in enumerate(DISGUISES.values()):
            found[f"{source}-{number}"] = (change(text, CHAPTER), source)
        found[f"{source}-all"] = (every_disguise(text, CHAPTER), source)
    return found


@pytest.mark.slow
def test_the_class_flags_every_disguised_copy_and_no_honest_file() -> None:
    copied = copies()
    files = [ClassFile(name, "tests", text) for name, (text, _) in copied.items()]
    files += [ClassFile(f"honest-{p.stem}", "tests", p.read_text("utf-8")) for p in HONEST]
    files += [ClassFile(MODEL_ANSWER, "tests", MODEL), ClassFile(COURSE_TESTS, "tests", COURSE)]
    given = [CHAPTER.stub.read_text("utf-8"), CHAPTER.stub_tests.read_text("utf-8")]
    found = find_copies(files, Fingerprinter(given, settings()), 0, lambda: None)
    flagged = {(p.a, p.b) for p in found.pairs if p.flagged}
    for name, (_, source) in copied.items():
        assert (name, source) in flagged, (name, found.flags(name))
    for path in HONEST:
        assert found.flags(f"honest-{path.stem}") == (), path.name


def with_the_kit(
    tests: str | None, radix: str | None = None, modules: dict[str, str] | None = None
) -> tuple[KnownSource, ...]:
    """``kit_sources.compare_with_the_kit`` on a submission of these texts (``modules``: the
    student's own copy of each needed module, by module name)."""
    submission = Submission(KIT, radix, tests, None, None)
    own = modules or {}
    uses = tuple(
        DependencyUse(need.id, need.module, "submission", need.implementation)
        for need in CHAPTER.needs
        if need.module in own
    )
    return compare_with_the_kit(CHAPTER, submission, Resolved(tuple(own.items()), uses))


@pytest.mark.parametrize("how", list(DISGUISES))
def test_check_flags_a_disguised_copy_of_the_kits_tests_for_staff(how: str) -> None:
    for source, text in ((MODEL_ANSWER, MODEL), (COURSE_TESTS, COURSE)):
        known = with_the_kit(DISGUISES[how](text, CHAPTER))
        assert [k.source for k in known if k.flagged] == [source], (how, known)


def test_check_flags_no_honest_file() -> None:
    for path in HONEST:
        known = with_the_kit(path.read_text("utf-8"))
        assert [k.source for k in known] == [COURSE_TESTS, MODEL_ANSWER, WITNESS_TESTS]
        assert not any(k.flagged for k in known), (path.name, known)


def test_check_flags_the_witnesses_killing_tests_pasted_in() -> None:
    """Issue 34, route 3: each mutant's killing test (the staff's witnesses file) pasted as the
    student's own tests, beside the skeleton's required tests."""
    pasted = CHAPTER.stub_tests.read_text("utf-8") + "\n\n" + killing_tests(CHAPTER)
    known = with_the_kit(pasted)
    assert [k.source for k in known if k.flagged] == [WITNESS_TESTS], known


def test_a_renamed_reordered_copy_of_the_tree_is_flagged() -> None:
    """Helpers renamed, methods reordered, docstrings stripped: it scored 0.49 to 0.59 against
    the tree it copies (fingerprints across method boundaries, helper names as tokens)."""
    fingerprints = Fingerprinter([CHAPTER.stub.read_text("utf-8")], settings())
    for seed in range(3):
        copy = disguise_tree(REFERENCE, seed)
        score = text_score(
            fingerprints(REFERENCE, "implementation"),
            fingerprints(copy, "implementation"),
            settings(),
        )
        assert score >= settings().flag_text, (seed, score)
        known = with_the_kit(None, copy)
        assert [(k.file, k.source) for k in known if k.flagged] == [("radix.py", REFERENCE_NAME)]


def test_a_tree_hidden_in_the_maps_file_is_flagged_with_its_reason() -> None:
    """Issue 34, route 4: radix.py one import line, the tree (renamed, reordered) in
    robin_hood.py after the kit's map."""
    (need,) = CHAPTER.needs
    tree = disguise_tree(REFERENCE, 7).replace("from __future__ import annotations\n", "")
    tree = tree.replace(f"from {need.module} import RobinHoodMap\n", "")
    hidden = need.reference.read_text("utf-8") + tree
    radix = f"from {need.module} import ROOT, NodeId, RadixTree\n"
    known = with_the_kit(None, radix, {need.module: hidden})
    flagged = [(k.file, k.source) for k in known if k.flagged]
    assert flagged == [
        (CHAPTER.implementation, INTERFACE),
        (need.implementation, REFERENCE_NAME),
        (need.implementation, INTERFACE),
    ]
    takes, defines = [k.reason for k in known if k.source == INTERFACE]
    assert takes.startswith(f"radix.py takes NodeId, ROOT, RadixTree from {need.module}, a")
    assert defines.startswith(f"{need.implementation} defines NodeId, ROOT, RadixTree, this")
    renamed = hidden.replace("class RadixTree(", "class _Kept(")  # a name no rule knows
    radix = f"from {need.module} import _Kept as RadixTree\nROOT = 0\nNodeId = int\n"
    known = with_the_kit(None, radix, {need.module: renamed})
    assert [(k.file, k.source) for k in known if k.flagged] == [
        (CHAPTER.implementation, INTERFACE),
        (need.implementation, REFERENCE_NAME),
        (need.implementation, INTERFACE),  # its ROOT and NodeId
    ]
    honest = with_the_kit(None, REFERENCE_STUB, {need.module: need.reference.read_text("utf-8")})
    assert not [k for k in honest if k.flagged], honest


def test_batch_compares_every_file_a_student_hands_in() -> None:
    """A class: one student hides a renamed copy of another's tree in robin_hood.py, another
    hands in the kit's map and a tree of their own (the stub): only the first is flagged, on
    that file, against the classmate and the reference, with the finding's reason."""
    (need,) = CHAPTER.needs
    given = [CHAPTER.stub.read_text("utf-8"), CHAPTER.stub_tests.read_text("utf-8")]
    given.append(need.reference.read_text("utf-8"))
    kit_map = need.reference.read_text("utf-8")
    tree = disguise_tree(REFERENCE, 3).replace("from __future__ import annotations\n", "")
    files = [
        ClassFile("ann", "implementation", REFERENCE),
        ClassFile("ann/robin_hood.py", "implementation", kit_map),
        ClassFile("bob", "implementation", f"from {need.module} import RadixTree\n"),
        ClassFile("bob/robin_hood.py", "implementation", kit_map + tree),
        ClassFile("cat", "implementation", REFERENCE_STUB),
        ClassFile("cat/robin_hood.py", "implementation", kit_map),
        ClassFile(REFERENCE_NAME, "implementation", REFERENCE),
    ]
    interface, needed = sorted(CHAPTER.interface), [need.module]
    fingerprints = Fingerprinter(given, settings())
    found = find_copies(files, fingerprints, 0, lambda: None, interface, needed)
    assert found.flags("bob") == (
        "robin_hood.py~ann",
        f"robin_hood.py~{REFERENCE_NAME}",
        "radix.py~interface",
        "robin_hood.py~interface",
    )
    assert found.flags("ann") == ("implementation~bob/robin_hood.py", "implementation~reference")
    assert found.flags("cat") == ()
    takes, defines = found.findings
    assert takes.reason.startswith("radix.py takes RadixTree from robin_hood, a module")
    assert defines.reason.startswith("robin_hood.py defines NodeId, ROOT, RadixTree, this")


def words(text: str) -> list[str]:
    found = tree_tokens(text)
    assert found is not None
    return [token.text for token in found]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("assert f(x) == [1]\n", "assert [1] == f(x), 'message'\n"),
        ("assert a < b\n", "assert b > a\n"),
        ("self.assertEqual(f(x), 2)\n", "assert f(x) == 2\n"),
        ("'''Doc.'''\nx = 1\n", "x = 2\n"),
        (
            "import pytest\n@pytest.mark.parametrize('n', [1, 2])\ndef test_x(n):\n    assert n\n",
            "import pytest\ndef test_y():\n    for n in [1, 2]:\n        assert n\n",
        ),
    ],
)
def test_the_canonical_form_writes_each_disguise_one_way(one: str, other: str) -> None:
    assert words(one) == words(other)


def test_tokens_keep_their_places_in_the_file() -> None:
    text = "def f(tree):\n    return tree.insert([1], ['a'])\n"
    found = tree_tokens(text)
    assert found is not None
    insert = next(t for t in found if t.text == ".insert")
    assert text[insert.start : insert.end] == "tree.insert"
    assert tree_tokens("def f(:\n") is None


def test_copies_form_one_group_with_its_strongest_evidence_and_paired_passages() -> None:
    """Five students with one file and two with their own: one group of five (not ten pairs
    on the page), its shared passages numbered alike on both sides, each number a link to an
    anchor the page has; the class page links to the group."""
    copy = DISGUISES["renamed, reordered, re-laid-out"](MODEL, CHAPTER)
    files = [ClassFile(f"s{n}", "tests", copy) for n in range(5)]
    files += [ClassFile(f"honest-{p.stem}", "tests", p.read_text("utf-8")) for p in HONEST[:2]]
    given = [CHAPTER.stub.read_text("utf-8"), CHAPTER.stub_tests.read_text("utf-8")]
    found = find_copies(files, Fingerprinter(given, settings()), 0, lambda: None)
    groups = clusters(found.pairs)
    assert [g.members for g in groups] == [("s0", "s1", "s2", "s3", "s4")]
    assert len(groups[0].pairs) == 10 and groups[0].strongest.text_score == 1.0
    page = similarity_html("ds.07", found)
    assert page.count("<section") == 1 and "href='#group-1'" in page
    ids = set(re.findall(r"id='([^']+)'", page))
    targets = re.findall(r"href='#([^']+)'", page)
    assert targets and set(targets) <= ids
    left = set(re.findall(r"id='group-1-a-(\d+)'", page))
    right = set(re.findall(r"id='group-1-b-(\d+)(?:-\d+)?'", page))
    assert left and left == right  # copies alike from end to end share one passage
    classes = class_html(class_data(CHAPTER, {}, {}, found))
    assert f"href='{SIMILARITY_PAGE}#group-1'" in classes


def test_paired_passages_number_both_sides_alike() -> None:
    given = [CHAPTER.stub_tests.read_text("utf-8")]
    fingerprints = Fingerprinter(given, settings())
    a = fingerprints(MODEL)
    b = fingerprints(DISGUISES["renamed, reordered, re-laid-out"](MODEL, CHAPTER))
    left, right = paired_passages(a, b, a.hashes & b.hashes)
    assert len(left) > 1  # reordered: the shared text comes in several passages
    assert [p.number for p in left] == list(range(1, len(left) + 1))
    assert {p.number for p in right} <= {p.number for p in left}
    assert all(p.start < p.end for p in left + right)
