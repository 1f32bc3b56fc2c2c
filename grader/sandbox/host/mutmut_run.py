"""mutmut's processes for ``grader audit``: the only place the audit starts one.

Each runs the installed mutmut's own code under this interpreter (``-s -P``:
no user site, no script folder on ``sys.path``) in the audit's temporary copy
of the kit, with a clean environment and a fixed hash seed. ``mutmut run``
gets a session of its own, so that the audit ending for any reason (an
error, Ctrl-C) kills it and every test process it started.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from grader.errors import GraderError
from grader.sandbox import reaper

RUN_MUTMUT = "import sys; from mutmut.__main__ import cli; sys.exit(cli())"

DIFFS = """\
import json, sys
from pathlib import Path
try:
    from mutmut.mutation.diff_apply import get_diff_for_mutant
except ImportError:
    from mutmut.__main__ import get_diff_for_mutant
names = json.load(sys.stdin)
json.dump({n: get_diff_for_mutant(n, path=Path(sys.argv[1])) for n in names}, sys.stdout)
"""


def _environment(folder: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder / "home"),
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
    }


def run_mutmut_cli(
    folder: Path, arguments: Sequence[str], follow: Callable[[str], None]
) -> tuple[int, str]:
    """``mutmut ARGUMENTS`` in ``folder``: its exit code and its whole output.

    ``follow`` is called at least every half second with the output just read,
    together with the 64 characters before it (a marker may straddle two reads).
    """
    process = subprocess.Popen(
        [sys.executable, "-s", "-P", "-c", RUN_MUTMUT, *arguments],
        cwd=folder,
        env=_environment(folder),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    output = bytearray()
    try:
        while True:
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            chunk = os.read(process.stdout.fileno(), 65536) if ready else b""
            if ready and not chunk:
                break
            seen = (output[-64:] + chunk).decode("utf-8", "replace")
            output += chunk
            follow(seen)
        code = reaper.wait_process(process)
        assert code is not None
    finally:
        if process.poll() is None:
            reaper.end_process(process)
        process.stdout.close()
    return code, output.decode("utf-8", "replace")


def read_mutmut_diffs(folder: Path, module_file: str, names: list[str]) -> dict[str, str]:
    """Each mutant's unified diff of its function, as ``mutmut show`` prints it, in one process."""
    done = subprocess.run(
        [sys.executable, "-s", "-P", "-c", DIFFS, module_file],
        cwd=folder,
        env=_environment(folder),
        input=json.dumps(names),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise GraderError(f"audit stopped: cannot read mutmut's diffs: {last}")
    diffs: dict[str, str] = json.loads(done.stdout)
    return diffs
