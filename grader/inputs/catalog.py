"""The chapter catalog: what the kit knows about a chapter, read from ``chapter/catalog.toml``.

Everything else in the grader (test names, mutant titles, the threshold,
where a submission keeps its files, the module the tests import and its
public names) comes from here: no other code names a chapter, its module or
its files. A new chapter is its content (reference, stub, course tests,
patches), its catalog, and one line in ``CHAPTERS`` saying where that lies.
"""

from __future__ import annotations

import importlib.metadata
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import DISTRIBUTION
from grader.errors import GraderError
from grader.grading.witness import WitnessSettings, settings_from

CHAPTERS = {"ds.07": "chapter/catalog.toml"}
"""Chapter ids the kit ships, each with its catalog path relative to the kit root."""

DEFAULT_CHAPTER = "ds.07"


STUDENT_LABEL = "student"
"""The local version label of the student edition's wheel: ``0.1.0+student``."""


def is_student_edition() -> bool:
    """Whether this grader is the student edition: its installed version carries the label
    ``grader release --student`` gives it (a source checkout, or the staff edition, does not)."""
    try:
        version = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return False
    return version.endswith(f"+{STUDENT_LABEL}")


def help_topics() -> dict[str, Path]:
    """The docs ``grader help TOPIC`` shows, by topic (the file's name): those this edition
    carries."""
    folder = kit_root() / "docs"
    return {path.stem: path for path in sorted(folder.glob("*.md"))} if folder.is_dir() else {}


def kit_root() -> Path:
    """The folder holding the course content: bundled in the wheel, or the source checkout."""
    bundled = Path(__file__).resolve().parents[1] / "kit"
    if (bundled / "mutants").is_dir():
        return bundled
    return Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class CourseTest:
    name: str
    kind: str
    checks: str
    why: str


@dataclass(frozen=True)
class RequiredTest:
    name: str
    checks: str


@dataclass(frozen=True)
class Step:
    """One step of the way through the chapter: a command to run, or a file to edit
    (``edit`` is ``tests`` or ``implementation``, the submission's file of that role)."""

    what: str
    command: str = ""
    edit: str = ""


@dataclass(frozen=True)
class Mutant:
    """A planted bug: ``title`` is the pitfall, ``symptom`` what it does to a prefix cache."""

    id: str
    title: str
    symptom: str
    function: str
    caught_by: tuple[str, ...]
    patch: Path


@dataclass(frozen=True)
class HangBound:
    """When a call of the student's own tree counts as hung (the catalog's ``[hang]``):
    after ``factor`` times the reference's slowest call in the course tests, and at least
    ``floor_seconds``, of CPU time."""

    factor: float
    floor_seconds: float
    reference_slowest_call_seconds: float

    @property
    def call_limit(self) -> float:
        return max(self.floor_seconds, self.factor * self.reference_slowest_call_seconds)


@dataclass(frozen=True)
class RobustnessSettings:
    """The catalog's ``[robustness]`` table (``grader.grading.robustness``): how many further
    seeds ``grader batch`` reruns each kill by a test that draws examples with (0: none;
    ``grader check --robustness K`` chooses its own), and the share of all the seeds a kill
    must hold on to count as robust."""

    seeds: int = 0
    robust_share: float = 1.0


@dataclass(frozen=True)
class Dependency:
    """An earlier chapter the implementation may import (the catalog's ``[[needs]]``).

    A submission keeps the student's own ``implementation`` beside the
    chapter's; ``reference`` is the kit's, which grades the reference, the
    mutants and, with ``--ref-deps``, the student's code.
    """

    id: str
    title: str
    module: str
    interface: tuple[str, ...]
    implementation: str
    uses: str
    operations: str
    reference: Path


@dataclass(frozen=True)
class Wheat:
    id: str
    title: str
    patch: Path
    choice: str = ""
    """What this correct tree chooses, ending "a correct tree that ...": students read it."""

    def described(self) -> str:
        """``w01, a correct tree that reuses freed ids oldest first (...)``."""
        return f"{self.id}, a correct tree that {self.choice}" if self.choice else self.id


VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
"""Gradescope's settings for who sees a result, and when."""


