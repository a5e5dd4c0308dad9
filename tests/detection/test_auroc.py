"""AUROC exact on hand-computed toys (ties count ½), its stratified bootstrap interval, the ROC curve."""

from __future__ import annotations

import math

import numpy as np
import pytest

from amp.detection.auroc import auroc, auroc_interval, roc_curve
from amp.detection.errors import AurocError
from amp.evaluation.bootstrap import Interval

#: Positives score 3, 2, 2; negatives 2, 1.  Pairs (pos, neg): 3>2, 3>1, 2=2 (½), 2>1, 2=2 (½), 2>1
#: → U = 1 + 1 + ½ + 1 + ½ + 1 = 5 of n⁺·n⁻ = 6.
TOY_SCORES = (3.0, 2.0, 2.0, 2.0, 1.0)
TOY_LABELS = (1, 1, 1, 0, 0)


def test_hand_computed_toy_with_ties() -> None:
    assert auroc(TOY_SCORES, TOY_LABELS) == pytest.approx(5 / 6, abs=1e-12)


@pytest.mark.parametrize(("scores", "labels", "expected"), [
    ((0.9, 0.8, 0.1, 0.2), (1, 1, 0, 0), 1.0),          # perfect
    ((0.1, 0.2, 0.9, 0.8), (1, 1, 0, 0), 0.0),          # perfect, read backwards
    ((0.5, 0.5, 0.5, 0.5), (1, 0, 1, 0), 0.5),          # all tied: every pair counts ½
    ((1.0, 2.0, 3.0, 4.0), (1, 0, 1, 0), 0.25),         # pos 1, 3 vs neg 2, 4: only 3 > 2, 1 pair of 4
    ((0.7, 0.3), (True, False), 1.0),                   # booleans are labels
])
def test_small_cases(scores: tuple, labels: tuple, expected: float) -> None:
    assert auroc(scores, labels) == pytest.approx(expected, abs=1e-12)


def test_matches_the_pairwise_definition_on_random_data() -> None:
    rng = np.random.default_rng(7)
    s = rng.integers(0, 5, size=60).astype(float)  # many ties
    y = rng.integers(0, 2, size=60)
    pos, neg = s[y == 1], s[y == 0]
    pairwise = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))
    assert auroc(s, y) == pytest.approx(pairwise, abs=1e-12)


def test_one_class_gives_nan() -> None:
    assert math.isnan(auroc([0.1, 0.2], [1, 1]))
    assert math.isnan(auroc([], []))
    assert roc_curve([0.1], [0]) == ((), ())


@pytest.mark.parametrize(("scores", "labels"), [
    ((0.1, 0.2), (1,)), ((0.1, float("nan")), (1, 0)), ((0.1, 0.2), (1, 2)), ((0.1, 0.2), ("1", 0)),
])
def test_bad_input_is_a_typed_error(scores: tuple, labels: tuple) -> None:
    with pytest.raises(AurocError):
        auroc(scores, labels)


def test_interval_is_deterministic_and_contains_the_estimate() -> None:
    rng = np.random.default_rng(1)
    y = [1] * 30 + [0] * 30
    s = list(rng.normal(size=60) + np.array(y) * 0.8)
    first = auroc_interval(s, y, seed=5, resamples=400)
    assert isinstance(first, Interval)
    assert first == auroc_interval(s, y, seed=5, resamples=400)
    assert first.estimate == auroc(s, y)
    assert first.low <= first.estimate <= first.high
    assert 0.0 <= first.low < first.high <= 1.0
    assert (first.n, first.resamples, first.level) == (60, 400, 0.95)
    assert auroc_interval(s, y, seed=6, resamples=400) != first


def test_interval_resamples_within_each_class() -> None:
    """A perfect separation stays perfect in every resample (both classes are always present)."""
    got = auroc_interval([0.9, 0.8, 0.7, 0.1, 0.2], [1, 1, 1, 0, 0], seed=0, resamples=200)
    assert (got.estimate, got.low, got.high) == (1.0, 1.0, 1.0)


def test_roc_curve_area_is_the_auroc() -> None:
    fpr, tpr = roc_curve(TOY_SCORES, TOY_LABELS)
    assert (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert fpr == (0.0, 0.0, 0.5, 1.0) and tpr == (0.0, 1 / 3, 1.0, 1.0)
    area = sum((fpr[i + 1] - fpr[i]) * (tpr[i + 1] + tpr[i]) / 2 for i in range(len(fpr) - 1))
    assert area == pytest.approx(auroc(TOY_SCORES, TOY_LABELS))
