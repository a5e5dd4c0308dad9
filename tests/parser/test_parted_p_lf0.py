"""P(LF0) where the readings part (issue #40 point 2, docs/paper-notes.md §12): the arithmetic on
hand-built forced scores, and the invariant that makes it sound — tokens before the parting have
the same probability in both forced decodes — on the tiny test model."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from amp.data.generate import sample_pairs
from amp.data.types import type_ids
from amp.parser.core.results import ForcedScore, PairScore, TokenStep, parting_index
from amp.parser.parser import Parser
from amp.parser.search.scoring import pair_score
from amp.prompts import zero_shot_prompt


def _forced(steps: list[tuple[str, int, float]]) -> ForcedScore:
    """A forced score of ``(token, id, raw probability)`` steps, its sums and minimum as scoring computes them."""
    logs = [math.log(p) if p > 0 else -math.inf for _, _, p in steps]
    return ForcedScore(lf="".join(t for t, _, _ in steps), token_ids=tuple(i for _, i, _ in steps),
                       tokens=tuple(t for t, _, _ in steps),
                       steps=tuple(TokenStep(token=t, token_id=i, prob=p, prob_grammar=p) for t, i, p in steps),
                       sum_logprob=sum(logs), mean_logprob=sum(logs) / len(steps), sum_logprob_grammar=sum(logs),
                       min_prob=min(p for _, _, p in steps), min_prob_grammar=min(p for _, _, p in steps))


def _pair(lf0: list[tuple[str, int, float]], lf1: list[tuple[str, int, float]]) -> PairScore:
    return pair_score(_forced(lf0), _forced(lf1))  # the paper's p_lf0 as the scorer computes it


#: "the chicken is ready to eat": both readings start "exists x . chicken(x) AND ready(x) AND"; the new
#: word " chicken" is the least likely token of both, in the same context, with the same probability.
SHARED = [(" exists", 10, 0.9), (" x", 11, 0.8), (" .", 12, 0.95), (" chicken", 13, 0.0018), ("(x)", 14, 0.9)]
CHICKEN_LF0 = [*SHARED, (" AND", 15, 0.7), (" eat", 16, 0.2), ("(e)", 17, 0.5), ("\n", 1, 0.9)]
CHICKEN_LF1 = [*SHARED, (" AND", 15, 0.7), (" ready", 18, 0.05), ("(x)", 14, 0.4), ("\n", 1, 0.8)]


def test_a_shared_least_likely_token_pins_the_papers_measure_but_not_the_parted_one() -> None:
    pair = _pair(CHICKEN_LF0, CHICKEN_LF1)
    assert pair.p_lf0 == 0.5  # m0 = m1 = 0.0018: the paper's measure says nothing
    assert pair.parting_index == 6  # " eat" against " ready"; " AND" (5) is shared too
    # from token 6 on: m0' = min(0.2, 0.5, 0.9) = 0.2, m1' = min(0.05, 0.4, 0.8) = 0.05
    assert pair.p_lf0_parted == pytest.approx(0.2 / 0.25) == pytest.approx(0.8)
    assert pair.shared_minimum == "chicken"  # stripped of its leading space


def test_minima_after_the_parting_give_the_papers_value() -> None:
    pair = _pair([(" exists", 10, 0.9), (" x", 11, 0.5), (" man", 20, 0.1), ("\n", 1, 0.6)],
                 [(" exists", 10, 0.9), (" x", 11, 0.5), (" boy", 21, 0.3), ("\n", 1, 0.02)])
    assert pair.parting_index == 2 and pair.shared_minimum is None
    assert pair.p_lf0_parted == pair.p_lf0 == pytest.approx(0.1 / 0.12)


def test_one_minimum_before_the_parting_is_not_degenerate_but_is_left_out() -> None:
    """LF1's minimum is after the parting (0.005), LF0's on the shared token (0.01): the paper's
    measure is not pinned at 0.5, but LF0's shared minimum still enters it."""
    pair = _pair([(" a", 10, 0.9), (" duck", 11, 0.01), (" x", 12, 0.5)],
                 [(" a", 10, 0.9), (" duck", 11, 0.01), (" y", 13, 0.005)])
    assert pair.p_lf0 == pytest.approx(0.01 / 0.015) and pair.shared_minimum is None
    assert pair.p_lf0_parted == pytest.approx(0.5 / 0.505)


