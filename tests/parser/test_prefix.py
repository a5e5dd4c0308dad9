"""The shared prompt pass (amp.parser.search.prefix): one prefill serves the search and forced scoring.

Checked on the tiny trained GPT-2 and on a tiny random Gemma 3 whose sliding window (6 tokens)
is shorter than the prompts, so that left padding, position ids and the sliding-window cache
are all exercised the way the real default model exercises them (window 512, prompts ~650).
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from parser_lm_helpers import TinyLM, simple_prompt

from amp.parser.core.errors import DecodingError
from amp.parser.search import decode
from amp.parser.search.decode import beam_search_batch, parse_and_score_batch
from amp.parser.search.prefix import PromptPrefix, prefill, prefixed_logprobs
from amp.parser.search.scoring import independent_logprobs, score_pair
from amp.parser.search.vocab import encode_output, encode_prompt, frame_lf

LF0 = "exists x . exists a . man(x) AND saw(a) AND agent(a, Mary) AND patient(a, x)"
LF1 = "exists x . man(x) AND walked(x)"
SENTENCES = ["Mary saw a man", "the dog ate", "a woman saw Galileo with a telescope in the park"]


@pytest.fixture(scope="module")
def tiny_gemma(tiny_lm: TinyLM) -> TinyLM:
    """A random 3-layer Gemma 3 (sliding, sliding, full; window 6) on the tiny LM's tokenizer."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(0)
    tok = tiny_lm.tokenizer
    config = Gemma3TextConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
        num_attention_heads=2, num_key_value_heads=1, head_dim=16, sliding_window=6,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        max_position_embeddings=2048, pad_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
        bos_token_id=tok.eos_token_id,
    )
    model = Gemma3ForCausalLM(config).eval()
    return TinyLM(model=model, tokenizer=tok, examples=tiny_lm.examples)


@pytest.fixture(params=["gpt2", "gemma3"])
def lm(request: pytest.FixtureRequest, tiny_lm: TinyLM) -> TinyLM:
    return tiny_lm if request.param == "gpt2" else request.getfixturevalue("tiny_gemma")


def _prompts() -> list[str]:
    return [simple_prompt(s) for s in SENTENCES]


def test_prefixed_logprobs_equal_independent_passes_with_left_padding(lm: TinyLM) -> None:
    prompts = [encode_prompt(lm.tokenizer, p) for p in _prompts()]
    assert len({len(p) for p in prompts}) > 1 and min(len(p) for p in prompts) > 6  # padding, window
    seqs = [encode_output(lm.tokenizer, frame_lf(lf)) for lf in (LF0, LF1)]
    prefix = prefill(lm.model, prompts, pad_id=0)
    requests = [(row, s) for row in range(len(prompts)) for s in seqs]
    got = prefixed_logprobs(lm.model, prefix, requests)
    for (row, seq), lp in zip(requests, got, strict=True):
        want = independent_logprobs(lm.model, prompts[row], seq)
        assert lp.shape == want.shape
        assert torch.allclose(lp, want, atol=1e-4), (row, float((lp - want).abs().max()))


def test_a_prefix_serves_many_passes_unchanged(lm: TinyLM) -> None:
    prompts = [encode_prompt(lm.tokenizer, p) for p in _prompts()]
    seq = encode_output(lm.tokenizer, frame_lf(LF1))
    prefix = prefill(lm.model, prompts, pad_id=0)
    before = [(layer.keys.clone(), layer.values.clone()) for layer in prefix.cache.layers]
    first = prefixed_logprobs(lm.model, prefix, [(2, seq), (0, seq), (2, seq)])
    again = prefixed_logprobs(lm.model, prefix, [(0, seq)])
    assert torch.equal(first[0], first[2])
    assert torch.allclose(first[1], again[0], atol=1e-6)
    for layer, (k, v) in zip(prefix.cache.layers, before, strict=True):
        assert torch.equal(layer.keys, k) and torch.equal(layer.values, v)
    assert prefix.cache_for([1, 1, 1]).layers[0].keys.shape[0] == 3


