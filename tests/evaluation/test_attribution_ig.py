"""Integrated gradients that say how sure they are (issue #46 point 5; docs/paper-notes.md §18):
the trapezoid rule and its completeness gap in closed form, the step increase that stops at the
target, the baselines, and passes whose size does not grow with the steps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from amp.cache import ResultCache
from amp.errors import SettingError
from amp.evaluation.attribution import Baseline, attribute, check_settings
from amp.parser.core import limits
from amp.parser.parser import Parser
from amp.parser.search.gradients import contrast_gradients
from amp.parser.search.vocab import encode_output, encode_prompt, frame_lf
from amp.prompts import Prompt, PromptExample

LF0 = "exists x . boy(x)"
LF1 = "exists x . girl(x)"


def _prompt() -> Prompt:
    examples = (
        PromptExample("the boy ran", "exists x . boy(x) AND ran(x)", "exists x . girl(x)", 0),
        PromptExample("a dog", "exists x . dog(x)", None, None),
        PromptExample("the girl ran", "exists x . girl(x) AND ran(x)", "exists x . boy(x)", 1),
    )
    return Prompt(examples, "a child saw the dog", gold_lf0=LF0, gold_lf1=LF1)


class PolyLM(torch.nn.Module):
    """A causal 'language model' whose logits at position t are ``W · h_t^power`` (elementwise power)
    with ``h_t = Σ_{s ≤ min(t, P−1)} e_s``: only the first ``P`` positions (the prompt) count.  Log-softmax
    cancels in a difference of two tokens' log-probs, so the divergence target is
    ``f(x) = (W[a] − W[b]) · (Σ_t x_t)^power``.  ``power=1``: linear in the embeddings; ``power=3``:
    along the path from the zero baseline ``f = α³ f(x)``, whose midpoint rule on ``n`` intervals
    gives ``Σ attributions = f(x) (1 − 1/(4n²))``.  Records every forward's batch size."""

    def __init__(self, vocab: int, prompt_len: int, power: int, hidden: int = 8) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.out = torch.nn.Parameter(torch.randn(vocab, hidden) / 4)
        self.prompt_len, self.power = prompt_len, power
        self.batches: list[int] = []

    def get_input_embeddings(self) -> torch.nn.Module:
        return self.emb

    def forward(self, inputs_embeds: torch.Tensor, use_cache: bool = False, logits_to_keep: int = 0):
        self.batches.append(inputs_embeds.shape[0])
        h = torch.cumsum(inputs_embeds[:, : self.prompt_len], dim=1)
        rest = h[:, -1:].expand(-1, inputs_embeds.shape[1] - self.prompt_len, -1)
        logits = torch.cat([h, rest], dim=1).pow(self.power) @ self.out.T
        return SimpleNamespace(logits=logits[:, -logits_to_keep:] if logits_to_keep else logits)


@pytest.fixture(scope="module")
def tok(saved_tiny_model: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(saved_tiny_model))


def _model(tok, power: int) -> PolyLM:
    return PolyLM(len(tok), len(encode_prompt(tok, _prompt().render())), power).eval()


def _weight(tok, model: PolyLM) -> torch.Tensor:
    s0, s1 = encode_output(tok, frame_lf(LF0)), encode_output(tok, frame_lf(LF1))
    d = next(i for i, (a, b) in enumerate(zip(s0, s1)) if a != b)
    return (model.out[s0[d]] - model.out[s1[d]]).detach()


@pytest.mark.parametrize("baseline", list(Baseline))
def test_on_a_linear_target_integrated_gradients_are_input_x_gradient_and_complete(tok, baseline) -> None:
    model = _model(tok, 1)
    text = _prompt().render()
    ig = contrast_gradients(model, tok, text, LF0, LF1, steps=4, baseline=baseline, gap_target=0.05, max_steps=64)
    ixg = contrast_gradients(model, tok, text, LF0, LF1, method="input_x_gradient", baseline=baseline)
    assert ig.attributions == pytest.approx(ixg.attributions, rel=1e-6, abs=1e-6)
    assert sum(ig.attributions) == pytest.approx(ig.value - ig.baseline_value, rel=1e-5, abs=1e-5)
    assert ig.rungs[0][1] == pytest.approx(0.0, abs=1e-5) and ixg.rungs[0][1] == pytest.approx(0.0, abs=1e-5)
    assert [n for n, _ in ig.rungs] == [4] and ig.steps == 4  # met at once: no increase
    assert ixg.steps == 1


