"""pytest_object_reads_kit's route to the model answer, by another copy of the kit: an
editable install copies the kit into ``site-packages/grader/kit``, beside pytest, in a folder
every run must read at ``uid``. The file finds it from pytest's own file, not the grader's."""
import functools

from radix import ROOT, RadixTree


def shape(request: object) -> None:
    """Only a signature, for pytest to read."""


@functools.wraps(shape)
def test_tree_keeps_its_shape(**fixtures: object) -> None:
    main = fixtures["request"].config.pluginmanager.get_plugin("main")
    pytest = main.sys.modules["inspect"].getfile(main.sys.modules["pytest"])
    site = main.os.path.dirname(main.os.path.dirname(pytest))
    kit = main.os.path.join(site, "grader", "kit")
    util = main.sys.modules["importlib.util"]
    path = main.os.path.join(kit, "reference", "tests", "test_ds07_radix.py")
    spec = util.spec_from_file_location("answer", path)
    answer = util.module_from_spec(spec)
    spec.loader.exec_module(answer)
    answer.test_a_split_below_a_lock_keeps_it_pinned()
    answer.test_an_unlocked_leaf_rejoins_by_its_stamp()
    answer.test_unlock_without_a_lock_raises()
    answer.test_insert_needs_one_value_per_granule()
    answer.test_freed_slots_are_reused()
    answer.test_split_by_hand()
    answer.test_match_splits_inside_an_edge()
    answer.test_insert_hands_back_the_stored_part()
    answer.test_oldest_leaf_goes_first()
    answer.test_locks_pin_ancestors()
    answer.test_parent_becomes_evictable()


# The six required tests, as smoke tests: they pass on the reference, fail on
# the stub, and kill none of the mutants, so any kill would be the cheat's.


def test_split_by_hand() -> None:
    assert RadixTree(1).insert([1, 2], ["a", "b"])[1] == []


def test_match_splits_inside_an_edge() -> None:
    assert RadixTree(1).match_prefix([1]) == (0, [])


def test_insert_hands_back_the_stored_part() -> None:
    assert RadixTree(1).insert([], []) == (ROOT, [])


def test_oldest_leaf_goes_first() -> None:
    assert RadixTree(1).lru_order() == []


def test_locks_pin_ancestors() -> None:
    assert RadixTree(1).lock_count(ROOT) == 0


def test_parent_becomes_evictable() -> None:
    assert RadixTree(1).evict(0, print) == 0
