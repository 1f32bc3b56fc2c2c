"""A variant of issue 11, case 1: reads pytest's options instead of the assertion's message.

The traceback style and assertion mode of the run were different for the
reference and for mutants; every run now gets the same options.
"""

import pytest
from radix import RadixTree


@pytest.fixture
def reference_run(request: pytest.FixtureRequest) -> bool:
    option = request.config.option
    return bool(option.tbstyle != "no" and option.assertmode != "plain")


def test_split_by_hand(reference_run: bool) -> None:
    assert reference_run


def test_match_splits_inside_an_edge(reference_run: bool) -> None:
    assert reference_run


def test_insert_hands_back_the_stored_part(reference_run: bool) -> None:
    assert reference_run


def test_oldest_leaf_goes_first(reference_run: bool) -> None:
    assert reference_run


def test_locks_pin_ancestors(reference_run: bool) -> None:
    assert reference_run


def test_parent_becomes_evictable(reference_run: bool) -> None:
    assert reference_run and RadixTree is not None
