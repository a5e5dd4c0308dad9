"""Forced decoding: batched shared-prompt scores equal independent ones; grammar renormalisation."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from parser_lm_helpers import simple_prompt

from amp.parser.core.errors import DecodingError
from amp.parser.core.results import ForcedScore, PairScore
from amp.parser.search import prefix
from amp.parser.search.scoring import (
    forced_score,
    forced_score_independent,
    min_prob_ratio,
    score_pair,
    score_pairs,
    total_prob_ratio,
)

PP_SENTENCE = "Galileo saw Mary with the telescope"
PP_LF0 = ("exists x . exists a . exists e . telescope(x) AND saw(a) AND agent(a, Galileo) AND "
          "patient(a, Mary) AND have(e) AND agent(e, Mary) AND patient(e, x)")
PP_LF1 = ("exists x . exists a . telescope(x) AND saw(a) AND agent(a, Galileo) AND patient(a, Mary) AND "
          "instrument(a, x)")
SHORT = "exists x . man(x)"


def _close_steps(a: ForcedScore, b: ForcedScore, tol: float = 1e-4) -> None:
    assert a.token_ids == b.token_ids
    for x, y in zip(a.steps, b.steps, strict=True):
        assert x.logprob == pytest.approx(y.logprob, abs=tol)
        assert x.logprob_grammar == pytest.approx(y.logprob_grammar, abs=tol)
        assert [t.token_id for t in x.alternatives_grammar][:1] == [t.token_id for t in y.alternatives_grammar][:1]
    assert a.sum_logprob == pytest.approx(b.sum_logprob, abs=tol)
    assert a.sum_logprob_grammar == pytest.approx(b.sum_logprob_grammar, abs=tol)
    assert a.min_prob == pytest.approx(b.min_prob, rel=1e-3)


def test_batched_shared_prompt_equals_independent(tiny_lm: Any) -> None:
    prompt = simple_prompt(PP_SENTENCE)
    lfs = [PP_LF0, PP_LF1, SHORT]
    batched = forced_score(tiny_lm.model, tiny_lm.tokenizer, prompt, lfs)
    for lf, got in zip(lfs, batched, strict=True):
        assert got.lf == lf
        _close_steps(got, forced_score_independent(tiny_lm.model, tiny_lm.tokenizer, prompt, lf))


def test_chunked_batch_equals_independent(tiny_lm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a tiny chunk budget each LF runs in its own chunk on a copy of the prompt cache."""
    monkeypatch.setattr(prefix, "CHUNK_BYTES", 1)
    prompt = simple_prompt(PP_SENTENCE)
    batched = forced_score(tiny_lm.model, tiny_lm.tokenizer, prompt, [PP_LF0, PP_LF1, PP_LF0])
    _close_steps(batched[0], batched[2], tol=1e-6)
    _close_steps(batched[1], forced_score_independent(tiny_lm.model, tiny_lm.tokenizer, prompt, PP_LF1))


def test_grammar_probabilities_dominate_raw(tiny_lm: Any) -> None:
    for fs in forced_score(tiny_lm.model, tiny_lm.tokenizer, simple_prompt(PP_SENTENCE), [PP_LF0, PP_LF1]):
        assert fs.sum_logprob_grammar >= fs.sum_logprob
        assert fs.min_prob_grammar >= fs.min_prob
        assert fs.mean_logprob == pytest.approx(fs.sum_logprob / len(fs.token_ids))
        assert fs.min_prob == pytest.approx(min(s.prob for s in fs.steps))
        for step in fs.steps:
            assert 0 < step.prob <= step.prob_grammar <= 1
            assert len(step.alternatives) == 5
            probs = [a.prob for a in step.alternatives]
            assert probs == sorted(probs, reverse=True)
            assert 1 <= len(step.alternatives_grammar) <= 5
            if step.alternatives_grammar[0].token_id == step.token_id:
                assert step.alternatives_grammar[0].prob == pytest.approx(step.prob_grammar)
        assert fs.tokens == tuple(s.token for s in fs.steps)
        assert "".join(fs.tokens) == " " + fs.lf + "\n"


def test_end_step_carries_the_whole_end_event(tiny_lm: Any) -> None:
    """')\\n' and ')\\n\\n' both end the LF: the last step's probability is their total."""
    fs = forced_score(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("the man napped"), [SHORT])[0]
    vocab = tiny_lm.tokenizer.get_vocab()
    last = fs.steps[-1]
    assert last.token_id == vocab[")Ċ"]
    assert vocab[")ĊĊ"] not in {a.token_id for a in last.alternatives + last.alternatives_grammar}