def test_search_from_the_prefix_equals_search_from_scratch(lm: TinyLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting ``generate`` from the shared prefix changes nothing but the cost."""
    prompts = _prompts()
    shared = beam_search_batch(lm.model, lm.tokenizer, prompts, beams=3, steps_for=0, max_new_tokens=40)
    monkeypatch.setattr(PromptPrefix, "cache_for", lambda self, rows: None)  # generate prefills itself
    scratch = beam_search_batch(lm.model, lm.tokenizer, prompts, beams=3, steps_for=0, max_new_tokens=40)
    for a, b in zip(shared, scratch, strict=True):
        assert [x.text for x in a.beams] == [y.text for y in b.beams]
        for x, y in zip(a.beams, b.beams, strict=True):
            assert x.logprob == pytest.approx(y.logprob, abs=1e-4)


def test_parse_and_score_equals_separate_calls(tiny_lm: TinyLM) -> None:
    prompts = _prompts()
    items = [(prompts[0], LF0, LF1), (prompts[1], None, None), (prompts[2], LF1, LF0)]
    joint = parse_and_score_batch(tiny_lm.model, tiny_lm.tokenizer, items, beams=3, top_n=3)
    parses = beam_search_batch(tiny_lm.model, tiny_lm.tokenizer, prompts, beams=3, top_n=3)
    assert joint[1][1] is None
    for (parse, _pair), alone in zip(joint, parses, strict=True):
        assert [b.text for b in parse.beams] == [b.text for b in alone.beams]
        assert [s.token_id for s in parse.beams[0].steps] == list(parse.beams[0].token_ids)
        for x, y in zip(parse.beams[0].steps, alone.beams[0].steps, strict=True):
            assert x.prob == pytest.approx(y.prob, rel=1e-4)
    for k in (0, 2):
        prompt, lf0, lf1 = items[k]
        want = score_pair(tiny_lm.model, tiny_lm.tokenizer, prompt, lf0, lf1, top_n=3)
        got = joint[k][1]
        assert got.lf0.lf == lf0 and got.lf1.lf == lf1
        assert got.p_lf0 == pytest.approx(want.p_lf0, abs=1e-5)
        assert got.lf0.sum_logprob == pytest.approx(want.lf0.sum_logprob, abs=1e-4)
        assert got.lf1.min_prob == pytest.approx(want.lf1.min_prob, rel=1e-4)


def test_a_bad_lf_is_refused_before_any_decoding(tiny_lm: TinyLM, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("decoded although an LF is outside the grammar")

    monkeypatch.setattr(decode, "prefill", boom)
    with pytest.raises(DecodingError, match="free variable|before quantifying"):
        parse_and_score_batch(tiny_lm.model, tiny_lm.tokenizer, [(simple_prompt("x"), "man(x)", LF1)])


def test_prefix_refuses_bad_requests(tiny_lm: TinyLM) -> None:
    prefix = prefill(tiny_lm.model, [encode_prompt(tiny_lm.tokenizer, simple_prompt("x"))], pad_id=0)
    with pytest.raises(DecodingError, match="empty"):
        prefixed_logprobs(tiny_lm.model, prefix, [(0, [])])
    with pytest.raises(DecodingError, match="prompt"):
        prefixed_logprobs(tiny_lm.model, prefix, [(1, [5])])
    with pytest.raises(DecodingError, match="at least one token"):
        prefill(tiny_lm.model, [[]], pad_id=0)


def test_reordering_only_the_generated_part_equals_a_full_reorder(lm: TinyLM) -> None:
    """Rows of one prompt share its cached tokens, so moving only the later ones is exact."""
    from amp.parser.search.prefix import forward, output_cache, reorder_only_after

    ids = encode_prompt(lm.tokenizer, _prompts()[2])
    prefix = prefill(lm.model, [ids, ids[:-3]], pad_id=0)  # two prompts, one left-padded
    cache = prefix.cache_for([0, 0, 0, 1, 1, 1])
    steps = torch.tensor([[5, 6], [7, 8], [9, 10], [11, 12], [13, 14], [15, 16]])
    mask = torch.cat([prefix.mask[[0, 0, 0, 1, 1, 1], :-1], torch.ones((6, 2), dtype=torch.long)], dim=1)
    pos = torch.tensor([prefix.lengths[r] - 1 for r in (0, 0, 0, 1, 1, 1)])[:, None] + torch.arange(2)[None]
    with torch.inference_mode():
        cache = output_cache(forward(lm.model, input_ids=steps, cache=cache, attention_mask=mask, position_ids=pos))
    want = [(layer.keys.index_select(0, torch.tensor([2, 0, 0, 4, 5, 3])),
             layer.values.index_select(0, torch.tensor([2, 0, 0, 4, 5, 3]))) for layer in cache.layers]
    reorder_only_after(cache, prefix.width - 1)
    with torch.inference_mode():  # as inside generate (amp.parser.search.decode runs it so)
        cache.reorder_cache(torch.tensor([2, 0, 0, 4, 5, 3]))
    for layer, (k, v) in zip(cache.layers, want, strict=True):
        assert torch.equal(layer.keys, k) and torch.equal(layer.values, v)
    if hasattr(cache.layers[0], "cumulative_length"):  # the sliding layers hold fewer tokens than seen
        assert cache.layers[0].keys.shape[-2] < cache.layers[-1].keys.shape[-2]
