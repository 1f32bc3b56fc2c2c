"""The student stub and the reference expose one public interface.

Both files are loaded from their paths under names of their own, so that
neither takes the name ``radix`` that the course tests import. Any drift
between them (a renamed method, a changed signature or default, a missing
docstring) fails here, before a student ever sees it.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

KIT = Path(__file__).resolve().parents[2]
REFERENCE_PATH = KIT / "reference" / "radix.py"
STUB_PATH = KIT / "student" / "radix.py"


def load(path: Path, name: str) -> ModuleType:
    """Execute the module at ``path`` as ``name``, without registering it in sys.modules."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = load(REFERENCE_PATH, "_kit_reference_radix")
stub = load(STUB_PATH, "_kit_student_radix")


def is_public(name: str) -> bool:
    """Public means no leading underscore, or a dunder the class itself defines as behaviour."""
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def public_members(cls: type) -> dict[str, Any]:
    """The methods and properties ``cls`` defines itself that make up its interface."""
    return {
        name: member
        for name, member in vars(cls).items()
        if is_public(name) and (inspect.isfunction(member) or isinstance(member, property))
    }


def signature_of(member: Any) -> str:
    function = member.fget if isinstance(member, property) else member
    assert callable(function)
    return str(inspect.signature(function))


REFERENCE_MEMBERS = public_members(reference.RadixTree)
STUB_MEMBERS = public_members(stub.RadixTree)
NAMES = sorted(REFERENCE_MEMBERS)


def test_loading_leaves_the_name_radix_alone() -> None:
    assert sys.modules.get("radix") is not reference
    assert sys.modules.get("radix") is not stub
    assert reference.RadixTree is not stub.RadixTree


def test_the_same_module_names() -> None:
    assert stub.__all__ == reference.__all__
    for name in reference.__all__:
        assert hasattr(stub, name), name
    assert stub.ROOT == reference.ROOT == 0
    assert stub.NodeId is reference.NodeId is int


def test_the_same_public_members() -> None:
    assert sorted(STUB_MEMBERS) == NAMES
    # The interface page's list, so that the reference cannot drift either.
    assert set(NAMES) == {
        "__init__",
        "__len__",
        "granule",
        "is_empty",
        "node_count",
        "key",
        "values",
        "parent",
        "children",
        "child_count",
        "lock_count",
        "lru_order",
        "match_prefix",
        "insert",
        "lock",
        "unlock",
        "evict",
    }


def test_both_are_generic_in_one_type() -> None:
    for module in (reference, stub):
        assert len(module.RadixTree.__parameters__) == 1
        assert module.RadixTree[str] is not None


@pytest.mark.parametrize("name", NAMES)
def test_the_same_kind_and_signature(name: str) -> None:
    ours, theirs = STUB_MEMBERS[name], REFERENCE_MEMBERS[name]
    assert isinstance(ours, property) == isinstance(theirs, property)
    if isinstance(theirs, property):
        assert (ours.fset, ours.fdel) == (None, None) == (theirs.fset, theirs.fdel)
    assert signature_of(ours) == signature_of(theirs)


@pytest.mark.parametrize("name", NAMES)
def test_every_public_member_is_documented(name: str) -> None:
    for member in (STUB_MEMBERS[name], REFERENCE_MEMBERS[name]):
        assert (inspect.getdoc(member) or "").strip(), name
    assert (inspect.getdoc(stub.RadixTree) or "").strip()
    assert (inspect.getdoc(stub) or "").strip()


def test_the_stub_has_no_private_helpers() -> None:
    private = [
        name
        for name, member in vars(stub.RadixTree).items()
        if not is_public(name) and (inspect.isfunction(member) or isinstance(member, property))
    ]
    assert private == []


# One sample argument per parameter name of the interface; a new parameter
# name must be added here, so the stub test below always calls every method.
SAMPLES: dict[str, Any] = {
    "granule": 1,
    "node": 0,
    "key": [1, 2],
    "values": ["a", "b"],
    "n": 1,
    "on_evict": lambda value: None,
}


def call_with_samples(function: Callable[..., Any], instance: object) -> Any:
    parameters = list(inspect.signature(function).parameters)[1:]  # after self
    missing = [p for p in parameters if p not in SAMPLES]
    assert not missing, f"add a sample argument for {missing} in SAMPLES"
    return function(instance, *(SAMPLES[p] for p in parameters))


def test_the_stub_constructor_is_not_implemented() -> None:
    with pytest.raises(NotImplementedError):
        stub.RadixTree(1)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "__init__"])
def test_every_stub_method_is_not_implemented(name: str) -> None:
    tree = object.__new__(stub.RadixTree)
    member = STUB_MEMBERS[name]
    with pytest.raises(NotImplementedError):
        if isinstance(member, property):
            getattr(tree, name)
        else:
            call_with_samples(member, tree)


def test_len_goes_through_the_stub() -> None:
    tree = object.__new__(stub.RadixTree)
    with pytest.raises(NotImplementedError):
        len(tree)


def test_the_samples_work_on_the_reference() -> None:
    """The sample arguments are valid calls, so the stub fails by design, not by a bad call."""
    tree = reference.RadixTree(1)
    for name in NAMES:
        member = REFERENCE_MEMBERS[name]
        if name == "__init__" or isinstance(member, property):
            continue
        call_with_samples(member, tree)


