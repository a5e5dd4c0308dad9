"""ZM_k, top-1 rates, FDM, FIM and P(LF0) (paper Eqs. 1–3; docs/paper-notes.md §13; amp.evaluation.metrics)."""

from __future__ import annotations

import math
import re

import pytest

from amp.errors import MetricError
from amp.evaluation.metrics import (
    ZeroShotOutcome,
    fdm,
    fdm_by_ratio,
    fim,
    matches,
    min_token_prob,
    normalise_type,
    p_lf0,
    top1_accuracy,
    zm_k,
)
from amp.prompts import check_ratio

# Real LFs stand in for the original tests' mock LFs (which our grammar would not parse).
LF0 = "exists x . forall y . exists a . cow(y) AND dog(x) AND saw(a) AND agent(a, y) AND patient(a, x)"
LF1 = "forall x . exists y . exists a . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
# LF0 and LF1 written differently: conjuncts reordered (the §13.6 "mocklf1(arg1) AND mocklf1(arg0)")
LF0_REORDERED = "exists x . forall y . exists a . saw(a) AND agent(a, y) AND patient(a, x) AND dog(x) AND cow(y)"
LF1_RENAMED = "forall y . exists x . exists e . cow(y) AND dog(x) AND saw(e) AND agent(e, y) AND patient(e, x)"
OTHER = "exists x . exists a . man(x) AND slept(a) AND agent(a, x)"
JUNK = "this is not an LF"


# ---------------------------------------------------------------------------- matching


def test_matching_modes() -> None:
    assert matches(LF0_REORDERED, LF0, "paper") and matches(LF0_REORDERED, LF0)
    assert matches(LF1_RENAMED, LF1, "logical")
    assert matches(LF1_RENAMED, LF1, "paper")  # positional renaming: same prefix positions
    assert not matches(LF0, LF1) and not matches(JUNK, LF0) and not matches(None, LF0)
    assert not matches("", LF0)
    # paper mode is not alpha-invariant beyond positions (docs/paper-notes.md §8.6 item 1)
    swapped = "exists a . exists x . man(x) AND slept(a) AND agent(a, x)"
    assert matches(swapped, OTHER) and not matches(swapped, OTHER, "paper")


def test_predictions_with_any_words_are_read() -> None:
    """An unconstrained model's names: other variables match; other words are read (and differ)."""
    renamed = "exists p . forall q . exists ev . cow(q) AND dog(p) AND saw(ev) AND agent(ev, q) AND patient(ev, p)"
    for mode in ("logical", "paper"):
        assert matches(renamed, LF0, mode) and not matches(renamed, LF1, mode)
        swam = renamed.replace("saw(ev)", "swam(ev)")
        assert not matches(swam, LF0, mode)
        assert matches(swam, re.sub(r"\bp\b", "w", swam), mode)
    outcome = ZeroShotOutcome((JUNK, renamed.replace("exists p . forall q", "forall q . exists p")), LF0, LF1)
    assert zm_k([outcome], 2) == 0.0  # the renamed beam matches LF1 only with its own prefix order
    assert zm_k([ZeroShotOutcome((renamed, LF1_RENAMED), LF0, LF1)], 2) == 100.0


def test_gold_must_parse() -> None:
    with pytest.raises(MetricError, match="gold LF does not parse"):
        matches(LF0, JUNK)


# ---------------------------------------------------------------------------- ZM_k (Eq. 1)


def test_zm_both_mode_cases_of_13_6() -> None:
    both = [([LF0, LF1], LF0, LF1), ([LF1_RENAMED, LF0_REORDERED], LF0, LF1)]
    assert zm_k(both, k=2) == 100.0
    half = [([LF0, LF1], LF0, LF1), ([LF0, OTHER], LF0, LF1)]
    assert zm_k(half, k=2) == 50.0
    none = [([LF0, OTHER], LF0, LF1), ([OTHER, LF1], LF0, LF1)]
    assert zm_k(none, k=2) == 0.0


