"""Settings for the pre-scoring and score -> train tests; their tiny model is ``tiny_model``
(tests/conftest.py)."""

import pytest


@pytest.fixture
def score_flags():
    """The small, CPU-only sampling settings every ``passband score`` test here runs with."""
    return ["--k", "6", "--first", "3", "--max-tokens", "6", "--batch-size", "4"] + [
        "--no-progress",
        "--device",
        "cpu",
    ]