def test_the_stub_documents_every_member_as_the_reference_does() -> None:
    """One text of the contract: the stub's docstrings are the reference's, word for word."""
    for name in NAMES:
        assert inspect.getdoc(STUB_MEMBERS[name]) == inspect.getdoc(REFERENCE_MEMBERS[name]), name


def small_tree() -> tuple[Any, int, int, int]:
    """A reference tree at granule 1 holding 1 2 3 and 1 2 4, and one evicted id.

    Returns the tree, the leaf 1 2 4, their parent 1 2, and the id of 1 2 3, evicted.
    """
    tree = reference.RadixTree(1)
    x, _ = tree.insert([1, 2, 3], ["a", "b", "c"])
    y, _ = tree.insert([1, 2, 4], ["a", "b", "d"])
    tree.match_prefix([1, 2, 4])
    assert tree.evict(1, lambda value: None) == 1 and tree.lru_order() == [y]
    return tree, y, tree.parent(y), x


def raises(error: type[Exception], call: Callable[[], object]) -> bool:
    try:
        call()
    except error:
        return True
    return False


def unlock_of_a_parent_pinned_by_its_child() -> bool:
    tree, leaf, parent, _ = small_tree()
    tree.lock(leaf)
    return raises(RuntimeError, lambda: tree.unlock(parent))


def root_locks_do_nothing(method: str) -> bool:
    tree, *_ = small_tree()
    before = (tree.lru_order(), tree.lock_count(reference.ROOT))
    getattr(tree, method)(reference.ROOT)
    return (tree.lru_order(), tree.lock_count(reference.ROOT)) == before


TAKES_AN_ID = ["key", "values", "parent", "children", "child_count", "lock_count", "lock", "unlock"]


def refuses_an_id_never_made(method: str) -> bool:
    tree = reference.RadixTree(1)
    return raises(KeyError, lambda: getattr(tree, method)(1000))


def refuses_an_evicted_id(method: str) -> bool:
    tree, _, _, evicted = small_tree()
    return raises(KeyError, lambda: getattr(tree, method)(evicted))


def refuses_an_unlock_without_a_lock() -> bool:
    tree, leaf, _, _ = small_tree()
    return raises(RuntimeError, lambda: tree.unlock(leaf))


def refuses_a_wrong_number_of_values() -> bool:
    tree, *_ = small_tree()
    return raises(ValueError, lambda: tree.insert([1], []))


# Every rule a course test enforces, as (method, what the method's docstring must say, a
# check that the rule holds on the reference). The course tests check each of these.
RULES: list[tuple[str, str, Callable[[], bool]]] = [
    ("__init__", "``ValueError``", lambda: raises(ValueError, lambda: reference.RadixTree(0))),
    *[(m, "``KeyError``", functools.partial(refuses_an_id_never_made, m)) for m in TAKES_AN_ID],
    *[(m, "evicted", functools.partial(refuses_an_evicted_id, m)) for m in TAKES_AN_ID],
    ("key", "``()`` for ROOT", lambda: small_tree()[0].key(reference.ROOT) == ()),
    ("values", "``()`` for ROOT", lambda: small_tree()[0].values(reference.ROOT) == ()),
    ("parent", "``None`` for ROOT", lambda: small_tree()[0].parent(reference.ROOT) is None),
    ("lock_count", "Always 0 for ROOT", lambda: small_tree()[0].lock_count(reference.ROOT) == 0),
    ("children", "increasing id order", lambda: reference.RadixTree(1).children(0) == []),
    ("lock", "``lock(ROOT)`` does nothing", lambda: root_locks_do_nothing("lock")),
    ("unlock", "``unlock(ROOT)`` does nothing", lambda: root_locks_do_nothing("unlock")),
    ("unlock", "``RuntimeError``", refuses_an_unlock_without_a_lock),
    ("unlock", "a descendant's lock alone pins it", unlock_of_a_parent_pinned_by_its_child),
    ("insert", "``ValueError``", refuses_a_wrong_number_of_values),
    ("insert", "``(ROOT, [])``", lambda: small_tree()[0].insert([], []) == (reference.ROOT, [])),
    (
        "match_prefix",
        "shorter than one granule matches nothing: ``(0, [])``",
        lambda: reference.RadixTree(2).match_prefix([1]) == (0, []),
    ),
    (
        "evict",
        "``evict(0, f)`` frees nothing and returns 0",
        lambda: small_tree()[0].evict(0, lambda value: None) == 0,
    ),
]


@pytest.mark.parametrize(
    ("method", "phrase", "holds"), RULES, ids=[f"{m}:{p.split()[-1]}" for m, p, _ in RULES]
)
def test_the_stub_states_every_rule_the_course_tests_enforce(
    method: str, phrase: str, holds: Callable[[], bool]
) -> None:
    """Each exception and each ROOT rule is in the stub's docstring of that method."""
    assert holds(), f"the reference breaks the rule {phrase!r} of {method}"
    documented = " ".join((STUB_MEMBERS[method].__doc__ or "").split())
    assert " ".join(phrase.split()) in documented, f"{method}'s docstring lacks {phrase!r}"
