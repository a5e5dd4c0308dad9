"""Linear probes on hidden states: the states and their positions, the probe on toys, the controls,
and the pipeline end to end on a tiny model (cached, cancellable, with progress)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from amp.cache import ResultCache
from amp.detection.auroc import auroc
from amp.detection.dataset import DetectionPart, DetectionSet, build_detection_set
from amp.detection.errors import ProbeError
from amp.detection.hidden_states import (
    Pooling,
    hidden_states,
    probe_prompt,
    sentence_states,
    sentence_token_span,
)
from amp.detection.probe import ProbeReport, fit_and_score, probe_layers, run_probes, word_baseline
from amp.errors import AmpError
from amp.parser.core.errors import SearchCancelled
from amp.parser.parser import Parser

N_LAYERS = 2  # tests/tiny_models.py: n_layer=2


@pytest.fixture(scope="module")
def tiny(saved_tiny_model: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(saved_tiny_model))
    model = AutoModelForCausalLM.from_pretrained(str(saved_tiny_model)).eval()
    return model, tok


@pytest.fixture(scope="module")
def dataset() -> DetectionSet:
    return build_detection_set(seed=0, per_type=40)


@pytest.fixture(scope="module")
def report(saved_tiny_model: Path, dataset: DetectionSet, tmp_path_factory: pytest.TempPathFactory) -> ProbeReport:
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path_factory.mktemp("probe-cache")))
    return run_probes(parser, dataset, seed=0, resamples=200)


# -- the states ------------------------------------------------------------------------------------

def test_the_prompt_is_the_types_zero_shot_prompt_with_the_sentence_as_its_test() -> None:
    a = probe_prompt("the boy saw the girl with the telescope", "pp")
    b = probe_prompt("the girl saw the boy", "pp")
    assert a.endswith("Human: the boy saw the girl with the telescope\nComputer:")
    # the same context for every sentence of a type: only the test utterance differs
    assert a.rsplit("Human:", 1)[0] == b.rsplit("Human:", 1)[0]
    assert a.count("Human:") > 1


def test_hidden_states_have_layers_plus_one_entries_pooled_over_the_sentences_tokens(tiny) -> None:
    model, tok = tiny
    sentence = "the boy saw the girl with the telescope"
    prompt = probe_prompt(sentence, "pp")
    states = sentence_states(model, tok, prompt, sentence)
    assert states.layers == N_LAYERS + 1
    ids = tok(prompt).input_ids
    assert states.tokens == len(ids)
    assert tok.decode(ids[states.first:states.last + 1]).strip() == sentence
    assert tok.decode(ids[states.last + 1:]).strip() == "Computer:"  # the cue is not the sentence's
    import torch

    with torch.inference_mode():
        hs = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
    for layer in range(N_LAYERS + 1):
        np.testing.assert_allclose(states.pooled[Pooling.LAST][layer], hs[layer][0, states.last].numpy(), atol=1e-6)
        np.testing.assert_allclose(states.pooled[Pooling.MEAN][layer],
                                   hs[layer][0, states.first:states.last + 1].mean(0).numpy(), atol=1e-6)


def test_sentence_token_span_takes_the_overlapping_tokens_and_never_a_special_one() -> None:
    offsets = [(0, 0), (0, 5), (5, 6), (6, 10), (10, 12)]
    assert sentence_token_span(offsets, 6, 12) == (3, 4)
    assert sentence_token_span(offsets, 4, 6) == (1, 2)
    with pytest.raises(ProbeError, match="no token"):
        sentence_token_span(offsets, 20, 25)


def test_a_sentence_missing_from_its_prompt_is_a_probe_error(tiny) -> None:
    model, tok = tiny
    with pytest.raises(ProbeError, match="not in its prompt"):
        sentence_states(model, tok, "Human: a cat\nComputer:", "a dog")


# -- the probe on toys -------------------------------------------------------------------------------

def _toy(n: int, seed: int, separation: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2 == 0
    x = rng.normal(size=(n, 2, 32))
    x[:, 1, 0] += np.where(y, separation, -separation)  # layer 1 separates on one direction, layer 0 is noise
    return x, y


def test_a_separable_toy_gives_auroc_one_and_noise_gives_chance() -> None:
    x, y = _toy(200, 1, 6.0)
    train = np.arange(200) < 120
    results = probe_layers(x, y, train, pooling=Pooling.LAST, layers=[0, 1], seed=0, resamples=200)
    by_layer = {r.layer: r for r in results}
    assert by_layer[1].auroc.estimate == 1.0
    assert by_layer[1].auroc.low == 1.0
    assert 0.3 < by_layer[0].auroc.estimate < 0.7
    assert by_layer[1].c > 0


def test_the_probe_learns_from_train_only_and_scores_test() -> None:
    """Flip TEST's labels: a probe that had seen them would follow; this one scores AUROC 0 against them."""
    x, y = _toy(200, 2, 6.0)
    train = np.arange(200) < 120
    scores, _ = fit_and_score(x[train, 1], y[train], x[~train, 1])
    assert auroc(scores, y[~train]) == 1.0
    assert auroc(scores, ~y[~train]) == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_shuffled_label_control_sits_near_chance(seed: int) -> None:
    x, y = _toy(1200, 10 + seed, 1.0)
    train = np.arange(1200) < 600
    (result,) = probe_layers(x, y, train, pooling=Pooling.MEAN, layers=[1], seed=seed, resamples=200)
    assert result.auroc.estimate > 0.8
    assert 0.4 <= result.shuffled.estimate <= 0.6


