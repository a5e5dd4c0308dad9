"""A model name checked before anything loads: the one check of the app's "Load" and the CLI's ``--model``.

A usable name is the embedded ``default``, an existing local folder or ``.gguf`` file
(:func:`amp.parser.models.spec.resolve_spec`), a Hugging Face id this machine's Hugging Face cache
holds, or — with network — a Hub id (a known one, or any ``org/name``).  Offline
(``HF_HUB_OFFLINE=1``) only the cache counts, and the message says that offline mode is why.  A name
that is none of these but close to one (``defualt``) is refused with the close matches
(:class:`~amp.parser.core.errors.ModelNameError`, "did you mean 'default'?").  Nothing here
touches the network or imports torch.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from amp.parser.core.errors import ModelLoadError, ModelNameError
from amp.parser.models.spec import DEFAULT_SPEC, ModelSource, resolve_spec

#: Hub ids the project documents (README, docs): suggested for near misses, accepted online.
KNOWN_MODEL_IDS = ("google/gemma-3-270m", "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-1.5B")
#: How close a name must be to a known one to be suggested (difflib's ratio).
SUGGESTION_CUTOFF = 0.75
#: The most cached ids read from the Hugging Face cache (a bound on the folder listing).
MAX_CACHED_IDS = 1000
_TRUTHY = frozenset({"1", "true", "yes", "on"})


def hub_offline() -> bool:
    """Whether Hugging Face's offline mode is on (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(v, "").strip().lower() in _TRUTHY for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache folder, read from the environment now (``HF_HUB_CACHE``,
    ``HF_HOME``/hub, ``XDG_CACHE_HOME``/huggingface/hub, ``~/.cache/huggingface/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or str(Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface")
    return Path(home).expanduser() / "hub"


def cached_hub_ids() -> list[str]:
    """The model ids whose files the Hugging Face cache holds (``models--org--name/snapshots/…``)."""
    root = hub_cache_dir()
    found: list[str] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    for entry in entries[:MAX_CACHED_IDS]:
        if not entry.name.startswith("models--"):
            continue
        snapshots = entry / "snapshots"
        try:
            if snapshots.is_dir() and any(snapshots.iterdir()):
                found.append(entry.name.removeprefix("models--").replace("--", "/"))
        except OSError:
            continue
    return found


def suggestions(name: str, candidates: list[str] | tuple[str, ...]) -> list[str]:
    """The candidates close to ``name`` (case ignored), closest first."""
    by_lower = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=SUGGESTION_CUTOFF)
    return [by_lower[c] for c in close]


def _did_you_mean(close: list[str]) -> str:
    return ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else ""


def check_model_name(spec: str, gguf_file: str | None = None) -> ModelSource:
    """What ``spec`` names, checked before loading (nothing loads, no network).

    Raises :class:`~amp.parser.core.errors.ModelNameError` for a Hub id that is not in the local
    cache in offline mode, or that is unknown and close to a name that is usable here; a path
    that does not exist is :func:`~amp.parser.models.spec.resolve_spec`'s
    :class:`~amp.parser.core.errors.ModelLoadError`, with close names added when there are some.
    """
    spec = (spec or DEFAULT_SPEC).strip()
    cached = cached_hub_ids()
    candidates = [DEFAULT_SPEC, *KNOWN_MODEL_IDS, *cached]
    try:
        source = resolve_spec(spec, gguf_file)
    except ModelLoadError as exc:
        close = suggestions(spec, candidates)
        if not close:
            raise
        raise ModelNameError(f"{exc}; {_did_you_mean(close)}", suggestions=tuple(close)) from None
    if source.kind != "hub":
        return source
    repo_id = source.repo_id or ""
    if repo_id.lower() in {c.lower() for c in cached}:
        return source
    close = [c for c in suggestions(spec, candidates) if c.lower() != repo_id.lower()]
    if hub_offline():
        hint = f" {_did_you_mean(close)}" if close else ""
        raise ModelNameError(
            f"could not load Hugging Face model {repo_id!r}: offline mode is on (HF_HUB_OFFLINE=1) and the local "
            f"Hugging Face cache ({hub_cache_dir()}) does not hold it.{hint} Use 'default', a model folder or "
            f".gguf file, a cached id, or unset HF_HUB_OFFLINE to download it", suggestions=tuple(close))
    if repo_id.lower() in {k.lower() for k in KNOWN_MODEL_IDS}:
        return source
    if close:
        raise ModelNameError(f"unknown model {spec!r}: it is not a local path, not in the Hugging Face cache and "
                             f"not a known id; {_did_you_mean(close)}", suggestions=tuple(close))
    return source


__all__ = ["KNOWN_MODEL_IDS", "cached_hub_ids", "check_model_name", "hub_cache_dir", "hub_offline", "suggestions"]
