"""Where AmP Explorer keeps files on disk, and the one environment variable that moves them.

Everything the project writes at run time lives under one *cache root*:

* ``<root>/models/``  — the embedded default model, assembled and converted once to safetensors;
* ``<root>/results/`` — the on-disk result cache (:mod:`amp.cache`, JSON values only).

The root is ``cache/`` at the repository root (git-ignored) when the package runs from a source
checkout (editable install or ``python -m amp`` in the repository), ``$XDG_CACHE_HOME/amp-explorer``
(default ``~/.cache/amp-explorer``) when it runs from an installed wheel, or the folder named by
the ``AMP_CACHE_DIR`` environment variable.  ``AMP_MODELS_DIR``, when set, moves only the models
folder: converted weights are read-mostly and expensive to build (about 100 s for the default
model), results and polls are cheap and per-run, so the test suite gives every test a fresh
cache root but shares one models folder.  Paths are computed on every call, so a test can
``monkeypatch.setenv("AMP_CACHE_DIR", tmp_path)`` without reloading this module.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable that overrides the cache root.
CACHE_ENV_VAR = "AMP_CACHE_DIR"

#: The environment variable that moves only the models folder (default ``<root>/models``).
MODELS_ENV_VAR = "AMP_MODELS_DIR"

#: The repository root (the folder holding the ``amp`` package); for an installed wheel this is
#: ``site-packages``, which :func:`source_checkout` tells apart.
REPO_ROOT = Path(__file__).resolve().parent.parent

#: The folder name of the per-user cache when the package is installed (not a source checkout).
USER_CACHE_NAME = "amp-explorer"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser().resolve() if value else None


def source_checkout() -> bool:
    """Whether the package runs from the repository (its ``pyproject.toml`` beside ``amp/``)."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "amp" / "__init__.py").is_file()


def cache_root() -> Path:
    """The cache root: ``$AMP_CACHE_DIR`` if set (and non-empty), else ``<repo>/cache`` in a source
    checkout, else the per-user cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    env = _env_path(CACHE_ENV_VAR)
    if env is not None:
        return env
    if source_checkout():
        return REPO_ROOT / "cache"
    user_cache = _env_path("XDG_CACHE_HOME") or Path.home() / ".cache"
    return user_cache / USER_CACHE_NAME


def models_dir() -> Path:
    """Folder of converted model weights: ``$AMP_MODELS_DIR`` if set (and non-empty), else
    ``<root>/models``; not created here."""
    return _env_path(MODELS_ENV_VAR) or cache_root() / "models"


def results_dir() -> Path:
    """Folder of the diskcache result store (``<root>/results``); not created here."""
    return cache_root() / "results"
