"""The kit's copy of the map the chapter needs (ds.05's), against a plain ``dict``.

The reference tree keys its children in this map, so every grade rests on
it: a hypothesis state machine drives it and a ``dict`` side by side through
sets, replacements, removals (present and absent keys), lookups and
iteration, on keys drawn from a small alphabet so that probe runs collide,
wrap around the end of the slots and shift back, and checks every invariant
after every step. A map with a wrong displacement rule fails it.
"""

from __future__ import annotations

import doctest
import importlib.util
from types import ModuleType
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from grader.inputs.catalog import load_chapter

CHAPTER = load_chapter()
(NEED,) = CHAPTER.needs
SOURCE = NEED.reference.read_text(encoding="utf-8")


def module_from(source: str, name: str) -> ModuleType:
    """Execute ``source`` as a module named ``name``, outside ``sys.modules``."""
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


KIT_MAP = module_from(SOURCE, "kit_map")
WRONG_DISPLACEMENT = SOURCE.replace(
    "if self._dist[slot] < dist:  # the resident is closer to home: it gives way",
    "if self._dist[slot] > dist:  # the resident is closer to home: it gives way",
)
"""A map that makes the poorer entry give way, not the richer: lookups then stop too soon."""

KEYS = st.tuples(st.integers(0, 5), st.integers(0, 3)) | st.tuples(st.integers(0, 40))
"""About 65 keys: enough to pass several resizes, few enough that keys come back."""


def machine_for(module: ModuleType) -> type[RuleBasedStateMachine]:
    class AgainstADict(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.map: Any = getattr(module, NEED.interface[0])()
            self.model: dict[tuple[int, ...], int] = {}

        @rule(key=KEYS, value=st.integers())
        def set(self, key: tuple[int, ...], value: int) -> None:
            self.map[key] = value
            self.model[key] = value

        @rule(key=KEYS)
        def remove(self, key: tuple[int, ...]) -> None:
            if key in self.model:
                del self.map[key]
                del self.model[key]
            else:
                with pytest.raises(KeyError):
                    del self.map[key]

        @precondition(lambda self: self.model)
        @rule(data=st.data())
        def remove_a_stored_key(self, data: st.DataObject) -> None:
            key = data.draw(st.sampled_from(sorted(self.model)))
            del self.map[key]
            del self.model[key]

        @rule(key=KEYS)
        def look_up(self, key: tuple[int, ...]) -> None:
            assert self.map.get(key) == self.model.get(key)
            assert self.map.get(key, -1) == self.model.get(key, -1)
            assert (key in self.map) == (key in self.model)
            if key in self.model:
                assert self.map[key] == self.model[key]
            else:
                with pytest.raises(KeyError):
                    self.map[key]

        @invariant()
        def agrees(self) -> None:
            self.map._check()
            assert len(self.map) == len(self.model)
            assert bool(self.map) == bool(self.model)
            assert sorted(self.map) == sorted(self.model)
            assert list(self.map.keys()) == list(self.map)
            assert [self.map[k] for k in self.map] == list(self.map.values())
            assert list(zip(self.map, self.map.values(), strict=True)) == list(self.map.items())
            assert dict(self.map.items()) == self.model

    return AgainstADict


SETTINGS = settings(
    max_examples=60,
    stateful_step_count=60,
    derandomize=True,
    database=None,
    deadline=None,  # a loaded machine slows a step, never changes its outcome
    suppress_health_check=[HealthCheck.too_slow],
)
TestKitMapAgainstADict = machine_for(KIT_MAP).TestCase
TestKitMapAgainstADict.settings = SETTINGS


def test_a_wrong_displacement_fails_against_a_dict() -> None:
    """The test above can fail: a map whose insert displaces the wrong entry loses keys."""
    assert WRONG_DISPLACEMENT != SOURCE
    broken = machine_for(module_from(WRONG_DISPLACEMENT, "broken_map")).TestCase
    broken.settings = settings(SETTINGS, phases=[Phase.generate])  # no need to shrink it
    result = broken("runTest").run()
    assert result is not None and (result.failures or result.errors)


def test_the_docstring_examples_pass() -> None:
    finder = doctest.DocTestFinder()
    tests = [t for t in finder.find(KIT_MAP) if t.examples]
    assert tests, "the map's docstrings have no examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_iteration_goes_in_slot_order_whatever_the_hash_seed() -> None:
    """Int tuples hash the same under every seed, so the order is the keys' and the history's:
    the same in every run of a grade."""
    first, second = KIT_MAP.RobinHoodMap(), KIT_MAP.RobinHoodMap()
    for key in [(3,), (11,), (19,), (2, 5), (7,)]:
        first[key] = second[key] = len(first)
    del first[(11,)], second[(11,)]
    assert list(first) == list(second)
    assert list(first) == [k for k in first._keys if k is not None]


def test_a_broken_invariant_is_named_with_the_slots() -> None:
    broken = KIT_MAP.RobinHoodMap()
    broken[(1,)] = 1
    slot = broken._keys.index((1,))
    broken._dist[slot] += 1
    with pytest.raises(AssertionError, match=r"invariant 2 \(free slots empty, distances true\)"):
        broken._check()
