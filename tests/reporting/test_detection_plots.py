"""Figures of ambiguity detection: the per-layer probe curve with its band and controls, the ROC curves."""

from __future__ import annotations

import pytest

from amp.detection.hidden_states import Pooling
from amp.detection.probe import ProbeReport, ProbeResult
from amp.evaluation.bootstrap import Interval
from amp.reporting.chart_text import figure_text
from amp.reporting.detection_plots import probe_layer_figure, roc_figure


def _iv(x: float, n: int = 40) -> Interval:
    return Interval(estimate=x, low=x - 0.1, high=x + 0.05, n=n)


def _rows(pooling: Pooling, probe: list[float], shuffled: list[float]) -> list[ProbeResult]:
    return [ProbeResult(layer=i, pooling=pooling, auroc=_iv(p), shuffled=_iv(s), c=1.0)
            for i, (p, s) in enumerate(zip(probe, shuffled, strict=True))]


REPORT = ProbeReport(
    model="tiny", words=_iv(0.7), words_c=0.1, n_train=100, n_test=40, seed=0, resamples=1000,
    results=(*_rows(Pooling.LAST, [0.6, 0.8, 0.9], [0.5, 0.48, 0.52]),
             *_rows(Pooling.MEAN, [0.55, 0.7, 0.75], [0.51, 0.49, 0.5])))


def _by_group(fig, group: str):
    return [t for t in fig.data if (t.meta or {}).get("group") == group]


def test_the_layer_figure_draws_each_probe_with_its_band_and_both_controls() -> None:
    fig = probe_layer_figure(REPORT)
    probes = _by_group(fig, "probe")
    assert [t.meta["pooling"] for t in probes] == ["last", "mean"]
    assert list(probes[0].x) == [0, 1, 2] and list(probes[0].y) == [0.6, 0.8, 0.9]
    shuffled = _by_group(fig, "shuffled")
    assert [list(t.y) for t in shuffled] == [[0.5, 0.48, 0.52], [0.51, 0.49, 0.5]]
    bands = _by_group(fig, "band")
    assert len(bands) == 3  # one per probe, one for the words
    # the band runs out along the highs and back along the lows
    assert list(bands[0].y) == pytest.approx([0.65, 0.85, 0.95, 0.8, 0.7, 0.5])
    (words,) = _by_group(fig, "words")
    assert list(words.y) == [0.7, 0.7] and list(words.x) == [0, 2]
    assert "bag of words" in words.name
    (chance,) = _by_group(fig, "chance")
    assert list(chance.y) == [0.5, 0.5]
    assert tuple(fig.layout.yaxis.range) == (0, 1.02)
    text = figure_text(fig)
    assert "layer" in text[0] and any("probe, last token: 0: 0.6, 1: 0.8, 2: 0.9" in line for line in text)
    assert "40 held-out-word sentences" in fig.layout.title.text


def test_the_layer_figure_of_one_pooling_draws_one_probe() -> None:
    one = ProbeReport(**{**REPORT.__dict__, "results": REPORT.of(Pooling.MEAN)})
    fig = probe_layer_figure(one)
    assert [t.meta["pooling"] for t in _by_group(fig, "probe")] == ["mean"]


@pytest.mark.parametrize("report", [None, ProbeReport(**{**REPORT.__dict__, "results": ()})])
def test_the_layer_figure_without_results_says_so(report) -> None:
    fig = probe_layer_figure(report)
    assert not fig.data
    assert "No probe results" in fig.layout.title.text


def test_ties_make_one_diagonal_step() -> None:
    fig = roc_figure({"flat": ([0.5, 0.5, 0.5, 0.5], [True, False, True, False])})
    (curve,) = _by_group(fig, "roc")
    assert list(curve.x) == [0.0, 1.0] and list(curve.y) == [0.0, 1.0]
    assert curve.meta["auroc"] == 0.5


def test_the_roc_figure_has_one_curve_per_signal_with_its_auroc() -> None:
    fig = roc_figure({"semantic entropy": ([0.9, 0.8, 0.7, 0.1], [True, True, False, False]),
                      "top-2 gap": ([0.1, 0.9, 0.2, 0.8], [True, True, False, False])})
    curves = _by_group(fig, "roc")
    assert [t.meta["signal"] for t in curves] == ["semantic entropy", "top-2 gap"]
    assert curves[0].meta["auroc"] == 1.0 and "AUROC 1.00" in curves[0].name
    assert curves[1].meta["auroc"] == pytest.approx(0.5)
    assert len(_by_group(fig, "chance")) == 1


def test_a_signal_with_one_class_only_is_left_out_and_none_gives_an_empty_figure() -> None:
    fig = roc_figure({"only ambiguous": ([0.1, 0.2], [True, True])})
    assert not fig.data and "No signal scores" in fig.layout.title.text
