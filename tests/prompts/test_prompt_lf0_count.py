"""The number of LF0 examples in a mixed prompt, against an oracle that shares no code with it.

Reference §11: a mixed prompt of ``k`` examples shows ``int(k·r)`` of them with LF0.  The oracle
here is integer arithmetic on the ratio's decimal digits — ``floor(k·n/d)`` for ``r = n/d`` —
so neither float rounding nor :func:`amp.prompts.lf0_count` itself can hide a wrong count
(``round(k·r)`` would give 2 for k = 5, r = 0.3; the answer is 1).  Every k the Prompt builder
offers (1–20) and every ratio on its slider (0.0–1.0 in steps of 0.1) is checked through the
real prompt, and every ratio on a 0.01 grid through :func:`lf0_count`.
"""

from __future__ import annotations

import pytest

from amp.data.generate import AMBIGUOUS_TYPES, sample_pairs
from amp.prompts import lf0_count, mixed_prompt

BUILDER_K = range(1, 21)  # views/prompt_builder.py: number_input("Examples k", 1, 20, ...)
BUILDER_TENTHS = range(11)  # its slider: 0.0 to 1.0 in steps of 0.1


def floor_count(k: int, numerator: int, denominator: int) -> int:
    """floor(k · numerator/denominator) in integers: no float anywhere."""
    return (k * numerator) // denominator


def test_the_oracle_itself() -> None:
    assert floor_count(5, 3, 10) == 1 and floor_count(10, 3, 10) == 3 and floor_count(20, 7, 10) == 14
    assert floor_count(3, 1, 2) == 1 and floor_count(1, 10, 10) == 1 and floor_count(1, 9, 10) == 0


def test_five_examples_at_ratio_point_three_have_one_lf0() -> None:
    assert lf0_count(5, 0.3) == 1
    prompt = mixed_prompt(sample_pairs("pp", 1, seed=2)[0], 0.3, seed=0, k=5)
    assert [ex.label for ex in prompt.examples].count(0) == 1


@pytest.mark.parametrize("k", BUILDER_K)
def test_lf0_count_is_the_floor_for_every_k_and_every_hundredth(k: int) -> None:
    for hundredths in range(101):
        ratio = hundredths / 100
        assert lf0_count(k, ratio) == floor_count(k, hundredths, 100), (k, ratio)
    for tenths in BUILDER_TENTHS:  # as the slider may produce them: 0.1 added up, e.g. 0.30000000000000004
        assert lf0_count(k, sum([0.1] * tenths)) == floor_count(k, tenths, 10), (k, tenths)


@pytest.mark.parametrize("type_", AMBIGUOUS_TYPES)
def test_mixed_prompt_shows_floor_k_r_lf0_examples_for_every_builder_setting(type_: str) -> None:
    test = sample_pairs(type_, 1, seed=5)[0]
    for k in BUILDER_K:
        for tenths in BUILDER_TENTHS:
            prompt = mixed_prompt(test, tenths / 10, seed=k, k=k)
            labels = [ex.label for ex in prompt.examples]
            assert len(labels) == k
            assert labels.count(0) == floor_count(k, tenths, 10), (type_, k, tenths / 10)
            assert labels.count(1) == k - floor_count(k, tenths, 10)