def test_identical_first_token_and_prefix_sequences() -> None:
    same = [(" exists", 10, 0.9), (" x", 11, 0.3), ("\n", 1, 0.6)]
    one = _pair(same, same)
    assert one.parting_index is None and one.p_lf0_parted == 0.5 and one.shared_minimum is None
    first = _pair([(" exists", 10, 0.2), ("\n", 1, 0.6)], [(" forall", 30, 0.1), ("\n", 1, 0.7)])
    assert first.parting_index == 0 and first.shared_minimum is None
    assert first.p_lf0_parted == first.p_lf0 == pytest.approx(0.2 / 0.3)
    # a strict prefix: the side with no token from the parting on has m' = 1
    prefix = _pair([(" exists", 10, 0.9), (" x", 11, 0.3)], [(" exists", 10, 0.9), (" x", 11, 0.3), ("\n", 1, 0.4)])
    assert prefix.parting_index == 2 and prefix.p_lf0_parted == pytest.approx(1 / 1.4)


def test_both_parted_minima_zero_is_nan() -> None:
    pair = _pair([(" exists", 10, 0.9), (" x", 11, 0.0)], [(" exists", 10, 0.9), (" y", 12, 0.0)])
    assert math.isnan(pair.p_lf0_parted) and math.isnan(pair.p_lf0)


def test_steps_without_ids_part_at_their_text() -> None:
    """An endpoint's steps carry no token ids (-1): their text decides where the readings part."""
    steps0 = (TokenStep(" a", -1, 0.01, math.nan), TokenStep(" b", -1, 0.4, math.nan))
    steps1 = (TokenStep(" a", -1, 0.01, math.nan), TokenStep(" c", -1, 0.1, math.nan))
    assert parting_index(steps0, steps1) == 1
    pair = PairScore(lf0=replace(_forced(CHICKEN_LF0), token_ids=(), steps=steps0),
                     lf1=replace(_forced(CHICKEN_LF1), token_ids=(), steps=steps1), p_lf0=0.5, p_lf0_total=0.5)
    assert pair.p_lf0_parted == pytest.approx(0.8) and pair.shared_minimum == "a"


def test_the_parted_measure_is_computed_not_stored() -> None:
    """PairScore's JSON (cache, service) is unchanged: the new measure is a property of the steps."""
    pair = _pair(CHICKEN_LF0, CHICKEN_LF1)
    data = json.loads(json.dumps(pair.to_dict(), allow_nan=False))
    assert set(data) == {"lf0", "lf1", "p_lf0", "p_lf0_total"}
    back = PairScore.from_dict(data)
    assert back.p_lf0_parted == pair.p_lf0_parted and back.shared_minimum == "chicken"


def test_tokens_before_the_parting_have_equal_probabilities_in_both_decodes(saved_tiny_model: Path) -> None:
    """What makes the measure sound: the same ids after the same prompt and prefix get the same
    probability in both forced decodes (one pool pair of every ambiguity type, tiny model)."""
    parser = Parser(str(saved_tiny_model), device="cpu", cache=False)
    shared: dict[str, int] = {}
    for type_ in type_ids():
        (pool_pair,) = sample_pairs(type_, 1, seed=0)
        pair = parser.score_pair(zero_shot_prompt(pool_pair).render(), pool_pair.lf0.lf, pool_pair.lf1.lf)
        d = pair.parting_index
        assert d is not None, type_  # two readings, two token sequences
        assert pair.lf0.token_ids[:d] == pair.lf1.token_ids[:d] and pair.lf0.token_ids[d] != pair.lf1.token_ids[d]
        assert [s.prob for s in pair.lf0.steps[:d]] == [s.prob for s in pair.lf1.steps[:d]], type_
        m0, m1 = (min(s.prob for s in side.steps[d:]) for side in (pair.lf0, pair.lf1))
        assert pair.p_lf0_parted == pytest.approx(m0 / (m0 + m1))
        shared[type_] = d
    assert shared["pp"] > 3, shared  # not vacuous: the PP readings share their quantifiers and first words
