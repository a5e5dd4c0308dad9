"""The settings of a contrastive attribution, declared once (docs/paper-notes.md §18).

Torch-free, so the CLI, the app and the library validate them without loading the model code:
what is explained (:data:`TARGETS`), how (:data:`METHODS`), from which baseline
(:class:`Baseline`), by which quadrature of the path integral (:data:`RULE`), and when the
integrated-gradients steps stop growing (:data:`DEFAULT_GAP_TARGET`, :func:`check_gap_target`).
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any

from amp.errors import SettingError
from amp.parser.core import limits

__all__ = [
    "DEFAULT_GAP_TARGET",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_STEPS",
    "METHODS",
    "RULE",
    "TARGETS",
    "Baseline",
    "check_baseline",
    "check_gap_target",
    "check_steps",
]

#: What is explained: the log-odds at the divergence point, or of the whole sequences.
TARGETS: tuple[str, ...] = ("divergence", "sequence")
#: How: input × gradient (one backward pass) or integrated gradients (``steps`` of them).
METHODS: tuple[str, ...] = ("input_x_gradient", "integrated_gradients")
#: The quadrature of integrated gradients' path integral: the midpoint rule on ``steps`` equal
#: intervals (points ``(k − ½)/steps``, k = 1 … steps).  Tripling the steps keeps every earlier
#: point (the middle third of each new triple), so every gradient pass is reused; the baseline
#: itself is never a point (the trapezoid rule's end point at zero embeddings gave an RMS-normalised
#: model's gradient of ~1/√ε: a sum of −1e13 for a log-odds of −22).
RULE = "midpoint"
#: Integrated-gradients steps to start from unless told.
DEFAULT_STEPS = 16
#: The most steps the increase goes to unless told (16 → 48 → 144: 144 passes in all).
DEFAULT_MAX_STEPS = 144
#: The completeness gap, as a share of |f(x) − f(x′)|, under which the steps stop growing.
DEFAULT_GAP_TARGET = 0.05


class Baseline(StrEnum):
    """The reference input x′ of the attributed prompt tokens (the others stay as they are)."""

    #: Every attributed token's embedding set to zeros.
    ZERO = "zero"
    #: The pad token's embedding (the unk token's, then the end-of-sequence token's, where the
    #: tokenizer has no pad token) at every attributed position: "a prompt of nothing".
    PAD = "pad"
    #: The mean of the model's whole input-embedding matrix (an average token) at every attributed position.
    MEAN = "mean"


def check_baseline(value: Any) -> Baseline:
    """A :class:`Baseline` from itself or its name; :class:`SettingError` naming the choices else."""
    try:
        return Baseline(value)
    except ValueError:
        raise SettingError(f"baseline must be one of {', '.join(b.value for b in Baseline)}, not {value!r}") from None


def check_gap_target(value: Any) -> float | None:
    """The completeness-gap share under which the steps stop growing: a number above 0 and below 1,
    or ``None`` (no increase: exactly the steps asked for)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise SettingError(f"gap target must be a share above 0 and below 1, not {value!r}")
    try:
        share = float(value)
    except (TypeError, ValueError):
        raise SettingError(f"gap target must be a share above 0 and below 1, not {value!r}") from None
    if not (math.isfinite(share) and 0.0 < share < 1.0):
        raise SettingError(f"gap target must be a share above 0 and below 1, not {value!r}")
    return share


def check_steps(steps: Any, max_steps: Any) -> tuple[int, int]:
    """The starting steps and the most the increase may reach: each 1 … :data:`limits.MAX_ATTRIBUTION_STEPS`,
    ``max_steps`` at least ``steps``."""
    steps = limits.check_count(steps, "steps", limits.MAX_ATTRIBUTION_STEPS)
    max_steps = limits.check_count(max_steps, "max steps", limits.MAX_ATTRIBUTION_STEPS)
    if max_steps < steps:
        raise SettingError(f"max steps ({max_steps}) must be at least steps ({steps})")
    return steps, max_steps