@pytest.mark.parametrize("bad", [
    "exists x . foo(x)",
    "exists x . man(x) AND",
    "exists x . man(x) ",
    "exists x. man(x)",
    "man(x)\nHuman: hi",
    "",
])
def test_lf_outside_the_grammar_is_an_error(tiny_lm: Any, bad: str) -> None:
    expected = "'foo' is not in the lexicon — add it as your own word" if "foo" in bad else "grammar"
    with pytest.raises(DecodingError, match=expected):
        forced_score(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("x"), [SHORT, bad])


def test_score_pair_and_pairs(tiny_lm: Any) -> None:
    prompt = simple_prompt(PP_SENTENCE)
    pair = score_pair(tiny_lm.model, tiny_lm.tokenizer, prompt, PP_LF0, PP_LF1)
    m0, m1 = pair.lf0.min_prob, pair.lf1.min_prob
    assert pair.p_lf0 == pytest.approx(m0 / (m0 + m1))
    s0, s1 = pair.lf0.sum_logprob, pair.lf1.sum_logprob
    assert pair.p_lf0_total == pytest.approx(math.exp(s0) / (math.exp(s0) + math.exp(s1)))
    assert pair.p_lf1 == pytest.approx(1 - pair.p_lf0)
    items = [(prompt, PP_LF0, PP_LF1), (simple_prompt("the man napped"), SHORT, PP_LF1), (prompt, PP_LF1, PP_LF0)]
    many = score_pairs(tiny_lm.model, tiny_lm.tokenizer, items)
    assert many[0].p_lf0 == pytest.approx(pair.p_lf0, abs=1e-6)
    assert many[2].p_lf0 == pytest.approx(1 - pair.p_lf0, abs=1e-6)
    single = score_pair(tiny_lm.model, tiny_lm.tokenizer, *items[1])
    assert many[1].p_lf0 == pytest.approx(single.p_lf0, abs=1e-6)


def test_ratio_edge_cases() -> None:
    assert math.isnan(min_prob_ratio(0.0, 0.0))
    assert min_prob_ratio(0.0, 0.5) == 0.0
    assert min_prob_ratio(0.25, 0.75) == 0.25
    assert total_prob_ratio(-1000.0, -1000.0) == 0.5
    assert total_prob_ratio(-2000.0, -1.0) == 0.0
    assert math.isnan(total_prob_ratio(-math.inf, -math.inf))


def test_json_round_trip_keeps_nan(tiny_lm: Any) -> None:
    pair = score_pair(tiny_lm.model, tiny_lm.tokenizer, simple_prompt(PP_SENTENCE), PP_LF0, PP_LF1)
    text = json.dumps(pair.to_dict(), allow_nan=False)
    assert PairScore.from_dict(json.loads(text)) == pair
    nan_pair = PairScore(pair.lf0, pair.lf1, math.nan, -math.inf)
    back = PairScore.from_dict(json.loads(json.dumps(nan_pair.to_dict(), allow_nan=False)))
    assert math.isnan(back.p_lf0) and back.p_lf0_total == -math.inf


@pytest.mark.slow
def test_gemma_batched_equals_independent(gemma: Any) -> None:
    prompt = simple_prompt(PP_SENTENCE)
    batched = forced_score(gemma.model, gemma.tokenizer, prompt, [PP_LF0, PP_LF1])
    for lf, got in zip([PP_LF0, PP_LF1], batched, strict=True):
        _close_steps(got, forced_score_independent(gemma.model, gemma.tokenizer, prompt, lf), tol=1e-3)
        assert got.steps[-1].token == "\n"
        assert got.sum_logprob_grammar >= got.sum_logprob


@pytest.mark.slow
def test_gemma_long_prompt_beyond_the_sliding_window(gemma: Any) -> None:
    """Gemma 3's local layers keep a 512-token window; sharing a longer prompt's cache still
    matches the plain full forward."""
    from parser_lm_helpers import HEADER, amp_examples, zero_shot_prompt

    prompt = zero_shot_prompt(amp_examples(24, seed=5), PP_SENTENCE)
    assert len(gemma.tokenizer(prompt).input_ids) > 600
    batched = forced_score(gemma.model, gemma.tokenizer, prompt, [PP_LF0, PP_LF1])
    for lf, got in zip([PP_LF0, PP_LF1], batched, strict=True):
        _close_steps(got, forced_score_independent(gemma.model, gemma.tokenizer, prompt, lf), tol=1e-3)
    assert prompt.startswith(HEADER)