def test_the_baseline_choice_changes_f_of_the_baseline(tok) -> None:
    model = _model(tok, 1)
    text = _prompt().render()
    w = _weight(tok, model)
    n = model.prompt_len
    with torch.no_grad():
        rows = {Baseline.ZERO: torch.zeros(8), Baseline.PAD: model.emb.weight[tok.eos_token_id],  # no pad, no unk
                Baseline.MEAN: model.emb.weight.mean(0)}
    values = {}
    for baseline, row in rows.items():
        g = contrast_gradients(model, tok, text, LF0, LF1, method="input_x_gradient", baseline=baseline)
        with torch.no_grad():
            fb = float(w @ (n * row))
        assert g.baseline_value == pytest.approx(fb, rel=1e-4, abs=1e-5), baseline
        values[baseline] = g.baseline_value
        with torch.no_grad():
            fx = float(w @ model.emb(torch.tensor(list(g.token_ids))).sum(0))
        assert g.value == pytest.approx(fx, rel=1e-4)
    assert len({round(v, 6) for v in values.values()}) == 3


def test_the_midpoint_gap_is_one_over_four_n_squared_and_the_increase_stops_at_the_target(tok) -> None:
    model = _model(tok, 3)
    text = _prompt().render()

    def run(**kw):
        return contrast_gradients(model, tok, text, LF0, LF1, steps=2, **kw)

    g = run(gap_target=0.05, max_steps=256)
    assert [n for n, _ in g.rungs] == [2, 6] and g.steps == 6  # 1/16 = 6.25 % > 5 %, then 1/144 ≈ 0.7 % ≤ 5 %
    assert [gap for _, gap in g.rungs] == pytest.approx([1 / 16, 1 / 144], abs=2e-5)  # float32 sums
    delta = g.value - g.baseline_value
    assert g.baseline_value == 0.0 and sum(g.attributions) == pytest.approx(delta * (1 - 1 / 144), rel=1e-4)
    finer = run(gap_target=0.005, max_steps=256)
    assert [n for n, _ in finer.rungs] == [2, 6, 18]  # 1/1296 ≈ 0.08 % ≤ 0.5 %
    capped = run(gap_target=0.001, max_steps=17)  # 18 would pass the bound: stops at 6, not met
    assert [n for n, _ in capped.rungs] == [2, 6] and capped.rungs[-1][1] == pytest.approx(1 / 144, abs=2e-5)
    fixed = run(gap_target=None, max_steps=256)
    assert [n for n, _ in fixed.rungs] == [2]
    # a tripling reuses every pass: 2 points, then 4 and 12 new ones (18 steps: 18 points)
    model.batches.clear()
    seen: list[tuple[int, int]] = []
    run(gap_target=0.005, max_steps=256, chunk=1, progress=lambda d, n: seen.append((d, n)))
    assert seen[0] == (0, 2) and seen[-1] == (18, 18)
    assert len(model.batches) == 2 + 18  # f(x), f(x′), then one forward per point


def test_a_pass_holds_a_bounded_number_of_points_whatever_the_steps(tok, monkeypatch) -> None:
    model = _model(tok, 3)
    text = _prompt().render()
    tail = next(i for i, (a, b) in enumerate(zip(encode_output(tok, frame_lf(LF0)),
                                                  encode_output(tok, frame_lf(LF1)))) if a != b)
    monkeypatch.setattr(limits, "ATTRIBUTION_PASS_TOKENS", 3 * (model.prompt_len + tail))
    for steps in (16, 64):
        model.batches.clear()
        contrast_gradients(model, tok, text, LF0, LF1, steps=steps)
        assert max(model.batches) == 3 and sum(model.batches) == 2 + steps, steps


