"""Where AmP Explorer keeps files on disk, and the one environment variable that moves them.

Everything the project writes at run time lives under one *cache root*:

* ``<root>/models/``  — the embedded default model, assembled and converted once to safetensors;
* ``<root>/results/`` — the on-disk result cache (:mod:`amp.cache`, JSON values only).

The root is ``cache/`` at the repository root (git-ignored), or the folder named by the
``AMP_CACHE_DIR`` environment variable.  Paths are computed on every call, so a test can
``monkeypatch.setenv("AMP_CACHE_DIR", tmp_path)`` without reloading this module.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable that overrides the cache root.
CACHE_ENV_VAR = "AMP_CACHE_DIR"

#: The repository root (the folder holding the ``amp`` package).
REPO_ROOT = Path(__file__).resolve().parent.parent


def cache_root() -> Path:
    """The cache root: ``$AMP_CACHE_DIR`` if set (and non-empty), else ``<repo>/cache``."""
    override = os.environ.get(CACHE_ENV_VAR, "").strip()
    if override:
        return Path(override).expanduser().resolve()
    return REPO_ROOT / "cache"


def models_dir() -> Path:
    """Folder of converted model weights (``<root>/models``); not created here."""
    return cache_root() / "models"


def results_dir() -> Path:
    """Folder of the diskcache result store (``<root>/results``); not created here."""
    return cache_root() / "results"
