"""The ``grader`` command: grades a ds.07 submission's code with the course tests
and the student's own tests with planted mutants."""

__version__ = "0.1.0"
