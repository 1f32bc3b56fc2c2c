"""What decides a result: the key a graded row is filed under, and the settings that replay it.

A result of ``check`` is a function of the kit (its version, its grader code,
its catalog, its chapter content), of the submission's two files, of the
settings of the runs (time limits, hash seeds, the reversed rerun) and of the
isolation the runs got. ``ResultKey`` names each of those by a SHA-256 digest
(or the plain value), and ``ResultKey.digest`` folds them into one string: two
rows with the same digest were graded from the same inputs and must agree, up
to their timings. ``grader merge`` compares rows by it, ``grader replay`` and
``grader regrade`` say which part of it changed, and a cache of results by
content can be keyed by it.

Every hash here is of bytes read from files or of canonical JSON, never
Python's salted ``hash()``, so a key is the same on every machine and run.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from grader import __version__
from grader.inputs.catalog import CHAPTERS, Chapter

GRADER_PACKAGE = Path(__file__).resolve().parents[1]
REFUSED = "refused"
"""The ``files`` label of a submission refused before grading (no file was read)."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def text_digest(text: str) -> str:
    """The SHA-256 of ``text`` in UTF-8, as hex: this module is the one home of content hashes."""
    return _sha256(text.encode())


def canonical(value: Any) -> bytes:
    """``value`` as canonical JSON bytes (sorted keys, no spaces): the form every hash reads."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _files_digest(paths: list[Path], root: Path) -> str:
    """One digest over the files ``paths``: each one's path from ``root`` and its bytes.

    A file outside ``root`` (a chapter whose course tests were laid out elsewhere)
    is named by its file name alone, so the digest does not depend on where it lies.
    """
    digest = hashlib.sha256()
    for path in sorted(paths):
        label = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        digest.update(label.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(absent)")
        digest.update(b"\0")
    return digest.hexdigest()


def chapter_files(chapter: Chapter) -> list[Path]:
    """The content files a grade depends on: reference, stub, skeleton, model answer, course
    tests (their folder's ``conftest.py`` too), the kit's copy of each module the chapter
    needs, every mutant and wheat patch."""
    course = chapter.course_test_file
    return [
        chapter.reference,
        *(need.reference for need in chapter.needs),
        chapter.stub,
        chapter.stub_tests,
        chapter.model_tests,
        course,
        course.with_name("conftest.py"),
        *(mutant.patch for mutant in chapter.mutants),
        *(wheat.patch for wheat in chapter.wheats),
    ]


@functools.cache
def _kit_digests(chapter_id: str, root: Path, files: tuple[Path, ...]) -> tuple[str, str, str]:
    catalog = _sha256((root / CHAPTERS[chapter_id]).read_bytes())
    content = _files_digest(list(files), root)
    code = _files_digest(sorted(GRADER_PACKAGE.glob("**/*.py")), GRADER_PACKAGE)
    return catalog, content, code


def kit_digests(chapter: Chapter) -> tuple[str, str, str]:
    """The catalog's digest, the chapter content's, and the grader code's (read once)."""
    root = chapter.reference.parent.parent
    files = tuple(path.resolve() for path in chapter_files(chapter))
    return _kit_digests(chapter.id, root.resolve(), files)


def submission_digest(files: Mapping[str, str | None]) -> str:
    """The digest of a submission as graded: each label (``implementation``, ``tests``, or
    ``refused``), where the file was found, and its text (``None``: not read)."""
    return _sha256(canonical(dict(files)))


@dataclass(frozen=True)
class ResultKey:
    """Everything that decides a result, each part a digest or a plain value."""

    kit_version: str
    catalog: str
    chapter: str
    code: str
    submission: str
    settings: str
    isolation: str

    @property
    def digest(self) -> str:
        """One string for the whole key (the first 32 hex digits of a SHA-256)."""
        return _sha256(canonical(asdict(self)))[:32]

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def differences(self, other: ResultKey) -> list[str]:
        """The parts in which ``other`` differs, in their documented order."""
        mine, theirs = self.as_dict(), other.as_dict()
        return [part for part in mine if mine[part] != theirs[part]]


def result_key(
    chapter: Chapter,
    submission: Mapping[str, str | None],
    settings: Mapping[str, Any],
    isolation: str,
) -> ResultKey:
    """The key of grading ``submission`` (see ``submission_digest``) under ``settings`` (plain
    data: limits, seeds, order) at ``isolation`` with the kit installed now."""
    catalog, content, code = kit_digests(chapter)
    return ResultKey(
        kit_version=__version__,
        catalog=catalog,
        chapter=content,
        code=code,
        submission=submission_digest(submission),
        settings=_sha256(canonical(dict(settings))),
        isolation=isolation,
    )


def key_from_dict(data: Mapping[str, Any]) -> ResultKey:
    """A key read back from a report's ``provenance`` (``as_dict``'s form)."""
    return ResultKey(**{name: str(data[name]) for name in ResultKey.__dataclass_fields__})


def mac(secret: bytes, data: bytes) -> str:
    """The HMAC-SHA256 of ``data`` under ``secret``, as hex (the result cache signs its
    entries with it: ``grader.grading.result_cache``)."""
    return hmac.new(secret, data, hashlib.sha256).hexdigest()


def mac_matches(secret: bytes, data: bytes, given: str) -> bool:
    """Whether ``given`` is ``data``'s MAC under ``secret``, compared in constant time."""
    return hmac.compare_digest(mac(secret, data), given)
