"""Walks the machine's /tmp (where other checks keep their runs' folders, a classmate's test
file among them) and /autograder/source (where Gradescope's bundle keeps the staff checkout:
model answer, mutants, witnesses) and prints what it finds, a test file's opening lines
included, in its failure message, which the student's report shows (issue 33, class 2).
It reaches ``os`` as pytest_object_reads_kit does, so it passes the static check."""
import functools

from radix import ROOT, RadixTree


def shape(request: object) -> None:
    """Only a signature, for pytest to read."""


@functools.wraps(shape)
def test_what_the_machine_holds(**fixtures: object) -> None:
    os = fixtures["request"].config.pluginmanager.get_plugin("main").os
    found = {}
    for top in ("/tmp", "/autograder/source"):
        if not os.path.isdir(top):
            found[top] = None
            continue
        names = []
        for folder, _, files in os.walk(top):
            for name in files:
                path = os.path.join(folder, name)
                names.append(path)
                if name.startswith("test_") and name.endswith(".py") and len(names) < 50:
                    try:
                        handle = os.open(path, os.O_RDONLY)
                        names.append(os.read(handle, 200).decode(errors="replace"))
                        os.close(handle)
                    except OSError:
                        pass
            if len(names) > 50:
                break
        found[top] = names[:50]
    assert False, f"found {found}"


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
