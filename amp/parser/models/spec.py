"""Model specs and their identities: what a spec names and the strings that identify it in cache keys.

A *spec* is ``"default"`` (the embedded Gemma 3 270M, :mod:`amp.parser.models.embedded`), a
local folder saved with ``save_pretrained`` (or holding exactly one ``.gguf`` file), a ``.gguf``
file, or a Hugging Face id ``org/name`` or ``org/name@revision``.  :func:`resolve_spec` decides
which without loading anything; :func:`identities` computes the model and tokenizer identities
the result cache keys on (weight and tokenizer file hashes, memoised in-process and on disk),
again without a model import.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amp.parser.core.errors import ModelLoadError
from amp.parser.models.embedded import (
    CONVERSION_VERSION,
    DEFAULT_DISTRIBUTION,
    DEFAULT_FOLDER,
    default_package,
    default_version,
)
from amp.settings import models_dir

#: The spec that names the embedded model.
DEFAULT_SPEC = "default"


def model_kind(spec: str = DEFAULT_SPEC, gguf_file: str | None = None) -> str | None:
    """What kind of model ``spec`` names (:attr:`ModelSource.kind`: default / folder / gguf / hub),
    or ``None`` for a spec that names nothing usable; nothing loads.  An engine runs the kinds its
    capabilities list (:attr:`amp.parser.core.capabilities.Capabilities.formats`)."""
    try:
        return resolve_spec(spec, gguf_file).kind
    except ModelLoadError:
        return None


_WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.gguf", "*.h5", "*.msgpack", "*.index.json",
                    "config.json", "generation_config.json", "*.py")
_TOKENIZER_PATTERNS = ("tokenizer*", "vocab*", "merges*", "special_tokens_map.json", "added_tokens.json",
                       "*.model", "*.tiktoken", "spiece*", "chat_template*")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?(@[\w.\-/]+)?$")


@dataclass(frozen=True)
class ModelSource:
    """A spec resolved to where the weights are: ``kind`` is default / folder / gguf / hub."""

    kind: str
    spec: str
    path: Path | None = None  # folder (folder, default) or the .gguf file (gguf)
    repo_id: str | None = None
    revision: str | None = None


def resolve_spec(spec: str = DEFAULT_SPEC, gguf_file: str | None = None) -> ModelSource:
    """Decide what ``spec`` names without loading anything (raises :class:`ModelLoadError`)."""
    spec = (spec or DEFAULT_SPEC).strip()
    if spec == DEFAULT_SPEC:
        return ModelSource("default", spec, path=models_dir() / DEFAULT_FOLDER)
    path = Path(spec).expanduser()
    if gguf_file is not None:
        target = path / gguf_file
        if not target.is_file():
            raise ModelLoadError(f"GGUF file {gguf_file!r} not found in {spec!r}; check the folder and file name")
        return ModelSource("gguf", spec, path=target.resolve())
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise ModelLoadError(
                f"{spec!r} is a file but not a .gguf model; pass a model folder, a .gguf file or a Hugging Face id"
            )
        return ModelSource("gguf", spec, path=path.resolve())
    if path.is_dir():
        if not (path / "config.json").is_file():
            ggufs = sorted(path.glob("*.gguf"))
            if len(ggufs) == 1:
                return ModelSource("gguf", spec, path=ggufs[0].resolve())
            raise ModelLoadError(  # never list the folder: the app may be used by someone else's browser
                f"{spec!r} is a folder but not a model: it has no config.json. "
                "Pass a folder written by save_pretrained (config.json + weights + tokenizer files), "
                "or the .gguf file itself"
            )
        return ModelSource("folder", spec, path=path.resolve())
    looks_local = spec.startswith((".", "/", "~", "\\")) or spec.lower().endswith(".gguf") or os.sep + os.sep in spec
    if looks_local or not _HUB_ID.match(spec):
        raise ModelLoadError(
            f"model path {spec!r} does not exist; pass an existing model folder or .gguf file, "
            "a Hugging Face id like Qwen/Qwen2.5-0.5B, or 'default' for the embedded Gemma 3 270M"
        )
    repo_id, _, revision = spec.partition("@")
    return ModelSource("hub", spec, repo_id=repo_id, revision=revision or None)


def identities(spec: str = DEFAULT_SPEC, gguf_file: str | None = None) -> tuple[str, str]:
    """``(model identity, tokenizer identity)`` for cache keys, computed without loading.

    * default: distribution name + version + the GGUF's expected sha256 + conversion version;
    * Hub id: ``hf:<id>@<commit>`` when the local HF cache knows the commit, else the revision;
    * local folder: path + sha256 over the weight/config files (tokenizer files for the
      tokenizer identity);
    * GGUF file: path + its sha256 (the tokenizer lives in the same file).

    File hashes are cached by (path, size, mtime), so a warm call does not re-read gigabytes.
    """
    src = resolve_spec(spec, gguf_file)
    if src.kind == "default":
        pkg = default_package()
        ident = f"{DEFAULT_DISTRIBUTION}=={default_version()};gguf-sha256={pkg.EXPECTED_SHA256};conv={CONVERSION_VERSION}"
        return ident, ident + ";tokenizer"
    if src.kind == "hub":
        rev = _hub_commit(src.repo_id or "", src.revision) or src.revision or "main"
        return f"hf:{src.repo_id}@{rev}", f"hf:{src.repo_id}@{rev};tokenizer"
    assert src.path is not None
    if src.kind == "gguf":
        ident = f"gguf:{src.path};sha256={file_sha256(src.path)}"
        return ident, ident + ";tokenizer"
    weights = _folder_digest(src.path, _WEIGHT_PATTERNS)
    tokenizer = _folder_digest(src.path, _TOKENIZER_PATTERNS)
    return f"local:{src.path};sha256={weights}", f"local:{src.path};tokenizer-sha256={tokenizer}"


def _hub_commit(repo_id: str, revision: str | None) -> str | None:
    """The commit hash the local HF cache holds for ``repo_id``/``revision``, if any (no network)."""
    if revision and re.fullmatch(r"[0-9a-f]{40}", revision):
        return revision
    try:
        from huggingface_hub import try_to_load_from_cache  # late: start-up cost (huggingface_hub)

        found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    except Exception:  # noqa: BLE001 - an unreadable HF cache just means "unknown"
        return None
    if isinstance(found, str):
        return Path(found).parent.name
    return None


_HASH_LOCK = threading.Lock()
_HASHES: dict[tuple[str, int, int], str] = {}
_HASH_INDEX = "file-hashes.json"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """sha256 of a file, memoised by (real path, size, mtime_ns) in-process and on disk.

    The on-disk index (``cache/models/file-hashes.json``) lets later processes skip
    re-hashing multi-gigabyte weights; a changed size or mtime forces a re-hash.
    """
    real = os.path.realpath(path)
    st = os.stat(real)
    memo_key = (real, st.st_size, st.st_mtime_ns)
    with _HASH_LOCK:
        if memo_key in _HASHES:
            return _HASHES[memo_key]
        index = _read_hash_index()
        entry = index.get(real)
        if isinstance(entry, dict) and entry.get("size") == st.st_size and entry.get("mtime_ns") == st.st_mtime_ns:
            digest = str(entry.get("sha256"))
        else:
            digest = _sha256_of(Path(real))
            index[real] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
            _write_hash_index(index)
        _HASHES[memo_key] = digest
        return digest


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_hash_index() -> dict[str, Any]:
    try:
        data = json.loads((models_dir() / _HASH_INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_hash_index(index: dict[str, Any]) -> None:
    target = models_dir() / _HASH_INDEX
    index = {path: entry for path, entry in index.items() if os.path.exists(path)}  # forget deleted files
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{_HASH_INDEX}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(index, sort_keys=True), encoding="utf-8")
        os.replace(tmp, target)


def _folder_digest(folder: Path, patterns: tuple[str, ...]) -> str:
    files = sorted({p for pattern in patterns for p in folder.glob(pattern) if p.is_file()})
    parts = {p.name: file_sha256(p) for p in files}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
