"""A second copy, next to the test file."""
import pytest


@pytest.fixture
def fingerprint() -> str:
    return "reference"
