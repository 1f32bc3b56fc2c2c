"""An implementation that needs a package the grader does not have."""
import numpy_is_not_here  # noqa: F401

ROOT = 0
