"""The ``grader`` command: grades a ds.07 submission's code with the course tests
and the student's own tests with planted mutants."""

__version__ = "0.1.0"
DISTRIBUTION = "ds07-grader"
"""The kit's name as pip knows it (``pyproject.toml``)."""
