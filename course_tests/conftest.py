"""Pick the radix.py that ``import radix`` finds in the course tests.

Order: ``--impl PATH`` (a radix.py file or a folder holding one), then the
environment variable ``RADIX_IMPL``, then the kit's own reference. What that
radix.py imports of an earlier chapter (ds.05's map) comes from its own
folder, else from the kit's reference folder, which follows it on the path
(as ``grader check --ref-deps`` gives the kit's). The grader
does not use this file (it runs with ``--noconftest`` and sets sys.path
itself), so the tests rely on nothing defined here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent.parent / "reference" / "radix.py"
IMPL = pytest.StashKey[Path]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--impl",
        metavar="PATH",
        help="radix.py to test, or a folder holding one (default: $RADIX_IMPL, else the reference)",
    )


def pytest_configure(config: pytest.Config) -> None:
    chosen = config.getoption("--impl") or os.environ.get("RADIX_IMPL") or REFERENCE
    path = Path(chosen).expanduser().resolve()
    if path.is_dir():
        path = path / "radix.py"
    if path.name != "radix.py" or not path.is_file():
        raise pytest.UsageError(f"no radix.py implementation at {path}")
    config.stash[IMPL] = path
    sys.path[:0] = list(dict.fromkeys([str(path.parent), str(REFERENCE.parent)]))


def pytest_report_header(config: pytest.Config) -> str:
    return f"radix implementation: {config.stash[IMPL]}"
