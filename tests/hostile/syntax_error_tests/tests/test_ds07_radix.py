"""A test file that does not parse."""
from radix import ROOT, RadixTree


def test_split_by_hand() -> None
    assert RadixTree(1).node_count() == 0
