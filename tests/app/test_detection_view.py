"""Research page, "Does the model know it is ambiguous?": settings, one run on the tiny model, the
probe curve with its controls, the signals' ROC per prompt, the AUROC table; redrawn without the model."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app_helpers import assert_ok, goto, plotly_spec

from amp.detection.report import RowKind

RUN_TIMEOUT = 600  # probes of 50 sentences on the tiny model; the shared test machine can be slow


def _groups(spec: dict) -> list[str]:
    return [(t.get("meta") or {}).get("group", "") for t in spec["data"]]


def test_the_section_measures_the_probes_on_the_tiny_model_and_keeps_the_report(at) -> None:
    """One run, probes only (the signals' figure is checked on a hand-made report below; their numbers in
    tests/detection): the probe curve with both controls, the table, the report kept for redraws."""
    goto(at, "research")
    assert any(s.value == "Does the model know it is ambiguous?" for s in at.header)
    charts_before = len(at.get("plotly_chart"))
    at.number_input(key="det_per_type").set_value(5).run()
    at.checkbox(key="det_signals").uncheck().run()
    at.button(key="det_run").click().run(timeout=RUN_TIMEOUT)
    assert_ok(at)
    assert not at.error and not at.status  # the bar and the status box are gone once it worked
    charts = at.get("plotly_chart")
    assert len(charts) == charts_before + 1
    groups = _groups(plotly_spec(at, charts_before))
    assert groups.count("probe") == 2 and groups.count("shuffled") == 2  # both poolings, each with its control
    assert "words" in groups and "chance" in groups
    assert any("Best probe: layer" in c.value.replace("\\", "") for c in at.caption)
    table = at.dataframe[-1].value
    assert set(table["kind"]) == {RowKind.PROBE, RowKind.SHUFFLED, RowKind.WORDS}
    assert set(table["layer"].dropna()) == {0, 1, 2}  # the tiny model: the embeddings and its 2 blocks
    # a rerun of the page redraws the kept report without the model: no status box
    statuses = len(at.status)
    at.run()
    assert_ok(at)
    assert at.button(key="det_run").disabled  # the same settings: nothing new to measure
    assert len(at.status) == statuses == 0 and len(at.get("plotly_chart")) == charts_before + 1


def test_nothing_to_measure_without_a_signal_or_a_probe(at) -> None:
    goto(at, "research")
    at.checkbox(key="det_signals").uncheck().run()
    at.checkbox(key="det_probes").uncheck().run()
    assert_ok(at)
    assert at.button(key="det_run").disabled


def _shown_report_script() -> None:
    """An AppTest script: ``show`` of a hand-made report (no model): both prompts' signals, two layers' probes."""
    import math

    from amp.detection.dataset import DetectionPart
    from amp.detection.hidden_states import Pooling
    from amp.detection.probe import ProbeReport, ProbeResult
    from amp.detection.report import DetectionReport
    from amp.detection.signals import PromptKind, SentenceSignals, Signal, SignalAuroc, SignalsReport
    from amp.evaluation.bootstrap import Interval
    from ui.inspection.detection_view import show

    iv = Interval(estimate=0.9, low=0.8, high=0.97, n=8)
    low = Interval(estimate=0.55, low=0.4, high=0.7, n=8)
    sentences = tuple(
        SentenceSignals(sentence=f"s{i}", type="pp", ambiguous=i % 2 == 0, part=DetectionPart.TEST, prompt=kind,
                        values={s: (float(i % 2) if kind is PromptKind.ZERO_SHOT else 0.3) for s in Signal}
                        | ({Signal.TOP2_GAP: math.nan} if i == 0 else {}))
        for kind in PromptKind for i in range(8))
    signals = SignalsReport(model="m", prompts=tuple(PromptKind), sentences=sentences, beams=5, seed=0, resamples=10,
                            aurocs=tuple(SignalAuroc(signal=s, prompt=k, type="all", part="all", auroc=iv)
                                         for s in Signal for k in PromptKind))
    probes = ProbeReport(model="m", words=low, words_c=1.0, n_train=16, n_test=8, seed=0, resamples=10,
                         results=tuple(ProbeResult(layer=i, pooling=p, auroc=iv, shuffled=low, c=1.0)
                                       for p in Pooling for i in range(2)))
    show(DetectionReport(model="m", seed=0, per_type=4, test_share=0.3, types=("pp",), held_out=("cat",),
                         n_train=16, n_test=8, signals=signals, probes=probes))


def test_the_report_shows_the_probe_curve_the_signals_roc_per_prompt_and_the_table() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_shown_report_script, default_timeout=60)
    at.run()
    assert_ok(at)
    assert len(at.get("plotly_chart")) == 2
    probe, roc = plotly_spec(at, 0), plotly_spec(at, 1)
    assert _groups(probe).count("probe") == 2
    curves = [t for t in roc["data"] if (t.get("meta") or {}).get("group") == "roc"]
    assert len(curves) == 4 and "zero-shot prompt" in roc["layout"]["title"]["text"]
    # the oriented scores: semantic entropy (higher = ambiguous) reads the odd sentences as ambiguous
    entropy = next(t for t in curves if t["meta"]["signal"].startswith("semantic entropy"))
    assert entropy["meta"]["auroc"] == 0.0
    caption = " ".join(c.value for c in at.caption).replace("\\", "")  # shown as plain text: Markdown escaped
    assert "Best probe: layer 0" in caption and "beats the words alone" in caption
    assert len(at.dataframe[-1].value) == 4 * 2 + 2 * 2 * 2 + 1
    at.radio(key="det_prompt").set_value("mixed").run()
    assert_ok(at)
    roc = plotly_spec(at, 1)
    assert "mixed prompt" in roc["layout"]["title"]["text"]
    flat = next(t for t in roc["data"] if (t.get("meta") or {}).get("signal", "").startswith("semantic entropy"))
    assert flat["meta"]["auroc"] == 0.5  # every mixed-prompt score tied