def test_zm_either_mode_cases_of_13_6() -> None:
    assert zm_k([([LF0], LF0, LF1), ([LF0_REORDERED], LF0, LF1)], k=1, either=True) == 100.0
    assert zm_k([([OTHER, LF1], LF0, LF1), ([JUNK, LF1_RENAMED], LF0, LF1)], k=2, either=True) == 100.0
    assert zm_k([([OTHER, LF1], LF0, LF1), ([OTHER, JUNK], LF0, LF1)], k=2, either=True) == 50.0
    # either means OR (the original summed the indicators and could exceed 100)
    assert zm_k([([LF0, LF1], LF0, LF1)], k=2, either=True) == 100.0


def test_zm_k_cuts_the_beam() -> None:
    beam = [LF0, OTHER, OTHER, OTHER, OTHER, LF1]
    assert zm_k([(beam, LF0, LF1)], k=5) == 0.0
    assert zm_k([(beam, LF0, LF1)], k=6) == 100.0
    assert zm_k([ZeroShotOutcome(tuple(beam), LF0, LF1)], k=6) == 100.0


def test_zm_k_larger_than_beam_pads() -> None:
    assert zm_k([([LF1, LF0], LF0, LF1)], k=5) == 100.0
    assert zm_k([([], LF0, LF1)], k=5) == 0.0


def test_zm_unparseable_predictions_never_match() -> None:
    assert zm_k([([JUNK, JUNK], LF0, LF1)], k=5) == 0.0


def test_zm_empty_is_nan_not_zero() -> None:
    # docs/paper-notes.md §13.3: the original returned 0 for an empty (revscope) group
    assert math.isnan(zm_k([], k=5))


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "5"])
def test_zm_bad_k(k) -> None:
    with pytest.raises(MetricError, match="k must be"):
        zm_k([([LF0], LF0, LF1)], k=k)


def test_zm_bad_examples() -> None:
    with pytest.raises(MetricError):
        zm_k([(LF0, LF0, LF1)])  # predictions given as one string
    with pytest.raises(MetricError):
        zm_k([(LF0, LF1)])  # type: ignore[list-item]


def test_zm_paper_mode() -> None:
    # ∃y∃a commute (one block in logical mode); the paper's positional renaming tells them apart
    reordered = "forall x . exists a . exists y . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
    data = [([LF0, reordered], LF0, LF1)]
    assert zm_k(data, k=2) == 100.0
    assert zm_k(data, k=2, mode="paper") == 0.0


# ---------------------------------------------------------------------------- type names


def test_normalise_type() -> None:
    assert normalise_type("scope_reverse") == "revscope"
    assert normalise_type("revscope") == "revscope"
    assert normalise_type(" pp ") == "pp"


# ---------------------------------------------------------------------------- top-1 rates


def test_top1_accuracy() -> None:
    rates = top1_accuracy([LF0, LF1_RENAMED, OTHER, JUNK], [LF0] * 4, [LF1] * 4)
    assert rates == {"lf0": 0.25, "lf1": 0.25, "either": 0.5, "neither": 0.5, "unparseable": 0.25}
    rates = top1_accuracy([None, ""], [LF0] * 2, [LF1] * 2)
    assert rates["unparseable"] == 1.0 and rates["neither"] == 1.0
    empty = top1_accuracy([], [], [])
    assert all(math.isnan(v) for v in empty.values())
    with pytest.raises(MetricError, match="equal lengths"):
        top1_accuracy([LF0], [LF0, LF0], [LF1])


def test_all_unparseable() -> None:
    rates = top1_accuracy([JUNK] * 3, [LF0] * 3, [LF1] * 3)
    assert rates == {"lf0": 0.0, "lf1": 0.0, "either": 0.0, "neither": 1.0, "unparseable": 1.0}
    assert fdm({0.5: [(JUNK, LF0, LF1)] * 3}) == 1.0


# ---------------------------------------------------------------------------- FDM (Eq. 2)


