"""Interpretation-level top-k and grammar-constrained sampling, on the tiny test model."""

from __future__ import annotations

import math

import pytest

from amp.evaluation.interpretations import (
    distinct_from_beams,
    distinct_topk,
    distribution_from_samples,
    sample_interpretations,
    sample_with_parser,
)
from amp.evaluation.matching import prediction_key
from amp.evaluation.metrics import zm_k

PROMPT = "Human: the man saw a girl\nComputer:"
A = "exists x . man(x) AND exists y . girl(y) AND saw(x, y)"
A2 = "exists y . man(y) AND exists x . girl(x) AND saw(y, x)"  # A with the variable names swapped
B = "exists x . girl(x) AND exists y . man(y) AND saw(x, y)"


def test_distinct_from_beams_dedups_and_drops_unparseable():
    kept = distinct_from_beams([A, "not an lf (", A2, B], k=5)
    assert [i.text for i in kept] == [A, B]
    assert kept[0].count == 2
    assert distinct_from_beams([A, A2, B], k=1)[0].text == A


def test_distribution_sums_to_one_and_gold_probs():
    d = distribution_from_samples([A, A2, B, None], lf0=A, lf1=B)
    assert math.isclose(sum(d["distribution"].values()) + d["p_unparseable"], 1.0)
    assert d["p_lf0"] == 0.5 and d["p_lf1"] == 0.25 and math.isclose(d["p_other"], 0.25)


@pytest.fixture(scope="module")
def parser(saved_tiny_model, tmp_path_factory):
    from amp.cache import ResultCache
    from amp.parser.parser import Parser

    return Parser(str(saved_tiny_model), device="cpu", dtype="float32",
                  cache=ResultCache(tmp_path_factory.mktemp("interp-cache")))


def test_distinct_topk_never_returns_equivalent_lfs(parser):
    res = distinct_topk(parser, PROMPT, k=5, width=8, max_new_tokens=24)
    keys = [prediction_key(t) for t in res.topk]
    assert None not in keys and len(set(keys)) == len(keys) <= 5
    assert res.method == "distinct" and res.width == 8
    zm_k([(res.topk, A, B)], 5)  # usable as a top-k list


def test_sampling_is_seeded_and_sums_to_one(parser):
    from amp.parser.parser import Parser

    uncached = Parser(parser.spec, device="cpu", dtype="float32", cache=None)
    one = sample_interpretations(uncached, PROMPT, n=6, seed=3, lf0=A, lf1=B, max_new_tokens=24)
    two = sample_interpretations(uncached, PROMPT, n=6, seed=3, lf0=A, lf1=B, max_new_tokens=24)
    assert one.samples == two.samples and len(one.samples) == 6
    assert math.isclose(sum(i.score for i in one.interpretations) + one.p_unparseable, 1.0)
    assert math.isclose(one.p_lf0 + one.p_lf1 + one.p_other, 1.0)
    assert one.method == "sampling"


def test_sampling_cached_through_parser(parser):
    first = sample_with_parser(parser, PROMPT, n=4, seed=1, max_new_tokens=16)
    again = sample_with_parser(parser, PROMPT, n=4, seed=1, max_new_tokens=16)
    assert first.samples == again.samples
    from amp.evaluation.interpretations import samples_cached

    assert samples_cached(parser, PROMPT, 4, 1.0, 1, "fol", 16)
    assert not samples_cached(parser, PROMPT, 4, 1.0, 2, "fol", 16)


def test_sample_key_holds_the_whole_runtime(parser):
    """The samples' key changes with tokenizer, device, dtype and top_n (it used to hold only the model)."""
    from amp.parser.parser import Parser

    parts = {"prompt": PROMPT, "fmt": "fol", "n": 4, "temperature": 1.0, "seed": 1, "max_new_tokens": 16,
             "top_k": 0, "top_p": 1.0}
    base = parser.cache_key("sample", **parts)
    others = [Parser(parser.spec, device="cpu", dtype="bfloat16", cache=None),
              Parser(parser.spec, device="cpu", dtype="float32", cache=None, top_n=3)]
    assert all(o.cache_key("sample", **parts) != base for o in others)
    rt = parser.runtime()
    assert rt.tokenizer and rt.tokenizer != rt.model
