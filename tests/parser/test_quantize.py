"""The opt-in int8 CPU path (issue #16 point 3): an int8 output layer, its own cache identity, exact search on it.

The int8 model is a different model as far as results go: the fast search must still return
exactly what the step-by-step reference search returns *on the int8 model*, while the numbers may
differ slightly from float32 (so every cache key tells the two apart).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import torch
from parser_lm_helpers import simple_prompt

from amp.parser import Parser
from amp.parser.core.errors import ModelLoadError
from amp.parser.models.loading import DTYPES, select_dtype
from amp.parser.models.quantize import INT8, output_rows, quantize_output_layer, scheme
from amp.parser.models.registry import load_model
from amp.parser.search.decode import beam_search_batch, parse_and_score_batch
from amp.parser.search.fastsearch import supported
from amp.parser.search.scoring import score_pair

SENTENCES = ["the boy moved", "Galileo saw Mary with the telescope", "every cat held a cup"]
LF0 = "exists x . exists a . boy(x) AND moved(a) AND agent(a, x)"
LF1 = "exists x . exists a . boy(x) AND moved(a) AND patient(a, x)"


@pytest.fixture(scope="module")
def int8_lm(tiny_lm: Any) -> Any:
    """The tiny trained GPT-2 with its output layer quantised (a copy: the float model stays)."""
    model = quantize_output_layer(copy.deepcopy(tiny_lm.model))
    return type(tiny_lm)(model=model, tokenizer=tiny_lm.tokenizer, examples=tiny_lm.examples)


def test_int8_is_a_cpu_dtype() -> None:
    assert INT8 in DTYPES
    assert select_dtype("cpu", "int8") == "int8"
    for device in ("cuda", "cuda:1", "mps"):
        with pytest.raises(ModelLoadError, match="CPU path"):
            select_dtype(device, "int8")
    assert select_dtype("cpu") == "float32"  # never the default


def test_the_output_layer_becomes_int8_and_keeps_its_shape(tiny_lm: Any, int8_lm: Any) -> None:
    head = int8_lm.model.get_output_embeddings()
    assert type(head).__name__ == "Int8OutputLayer"
    assert "Quantized" in type(head.inner).__name__ or "quantized" in type(head.inner).__module__
    assert output_rows(int8_lm.model) == output_rows(tiny_lm.model) == len(tiny_lm.tokenizer)
    # the body stays float32; the input embeddings (tied to the float head) are untouched
    assert int8_lm.model.get_input_embeddings().weight.dtype == torch.float32
    assert torch.equal(int8_lm.model.get_input_embeddings().weight, tiny_lm.model.get_input_embeddings().weight)
    assert type(tiny_lm.model.get_output_embeddings()) is torch.nn.Linear  # the original was not changed


def test_int8_logits_are_close_to_float32_but_not_equal(tiny_lm: Any, int8_lm: Any) -> None:
    ids = tiny_lm.tokenizer(simple_prompt(SENTENCES[1]) + " " + LF0, return_tensors="pt").input_ids
    with torch.inference_mode():
        ref = torch.log_softmax(tiny_lm.model(ids).logits[0].float(), -1)
        q = torch.log_softmax(int8_lm.model(ids).logits[0].float(), -1)
    assert not torch.equal(ref, q)
    assert (ref.argmax(-1) == q.argmax(-1)).float().mean().item() >= 0.9
    nxt = ids[0, 1:, None]
    assert (ref[:-1].gather(1, nxt) - q[:-1].gather(1, nxt)).abs().mean().item() < 0.1


@pytest.mark.parametrize("fmt", ["fol"])
def test_fast_search_on_int8_equals_the_reference_search_on_int8(int8_lm: Any, fmt: str) -> None:
    assert supported(int8_lm.model)
    prompts = [simple_prompt(s) for s in SENTENCES]
    ref = beam_search_batch(int8_lm.model, int8_lm.tokenizer, prompts, fmt=fmt, beams=4, algorithm="generate")
    fast = beam_search_batch(int8_lm.model, int8_lm.tokenizer, prompts, fmt=fmt, beams=4, algorithm="fast")
    for a, b in zip(ref, fast, strict=True):
        assert [x.token_ids for x in a.beams] == [y.token_ids for y in b.beams]
        for x, y in zip(a.beams, b.beams, strict=True):
            assert x.logprob == pytest.approx(y.logprob, abs=1e-3) or x.logprob == y.logprob


def test_one_pass_pair_on_int8_equals_the_separate_forced_pass(int8_lm: Any) -> None:
    prompt = simple_prompt("the boy moved")
    ((_parse, pair),) = parse_and_score_batch(int8_lm.model, int8_lm.tokenizer, [(prompt, LF0, LF1)], beams=2)
    alone = score_pair(int8_lm.model, int8_lm.tokenizer, prompt, LF0, LF1)
    assert pair is not None
    assert pair.p_lf0 == pytest.approx(alone.p_lf0, abs=1e-4)


def test_loading_with_dtype_int8_and_its_own_cache_identity(saved_tiny_model: Path, tmp_path: Path) -> None:
    from amp.cache import ResultCache

    lm = load_model(str(saved_tiny_model), device="cpu", dtype="int8")
    assert lm.dtype == "int8"
    assert type(lm.model.get_output_embeddings()).__name__ == "Int8OutputLayer"
    assert load_model(str(saved_tiny_model), device="cpu", dtype="int8") is lm  # memoised per dtype
    assert load_model(str(saved_tiny_model), device="cpu", dtype="float32") is not lm

    cache = ResultCache(tmp_path / "results")
    exact = Parser(str(saved_tiny_model), device="cpu", dtype="float32", cache=cache)
    quick = Parser(str(saved_tiny_model), device="cpu", dtype="int8", cache=cache)
    assert quick.dtype == "int8" and exact.dtype == "float32"
    assert quick.runtime().versions["int8"] == scheme() and "int8" not in exact.runtime().versions
    assert scheme().startswith("int8-output-layer-dynamic-per-channel;v1;engine=")
    prompt = simple_prompt("the dog ate")
    key_exact = exact.cache_key("parse", prompt=prompt)
    key_quick = quick.cache_key("parse", prompt=prompt)
    assert key_exact != key_quick
    a = exact.parse(prompt, beams=2)
    b = quick.parse(prompt, beams=2)  # computed, not read from float32's entry
    assert cache.stats()["entries"] == 2
    assert quick.parse(prompt, beams=2) == b and exact.parse(prompt, beams=2) == a
    assert b.beams[0].steps and a.beams[0].steps


def test_a_model_without_a_linear_output_layer_is_refused() -> None:
    class NoHead:
        def get_output_embeddings(self) -> None:
            return None

    with pytest.raises(ModelLoadError, match="linear output layer"):
        quantize_output_layer(NoHead())


def test_a_rows_int8_logits_do_not_depend_on_the_other_rows_of_its_batch(int8_lm: Any) -> None:
    """One activation scale per call would make a row's logits depend on its batch; they must not."""
    head = int8_lm.model.get_output_embeddings()
    torch.manual_seed(0)
    rows = torch.randn(6, head.in_features)
    rows[3] *= 40  # an outlier row would set a shared scale
    with torch.inference_mode():
        together = head(rows)
        alone = torch.cat([head(rows[i : i + 1]) for i in range(6)])
        shuffled = head(rows.flip(0)).flip(0)
    assert torch.equal(together, alone) and torch.equal(together, shuffled)
    assert together.shape == (6, head.out_features)
    with torch.inference_mode():
        exact = rows @ head.inner.weight().dequantize().T
    assert (together - exact).abs().max().item() < 0.05 * exact.abs().max().item()


def test_bfloat16_on_the_cpu_runs_the_same_exact_search(tiny_lm: Any) -> None:
    """bfloat16 is the other fast CPU precision (on CPUs with bf16 instructions): the fast search
    drives it and returns the reference search's beams on the same bf16 model."""
    model = copy.deepcopy(tiny_lm.model).to(torch.bfloat16)
    prompts = [simple_prompt(s) for s in SENTENCES[:2]]
    ref = beam_search_batch(model, tiny_lm.tokenizer, prompts, beams=3, algorithm="generate")
    fast = beam_search_batch(model, tiny_lm.tokenizer, prompts, beams=3, algorithm="fast")
    assert [[b.token_ids for b in r.beams] for r in ref] == [[b.token_ids for b in f.beams] for f in fast]
    assert all(r.beams[0].steps for r in fast)
