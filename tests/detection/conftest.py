"""Fixtures of the detection tests: the tiny GPT-2 with room for a 10-example mixed prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_models import build_tiny_model


@pytest.fixture(scope="session")
def long_tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny GPT-2 of tests/tiny_models.py with 4096 positions (a mixed prompt is ~1,000 of its tokens)."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-long") / "tiny-gpt2", n_positions=4096)