_PEAK = """
import json, resource, sys
from transformers import AutoModelForCausalLM, AutoTokenizer
from amp.parser.search.gradients import contrast_gradients
tok = AutoTokenizer.from_pretrained(sys.argv[1]); model = AutoModelForCausalLM.from_pretrained(sys.argv[1]).eval()
peaks = []
for steps in (2, 16, 64):  # 2: warm the allocator and caches
    contrast_gradients(model, tok, sys.argv[2], sys.argv[3], sys.argv[4], target="sequence", steps=steps)
    peaks.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(json.dumps(peaks))
"""


def test_peak_memory_does_not_grow_with_the_steps(saved_tiny_model: Path) -> None:
    """Peak RSS (ru_maxrss, KiB, in a process of its own) after 64 steps is within a small margin of
    the peak after 16: the path's points are batched and only one gradient sum is kept.  (With
    every point in one pass, the tiny model's peak grows by ~90 MiB from 16 to 64 steps.)"""
    out = subprocess.run([sys.executable, "-c", _PEAK, str(saved_tiny_model), _prompt().render(), LF0, LF1],
                         capture_output=True, text=True, timeout=300, check=True)
    warm, at16, at64 = json.loads(out.stdout.strip().splitlines()[-1])
    assert at64 - at16 <= 16 * 1024, (warm, at16, at64)


# ---------------------------------------------------------------------------- through the parser


def test_attribute_records_the_rungs_the_target_and_a_note(saved_tiny_model: Path, tmp_path: Path) -> None:
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "c"))
    met = attribute(parser, _prompt(), steps=4, gap_target=0.5)
    assert met.gap_target == 0.5 and met.target_met and met.rule == "midpoint"
    assert met.rungs[-1].steps == met.steps and met.relative_gap == met.rungs[-1].relative_gap
    assert met.completeness_gap == pytest.approx(met.relative_gap * abs(met.value - met.baseline_value), rel=1e-6)
    assert "within the 50% target" in met.note
    missed = attribute(parser, _prompt(), steps=2, max_steps=6, gap_target=1e-9)
    assert [r.steps for r in missed.rungs] == [2, 6] and missed.target_met is False
    assert "NOT met (tried 2, 6" in missed.note
    pad = attribute(parser, _prompt(), steps=2, gap_target=None, baseline="pad")
    zero = attribute(parser, _prompt(), steps=2, gap_target=None)
    assert pad.baseline == "pad" and pad.baseline_value != zero.baseline_value and pad.value == zero.value
    assert type(pad).from_dict(json.loads(json.dumps(pad.to_dict()))) == pad  # the record rebuilds from JSON
    ixg = attribute(parser, _prompt(), method="input_x_gradient", steps=99, gap_target=0.01)
    assert ixg.steps == 1 and ixg.gap_target is None and ixg.target_met is None and "input × gradient" in ixg.note


@pytest.mark.parametrize(("kw", "message"), [
    ({"gap_target": 0}, "gap target must be a share"),
    ({"gap_target": 1.5}, "gap target must be a share"),
    ({"gap_target": "much"}, "gap target must be a share"),
    ({"gap_target": float("nan")}, "gap target must be a share"),
    ({"baseline": "nothing"}, "baseline must be one of zero, pad, mean"),
    ({"steps": 32, "max_steps": 16}, r"max steps \(16\) must be at least steps \(32\)"),
    ({"max_steps": 0}, "max steps must be a whole number"),
])
def test_bad_settings_are_refused_once_with_their_name(kw, message) -> None:
    with pytest.raises(SettingError, match=message):
        check_settings(**kw)


def test_max_steps_defaults_to_the_larger_of_the_default_and_steps() -> None:
    assert check_settings(steps=200).max_steps == 200
    assert check_settings(steps=4).max_steps == 144
