"""The opt-in int8 CPU path (issue #16 point 3): the output layer as a dynamic int8 linear layer.

``--dtype int8`` loads the model in float32 and replaces its output layer (the ``vocab × hidden``
matrix every decode step multiplies by, for every live beam) with a dynamically quantised int8
linear layer: int8 weights quantised per output row (per channel), activations quantised per
row at run time, int32 accumulation (fbgemm/x86 on Intel and AMD CPUs, qnnpack on ARM).  The transformer
body stays float32.  Why only the head — measured with ``bench/quantized_bench.py --layers`` on the
embedded Gemma 3 270M (262,144-row output layer, 640 hidden) on a 2-core x86 CPU, a 743-token
10-example prompt, next-token log-probabilities against float32:

===============================  ===================  ================  ===========================
quantised                        decode step, 8 rows  top token agrees  mean |Δ log p(next token)|
===============================  ===================  ================  ===========================
nothing (float32)                1.00                 100 %             0
output layer only (this path)    0.52                 98.7 %            0.040
every linear layer               0.24                 85.7 %            0.472
every linear layer but MLP out   0.43                 89.2 %            0.331
(bfloat16 everywhere, no int8)   0.48                 99.2 %            0.017
===============================  ===================  ================  ===========================

Quantising the body costs far more agreement than it saves time (Gemma's activations have large
outliers that one scale per call cannot hold), while the head is half of a decode step on its
own.  bfloat16 is as fast and closer still, but only on CPUs with bf16 instructions (AVX512-BF16,
AMX); most laptop CPUs emulate it slowly, while int8 kernels (VNNI, AVX2, NEON) are everywhere.
Results differ slightly from float32, so ``int8`` is its own dtype in every cache key
(:func:`scheme` names the scheme and the int8 engine) and never the default.

``torch.ao.quantization.quantize_dynamic`` is deprecated in favour of torchao, a separate package
this project does not install; it still ships with torch and runs eagerly, so it is called here
with its deprecation warning silenced, in this one place.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Any

from amp.parser.core.errors import ModelLoadError

#: The dtype name of this path (CLI ``--dtype int8``, the app's precision choice).
INT8 = "int8"
#: The version of the quantisation scheme; bump it when what :func:`quantize_output_layer` does changes.
SCHEME_VERSION = 1


@lru_cache(maxsize=1)
def quantized_engine() -> str:
    """The int8 kernel family this CPU uses: ``x86``/``fbgemm`` if available, else ``qnnpack``.

    Raises :class:`ModelLoadError` if torch has none (an int8 load is then impossible here)."""
    import torch  # late: start-up cost (torch)

    engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
    for engine in ("x86", "fbgemm", "qnnpack"):
        if engine in engines:
            return engine
    raise ModelLoadError("this torch build has no int8 CPU kernels (no x86, fbgemm or qnnpack engine); "
                         "use --dtype float32")


@lru_cache(maxsize=1)
def scheme() -> str:
    """What an int8 result was computed with, for cache keys: the scheme, its version and the engine."""
    return f"int8-output-layer-dynamic-per-channel;v{SCHEME_VERSION};engine={quantized_engine()}"


def _int8_head_class() -> type:
    import torch  # late: start-up cost (torch)

    class Int8OutputLayer(torch.nn.Module):
        """A float32-in, float32-out output layer over a dynamically quantised int8 linear layer.

        torch's dynamic int8 linear quantises its whole input with *one* scale, so a row's logits
        would depend on the other rows of the batch (a parse alone and the same parse in a batch of
        eight would differ, and the cache could not hold either).  Each row is therefore divided by
        its own largest magnitude first, and two pinning rows (all +1, all −1) are appended, so the
        input's range is always exactly [−1, 1]: one fixed scale, per-row (per-token) activation
        quantisation, and every row's result independent of its batch.  The output is multiplied
        back by the row's magnitude (the layer is linear; a bias, if any, is added after).
        """

        def __init__(self, linear: torch.nn.Linear, engine: str) -> None:
            super().__init__()
            from torch.ao.quantization import (  # late: start-up cost (torch)
                per_channel_dynamic_qconfig,
                quantize_dynamic,
            )

            self.in_features = linear.in_features
            self.out_features = linear.out_features
            plain = torch.nn.Linear(linear.in_features, linear.out_features, bias=False)
            plain.weight = torch.nn.Parameter(linear.weight.detach().float(), requires_grad=False)
            self.bias = None if linear.bias is None else linear.bias.detach().float().clone()
            torch.backends.quantized.engine = engine
            with warnings.catch_warnings():  # deprecated in favour of torchao (see the module docstring)
                warnings.simplefilter("ignore")
                wrapped = quantize_dynamic(torch.nn.Sequential(plain), {torch.nn.Linear: per_channel_dynamic_qconfig},
                                           dtype=torch.qint8, inplace=True)
            self.inner = wrapped[0]
            self.pins: torch.Tensor = torch.stack([torch.ones(self.in_features), -torch.ones(self.in_features)])

        def forward(self, hidden: torch.Tensor) -> torch.Tensor:
            flat = hidden.reshape(-1, self.in_features).float()
            size = flat.abs().amax(dim=1, keepdim=True).clamp(min=1e-30)
            out = self.inner(torch.cat([flat / size, self.pins]))[: flat.shape[0]] * size
            if self.bias is not None:
                out = out + self.bias
            return out.reshape(*hidden.shape[:-1], self.out_features)

    return Int8OutputLayer


def quantize_output_layer(model: Any) -> Any:
    """Replace ``model``'s output layer with its int8 form (in place; ``model`` is returned).

    The model must be a float32 causal LM on the CPU whose output layer is a plain linear layer
    (a tied output layer keeps the input embeddings in float32).  Raises :class:`ModelLoadError`
    otherwise."""
    import torch  # late: start-up cost (torch)

    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if not isinstance(head, torch.nn.Linear):
        raise ModelLoadError(f"--dtype int8 needs a linear output layer; this model's is {type(head).__name__}: "
                             "use --dtype float32")
    if head.weight.device.type != "cpu":
        raise ModelLoadError("--dtype int8 is the CPU path; on a GPU use --dtype bfloat16 or float16")
    engine = quantized_engine()
    try:
        layer = _int8_head_class()(head, engine)
    except Exception as exc:  # noqa: BLE001 - a kernel that refuses this layer: one message
        raise ModelLoadError(f"could not quantise the output layer to int8 ({type(exc).__name__}: {exc}); "
                             "use --dtype float32") from exc
    model.set_output_embeddings(layer)
    return model


def output_rows(model: Any) -> int:
    """Rows of ``model``'s output layer (the width of one logit row), float or int8."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    rows = getattr(head, "out_features", None)
    if isinstance(rows, int):
        return rows
    weight = getattr(head, "weight", None)
    if weight is not None and hasattr(weight, "shape"):
        return int(weight.shape[0])
    return int(model.config.vocab_size)


def compute_dtype(model: Any) -> Any:
    """The floating dtype the model's body computes in (attention masks are built in it)."""
    import torch  # late: start-up cost (torch)

    dtype = getattr(model, "dtype", None)
    return dtype if isinstance(dtype, torch.dtype) and dtype.is_floating_point else torch.float32
