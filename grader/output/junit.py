"""A ``CheckReport`` as JUnit XML, the test report every CI shows natively.

Three suites: the course tests (one case each: a ``failure`` when it failed,
an ``error`` when it errored, timed out, was skipped or never ran), the
student's test file (one case: valid or not, with every problem), and the
planted mutants (one case each: a ``failure`` when it survived, an ``error``
when the run on it did not report every test, ``skipped`` when the student's
tests were not valid enough to run them). Case names are
stable; timings appear only on the suites, the one part that varies run to run.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from grader.grading.witness import chapter_witnesses
from grader.grading.wording import (
    NOT_MEASURED,
    course_test_outcome,
    mutant_name,
    mutant_outcome,
    practice_note,
    student_tests_outcome,
)
from grader.inputs.catalog import Chapter
from grader.results.check import CheckReport
from grader.sandbox.host.result import failure_line
from grader.sandbox.protocol.status import MutantStatus, TestStatus

COUNTED = {"failure": "failures", "error": "errors", "skipped": "skipped"}
"""Each outcome of a case and the attribute of a suite that counts it."""
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class _Case:
    name: str
    outcome: str = "passed"  # passed, failure, error or skipped
    message: str = ""
    kind: str = ""
    text: str = ""


@dataclass(frozen=True)
class _Suite:
    name: str
    classname: str
    seconds: float
    cases: list[_Case] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(case.outcome == outcome for case in self.cases)


def report_to_junit(chapter: Chapter, report: CheckReport) -> str:
    """The report as a JUnit XML document (UTF-8, with its declaration)."""
    suites = [_course_suite(chapter, report), _student_suite(chapter, report)]
    suites.append(_mutant_suite(chapter, report))
    root = ET.Element("testsuites", name=f"grader {chapter.id}")
    _counts(root, suites, report.timings.get("total", 0.0))
    for suite in suites:
        element = ET.SubElement(root, "testsuite", name=suite.name)
        _counts(element, [suite], suite.seconds)
        for case in suite.cases:
            _case(element, suite.classname, case)
    practice = practice_note(report)
    if practice:
        root.set("name", f"grader {chapter.id} (practice)")
    ET.indent(root)
    note = f"<!-- {_safe(practice).replace('--', '- -')}. -->\n" if practice else ""
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{note}{body}\n'


def _course_suite(chapter: Chapter, report: CheckReport) -> _Suite:
    suite = _Suite(
        f"{chapter.id} course tests on your {chapter.implementation}",
        _classname(chapter, "course_tests"),
        report.timings.get("course_tests", 0.0),
    )
    for name, status in report.course_tests.results.items():
        if status == TestStatus.PASSED:
            suite.cases.append(_Case(name))
            continue
        detail = course_test_outcome(report, name)
        outcome = "failure" if status == TestStatus.FAILED else "error"
        suite.cases.append(_Case(name, outcome, failure_line(detail) or status, status, detail))
    return suite


def _student_suite(chapter: Chapter, report: CheckReport) -> _Suite:
    suite = _Suite(
        f"{chapter.id} your tests ({chapter.student_tests})",
        _classname(chapter, "your_tests"),
        report.timings.get("validation", 0.0),
    )
    text = student_tests_outcome(chapter, report)
    if report.student_tests.valid:
        suite.cases.append(_Case("test_file_is_valid", text=text))
    else:
        suite.cases.append(
            _Case("test_file_is_valid", "failure", "your tests are not valid", "invalid", text)
        )
    return suite


def _mutant_suite(chapter: Chapter, report: CheckReport) -> _Suite:
    suite = _Suite(
        f"{chapter.id} planted mutants against your tests",
        _classname(chapter, "mutants"),
        report.timings.get("mutation", 0.0),
    )
    if report.mutation is None:
        for planted in chapter.mutants:
            suite.cases.append(_Case(mutant_name(chapter, planted), "skipped", NOT_MEASURED))
        return suite
    witnesses = chapter_witnesses(chapter)
    for mutant in report.mutation.mutants:
        name = mutant_name(chapter, mutant)
        text = mutant_outcome(chapter, mutant, witnesses.get(mutant.id))
        if mutant.status == MutantStatus.SURVIVED:
            suite.cases.append(_Case(name, "failure", "survived", "survived", text))
        elif mutant.status == MutantStatus.ERROR:
            suite.cases.append(_Case(name, "error", "not counted", "error", text))
        else:
            suite.cases.append(_Case(name, text=text))
    return suite


def _counts(element: ET.Element, suites: list[_Suite], seconds: float) -> None:
    element.set("tests", str(sum(len(suite.cases) for suite in suites)))
    for outcome, attribute in COUNTED.items():
        element.set(attribute, str(sum(suite.count(outcome) for suite in suites)))
    element.set("time", f"{seconds:.3f}")


def _case(parent: ET.Element, classname: str, case: _Case) -> None:
    element = ET.SubElement(parent, "testcase", classname=classname, name=_safe(case.name))
    if case.outcome == "passed":
        if case.text:
            ET.SubElement(element, "system-out").text = _safe(case.text)
        return
    child = ET.SubElement(element, case.outcome, message=_safe(case.message))
    if case.kind:
        child.set("type", case.kind)
    if case.text:
        child.text = _safe(case.text)


def _classname(chapter: Chapter, part: str) -> str:
    """``ds07.course_tests``: CI tools read dots in a class name as packages."""
    return f"{re.sub(r'[^A-Za-z0-9_]', '', chapter.id)}.{part}"


def _safe(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (escape codes a test printed)."""
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
