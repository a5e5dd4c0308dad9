"""Percentile-bootstrap intervals (amp.evaluation.bootstrap; docs/paper-notes.md §21): expectations by hand."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from amp.errors import AmpError
from amp.evaluation.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, Interval, bootstrap_interval, resample_indices
from amp.evaluation.errors import BootstrapError


def mean(xs):
    return statistics.fmean(xs)


def test_one_item_gives_a_point_interval():
    got = bootstrap_interval([0.7], mean)
    assert (got.estimate, got.low, got.high, got.n) == (0.7, 0.7, 0.7, 1)
    assert (got.level, got.resamples) == (DEFAULT_LEVEL, DEFAULT_RESAMPLES)


def test_constant_data_gives_a_point_interval():
    got = bootstrap_interval([3.0] * 9, mean, resamples=200)
    assert (got.estimate, got.low, got.high, got.n, got.resamples) == (3.0, 3.0, 3.0, 9, 200)


def test_two_items_span_the_whole_resample_distribution():
    """Resamples of [0, 1] have mean 0, 0.5 or 1 with chances 1/4, 1/2, 1/4: with 1000 resamples
    about 250 are all 0 and 250 all 1, so the 2.5 % and 97.5 % quantiles are exactly 0 and 1."""
    got = bootstrap_interval([0.0, 1.0], mean)
    assert (got.estimate, got.low, got.high) == (0.5, 0.0, 1.0)
    draws = resample_indices(2, seed=0)
    share_all_zero = float(np.mean(draws.sum(axis=1) == 0))
    assert 0.2 < share_all_zero < 0.3  # the quantile's margin: far more than 2.5 % of the resamples


def test_strata_keep_their_sizes():
    strata = ["a", "a", "b", "b", "b"]
    draws = resample_indices(5, resamples=300, seed=3, strata=strata)
    assert draws.shape == (300, 5)
    assert ((draws < 2).sum(axis=1) == 2).all()  # two from stratum a (indices 0, 1) in every resample
    assert ((draws >= 2).sum(axis=1) == 3).all()  # three from b
    # With one item per stratum every resample is the data itself: [0, 1] stratified never moves.
    got = bootstrap_interval([0.0, 1.0], mean, strata=["lf0", "lf1"])
    assert (got.estimate, got.low, got.high) == (0.5, 0.5, 0.5)


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    rng = np.random.default_rng(11)
    items = list(rng.random(30))
    a = bootstrap_interval(items, mean, seed=4)
    assert a == bootstrap_interval(items, mean, seed=4)
    b = bootstrap_interval(items, mean, seed=5)
    assert (a.low, a.high) != (b.low, b.high) and a.estimate == b.estimate
    assert a.low < a.estimate < a.high


def test_resamples_where_the_statistic_is_undefined_are_left_out():
    """A statistic that is NaN on a resample without a 1: 1/4 of the resamples of [0, 1]; the rest
    have mean 0.5 or 1, so the interval is [0.5, 1]."""
    def needs_a_one(xs):
        return mean(xs) if 1.0 in xs else math.nan

    got = bootstrap_interval([0.0, 1.0], needs_a_one)
    assert (got.estimate, got.low, got.high) == (0.5, 0.5, 1.0)


def test_an_interval_is_nan_when_most_resamples_are_undefined():
    """NaN unless both items are 1 in the resample: 3/4 of the resamples are NaN (over half)."""
    def only_all_ones(xs):
        return 1.0 if all(x == 1.0 for x in xs) else math.nan

    got = bootstrap_interval([1.0, 0.0], only_all_ones)
    assert math.isnan(got.estimate) and math.isnan(got.low) and math.isnan(got.high) and got.n == 2
    assert got.text() == "– (n 2)"


def test_no_items_give_a_nan_interval_with_n_0():
    got = bootstrap_interval([], mean)
    assert got.n == 0 and all(math.isnan(v) for v in (got.estimate, got.low, got.high))
    assert got.text() == "– (n 0)"


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1])
def test_a_level_outside_0_1_is_refused(level):
    with pytest.raises(BootstrapError, match="level"):
        bootstrap_interval([1.0, 2.0], mean, level=level)


@pytest.mark.parametrize("resamples", [0, -3])
def test_fewer_than_one_resample_is_refused(resamples):
    with pytest.raises(BootstrapError, match="resamples"):
        bootstrap_interval([1.0, 2.0], mean, resamples=resamples)


def test_bad_resample_requests_are_typed_errors():
    with pytest.raises(BootstrapError, match="at least one item"):
        resample_indices(0)
    with pytest.raises(BootstrapError, match="3 labels for 2 items"):
        resample_indices(2, strata=["a", "b", "c"])
    assert issubclass(BootstrapError, AmpError)


def test_the_level_sets_the_quantiles():
    items = list(np.linspace(0, 1, 41))
    wide, narrow = bootstrap_interval(items, mean, level=0.95), bootstrap_interval(items, mean, level=0.5)
    assert wide.low < narrow.low < narrow.high < wide.high
    assert narrow.level == 0.5


def test_text_shows_estimate_interval_and_n():
    assert Interval(0.5, 0.25, 0.75, 4).text() == "0.50 [0.25, 0.75] (n 4)"
    assert Interval(0.5, math.nan, math.nan, 4).text(3) == "0.500 (n 4)"
