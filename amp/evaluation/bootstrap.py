"""Percentile bootstrap intervals: how sure a figure is, from the items it was computed on.

A statistic ``θ = f(x_1 … x_n)`` over ``n`` items gets the interval of the percentile bootstrap
(Efron and Tibshirani 1993, ch. 13): draw ``B`` resamples of ``n`` items with replacement, compute
``θ*_b`` on each, and take the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the ``θ*_b``
(numpy's default linear interpolation).  The estimate is ``f`` on the items themselves.

With ``strata`` (one label per item), each resample draws within each stratum as many items as it
holds, so every resample keeps the strata's sizes — what an AUROC needs (both classes present in
every resample) and what a per-type table wants.  A resample on which ``f`` is undefined (it
returns NaN) is left out; the interval is NaN when fewer than half the resamples give a number.

Pure and deterministic: the resamples come from ``numpy.random.default_rng(seed)``, so the same
items, statistic and seed give the same interval to the bit.  (docs/paper-notes.md §21.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from amp.evaluation.errors import BootstrapError
from amp.records import JsonFloat, JsonRecord

__all__ = ["DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "Interval", "bootstrap_interval", "resample_indices"]

T = TypeVar("T")

#: Resamples drawn for an interval unless a caller asks for another number.
DEFAULT_RESAMPLES = 1000
#: The interval's coverage unless a caller asks for another.
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Interval(JsonRecord):
    """A statistic on ``n`` items and its percentile-bootstrap interval ``[low, high]`` at ``level``."""

    estimate: JsonFloat
    low: JsonFloat
    high: JsonFloat
    n: int
    level: float = DEFAULT_LEVEL
    resamples: int = DEFAULT_RESAMPLES

    def text(self, digits: int = 2) -> str:
        """``0.53 [0.41, 0.66] (n 40)``: the estimate, its interval and n, for tables and captions."""
        if math.isnan(self.estimate):
            return f"– (n {self.n})"
        span = "" if math.isnan(self.low) else f" [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        return f"{self.estimate:.{digits}f}{span} (n {self.n})"


def resample_indices(n: int, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                     strata: Sequence[Hashable] | None = None) -> np.ndarray:
    """A ``(resamples, n)`` array of item indices drawn with replacement (within each stratum)."""
    if n < 1:
        raise BootstrapError(f"a bootstrap needs at least one item, got {n}")
    if resamples < 1:
        raise BootstrapError(f"resamples must be at least 1, got {resamples}")
    rng = np.random.default_rng(seed)
    if strata is None:
        return rng.integers(0, n, size=(resamples, n))
    if len(strata) != n:
        raise BootstrapError(f"strata has {len(strata)} labels for {n} items")
    out = np.empty((resamples, n), dtype=np.int64)
    start = 0
    groups: dict[Hashable, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    for members in groups.values():  # first-seen order: deterministic for the same strata
        idx = np.asarray(members, dtype=np.int64)
        out[:, start:start + len(idx)] = idx[rng.integers(0, len(idx), size=(resamples, len(idx)))]
        start += len(idx)
    return out


def bootstrap_interval(items: Sequence[T], statistic: Callable[[Sequence[T]], float], *,
                       resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL, seed: int = 0,
                       strata: Sequence[Hashable] | None = None) -> Interval:
    """``statistic`` on ``items`` with its percentile-bootstrap interval (module docstring)."""
    if not 0.0 < level < 1.0:
        raise BootstrapError(f"level must lie strictly between 0 and 1, got {level}")
    items = list(items)
    if not items:
        return Interval(math.nan, math.nan, math.nan, 0, level, resamples)
    estimate = float(statistic(items))
    draws = resample_indices(len(items), resamples=resamples, seed=seed, strata=strata)
    values = np.array([float(statistic([items[i] for i in row])) for row in draws])
    values = values[~np.isnan(values)]
    if len(values) * 2 < resamples:
        return Interval(estimate, math.nan, math.nan, len(items), level, resamples)
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return Interval(estimate, float(low), float(high), len(items), level, resamples)
