"""The contrastive view (issue #15 point 2): LF0 against LF1 position by position."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.evaluation.contrastive import contrast
from amp.evaluation.errors import ContrastError
from amp.parser.core.results import ForcedScore, PairScore, TokenAlternative, TokenStep
from amp.parser.parser import Parser
from amp.prompts import mixed_prompt


def _step(token: str, tid: int, p: float, g: float | None = None,
          alts: tuple[TokenAlternative, ...] = ()) -> TokenStep:
    return TokenStep(token=token, token_id=tid, prob=p, prob_grammar=p if g is None else g, alternatives_grammar=alts)


def _forced(steps: tuple[TokenStep, ...]) -> ForcedScore:
    s = sum(math.log(x.prob) for x in steps)
    sg = sum(math.log(x.prob_grammar) for x in steps)
    return ForcedScore(lf="", token_ids=tuple(x.token_id for x in steps), tokens=tuple(x.token for x in steps),
                       steps=steps, sum_logprob=s, mean_logprob=s / len(steps), sum_logprob_grammar=sg,
                       min_prob=min(x.prob for x in steps), min_prob_grammar=min(x.prob_grammar for x in steps))


ALTS = (TokenAlternative("have", 7, 0.6), TokenAlternative("instrument", 8, 0.3), TokenAlternative("saw", 9, 0.1))
LF0_STEPS = (_step("exists", 1, 0.9), _step(" x", 2, 0.8), _step("have", 7, 0.5, 0.6, ALTS), _step("(", 4, 0.99))
LF1_STEPS = (_step("exists", 1, 0.9), _step(" x", 2, 0.8), _step("instrument", 8, 0.25, 0.3, ALTS),
             _step("(", 4, 0.9), _step("y", 5, 0.5))
PAIR = PairScore(lf0=_forced(LF0_STEPS), lf1=_forced(LF1_STEPS), p_lf0=0.5, p_lf0_total=0.5)


def test_shared_prefix_then_log_odds_at_and_after_the_divergence() -> None:
    c = contrast(PAIR)
    assert c.divergence == 2 and len(c.columns) == 5
    assert [col.shared for col in c.columns] == [True, True, False, False, False]
    assert [col.log_odds for col in c.columns[:2]] == [0.0, 0.0]
    assert c.log_odds_at_divergence == pytest.approx(math.log(0.5 / 0.25))
    assert c.columns[3].log_odds == pytest.approx(math.log(0.99) - math.log(0.9))
    last = c.columns[4]
    assert (last.token_lf0, last.token_lf1, last.logprob_lf0) == (None, "y", None)
    assert last.log_odds == pytest.approx(-math.log(0.5))  # the missing side counts 0
    assert [col.position for col in c.after_divergence()] == [2, 3, 4]


def test_the_log_odds_sum_to_the_sequence_log_probability_difference() -> None:
    raw, grammar = contrast(PAIR, "raw"), contrast(PAIR, "grammar")
    assert raw.total_log_odds == pytest.approx(PAIR.lf0.sum_logprob - PAIR.lf1.sum_logprob)
    assert grammar.total_log_odds == pytest.approx(PAIR.lf0.sum_logprob_grammar - PAIR.lf1.sum_logprob_grammar)
    assert grammar.log_odds_at_divergence == pytest.approx(math.log(0.6 / 0.3))


def test_alternatives_at_the_divergence_name_both_readings() -> None:
    c = contrast(PAIR)
    assert [a.token for a in c.alternatives] == ["have", "instrument", "saw"]
    assert (c.alternative_lf0, c.alternative_lf1) == (0, 1)
    few = (ALTS[0], ALTS[2])  # LF1's token is not among the forced decode's top alternatives: added
    steps1 = LF1_STEPS[:2] + (_step("instrument", 8, 0.25, 0.3, few),) + LF1_STEPS[3:]
    steps0 = LF0_STEPS[:2] + (_step("have", 7, 0.5, 0.6, few),) + LF0_STEPS[3:]
    c2 = contrast(PairScore(lf0=_forced(steps0), lf1=_forced(steps1), p_lf0=0.5, p_lf0_total=0.5))
    assert [(a.token, a.prob) for a in c2.alternatives] == [("have", 0.6), ("saw", 0.1), ("instrument", 0.3)]
    assert (c2.alternative_lf0, c2.alternative_lf1) == (0, 2)


def test_identical_readings_never_part_and_bad_input_is_refused() -> None:
    same = PairScore(lf0=PAIR.lf0, lf1=PAIR.lf0, p_lf0=0.5, p_lf0_total=0.5)
    c = contrast(same)
    assert c.divergence is None and c.total_log_odds == 0.0 and c.after_divergence() == ()
    prefix = PairScore(lf0=_forced(LF0_STEPS[:2]), lf1=PAIR.lf0, p_lf0=0.5, p_lf0_total=0.5)
    assert contrast(prefix).divergence == 2  # one reading is a prefix of the other: they part where it ends
    with pytest.raises(ContrastError, match="'raw' or 'grammar'"):
        contrast(PAIR, "softmax")  # type: ignore[arg-type]
    empty = PairScore(lf0=_forced(LF0_STEPS).__class__(**{**_forced(LF0_STEPS).__dict__, "steps": ()}),
                      lf1=PAIR.lf1, p_lf0=0.5, p_lf0_total=0.5)
    with pytest.raises(ContrastError, match="no token steps"):
        contrast(empty)


def test_on_a_real_pair_score(saved_tiny_model: Path, tmp_path: Path) -> None:
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "c"))
    prompt = mixed_prompt("the man saw the boy with the telescope", 0.5, seed=0, k=2)
    pair = parser.score_pair(prompt.render(), prompt.gold_lf0, prompt.gold_lf1)
    c = contrast(pair)
    assert c.divergence is not None
    assert pair.lf0.token_ids[:c.divergence] == pair.lf1.token_ids[:c.divergence]
    assert pair.lf0.token_ids[c.divergence] != pair.lf1.token_ids[c.divergence]
    assert c.total_log_odds == pytest.approx(pair.lf0.sum_logprob - pair.lf1.sum_logprob, abs=1e-6)
    for index, forced in ((c.alternative_lf0, pair.lf0), (c.alternative_lf1, pair.lf1)):  # both listed, own prob
        assert index is not None
        alt, step = c.alternatives[index], forced.steps[c.divergence]
        assert alt.token_id == step.token_id and alt.prob == pytest.approx(step.prob_grammar)
