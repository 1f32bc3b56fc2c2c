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
from disguise import DISGUISES, every_disguise

from grader.catalog import SimilaritySettings, load_chapter
from grader.commands.check import compare_with_the_kit
from grader.output.class_report import class_data, class_html
from grader.output.similarity import SIMILARITY_PAGE, similarity_html
from grader.similarity import (
    COURSE_TESTS,
    MODEL_ANSWER,
    ClassFile,
    Fingerprinter,
    clusters,
    find_copies,
    paired_passages,
    tree_tokens,
)

CHAPTER = load_chapter()
KIT = Path(__file__).resolve().parents[2]
HONEST = sorted((KIT / "tests" / "fixtures" / "honest").glob("*.py")) + [
    KIT / "tests" / "fixtures" / "submissions" / example / CHAPTER.student_tests
    for example in ("weak", "misses_s11")
]
MODEL = CHAPTER.model_tests.read_text(encoding="utf-8")
COURSE = CHAPTER.course_test_file.read_text(encoding="utf-8")


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


@pytest.mark.parametrize("how", list(DISGUISES))
def test_check_flags_a_disguised_copy_of_the_kits_tests_for_staff(how: str) -> None:
    for source, text in ((MODEL_ANSWER, MODEL), (COURSE_TESTS, COURSE)):
        known = compare_with_the_kit(CHAPTER, DISGUISES[how](text, CHAPTER))
        assert [k.source for k in known if k.flagged] == [source], (how, known)


def test_check_flags_no_honest_file() -> None:
    for path in HONEST:
        known = compare_with_the_kit(CHAPTER, path.read_text("utf-8"))
        assert [k.source for k in known] == [COURSE_TESTS, MODEL_ANSWER]
        assert not any(k.flagged for k in known), (path.name, known)


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
