"""What a submission shares with the sources the kit knows, for staff (docs/security.md):
a ``check`` with ``compare_copies`` carries it in ``known_sources``."""

from __future__ import annotations

from pathlib import Path

from grader.course.similarity import (
    COURSE_TESTS,
    INTERFACE,
    MODEL_ANSWER,
    REFERENCE,
    WITNESS_TESTS,
    KnownSource,
    defines_interface,
    known_sources,
    takes_interface,
)
from grader.grading.witness import killing_tests
from grader.inputs.catalog import Chapter
from grader.inputs.dependencies import Resolved
from grader.inputs.submission import Submission


def compare_with_the_kit(
    chapter: Chapter, submission: Submission, resolved: Resolved
) -> tuple[KnownSource, ...]:
    """Every file the student hands in against every source the kit knows, for staff: the
    test file against the course tests, the witnesses' killing tests and, in the staff
    edition, the model answer; ``radix.py`` and each needed module of the student's own
    against the reference; and a needed module that defines the chapter's interface (the
    tree hidden in ``robin_hood.py``) flagged with its reason. What every student is given
    (the stub, the skeleton, the kit's copy of each needed module) never counts."""
    if chapter.similarity is None:
        return ()
    settings = chapter.similarity
    given = [chapter.stub.read_text("utf-8"), chapter.stub_tests.read_text("utf-8")]
    given += [need.reference.read_text("utf-8") for need in chapter.needs]
    found: list[KnownSource] = []
    if submission.tests is not None:
        sources = {COURSE_TESTS: chapter.course_test_file.read_text(encoding="utf-8")}
        if chapter.model_tests.is_file():
            sources[MODEL_ANSWER] = chapter.model_tests.read_text(encoding="utf-8")
        if killing := killing_tests(chapter):
            sources[WITNESS_TESTS] = killing
        tests = submission.tests
        found += known_sources(chapter.student_tests, tests, "tests", sources, given, settings)
    reference = {REFERENCE: chapter.reference.read_text(encoding="utf-8")}
    code: list[tuple[str | None, str | None]] = [
        (chapter.implementation, submission.implementation)
    ]
    modules = dict(resolved.sources)
    code += [(u.file, modules.get(u.module)) for u in resolved.uses if u.used == "submission"]
    for file, text in code:
        if file is None or text is None:
            continue
        found += known_sources(file, text, "implementation", reference, given, settings)
        interface = sorted(chapter.interface)
        if file != chapter.implementation:
            reason = defines_interface(text, Path(file).name, interface)
        else:
            needed = [need.module for need in chapter.needs]
            reason = takes_interface(text, file, needed, interface)
        if reason is not None:
            found.append(KnownSource(INTERFACE, None, True, file, reason))
    return tuple(found)
