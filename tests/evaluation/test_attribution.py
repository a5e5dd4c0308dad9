"""Contrastive attribution at the divergence point (issue #31; docs/paper-notes.md §18)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from amp.cache import ResultCache
from amp.errors import SettingError
from amp.evaluation.attribution import aggregate, attribute, beside_influence, prompt_layout
from amp.evaluation.errors import AttributionError
from amp.evaluation.influence import influence_from_scores
from amp.parser.backends.remote import RemoteBackend
from amp.parser.core.errors import DecodingError, RequestTooLarge, SearchCancelled
from amp.parser.core.results import ForcedScore, PairScore
from amp.parser.parser import Parser
from amp.parser.search.cancel import cancel_scope
from amp.parser.search.gradients import contrast_gradients
from amp.parser.search.vocab import encode_output, frame_lf
from amp.prompts import Prompt, PromptExample

LF0 = "exists x . boy(x)"
LF1 = "exists x . girl(x)"
#: Integrated gradients' declared tolerance on a tiny random GPT-2: the completeness gap stays
#: under this fraction of |f(x) − f(baseline)| at 64 midpoint steps.
IG_TOLERANCE = 0.02


def _prompt() -> Prompt:
    examples = (
        PromptExample("the boy ran", "exists x . boy(x) AND ran(x)", "exists x . girl(x)", 0),
        PromptExample("a dog", "exists x . dog(x)", None, None),
        PromptExample("the girl ran", "exists x . girl(x) AND ran(x)", "exists x . boy(x)", 1),
    )
    return Prompt(examples, "a child saw the dog", gold_lf0=LF0, gold_lf1=LF1)


class LinearLM(torch.nn.Module):
    """A causal 'language model' linear in its input embeddings: the logits at position t are
    ``W · Σ_{s ≤ t} e_s``.  Log-softmax cancels in a difference of two tokens' log-probs, so the
    divergence target is ``(W[a] − W[b]) · Σ_t e_t``: input × gradient of token t is
    ``e_t · (W[a] − W[b])`` exactly."""

    def __init__(self, vocab: int, hidden: int = 8) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.out = torch.nn.Parameter(torch.randn(vocab, hidden))

    def get_input_embeddings(self) -> torch.nn.Module:
        return self.emb

    def forward(self, inputs_embeds: torch.Tensor, use_cache: bool = False, logits_to_keep: int = 0):
        logits = torch.cumsum(inputs_embeds, dim=1) @ self.out.T
        return SimpleNamespace(logits=logits[:, -logits_to_keep:] if logits_to_keep else logits)


@pytest.fixture(scope="module")
def tiny(saved_tiny_model: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(saved_tiny_model))
    model = AutoModelForCausalLM.from_pretrained(str(saved_tiny_model)).eval()
    return model, tok


def _divergence(tok) -> tuple[list[int], list[int], int]:
    s0, s1 = encode_output(tok, frame_lf(LF0)), encode_output(tok, frame_lf(LF1))
    d = next(i for i, (a, b) in enumerate(zip(s0, s1)) if a != b)
    return s0, s1, d


@pytest.mark.parametrize("method", ["input_x_gradient", "integrated_gradients"])
def test_linear_toy_target_gets_the_analytic_attribution(tiny, method) -> None:
    _, tok = tiny
    model = LinearLM(len(tok)).eval()
    text = _prompt().render()
    g = contrast_gradients(model, tok, text, LF0, LF1, method=method, steps=5)
    s0, s1, d = _divergence(tok)
    assert g.divergence == d and (g.token_lf0, g.token_lf1) == (s0[d], s1[d])
    with torch.no_grad():
        w = model.out[s0[d]] - model.out[s1[d]]
        e = model.emb(torch.tensor(list(g.token_ids)))
        expected = (e @ w).tolist()
        prefix = model.emb(torch.tensor(s0[:d])).sum(0) @ w if d else torch.tensor(0.0)
    assert all(g.attributed)  # the tiny tokenizer adds no special tokens
    assert g.attributions == pytest.approx(expected, rel=1e-5, abs=1e-5)
    assert g.value == pytest.approx(sum(expected) + float(prefix), rel=1e-5, abs=1e-4)
    assert g.baseline_value == pytest.approx(float(prefix), rel=1e-5, abs=1e-4)


def test_integrated_gradients_meet_completeness_on_a_real_model(tiny) -> None:
    model, tok = tiny
    text = _prompt().render()
    for target in ("divergence", "sequence"):
        g = contrast_gradients(model, tok, text, LF0, LF1, target=target, method="integrated_gradients", steps=64)
        delta = g.value - g.baseline_value
        assert abs(delta) > 1e-4, "a degenerate target would make the check empty"
        assert abs(sum(g.attributions) - delta) <= IG_TOLERANCE * abs(delta), (target, sum(g.attributions), delta)


def test_sequence_target_value_is_the_forced_log_odds(tiny) -> None:
    from amp.parser.search.scoring import forced_score

    model, tok = tiny
    text = _prompt().render()
    g = contrast_gradients(model, tok, text, LF0, LF1, target="sequence", method="input_x_gradient")
    f0, f1 = forced_score(model, tok, text, [LF0, LF1])
    # no end-token merge in the attribution target: equal where the forced scores' end tokens merge nothing
    assert g.value == pytest.approx(f0.sum_logprob - f1.sum_logprob, abs=0.05)


def test_identical_readings_have_nothing_to_contrast(tiny) -> None:
    model, tok = tiny
    with pytest.raises(DecodingError, match="nothing to contrast"):
        contrast_gradients(model, tok, _prompt().render(), LF0, LF0)


# ---------------------------------------------------------------------------- per word, per example


def test_layout_finds_every_example_block_and_test_word() -> None:
    prompt = _prompt()
    text = prompt.render()
    blocks, words = prompt_layout(prompt)
    assert [text[a:b] for a, b in blocks] == [f"Human: {e.utterance}\nComputer: {e.lf}\n" for e in prompt.examples]
    assert [text[a:b] for a, b, _ in words] == ["a", "child", "saw", "the", "dog"]
    headless = Prompt(prompt.examples, "t", header="")
    assert [headless.render()[a:b] for a, b, _ in prompt_layout(headless)[1]] == ["t"]


def test_word_and_example_sums_equal_the_token_sums(tiny) -> None:
    model, tok = tiny
    prompt = _prompt()
    g = contrast_gradients(model, tok, prompt.render(), LF0, LF1, method="input_x_gradient")
    tokens, words, examples = aggregate(prompt, g.spans, g.attributions)
    for w in words:
        assert w.attribution == pytest.approx(sum(t.attribution for t in tokens if t.word == w.index))
        assert any(t.word == w.index for t in tokens), w
    for e in examples:
        assert e.attribution == pytest.approx(sum(t.attribution for t in tokens if t.example == e.index))
    assert [e.label for e in examples] == [0, None, 1]
    in_units = sum(t.attribution for t in tokens if t.word is not None or t.example is not None)
    assert sum(w.attribution for w in words) + sum(e.attribution for e in examples) == pytest.approx(in_units)
    assert "".join(t.token for t in tokens) == prompt.render()  # every character belongs to one token


def test_hand_made_aggregation() -> None:
    prompt = Prompt((PromptExample("u", "exists x . boy(x)", None, None),), "big dog", header="")
    text = prompt.render()  # "Human: u\nComputer: exists x . boy(x)\n\nHuman: big dog\nComputer:"
    big, dog = text.index("big"), text.index("dog")
    spans = [(0, 5), (6, 8), (big - 1, big + 3), (dog - 1, dog + 3), (dog + 3, len(text))]
    tokens, words, examples = aggregate(prompt, spans, [1.0, 2.0, 3.0, 4.0, 5.0])
    assert [t.example for t in tokens] == [0, 0, None, None, None]
    assert [t.word for t in tokens] == [None, None, 0, 1, None]
    assert [(w.word, w.attribution) for w in words] == [("big", 3.0), ("dog", 4.0)]
    assert [e.attribution for e in examples] == [3.0]
    with pytest.raises(AttributionError, match="2 token spans but 1"):
        aggregate(prompt, spans[:2], [1.0])


# ---------------------------------------------------------------------------- through the parser


def test_attribute_is_cached_bounded_cancellable_with_progress(saved_tiny_model: Path, tmp_path: Path) -> None:
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "c"))
    seen: list[tuple[int, int]] = []
    a = attribute(parser, _prompt(), steps=8, progress=lambda d, n: seen.append((d, n)))
    # the midpoint rule on 8 intervals: 8 passes, then each tripling adds its 2 × steps new points
    assert seen[0] == (0, 8) and seen[-1] == (a.steps, a.steps)
    assert a.method == "integrated_gradients" and a.rungs[0].steps == 8 and a.baseline == "zero"
    assert a.steps == a.rungs[-1].steps and (a.target_met or a.steps * 3 > 144)
    assert a.completeness_gap == pytest.approx(abs(a.total - (a.value - a.baseline_value)))
    assert [w.word for w in a.words] == ["a", "child", "saw", "the", "dog"]
    assert [e.utterance for e in a.examples] == [e.utterance for e in _prompt().examples]
    assert a.token_lf0 != a.token_lf1
    again: list[tuple[int, int]] = []
    assert attribute(parser, _prompt(), steps=8, progress=lambda d, n: again.append((d, n))) == a
    assert again == []  # from the cache: no gradient pass
    ixg = attribute(parser, _prompt(), method="input_x_gradient", steps=99)
    assert ixg.steps == 1 and ixg.method == "input_x_gradient"
    with pytest.raises(SearchCancelled), cancel_scope(lambda: True):
        attribute(parser, _prompt(), steps=4)
    with pytest.raises(RequestTooLarge, match="steps is 100000"):
        attribute(parser, _prompt(), steps=100_000)
    with pytest.raises(SettingError, match="steps"):
        attribute(parser, _prompt(), steps=0)
    with pytest.raises(AttributionError, match="target must be"):
        attribute(parser, _prompt(), target="everything")
    with pytest.raises(AttributionError, match="no gold LF0 and LF1"):
        attribute(parser, Prompt(_prompt().examples, "t"))


def test_a_remote_backend_is_told_it_needs_local_weights() -> None:
    parser = Parser.__new__(Parser)  # no server contacted: the check comes before any request
    parser.backend = RemoteBackend("http://127.0.0.1:9")
    parser.cache = None
    with pytest.raises(AttributionError, match="needs the model's weights in this process"):
        attribute(parser, _prompt())


def test_beside_influence_pairs_each_example_with_its_change() -> None:
    from amp.evaluation.attribution import Attribution, ExampleAttribution

    prompt = _prompt()
    forced = ForcedScore(lf="x", token_ids=(), tokens=(), steps=(), sum_logprob=-1.0, mean_logprob=-1.0,
                         sum_logprob_grammar=-1.0, min_prob=0.5, min_prob_grammar=0.5)

    def pair(p: float) -> PairScore:
        return PairScore(lf0=forced, lf1=forced, p_lf0=p, p_lf0_total=p)

    inf = influence_from_scores(prompt, LF0, LF1, "fol", [pair(0.5), pair(0.2), pair(0.45), pair(0.9),
                                                           pair(0.3), pair(0.6)])
    examples = tuple(ExampleAttribution(index=i, utterance=e.utterance, label=e.label, attribution=v)
                     for i, (e, v) in enumerate(zip(prompt.examples, [0.4, 0.1, -0.5], strict=True)))
    attr = Attribution(prompt=prompt.render(), test_utterance="t", lf0=LF0, lf1=LF1, fmt="fol", target="divergence",
                       method="input_x_gradient", steps=1, baseline="zero", divergence=0, token_lf0="a",
                       token_lf1="b", value=0.0, baseline_value=0.0, completeness_gap=0.0, tokens=(), words=(),
                       examples=examples)
    rows, rho = beside_influence(attr, inf)
    assert [r.influence for r in rows] == pytest.approx([-0.3, -0.05, 0.4])
    assert [r.label for r in rows] == [0, None, 1]
    assert rho == pytest.approx(-1.0)  # attribution ranks 3, 2, 1; influence ranks 1, 2, 3
    assert math.isfinite(rho)


# ---------------------------------------------------------------------------- the default model


@pytest.mark.slow
def test_readme_sentence_on_the_default_model(default_lm, tmp_path: Path) -> None:
    """The README's finding: the attribution map of its sentence, example sums beside the influence, ρ."""
    from amp.evaluation.contrastive import contrast
    from amp.evaluation.influence import example_influence
    from amp.prompts import mixed_prompt

    parser = Parser("default", device="cpu", dtype="float32", cache=ResultCache(tmp_path / "c"))
    parser.backend.adopt(default_lm)
    prompt = mixed_prompt("the boy saw the man with the telescope", 0.3, seed=0)
    attr = attribute(parser, prompt, method="input_x_gradient")  # one backward pass: a 270M model on a CPU
    # the README's input × gradient figures: boy +0.48 toward LF0, telescope −0.38 toward LF1, and
    # Σ attributions −3.21 against f(prompt) − f(baseline) = −21.68 (85 % left unexplained)
    words = {w.word: w.attribution for w in attr.words if w.word in ("boy", "telescope")}
    assert words["boy"] == pytest.approx(0.48, abs=0.01) and words["telescope"] == pytest.approx(-0.38, abs=0.01)
    assert attr.value - attr.baseline_value == pytest.approx(-21.68, abs=0.01)
    assert attr.relative_gap == pytest.approx(0.85, abs=0.01) and attr.gap_target is None
    assert [w.word for w in attr.words] == "the boy saw the man with the telescope".split()
    assert len(attr.examples) == len(prompt.examples) == 10
    assert not attr.tokens[0].attributed  # Gemma's <bos> is kept as is in the baseline
    assert all(t.attributed for t in attr.tokens[1:])
    # the target is the forced decodes' log-odds where the readings part
    c = contrast(parser.score_pair(prompt.render(), prompt.gold_lf0, prompt.gold_lf1))
    assert attr.divergence == c.divergence
    assert attr.value == pytest.approx(c.log_odds_at_divergence, abs=1e-3)
    inf = example_influence(parser, prompt)
    rows, rho = beside_influence(attr, inf)
    assert [r.utterance for r in rows] == [e.utterance for e in prompt.examples]
    assert all(r.influence is not None for r in rows) and rho is not None and -1.0 <= rho <= 1.0
    assert sum(e.attribution for e in attr.examples) == pytest.approx(
        sum(t.attribution for t in attr.tokens if t.example is not None))
