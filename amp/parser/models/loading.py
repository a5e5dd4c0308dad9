"""Loading a model: device and dtype selection, then transformers' ``from_pretrained``.

:func:`load_uncached` turns a spec (:mod:`amp.parser.models.spec`) into a :class:`LoadedModel`
(model in ``eval()`` mode, a tokenizer ready for left-padded batches, device, dtype, a lock, and
its identities).  Every failure — no network, missing file, a folder that is not a model, out
of memory — becomes one :class:`~amp.parser.core.errors.ModelLoadError` whose message says what was tried
and what to do.  A Hugging Face id is read from the local HF cache first; with
``HF_HUB_OFFLINE=1`` only the cache is used.  torch and transformers are imported lazily.
Callers load through the process registry (:func:`amp.parser.models.registry.load_model`).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from amp.parser.core.errors import ModelLoadError
from amp.parser.models.embedded import ensure_default_model
from amp.parser.models.names import hub_offline
from amp.parser.models.quantize import INT8, quantize_output_layer
from amp.parser.models.spec import ModelSource, identities, resolve_spec

#: The dtypes a model loads in; ``int8`` is the opt-in CPU path (:mod:`amp.parser.models.quantize`).
DTYPES = ("float32", "float16", "bfloat16", "auto", INT8)
#: The dtype of exact CPU results (the default on a CPU); run names mark any other dtype chosen.
EXACT_DTYPE = "float32"
#: The one help text of every command's ``--dtype``.
DTYPE_HELP = ("weights dtype (default: bfloat16/float16 on CUDA, float32 elsewhere); int8 = the opt-in CPU path "
              "with an int8 output layer, bfloat16 = fast on CPUs with bf16 instructions: both faster than float32, "
              "with slightly different numbers, cached apart")


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


def select_device(device: str | None = None) -> str:
    """``device`` if given (checked), else CUDA if available, else Apple MPS, else CPU.

    An explicit ``"cpu"`` needs no torch import (so a warm, cached CLI call stays fast).
    """
    if device == "cpu":
        return device
    import torch  # late: start-up cost (torch)

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
    (the checkpoint's own dtype) is kept; ``"int8"`` (a float32 model with an int8 output layer,
    :mod:`amp.parser.models.quantize`) is for the CPU only.
    """
    if dtype is not None:
        if dtype not in DTYPES:
            raise ModelLoadError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
        if dtype == INT8 and device != "cpu":
            raise ModelLoadError(f"dtype int8 is the CPU path and the model would run on {device}: "
                                 "pass --device cpu, or use bfloat16/float16 on a GPU")
        return dtype
    if device.startswith("cuda"):
        import torch  # late: start-up cost (torch)

        supported = getattr(torch.cuda, "is_bf16_supported", None)
        return "bfloat16" if supported is not None and supported() else "float16"
    return "float32"


def _torch_dtype(name: str) -> Any:
    import torch  # late: start-up cost (torch)

    return "auto" if name == "auto" else getattr(torch, name)


#: Seconds to wait for a TCP connection to the Hub before giving up (instead of minutes of retries).
HUB_PROBE_TIMEOUT_S = 3.0


def _hub_reachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Whether the Hub endpoint (``$HF_ENDPOINT``, default huggingface.co) accepts a TCP connection
    within ``timeout_s``; and its host, for messages."""

    try:
        from huggingface_hub import constants  # late: start-up cost (huggingface_hub)

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
    return hub_offline()


def load_uncached(spec: str, device: str, dtype: str, trust_remote_code: bool, gguf_file: str | None) -> LoadedModel:
    """Load ``spec`` now (no memo): the default model is converted first if needed."""
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
    if dtype == INT8:
        quantize_output_layer(model)
    actual_dtype = INT8 if dtype == INT8 else str(getattr(model, "dtype", dtype)).removeprefix("torch.")
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
    from transformers import AutoModelForCausalLM, AutoTokenizer  # late: start-up cost (transformers)

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
    model_kwargs: dict[str, Any] = {"dtype": _torch_dtype("float32" if dtype == INT8 else dtype)}
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
