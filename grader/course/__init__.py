"""A graded class as a whole: its gradebook (``gradebook``), roster (``roster``),
grades set by hand (``overrides``), copies (``similarity``, on ``canonical``,
``fingerprints`` and ``behaviour``), the class view
(``class_view``) and a Gradescope submission's history (``gradescope_history``).
"""