@dataclass(frozen=True)
class GradescopeVisibility:
    """The catalog's ``[gradescope]`` table: a visibility for the whole result, for each kind
    of entry, and for single entries by course test name or mutant id."""

    overall: str = "visible"
    course_tests: str = "visible"
    student_tests: str = "visible"
    mutation_score: str = "visible"
    mutants: str = "visible"
    tests: dict[str, str] = field(default_factory=dict)

    def of(self, kind: str, name: str = "") -> str:
        """The visibility of the entry ``name`` of ``kind`` (a field name of this class)."""
        return self.tests.get(name) or str(getattr(self, kind))


@dataclass(frozen=True)
class SimilaritySettings:
    """How ``grader batch`` finds copies: the catalog's ``[similarity]`` table."""

    kgram: int
    window: int
    min_fingerprints: int
    floor: float
    flag_text: float
    flag_text_with_behaviour: float
    flag_behaviour: float


@dataclass(frozen=True)
class Chapter:
    """One chapter of the course, with the paths of its content in the kit."""

    id: str
    title: str
    module: str
    interface: frozenset[str]
    implementation: str
    student_tests: str
    threshold: float
    required: tuple[str, ...]
    show_mutant_titles: bool
    grade_scale: float
    course_tests_weight: float
    course_tests: tuple[CourseTest, ...]
    required_tests: tuple[RequiredTest, ...]
    mutants: tuple[Mutant, ...]
    wheats: tuple[Wheat, ...]
    reference: Path
    stub: Path
    stub_tests: Path
    model_tests: Path
    course_test_file: Path
    text: Path
    """The chapter's text (Markdown) in the kit, shown by ``grader chapter``."""
    similarity: SimilaritySettings | None = None
    """``None`` when the catalog has no ``[similarity]`` table: batch then looks for no copies."""
    staff_only: tuple[str, ...] = ()
    """Kit files (paths from the kit's root, ``*`` globs) only staff may hold."""
    student_files: tuple[str, ...] = ()
    """The allow-list of kit files (paths from the kit's root, ``*`` globs) the student edition
    and the Gradescope bundle's ``kit/`` may hold: ``[release] student``."""
    gradescope: GradescopeVisibility = GradescopeVisibility()
    members: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per class of the interface, the members a test may use (the stand-in forwards them)."""
    exceptions: tuple[str, ...] = ()
    """The built-in exceptions of the contract, which tests see as themselves."""
    course_tests_also_call: tuple[str, ...] = ()
    model_program: dict[str, Any] = field(default_factory=dict, compare=False)
    """How the model-based course test's shrunk program reads in the chapter's words
    (``[model_program]``: ``start``, ``note``, ``rules``; ``grader.grading.model_program``)."""
    """Private members the course tests (never a student's) may call."""
    course_test_shards: tuple[tuple[str, ...], ...] = ()
    """Course tests (pytest node names in the course-test file) each run in a run of its own,
    side by side; the other tests run together in one more: the longest job of a check is
    then shorter."""
    witnesses: WitnessSettings | None = None
    """The catalog's ``[witnesses]`` table (``grader.grading.witness``): the witnesses file and the
    tier of each context; ``None`` when the catalog has none (survivors shown by title)."""
    witness_tier: str = "title"
    """What this run shows of a survivor (``grader.grading.witness.TIERS``): the entry points set
    it from ``witnesses`` for where they run."""
    needs: tuple[Dependency, ...] = ()
    """The earlier chapters whose modules the implementation may import."""
    workflow: tuple[Step, ...] = ()
    """The steps from ``grader start`` to a pass, in order."""
    slow_test_seconds: float = float("inf")
    """A student's test slower than this on the reference is named as slow; the catalog sets
    it (``inf``: a catalog without it warns of none)."""
    hang: HangBound | None = None
    """The catalog's ``[hang]`` table: how long one call of the student's own tree may take
    before it counts as hung (``call_limit``); ``None``: calls are not bounded."""
    rare_share: float = 0.5
    """``grader mine``: a real bug that fewer than this share of the strong test files catch
    is a candidate for next term's mutants (the catalog's ``[mining] rare_share``)."""
    robustness: RobustnessSettings = RobustnessSettings()
    """The catalog's ``[robustness]`` table; without one, batch reruns no kill."""
    hand_back_tier: str = ""
    """The tier of the reports a batch hands back to students (``students/NAME.txt`` and
    ``.html``): ``batch --tier``, or empty for the most students see before the due date
    (``grader.grading.witness.students_tier``)."""

    @property
    def call_limit(self) -> float:
        """The CPU seconds one call of the student's own tree may take (0: no bound)."""
        return self.hang.call_limit if self.hang is not None else 0.0

    def mutant(self, mutant_id: str) -> Mutant:
        for mutant in self.mutants:
            if mutant.id == mutant_id:
                return mutant
        raise GraderError(f"chapter {self.id} has no mutant {mutant_id!r}")


def step_line(chapter: Chapter, step: Step, folder: Path | None = None) -> str:
    """The step as a student types it: ``edit tests/test_ds07_radix.py``, or the command,
    with ``--submission folder`` for the commands that read a submission when ``folder`` is
    given (the paths quoted for a shell)."""
    if step.edit:
        path = chapter.student_tests if step.edit == "tests" else chapter.implementation
        return f"edit {shlex.quote(str(folder / path)) if folder else path}"
    if folder is None or step.command in FOLDERLESS_COMMANDS:
        return step.command
    return f"{step.command} --submission {shlex.quote(str(folder))}"


FOLDERLESS_COMMANDS = frozenset({"grader start", "grader chapter", "grader tests"})
"""The commands that read no submission."""


EXTRA_TESTS = (
    "more tests than the required ones are welcome: each must pass on the reference and on "
    "every correct variant, and every one of them counts for kills"
)
"""What every text says of tests beyond the required ones."""


def load_chapter(chapter_id: str = DEFAULT_CHAPTER, root: Path | None = None) -> Chapter:
    """Read and check a chapter's catalog; a missing or malformed catalog is a broken kit."""
    root = root or kit_root()
    if chapter_id not in CHAPTERS:
        known = ", ".join(sorted(CHAPTERS))
        raise GraderError(f"unknown chapter {chapter_id!r}: this kit grades {known}")
    path = root / CHAPTERS[chapter_id]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return _chapter_from(data, root, root / "mutants")
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as error:
        raise GraderError(f"the kit is broken: cannot read {path}: {error!r}") from error


def _chapter_from(data: dict[str, Any], root: Path, mutants_dir: Path) -> Chapter:
    head = data["chapter"]
    implementation = str(head["implementation"])
    student_tests = str(head["student_tests"])
    chapter = Chapter(
        id=str(head["id"]),
        title=str(head["title"]),
        module=str(head["module"]),
        interface=frozenset(str(name) for name in head["interface"]),
        implementation=implementation,
        student_tests=student_tests,
        threshold=float(head["threshold"]),
        required=tuple(head["required"]),
        show_mutant_titles=bool(head["show_mutant_titles"]),
        grade_scale=float(head["grade_scale"]),
        course_tests_weight=float(head["course_tests_weight"]),
        course_tests=tuple(CourseTest(**entry) for entry in data["course_tests"]),
        required_tests=tuple(RequiredTest(**entry) for entry in data["required_tests"]),
        mutants=_mutants_from(data, mutants_dir),
        wheats=_wheats_from(data, root),
        reference=root / "reference" / implementation,
        stub=root / "student" / implementation,
        stub_tests=root / "student" / student_tests,
        model_tests=root / "reference" / student_tests,
        course_test_file=root / "course_tests" / str(head["course_tests"]),
        text=root / "chapter" / str(head["text"]),
        staff_only=tuple(str(p) for p in data.get("release", {}).get("staff_only", [])),
        student_files=tuple(str(p) for p in data.get("release", {}).get("student", [])),
        similarity=SimilaritySettings(**data["similarity"]) if "similarity" in data else None,
        rare_share=float(data.get("mining", {}).get("rare_share", 0.5)),
        gradescope=_gradescope_from(data.get("gradescope", {})),
        members=tuple(
            (str(cls), tuple(str(m) for m in members))
            for cls, members in head.get("members", {}).items()
        ),
        exceptions=tuple(str(name) for name in head.get("exceptions", [])),
        course_tests_also_call=tuple(str(m) for m in head.get("course_tests_also_call", [])),
        model_program=dict(data.get("model_program", {})),
        course_test_shards=tuple(
            tuple(str(name) for name in shard) for shard in head.get("course_test_shards", [])
        ),
        witnesses=settings_from(data["witnesses"], mutants_dir) if "witnesses" in data else None,
        needs=tuple(_dependency_from(entry, root) for entry in data.get("needs", [])),
        slow_test_seconds=float(head.get("slow_test_seconds", "inf")),
        hang=HangBound(**{k: float(v) for k, v in data["hang"].items()})
        if "hang" in data
        else None,
        workflow=tuple(Step(**entry) for entry in data.get("workflow", [])),
        robustness=_robustness_from(data.get("robustness", {})),
    )
    _check_chapter(chapter)
    return chapter


def _mutants_from(data: dict[str, Any], mutants_dir: Path) -> tuple[Mutant, ...]:
    """The catalog's planted mutants, each with its patch in ``mutants_dir``."""
    return tuple(
        Mutant(
            id=entry["id"],
            title=entry["title"],
            symptom=entry["symptom"],
            function=entry["function"],
            caught_by=tuple(entry["caught_by"]),
            patch=mutants_dir / f"{entry['id']}.patch",
        )
        for entry in data.get("mutants", [])
    )


def _wheats_from(data: dict[str, Any], root: Path) -> tuple[Wheat, ...]:
    """The catalog's correct variants, each with its patch in ``root/wheats``."""
    return tuple(
        Wheat(
            id=entry["id"],
            title=entry["title"],
            patch=root / "wheats" / f"{entry['id']}.patch",
            choice=entry.get("choice", ""),
        )
        for entry in data.get("wheats", [])
    )


def _check_chapter(chapter: Chapter) -> None:
    """Raise ``ValueError`` where the catalog contradicts itself: a workflow step that is
    neither a command nor an edit, a mutant id twice or a required one missing, a Gradescope
    setting for a test that does not exist."""
    if any(bool(step.command) == bool(step.edit) for step in chapter.workflow) or any(
        step.edit not in ("", "tests", "implementation") for step in chapter.workflow
    ):
        raise ValueError("each workflow step needs a command or an edit of tests/implementation")
    ids = [m.id for m in chapter.mutants]
    if len(set(ids)) != len(ids) or (not set(chapter.required) <= set(ids) and ids):
        raise ValueError("mutant ids must be unique and include every required mutant")
    named = set(ids) | {test.name for test in chapter.course_tests}
    if not set(chapter.gradescope.tests) <= named:
        unknown = sorted(set(chapter.gradescope.tests) - named)
        raise ValueError(f"[gradescope.tests] names no course test or mutant: {unknown}")


def _robustness_from(table: dict[str, Any]) -> RobustnessSettings:
    """The ``[robustness]`` table: a count of seeds of 0 or more, a share in (0, 1]."""
    settings = RobustnessSettings(int(table.get("seeds", 0)), float(table.get("robust_share", 1.0)))
    if settings.seeds < 0 or not 0 < settings.robust_share <= 1:
        raise ValueError("[robustness] needs seeds >= 0 and 0 < robust_share <= 1")
    return settings


def _dependency_from(entry: dict[str, Any], root: Path) -> Dependency:
    implementation = str(entry["implementation"])
    if implementation != f"{entry['module']}.py" or "/" in implementation:
        raise ValueError(f"[[needs]] {entry['id']}: implementation must be the module's file name")
    return Dependency(
        id=str(entry["id"]),
        title=str(entry["title"]),
        module=str(entry["module"]),
        interface=tuple(str(name) for name in entry["interface"]),
        implementation=implementation,
        uses=str(entry["uses"]),
        operations=str(entry["operations"]),
        reference=root / "reference" / implementation,
    )


def _gradescope_from(table: dict[str, Any]) -> GradescopeVisibility:
    """The ``[gradescope]`` table, every value one of ``VISIBILITIES``."""
    settings = {key: str(value) for key, value in table.items() if key != "tests"}
    tests = {str(name): str(value) for name, value in table.get("tests", {}).items()}
    for key, value in [*settings.items(), *tests.items()]:
        if value not in VISIBILITIES:
            raise ValueError(
                f"[gradescope] {key} = {value!r}: use one of {', '.join(VISIBILITIES)}"
            )
    if "visibility" in settings:
        settings["overall"] = settings.pop("visibility")
    return GradescopeVisibility(**settings, tests=tests)
