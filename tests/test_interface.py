"""The student stub and the reference expose one public interface.

Both files are loaded from their paths under names of their own, so that
neither takes the name ``radix`` that the course tests import. Any drift
between them (a renamed method, a changed signature or default, a missing
docstring) fails here, before a student ever sees it.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

KIT = Path(__file__).resolve().parents[1]
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
