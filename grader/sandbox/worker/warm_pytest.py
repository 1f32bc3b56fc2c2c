"""pytest as every run's fork finds it: imported, configured once, and its reports cheaper.

A run's test process calls ``pytest.main`` afresh. What costs the same in
every run is done once here, in the warm worker, before the fork server is
made (``warm_up``), so every fork starts from it:

- one small session, a test that passes and one that fails, imports what pytest imports
  lazily and makes the first failure's report of every run cheap (``WARM_UP_TESTS``);
- pytest's plugin manager, its own plugins registered and their options
  declared, is made once (13 ms a run) and handed to the run's
  ``pytest.main`` in place of a new one (``_take_prepared``);
- a failure's report parses its file's source once a run, not once per
  failure (``_statement_range_parsing_once``): a mutant fails many tests of
  one file, and those parses were half of such a run's time;
- a plugin the warm-up's session found to hold no fixture (most of pytest's
  own, read name by name) is not read again at each session's start
  (``_plugin_registered_reading_once``): 4 to 5 ms a run.

Each is pytest's own work done earlier or once, so a run sees what a plain
``pytest.main`` would give it.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import shutil
import tempfile
import types
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from _pytest import config as pytest_config
from _pytest._code import code as pytest_code
from _pytest._code import source as pytest_source
from _pytest._code.source import Source
from _pytest.fixtures import FixtureManager

UNUSED_PLUGINS = (
    *("cacheprovider", "stepwise", "randomly", "unraisableexception", "threadexception"),
    *("doctest", "junitxml", "pastebin", "legacypath", "tmpdir", "logging", "monkeypatch"),
    *("recwarn", "faulthandler", "setuponly", "setupplan", "python_path"),
)
"""pytest's plugins no graded test file needs; leaving them out halves a short run's cost
(measured: 49 ms to 22 ms for the model answer), and the fixtures they bring are refused
by the static check anyway. ``debugging`` stays in: pytest's unittest runner reads the
``trace`` and ``usepdb`` options it registers, so without it every ``unittest.TestCase``
test (hypothesis's ``Machine.TestCase`` too) errors; it costs under a millisecond a run."""

PYTEST_ARGS = (
    *("-c", "pytest.ini", "--rootdir", ".", "--noconftest", "--import-mode=importlib"),
    *(arg for plugin in UNUSED_PLUGINS for arg in ("-p", f"no:{plugin}")),
    *("--tb=short", "-q", "-W", "ignore"),
)
"""Run from the run's folder: only the named file is collected, under the grader's own config."""

WARM_UP_TESTS = """\
def test_passes():
    assert True


def test_fails():
    assert [1] == [2]
"""
"""The warm-up's session: a failure's report too, since most mutant runs end in one, and the
first report of a process is slow (``inspect`` maps every loaded module to its file once)."""

PROG = "pytest.main()"
"""The program name ``pytest.main`` gives its configuration."""

_new_config = pytest_config.get_config
_statement_range = pytest_source.getstatementrange_ast
_prepared: list[pytest.Config] = []
_parsed_sources: dict[str, ast.AST] = {}
_plugin_registered = FixtureManager.pytest_plugin_registered
_fixtureless: set[object] = set()
"""The plugins (modules, or the classes of plugin objects) the warm-up found no fixture in."""


def warm_up(scratch: Path) -> None:
    """Run one small session in a folder under ``scratch``, then make the configuration
    the runs start from and make failure reports parse once; call it once, before forking."""
    folder = Path(tempfile.mkdtemp(prefix="warm-", dir=scratch))
    learns = hasattr(FixtureManager, "_register_fixture")  # pytest 8.1 and later
    if learns:
        FixtureManager.pytest_plugin_registered = _plugin_registered_learning  # type: ignore[method-assign]
    try:
        (folder / "test_warm_up.py").write_text(WARM_UP_TESTS)
        (folder / "pytest.ini").write_text("[pytest]\n")
        with contextlib.chdir(folder), contextlib.redirect_stdout(io.StringIO()):
            pytest.main(["test_warm_up.py", *PYTEST_ARGS], plugins=[])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if learns:
            FixtureManager.pytest_plugin_registered = _plugin_registered_reading_once  # type: ignore[method-assign]
    _prepared.append(_new_config(PYTEST_ARGS, prog=PROG))
    pytest_config.get_config = _take_prepared
    pytest_code.getstatementrange_ast = _statement_range_parsing_once  # type: ignore[attr-defined]


def _plugin_key(plugin: object) -> object:
    """What decides whether a plugin holds fixtures: a module or class itself, else its class
    (pytest looks a plugin object's fixtures up on its class)."""
    return plugin if isinstance(plugin, (type, types.ModuleType)) else type(plugin)


@functools.wraps(_plugin_registered)
def _plugin_registered_learning(self: FixtureManager, plugin: object, plugin_name: str) -> None:
    """pytest's own, noting each plugin whose reading registered no fixture and gave pytest
    nothing to warn of (a warning would stop it there: this session is thrown away).

    Other warnings are left as they are: recording them all made fresh workers' heaps
    differ (``test_every_fresh_worker_starts_its_runs_from_the_same_heap``)."""
    registered: list[object] = []
    register = self._register_fixture

    def counted(**fixture: Any) -> None:
        registered.append(fixture)
        register(**fixture)

    self._register_fixture = counted  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pytest.PytestWarning)
            _plugin_registered(self, plugin, plugin_name)
    except pytest.PytestWarning:
        return
    finally:
        del self._register_fixture
    if not registered:
        _fixtureless.add(_plugin_key(plugin))


@functools.wraps(_plugin_registered)
def _plugin_registered_reading_once(self: FixtureManager, plugin: object, plugin_name: str) -> None:
    """pytest's own, but for a plugin the warm-up found no fixture in."""
    if _plugin_key(plugin) not in _fixtureless:
        _plugin_registered(self, plugin, plugin_name)


def _take_prepared(
    args: Iterable[str] | None = None,
    plugins: Sequence[Any] | None = None,
    *,
    prog: str | None = None,
) -> pytest.Config:
    """pytest's ``get_config``: for a run's session (``PYTEST_ARGS`` last) the one made
    before the fork, its invocation made this one's; a new one for any later session."""
    arguments = tuple(args or ())
    if not _prepared or arguments[-len(PYTEST_ARGS) :] != PYTEST_ARGS or prog != PROG:
        return _new_config(args, plugins, prog=prog)
    config = _prepared.pop()
    config.invocation_params = pytest.Config.InvocationParams(
        args=arguments, plugins=plugins, dir=Path.cwd()
    )
    return config


def _statement_range_parsing_once(
    lineno: int, source: Source, assertion: bool = False, astnode: ast.AST | None = None
) -> tuple[ast.AST, int, int]:
    """pytest's ``getstatementrange_ast``, each source's tree parsed once and kept."""
    text = "" if astnode is not None else str(source)
    found = _statement_range(lineno, source, assertion, astnode or _parsed_sources.get(text))
    if astnode is None:
        _parsed_sources.setdefault(text, found[0])
    return found
