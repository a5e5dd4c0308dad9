"""AUROC: how well a score separates ambiguous from unambiguous sentences (docs/paper-notes.md §22).

For scores ``s`` and labels ``y`` (1 = ambiguous, the positive class; 0 = unambiguous), with
``n⁺`` positives and ``n⁻`` negatives, the area under the ROC curve is the Mann–Whitney statistic

    AUROC = U / (n⁺ · n⁻),   U = Σ_{i: y_i=1} Σ_{j: y_j=0} [s_i > s_j] + ½ · [s_i = s_j]

— the probability that a random ambiguous sentence scores higher than a random unambiguous one,
ties counting one half.  0.5 is chance, 1 a perfect detector, 0 a perfect one read backwards.
It is NaN when either class is empty.  Computed from mid-ranks in ``O(n log n)``:
``U = R⁺ − n⁺(n⁺ + 1)/2`` with ``R⁺`` the sum of the positives' mid-ranks.

:func:`auroc_interval` adds the percentile-bootstrap interval of docs/paper-notes.md §21,
resampling within each class (``strata`` = the labels), so every resample keeps ``n⁺`` and ``n⁻``
and the statistic is always defined.  Pure and deterministic by ``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from amp.detection.errors import AurocError
from amp.evaluation.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, Interval, bootstrap_interval

__all__ = ["Labels", "Scores", "auroc", "auroc_interval", "roc_curve"]

#: Detection scores: floats, higher = more ambiguous (a list or a numpy array).
Scores = Sequence[float] | np.ndarray
#: Labels: 1/True ambiguous, 0/False unambiguous (a list or a numpy array).
Labels = Sequence[int] | Sequence[bool] | np.ndarray


def _checked(scores: Scores, labels: Labels) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(list(scores), dtype=float)
    if len(s) != len(labels):
        raise AurocError(f"got {len(s)} scores but {len(labels)} labels")
    if np.isnan(s).any():
        raise AurocError(f"score {int(np.flatnonzero(np.isnan(s))[0])} is NaN; leave out sentences without a score")
    y = np.zeros(len(s), dtype=bool)
    for i, label in enumerate(labels):
        if label not in (0, 1):  # True/False and 0/1 (ints or floats) are labels
            raise AurocError(f"label {i} is {label!r}; labels are 1 (ambiguous) or 0 (unambiguous)")
        y[i] = bool(label)
    return s, y


def _midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given the mean of the ranks they span."""
    order = np.argsort(values, kind="mergesort")
    ranked = values[order]
    ranks = np.empty(len(values), dtype=float)
    start = 0
    while start < len(ranked):
        end = start
        while end + 1 < len(ranked) and ranked[end + 1] == ranked[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def auroc(scores: Scores, labels: Labels) -> float:
    """The AUROC of ``scores`` for ``labels`` (module docstring); NaN when a class is empty.

    :class:`AurocError` for different lengths, a label other than 0/1 or a NaN score.
    """
    s, y = _checked(scores, labels)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    rank_sum = float(_midranks(s)[y].sum())
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg)


def auroc_interval(scores: Scores, labels: Labels, *, seed: int = 0,
                   resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL) -> Interval:
    """:func:`auroc` with its percentile-bootstrap interval, resampled within each class (§21, §22)."""
    s, y = _checked(scores, labels)
    items = list(zip(s.tolist(), y.tolist(), strict=True))

    def statistic(sample: Sequence[tuple[float, bool]]) -> float:
        return auroc([v for v, _ in sample], [int(lab) for _, lab in sample])

    return bootstrap_interval(items, statistic, resamples=resamples, level=level, seed=seed,
                              strata=[bool(lab) for lab in y])


def roc_curve(scores: Scores, labels: Labels) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The ROC curve's points ``(false-positive rates, true-positive rates)``, from (0, 0) to (1, 1),
    one point per distinct score threshold (highest first); its trapezoid area is :func:`auroc`.
    Empty tuples when a class is empty."""
    s, y = _checked(scores, labels)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return (), ()
    fpr, tpr = [0.0], [0.0]
    tp = fp = 0
    for threshold in sorted(set(s.tolist()), reverse=True):
        at = s == threshold
        tp += int((at & y).sum())
        fp += int((at & ~y).sum())
        fpr.append(fp / n_neg)
        tpr.append(tp / n_pos)
    return tuple(fpr), tuple(tpr)
