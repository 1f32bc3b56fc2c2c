"""The log line a long command writes per student when no terminal shows its bar."""

from __future__ import annotations

import io

from grader.cli.progress import StepLog, line
from grader.results.batch import Step


def test_a_line_says_who_what_how_long_and_the_time_left() -> None:
    step = Step(3, 41, "alice", "pass, 100 points", 48.25)
    assert line("batch", step, 120.0, 3) == (
        "batch 3/41 alice: pass, 100 points (48.2 s); about 25 min left"
    )
    kept = Step(1, 4, "bob", "kept: graded before", None)
    assert line("batch", kept, 0.1, 0) == "batch 1/4 bob: kept: graded before"
    last = Step(4, 4, "cy", "added", None)
    assert line("merge", last, 7200.0, 0) == "merge 4/4 cy: added; all done in 2.0 h"


def test_a_name_cannot_forge_a_line() -> None:
    """A folder named with a line break, or a message holding one, stays on its own line."""
    step = Step(1, 2, "eve\nbatch 2/2 amy: pass", "fail\r, 0 points", 1.0)
    text = line("batch", step, 1.0, 1)
    assert "\n" not in text and "\r" not in text
    assert text.startswith("batch 1/2 eve\\nbatch 2/2 amy: pass: fail\\r, 0 points")


def test_without_a_terminal_each_step_is_written_at_once() -> None:
    stream = io.StringIO()
    with StepLog("regrade", stream) as log:
        log(Step(1, 2, "amy", "pass -> pass", 2.0))
        assert stream.getvalue().startswith("regrade 1/2 amy: pass -> pass (2.0 s); about ")
        log(Step(2, 2, "bob", "fail -> fail", 2.0))
    assert len(stream.getvalue().splitlines()) == 2
