"""Issue 25: what the worker does once for every run's pytest changes nothing a run sees."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from _pytest._code import source as pytest_source
from _pytest._code.source import Source

from grader.sandbox.worker import warm_pytest

TESTS = """\
import pytest


@pytest.fixture
def two():
    return 2


def helper(value):
    assert value == 2, "not two"


def test_passes(two, capsys, pytestconfig):
    print(two)
    assert capsys.readouterr().out == "2\\n" and pytestconfig is not None


def test_fails_in_a_helper():
    helper(3)


def test_fails_here():
    items = [1, 2]
    assert items == [1, 2, 3]
"""

SESSION = """
import json, os, sys
from pathlib import Path
import pytest
from grader.sandbox.worker import warm_pytest

folder = Path(sys.argv[1])
if sys.argv[2] == "warm":
    warm_pytest.warm_up(folder)
prepared = warm_pytest._prepared[0] if warm_pytest._prepared else None
os.chdir(folder / "run")
FIXTURES = ["two", "capsys", "capfd", "capsysbinary", "capfdbinary", "pytestconfig", "recwarn"]


class Keep:
    def __init__(self):
        self.seen = {}

    def pytest_configure(self, config):
        self.seen["prepared"] = config is prepared
        self.seen["invoked in"] = str(config.invocation_params.dir)
        self.seen["rootdir"] = str(config.rootpath)

    def pytest_collection_finish(self, session):
        item = session.items[0]
        defined = [name for name in FIXTURES if session._fixturemanager.getfixturedefs(name, item)]
        self.seen["fixtures"] = defined
        self.seen["plugins read once"] = len(warm_pytest._fixtureless)

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.seen[report.nodeid] = [report.outcome, report.longreprtext]


sessions = []
for _ in range(2):
    keep = Keep()
    pytest.main(["tests/test_file.py", *warm_pytest.PYTEST_ARGS], plugins=[keep])
    sessions.append(keep.seen)
print("SESSIONS" + json.dumps(sessions))
"""


def sessions(tmp_path: Path, mode: str) -> list[dict[str, Any]]:
    """Two ``pytest.main`` sessions of ``TESTS`` in a fresh interpreter, after ``warm_up``
    (``mode`` "warm") or not ("plain"): what each saw."""
    run = tmp_path / mode / "run"
    (run / "tests").mkdir(parents=True)
    (run / "tests" / "test_file.py").write_text(TESTS, encoding="utf-8")
    (run / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    command = [sys.executable, "-c", SESSION, str(run.parent), mode]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    marked = [line for line in done.stdout.splitlines() if line.startswith("SESSIONS")]
    assert marked, done.stdout + done.stderr
    found: list[dict[str, Any]] = json.loads(marked[-1].removeprefix("SESSIONS"))
    for seen in found:
        assert seen.pop("invoked in") == seen.pop("rootdir") == str(run)
    return found


def test_a_run_s_session_takes_the_configuration_made_before_the_fork(tmp_path: Path) -> None:
    """The first session after ``warm_up`` takes the configuration made there, any later one
    a new one, and both see exactly what sessions in a process never warmed up see: the
    same outcomes, the same failure reports, the same fixtures (though pytest's plugins
    without any are not read again), the run's own folder as their root."""
    warm = sessions(tmp_path, "warm")
    plain = sessions(tmp_path, "plain")
    assert [seen.pop("prepared") for seen in warm] == [True, False]
    assert [seen.pop("prepared") for seen in plain] == [False, False]
    assert [seen.pop("plugins read once") > 10 for seen in warm] == [True, True]  # the saving
    assert [seen.pop("plugins read once") for seen in plain] == [0, 0]
    assert warm == plain
    fixtures = ["two", "capsys", "capfd", "capsysbinary", "capfdbinary", "pytestconfig"]
    assert warm[0]["fixtures"] == fixtures
    reports = [seen for name, seen in warm[0].items() if "::" in name]
    assert [seen[0] for seen in reports] == ["passed", "failed", "failed"]
    assert "not two" in str(warm[0]["tests/test_file.py::test_fails_in_a_helper"])


def test_a_failure_report_parses_each_source_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The statement range of every line is pytest's own, and the whole source is parsed
    for the first of them only."""
    lines = range(len(TESTS.splitlines()))
    expected = [pytest_source.getstatementrange_ast(line, Source(TESTS))[1:] for line in lines]
    parses: list[str] = []
    real_parse = ast.parse

    def counted_parse(text: str, *args: object, **kwargs: object) -> ast.AST:
        parses.append(text)
        return real_parse(text, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(ast, "parse", counted_parse)
    monkeypatch.setattr(warm_pytest, "_parsed_sources", {})
    source = Source(TESTS)
    found = [warm_pytest._statement_range_parsing_once(line, source)[1:] for line in lines]
    assert found == expected
    assert parses == [str(source)]
    other = Source("x = 1\n")
    warm_pytest._statement_range_parsing_once(0, other)
    assert parses == [str(source), str(other)]


def test_a_plugin_is_read_again_if_it_registered_a_fixture_or_warned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up marks a plugin as holding no fixture only when pytest's reading of it
    registered none and warned of nothing; a marked plugin is not read again, nor another
    object of its class, nor the class (pytest looks an object's fixtures up on its class)."""

    class Manager:
        def __init__(self) -> None:
            self.fixtures: list[object] = []

        def _register_fixture(self, **fixture: object) -> None:
            self.fixtures.append(fixture)

    class Quiet:
        pass

    class Loud:
        pass

    def reading(manager: Manager, plugin: object, plugin_name: str) -> None:
        if plugin_name == "holds a fixture":
            manager._register_fixture(name="two")
        elif plugin_name == "warns":
            warnings.warn(pytest.PytestWarning("a fixture behind a staticmethod"), stacklevel=1)

    monkeypatch.setattr(warm_pytest, "_plugin_registered", reading)
    monkeypatch.setattr(warm_pytest, "_fixtureless", set())
    manager = Manager()
    plugins = {"holds a fixture": object(), "warns": Loud, "nothing": Quiet()}
    for name, plugin in plugins.items():
        warm_pytest._plugin_registered_learning(manager, plugin, name)  # type: ignore[arg-type]
    assert manager.fixtures == [{"name": "two"}]
    assert warm_pytest._fixtureless == {Quiet}  # the class of the plugin object that held none
    assert "_register_fixture" not in vars(manager)

    read: list[str] = []
    monkeypatch.setattr(warm_pytest, "_plugin_registered", lambda m, p, name: read.append(name))
    others = [("warns again", Loud), ("another", Quiet()), ("its class", Quiet), ("new", object())]
    for name, plugin in others:
        warm_pytest._plugin_registered_reading_once(manager, plugin, name)  # type: ignore[arg-type]
    assert read == ["warns again", "new"]
