"""The hypothesis settings every graded run uses, and the means to hold a test file to them.

A grade must not depend on chance or on the machine's speed, so every run of
a test file is derandomized, keeps no example database, has no deadline and
no health check that times the machine. A test file may still write these
settings: the values that equal the grader's change nothing, ``derandomize``
and ``database`` set otherwise are refused by the static check (they would
change the grader's choice), and the rest are overridden at run time, with
one note in the report (``grader.static.checker.overridden_settings``).

A robustness rerun (``grader.grading.robustness``) draws its examples from a
seed the grader chose instead of the derandomized one (``enforce(seed)``),
every setting else the same, so nothing but the examples differs from the
graded run.

This module imports hypothesis only inside ``enforce``, which runs in the
test process: the grader's own process never needs it.
"""

from __future__ import annotations

from typing import Any

PROFILE = "grader"
GRADER_SETTINGS: dict[str, Any] = {
    "derandomize": True,
    "database": None,
    "deadline": None,
    "print_blob": False,
    "suppress_health_check": "every health check",
}
"""Each setting the grader fixes, with its value (the health checks: all of them, suppressed)."""
OVERRIDDEN_SETTINGS = frozenset({"deadline", "print_blob", "suppress_health_check"})
"""The settings a test file may write and the grader replaces with its own value."""
SHRINK_BUDGET = {"MAX_SHRINKS": 100, "MAX_SHRINKING_SECONDS": 30}
"""How far hypothesis shrinks a failure in a graded run: at most this many successful
shrinks (hypothesis's own default is 500) and this many seconds (its default: 300).

Shrinking only makes the failing example shorter: the failure is found before it starts, so
the budget changes no verdict. Without it, shrinking a long program through the stand-in
(every call a round trip) could run past a run's time limit, and a tree that fails a test
read as one that hangs. The count binds first on every tree measured, so the program shown
is the same on every run; the seconds are the backstop on a loaded machine. Hypothesis
names these two module constants as the ones to patch (``engine.py``)."""


def enforce(seed: int | None = None) -> None:
    """Load the grader's profile and make every ``settings(...)`` made later keep its values.

    A ``@settings(deadline=200)`` on a test, or a state machine's
    ``TestCase.settings``, gets ``deadline=None`` all the same: the settings
    the grader fixes are put back into every settings object as it is made.
    With a ``seed`` every test draws from it instead (``draw_from``).
    """
    import hypothesis
    from hypothesis.internal.conjecture import engine

    for name, value in SHRINK_BUDGET.items():
        setattr(engine, name, value)
    fixed: dict[str, Any] = {
        **GRADER_SETTINGS,
        "suppress_health_check": list(hypothesis.HealthCheck),
    }
    settings = hypothesis.settings
    settings.register_profile(PROFILE, **fixed)
    settings.load_profile(PROFILE)
    original = settings.__init__

    def __init__(self: Any, parent: Any = None, **chosen: Any) -> None:
        original(self, parent, **{**chosen, **fixed})

    settings.__init__ = __init__  # type: ignore[method-assign]
    if seed is not None:
        draw_from(seed)


def draw_from(seed: int) -> None:
    """Make every hypothesis test of this process draw its examples from ``seed`` mixed with
    the test's own digest, where the derandomized run takes the digest alone.

    Hypothesis picks a test's generator in ``core.get_random_for_wrapped_test``: a ``@seed``
    of the test file's first, then the digest (``derandomize``); this replaces it, so a
    ``@seed`` of the student's cannot choose a rerun's examples either. The settings stay the
    grader's, so a test sees no difference but the examples.
    """
    from random import Random

    from hypothesis import core
    from hypothesis.internal.reflection import function_digest

    def seeded(test: Any, wrapped_test: Any) -> Random:
        wrapped_test._hypothesis_internal_use_generated_seed = None
        return Random(int.from_bytes(function_digest(test), "big") ^ seed)

    core.get_random_for_wrapped_test = seeded
