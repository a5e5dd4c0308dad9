"""The one place a local backend is chosen from the engine (:class:`amp.parser.models.spec.Engine`).

:func:`local_backend` builds the backend of this process for a model spec: transformers
(:class:`~amp.parser.backends.local.InProcessBackend`) or llama.cpp
(:class:`~amp.parser.backends.llama.LlamaBackend`, a GGUF on the CPU).  The facade, the
command line and the service all call it, so an engine is chosen the same way everywhere:
an explicit choice, else ``$AMP_ENGINE``, else the default rule (:func:`~amp.parser.models.spec.default_engine`:
llama.cpp for a GGUF on the CPU, transformers otherwise).
"""

from __future__ import annotations

from amp.parser.backends.llama import LlamaBackend
from amp.parser.backends.local import InProcessBackend
from amp.parser.core.errors import ModelLoadError
from amp.parser.models.quantize import INT8
from amp.parser.models.spec import DEFAULT_SPEC, Engine, select_engine


def local_backend(spec: str = DEFAULT_SPEC, *, engine: str | None = None, device: str | None = None,
                  dtype: str | None = None, trust_remote_code: bool = False, gguf_file: str | None = None,
                  threads: int | None = None) -> InProcessBackend | LlamaBackend:
    """The backend of this process for ``spec`` on ``engine`` (:class:`ModelLoadError` for a
    combination that cannot run: llama.cpp runs a GGUF on the CPU, in the GGUF's own precision)."""
    chosen = select_engine(engine, spec=spec, device=device, dtype=dtype, gguf_file=gguf_file)
    if chosen is Engine.TRANSFORMERS:
        return InProcessBackend(spec, device=device, dtype=dtype, trust_remote_code=trust_remote_code,
                                gguf_file=gguf_file)
    if device not in (None, "", "cpu", "auto"):
        raise ModelLoadError(f"the llama.cpp engine runs on the CPU here; drop --device {device} "
                             "or use --engine transformers")
    if dtype not in (None, "", "auto"):
        what = "int8 quantisation" if dtype == INT8 else f"dtype {dtype}"
        raise ModelLoadError(f"the llama.cpp engine computes in the GGUF's own precision, not {what}; "
                             "drop --dtype or use --engine transformers")
    return LlamaBackend(spec, gguf_file=gguf_file, threads=threads)
