"""The process registry of loaded models: a bounded least-recently-used memo.

:func:`load_model` loads a spec once per (spec, device, dtype, trust_remote_code, gguf_file) and
keeps at most :func:`max_loaded_models` models (``$AMP_MAX_MODELS``, default 2); loading another
evicts the least recently used, whose memory is freed once no call uses it (parsers hold models
weakly).  Two threads asking for the same model load it once.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from amp.memo import LruCache
from amp.parser.models.loading import LoadedModel, load_uncached, select_device, select_dtype
from amp.parser.models.spec import DEFAULT_SPEC

#: Models kept loaded at once (``$AMP_MAX_MODELS``, default 2): loading another evicts the least
#: recently used, whose memory is freed once no call is using it (parsers hold models weakly).
DEFAULT_MAX_LOADED = 2
_LOADED: LruCache[tuple[Any, ...], LoadedModel] = LruCache(lambda: max_loaded_models())
_KEY_LOCKS_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple[Any, ...], threading.Lock] = {}


def max_loaded_models() -> int:
    """How many models this process keeps loaded (``$AMP_MAX_MODELS``, at least 1)."""
    try:
        return max(1, int(os.environ.get("AMP_MAX_MODELS", DEFAULT_MAX_LOADED)))
    except ValueError:
        return DEFAULT_MAX_LOADED


def load_model(
    spec: str = DEFAULT_SPEC,
    *,
    device: str | None = None,
    dtype: str | None = None,
    trust_remote_code: bool = False,
    gguf_file: str | None = None,
) -> LoadedModel:
    """Load (or return the already-loaded) model named by ``spec`` (:func:`amp.parser.models.spec.resolve_spec` says what specs are).

    Models are cached per process by (spec, device, dtype, trust_remote_code, gguf_file), at most
    :func:`max_loaded_models` at once (least recently used evicted).
    ``trust_remote_code`` is always passed to transformers explicitly (never asked on stdin); a
    model that needs its own code without it is refused.  Raises
    :class:`~amp.parser.core.errors.ModelLoadError` on any failure.
    """
    spec = (spec or DEFAULT_SPEC).strip()
    dev = select_device(device)
    dt = select_dtype(dev, dtype)
    key = (spec, dev, dt, bool(trust_remote_code), gguf_file)
    found = _LOADED.get(key)
    if found is not None:
        return found
    with _KEY_LOCKS_LOCK:
        key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with key_lock:  # two threads asking for the same model load it once
        found = _LOADED.get(key)
        if found is not None:
            return found
        # the least recently used model goes when the bound is reached
        return _LOADED.put(key, load_uncached(spec, dev, dt, trust_remote_code, gguf_file))


def loaded_models() -> list[LoadedModel]:
    """The models this process holds."""
    return _LOADED.values()


def unload_models() -> None:
    """Forget every loaded model (frees memory once no one else holds a reference)."""
    _LOADED.clear()
