"""Root fixtures: the real default model (one per session, ``slow``) and a tiny saved model.

Kept minimal on purpose; package-specific fixtures live next to their tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_models import build_tiny_model


@pytest.fixture(scope="session")
def default_lm():
    """The embedded Gemma 3 270M on CPU float32, loaded once per test session.

    Uses the real cache root (``cache/`` or ``$AMP_CACHE_DIR``), so the one-time GGUF →
    safetensors conversion (about a minute) is shared with the app and later runs.  Tests using
    this fixture must be marked ``@pytest.mark.slow``.
    """
    from amp.parser.models import load_model

    return load_model("default", device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def saved_tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a tiny GPT-2 saved with ``save_pretrained`` (built once per session)."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model") / "tiny-gpt2")