def test_a_probe_needs_two_training_items_of_each_class() -> None:
    x = np.zeros((4, 3))
    with pytest.raises(ProbeError, match="two training items"):
        fit_and_score(x, np.array([1, 0, 0, 0]), x)


def test_the_word_baseline_sees_only_the_sentence() -> None:
    sentences = [f"the {w} saw every {v}" if i % 2 else f"the {w} saw the {v}"
                 for i, (w, v) in enumerate(zip(["boy", "girl", "man", "cat"] * 10, ["dog", "bird", "fox", "cow"] * 10,
                                                strict=True))]
    labels = [i % 2 == 1 for i in range(40)]
    train = [i < 24 for i in range(40)]
    interval, c = word_baseline(sentences, labels, train, resamples=100)
    assert interval.estimate == 1.0  # "every" tells them apart, a word the baseline can learn
    assert interval.n == 16
    assert c > 0


# -- the pipeline on a tiny model ---------------------------------------------------------------------

def test_run_probes_end_to_end_on_a_tiny_model(report: ProbeReport, dataset: DetectionSet) -> None:
    n_test = len(dataset.part(DetectionPart.TEST))
    assert report.n_test == n_test and report.n_train == len(dataset.items) - n_test
    assert {(r.pooling, r.layer) for r in report.results} == {(p, i) for p in Pooling for i in range(N_LAYERS + 1)}
    for r in report.results:
        assert r.auroc.n == n_test
        assert 0.0 <= r.auroc.low <= r.auroc.estimate <= r.auroc.high <= 1.0
        assert 0.4 <= r.shuffled.estimate <= 0.6, r
    assert 0.0 <= report.words.estimate <= 1.0
    assert ProbeReport.from_json(report.to_json()) == report
    assert report.best() is not None and report.best() in report.results


def test_run_probes_is_cached_cancellable_with_progress(saved_tiny_model: Path, tmp_path: Path) -> None:
    small = build_detection_set(seed=1, per_type=10, types=["pp", "scope"])
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "c"))
    seen: list[tuple[int, int]] = []
    first = run_probes(parser, small, layers=[1, 2], pooling=Pooling.LAST, resamples=50,
                       progress=lambda d, n: seen.append((d, n)))
    assert [r.layer for r in first.results] == [1, 2]
    assert seen[-1][0] == seen[-1][1] == len(small.items) + 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    again = run_probes(parser, small, layers=[1, 2], pooling=Pooling.LAST, resamples=50,
                       cancelled=lambda: True)  # served from the cache: nothing left to cancel
    assert again == first
    with pytest.raises(SearchCancelled):
        run_probes(parser, small, layers=[1], pooling=Pooling.LAST, resamples=50, cancelled=lambda: True)


@pytest.mark.parametrize("kwargs, message", [
    ({"layers": [-1]}, "non-negative"),
    ({"layers": [True]}, "non-negative"),
    ({"layers": []}, "non-negative"),
    ({"pooling": "max"}, "pooling must be"),
    ({"layers": [99]}, "beyond this model"),
])
def test_bad_settings_are_probe_errors(saved_tiny_model: Path, tmp_path: Path, kwargs, message) -> None:
    small = build_detection_set(seed=1, per_type=10, types=["pp", "scope"])
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "c"))
    with pytest.raises(ProbeError, match=message) as info:
        run_probes(parser, small, **kwargs)
    assert isinstance(info.value, AmpError)


def test_hidden_states_on_llama_cpp_say_the_transformers_engine_is_needed(saved_tiny_model: Path) -> None:
    class NoWeights:
        kind = "in-process"

        def capabilities(self):
            from amp.parser.backends.llama import CAPABILITIES

            return CAPABILITIES

    class Facade:
        backend = NoWeights()

        def load(self):
            return None

    with pytest.raises(ProbeError, match="transformers engine"):
        hidden_states(Facade(), [("a dog", "pp")])  # type: ignore[arg-type]