def test_fdm_cases_of_13_6() -> None:
    assert fdm({0.5: [(LF0, LF0, LF1), (LF1, LF0, LF1)]}) == 0.0
    assert fdm({0.5: [(OTHER, LF0, LF1), (JUNK, LF0, LF1)]}) == 1.0
    assert fdm({0.5: [(LF0, LF0, LF1), (OTHER, LF0, LF1)]}) == 0.5


def test_fdm_range_reaches_two() -> None:
    # docs/paper-notes.md §13.4: always the wrong LF at r = 1 (and r = 0) gives 2, not the paper's max 1
    assert fdm({1.0: [(LF1, LF0, LF1)], 0.0: [(LF0, LF0, LF1)]}) == 2.0
    assert fdm({1.0: [(LF0, LF0, LF1)], 0.0: [(LF1, LF0, LF1)]}) == 0.0


def test_fdm_averages_over_ratios() -> None:
    by_ratio = {0.0: [(LF1, LF0, LF1)], 0.3: [(LF0, LF0, LF1), (LF1, LF0, LF1)]}
    terms = fdm_by_ratio(by_ratio)
    assert terms[0.0] == 0.0
    assert terms[0.3] == pytest.approx(abs(0.5 - 0.3) + abs(0.5 - 0.7))
    assert fdm(by_ratio) == pytest.approx(0.2)


def test_fdm_edge_cases() -> None:
    assert math.isnan(fdm({}))
    with pytest.raises(MetricError, match="no examples"):
        fdm({0.5: []})
    for bad in (1.5, -0.1, math.nan):
        with pytest.raises(MetricError, match="ratio"):
            fdm({bad: [(LF0, LF0, LF1)]})


# ---------------------------------------------------------------------------- FIM (Eq. 3) and P(LF0)


def test_fim_cases_of_13_6() -> None:
    p_all_lf0 = p_lf0(min_token_prob([1, 1, 1]), min_token_prob([0, 0, 0]))
    assert p_all_lf0 == 1.0
    assert fim({1.0: [p_all_lf0]}) == 0.0
    assert fim({0.0: [p_all_lf0]}) == 1.0
    p_all_lf1 = p_lf0(min_token_prob([0, 0, 0]), min_token_prob([1, 1, 1]))
    assert fim({1.0: [p_all_lf0, p_all_lf1]}) == 0.5
    half = p_lf0(min_token_prob([1, 0.5, 1]), min_token_prob([1, 0.5, 1]))
    assert half == 0.5
    assert fim({1.0: [half]}) == 0.25


def test_fim_skips_nan_and_averages_ratios() -> None:
    nan = p_lf0(0.0, 0.0)
    assert math.isnan(nan)
    assert fim({1.0: [1.0, nan]}) == 0.0
    assert fim({1.0: [0.5], 0.0: [0.5], 0.5: [nan]}) == 0.25  # the all-NaN ratio is skipped
    assert math.isnan(fim({1.0: [nan]}))
    assert math.isnan(fim({}))


def test_fim_validation() -> None:
    with pytest.raises(MetricError, match="ratio"):
        fim({2.0: [0.5]})
    with pytest.raises(MetricError, match="P\\(LF0\\)"):
        fim({0.5: [1.5]})


def test_p_lf0_and_min_token_prob() -> None:
    assert p_lf0(0.3, 0.1) == pytest.approx(0.75)
    with pytest.raises(MetricError):
        p_lf0(-0.1, 0.5)
    assert min_token_prob([0.9, 0.2, 0.05], drop_eos=True) == 0.2
    assert min_token_prob([0.9, 0.2, 0.05]) == 0.05
    with pytest.raises(MetricError):
        min_token_prob([0.5], drop_eos=True)


def test_check_ratio() -> None:
    assert check_ratio(0) == 0.0 and check_ratio(1) == 1.0 and check_ratio(0.3) == 0.3
    for bad in (True, "0.5", None, 1.01, -1e-9):
        with pytest.raises(MetricError):
            check_ratio(bad)
