"""Bootstrap intervals of the sweep summaries (amp.evaluation.sweep_intervals; docs/paper-notes.md §21)
and the spread across seeds (amp.evaluation.seed_spread)."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from amp.evaluation import experiments as ex
from amp.evaluation.errors import ExperimentError
from amp.evaluation.seed_spread import SPREAD_COLUMNS, seed_spread, spread
from amp.evaluation.sweep_intervals import (
    FEWSHOT_RATIO_STATS,
    FEWSHOT_TYPE_STATS,
    BootstrapSettings,
    fewshot_with_intervals,
    interval_columns,
    zeroshot_stats,
    zeroshot_with_intervals,
)

LF0 = "exists x . man(x) AND exists y . girl(y) AND saw(x, y)"
LF1 = "exists x . girl(x) AND exists y . man(y) AND saw(x, y)"
OTHER = "exists x . man(x) AND slept(x)"


def rec(surface: str, ratio: float | None, beams: list[str], p: float | None, type_: str = "pp", error=None):
    fields = ex.match_fields(beams, LF0, LF1, "logical", "fol")
    return ex.SweepRecord(id=f"{type_}/{ratio}/{surface}", type=type_, ratio=ratio, surface=surface, lf0=LF0, lf1=LF1,
                          beams=tuple(beams), p_lf0=p, error=error, **fields)


def random_records(seed: int, n: int, ratios=(None,), types=("pp", "scope")):
    rng = random.Random(seed)
    return [rec(f"s{i}", r, rng.sample([LF0, LF1, OTHER], 3), rng.random(), t)
            for t in types for r in ratios for i in range(n)]


def test_two_sentences_one_right_span_0_to_1_and_constant_cells_do_not_move():
    """Zero-shot, two sentences: top-1 LF0 once, LF1 once.  acc_lf0's resamples are 0, 0.5 or 1
    (chances 1/4, 1/2, 1/4) → [0, 1]; ZM_5 is 100 on every resample (both LFs in both beams) → [100, 100]."""
    records = [rec("a", None, [LF0, LF1], 0.2), rec("b", None, [LF1, LF0], 0.6)]
    row = zeroshot_with_intervals(records, k=5).iloc[0]
    assert row["n"] == 2
    assert (row["acc_lf0"], row["acc_lf0_low"], row["acc_lf0_high"]) == (0.5, 0.0, 1.0)
    assert (row["ZM_5"], row["ZM_5_low"], row["ZM_5_high"]) == (100.0, 100.0, 100.0)
    assert (row["mean_p_lf0_low"], row["mean_p_lf0_high"]) == pytest.approx((0.2, 0.6))
    assert (row["neither"], row["neither_low"], row["neither_high"]) == (0.0, 0.0, 0.0)


def test_columns_follow_their_statistic_and_estimates_are_the_summaries():
    zero = random_records(0, 30)
    got = zeroshot_with_intervals(zero, k=5)
    plain = ex.zeroshot_summary(zero, k=5)
    assert list(got.drop(columns=[c for s in zeroshot_stats(5) for c in interval_columns(s)]).columns) == list(
        plain.columns)
    for stat in zeroshot_stats(5):
        cols = list(got.columns)
        assert cols.index(f"{stat}_low") == cols.index(stat) + 1 and cols.index(f"{stat}_high") == cols.index(stat) + 2
        assert got[stat].tolist() == pytest.approx(plain[stat].tolist())
        assert (got[f"{stat}_low"] <= got[stat] + 1e-12).all() and (got[stat] <= got[f"{stat}_high"] + 1e-12).all()


def test_fewshot_estimates_are_the_summaries_and_n_counts_sentences():
    few = random_records(1, 12, ratios=ex.DEFAULT_RATIOS)
    per_ratio, per_type = fewshot_with_intervals(few)
    plain_ratio, plain_type = ex.fewshot_summary(few)
    for stat in FEWSHOT_RATIO_STATS:
        assert per_ratio[stat].tolist() == pytest.approx(plain_ratio[stat].tolist())
        assert (per_ratio[f"{stat}_low"] <= per_ratio[stat] + 1e-12).all()
    for stat in FEWSHOT_TYPE_STATS:
        assert per_type[stat].tolist() == pytest.approx(plain_type[stat].tolist())
        assert (per_type[f"{stat}_low"] < per_type[stat]).all() and (per_type[stat] < per_type[f"{stat}_high"]).all()
    assert per_type["n"].tolist() == [12, 12] and per_type["n_records"].tolist() == [12 * 11] * 2
    assert per_ratio["n"].tolist() == [12] * 22


def test_a_fewshot_sentence_is_resampled_with_all_its_ratios():
    """Two sentences over r = 0 and 1: one always answers LF0, one always LF1.  Resampled as whole
    sentences, a resample is {LF0-sentence ×2}, {LF1-sentence ×2} or one of each, so FDM takes 1, 1
    or 1 (|a0 − r| + |a1 − (1 − r)| averaged over r = 0, 1 is 1 for all three): a point interval.
    Resampling records one by one would mix ratios and give FDM below 1 on some resamples."""
    few = [rec("a", r, [LF0], 0.9) for r in (0.0, 1.0)] + [rec("b", r, [LF1], 0.1) for r in (0.0, 1.0)]
    _, per_type = fewshot_with_intervals(few)
    row = per_type.iloc[0]
    assert (row["FDM"], row["FDM_low"], row["FDM_high"]) == (1.0, 1.0, 1.0)
    assert row["n"] == 2 and row["n_records"] == 4
    # FIM on a resample: ((0.9² + 0.1²)/2 …) — the same 0.41 whatever the mix of the two sentences
    assert (row["FIM"], row["FIM_low"], row["FIM_high"]) == pytest.approx((0.41, 0.41, 0.41))


def test_failed_items_are_left_out_and_the_seed_is_honoured():
    zero = random_records(2, 20) + [rec("bad", None, [], None, error="boom")]
    a = zeroshot_with_intervals(zero, boot=BootstrapSettings(resamples=300, seed=1))
    b = zeroshot_with_intervals(zero, boot=BootstrapSettings(resamples=300, seed=1))
    c = zeroshot_with_intervals(zero, boot=BootstrapSettings(resamples=300, seed=2))
    pd.testing.assert_frame_equal(a, b)
    assert not a["acc_lf0_low"].equals(c["acc_lf0_low"]) or not a["acc_lf0_high"].equals(c["acc_lf0_high"])
    assert a["n"].tolist() == [20, 20] and a["n_errors"].tolist() == [1, 0]


def test_empty_input_keeps_the_columns():
    got = zeroshot_with_intervals([], k=3)
    assert got.empty and {"ZM_3_low", "ZM_3_high", "acc_lf0_low"} <= set(got.columns)
    per_ratio, per_type = fewshot_with_intervals([])
    assert per_ratio.empty and "mean_p_lf0_high" in per_ratio and per_type.empty and "FIM_low" in per_type


# --------------------------------------------------------------------------- spread across seeds


def test_spread_by_hand():
    assert spread([1.0, 2.0, 3.0]) == {"mean": 2.0, "sd": 1.0, "min": 1.0, "max": 3.0, "n_seeds": 3}
    one = spread([0.5, math.nan])
    assert one["mean"] == 0.5 and math.isnan(one["sd"]) and one["n_seeds"] == 1
    assert spread([])["n_seeds"] == 0 and math.isnan(spread([])["mean"])


def test_seed_spread_lines_up_cells_by_their_keys():
    s0 = pd.DataFrame({"type": ["pp", "scope"], "ratio": [0.5, 0.5], "acc": [0.2, 0.4]})
    s1 = pd.DataFrame({"type": ["scope", "pp"], "ratio": [0.5, 0.5], "acc": [0.6, 0.4]})
    got = seed_spread({0: s0, 7: s1}, ("type", "ratio"), ("acc",))
    assert list(got.columns) == ["type", "ratio", "stat", "seed_0", "seed_7", *SPREAD_COLUMNS]
    pp = got[got["type"] == "pp"].iloc[0]
    assert (pp["seed_0"], pp["seed_7"], pp["mean"], pp["min"], pp["max"]) == pytest.approx((0.2, 0.4, 0.3, 0.2, 0.4))
    assert pp["sd"] == pytest.approx(math.sqrt(0.02))
    scope = got[got["type"] == "scope"].iloc[0]
    assert scope["mean"] == pytest.approx(0.5)
    with pytest.raises(ExperimentError, match="lacks"):
        seed_spread({0: s0}, ("type",), ("FDM",))


@pytest.mark.parametrize("bad", [{"resamples": 0}, {"resamples": True}, {"level": 1.0}, {"level": 0.0},
                                 {"seed": -1}])
def test_bootstrap_settings_are_checked_where_they_are_made(bad):
    from amp.evaluation.errors import BootstrapError

    with pytest.raises(BootstrapError):
        BootstrapSettings(**bad)
