"""My tree (it is all in robin_hood.py, next door)."""

from robin_hood import ROOT, NodeId, RadixTree

__all__ = ["ROOT", "NodeId", "RadixTree"]
