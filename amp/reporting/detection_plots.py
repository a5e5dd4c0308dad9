"""Figures of ambiguity detection (issue #43; docs/paper-notes.md §22).

Pure functions:

* :func:`probe_layer_figure` — a :class:`~amp.detection.probe.ProbeReport`: the probe's TEST AUROC
  per layer (one line per pooling) with its bootstrap band, the shuffled-label control per layer
  (dotted) and the bag-of-words baseline (a dashed level line with its band), on a fixed 0–1 axis
  with chance (0.5) marked;
* :func:`roc_figure` — plain scores and labels per signal (so the signals' report and the command
  line can feed it): each signal's ROC curve (:func:`amp.detection.auroc.roc_curve`; higher score =
  "more ambiguous") with its AUROC in the legend, and the chance diagonal.

Empty input gives an empty figure whose title says what is missing; the figures' text
alternatives are :func:`amp.reporting.chart_text.figure_text`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from amp.detection.auroc import auroc, roc_curve
from amp.detection.hidden_states import Pooling
from amp.detection.probe import ProbeReport
from amp.reporting.style import IDEAL_COLOR, LF0_COLOR, LF1_COLOR, apply_layout, empty_figure, plain_label

__all__ = ["probe_layer_figure", "roc_figure"]

#: Colours of the probe's poolings and of the controls, in order (Okabe–Ito: blue, vermillion, green, purple).
_CURVE_COLORS = (LF0_COLOR, LF1_COLOR, "#009E73", "#CC79A7")
_WORDS_COLOR = "#6B4E00"
_BAND_ALPHA = 0.15


def _short(model: str, keep: int = 48) -> str:
    """A model identity short enough for a subtitle: its name before any ``;digest``, its tail kept."""
    name = model.split(";", 1)[0]
    return name if len(name) <= keep else "…" + name[-(keep - 1):]


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _band(x: Sequence[float], low: Sequence[float], high: Sequence[float], color: str, name: str) -> go.Scatter:
    """A filled band from ``low`` to ``high`` (out along ``high``, back along ``low``)."""
    xs = [*x, *reversed(x)]
    ys = [*high, *reversed(low)]
    return go.Scatter(x=xs, y=ys, fill="toself", mode="lines", line={"width": 0}, fillcolor=_rgba(color, _BAND_ALPHA),
                      name=name, hoverinfo="skip", showlegend=False, meta={"group": "band"})


def probe_layer_figure(report: ProbeReport | None) -> go.Figure:
    """The probes' TEST AUROC per layer with their 95 % bands, the shuffled-label control per layer
    and the bag-of-words baseline (module docstring).  A probe line well above both controls: the
    layer's states tell ambiguous from unambiguous sentences beyond their words."""
    title = "Does the model know it is ambiguous? Linear probes per layer"
    drawn = {p: report.of(p) for p in Pooling} if report is not None else {}
    drawn = {p: rows for p, rows in drawn.items() if rows}
    if report is None or not drawn:
        return empty_figure(title, "No probe results yet: run the probes on a model.")
    fig = go.Figure()
    for i, (pooling, rows) in enumerate(drawn.items()):
        color = _CURVE_COLORS[i % len(_CURVE_COLORS)]
        name = f"{pooling} token" if pooling is Pooling.LAST else f"{pooling} of tokens"
        x = [r.layer for r in rows]
        fig.add_trace(_band(x, [r.auroc.low for r in rows], [r.auroc.high for r in rows], color,
                            f"probe ({name}) 95 % band"))
        fig.add_trace(go.Scatter(
            x=x, y=[r.auroc.estimate for r in rows], mode="lines+markers", name=f"probe, {name}",
            line={"color": color, "width": 3}, marker={"size": 8, "color": color},
            customdata=[[r.auroc.low, r.auroc.high, r.auroc.n] for r in rows],
            hovertemplate=(f"<b>probe, {name}</b><br>layer %{{x}}<br>AUROC %{{y:.3f}} "
                           "[%{customdata[0]:.3f}, %{customdata[1]:.3f}]<br>n test = %{customdata[2]}<extra></extra>"),
            meta={"group": "probe", "pooling": str(pooling)}))
        fig.add_trace(go.Scatter(
            x=x, y=[r.shuffled.estimate for r in rows], mode="lines", name=f"labels shuffled, {name}",
            line={"color": color, "width": 2, "dash": "dot"},
            hovertemplate=f"labels shuffled, {name}<br>layer %{{x}}<br>AUROC %{{y:.3f}}<extra></extra>",
            meta={"group": "shuffled", "pooling": str(pooling)}))
    layers = [r.layer for rows in drawn.values() for r in rows]
    span = [min(layers), max(layers)]
    words = report.words
    if not np.isnan(words.estimate):
        fig.add_trace(_band(span, [words.low] * 2, [words.high] * 2, _WORDS_COLOR, "bag of words 95 % band"))
        fig.add_trace(go.Scatter(
            x=span, y=[words.estimate] * 2, mode="lines", name=f"bag of words (sentence only): {words.text()}",
            line={"color": _WORDS_COLOR, "width": 2, "dash": "dash"},
            hovertemplate=f"bag of words: AUROC {words.text(3)}<extra></extra>", meta={"group": "words"}))
    fig.add_trace(go.Scatter(x=span, y=[0.5, 0.5], mode="lines", name="chance (0.5)",
                             line={"color": IDEAL_COLOR, "width": 1}, hoverinfo="skip", meta={"group": "chance"}))
    sub = (f"AUROC on {report.n_test} held-out-word sentences (trained on {report.n_train}) · 95 % bootstrap band"
           f" · {plain_label(_short(report.model))}")
    apply_layout(fig, f"{title}<br><sup>{sub}</sup>", height=520, legend={"orientation": "h", "y": -0.2})
    fig.update_xaxes(title={"text": "layer (0 = the embeddings)"}, dtick=1 if span[1] - span[0] <= 30 else None)
    fig.update_yaxes(title={"text": "AUROC (ambiguous vs unambiguous)"}, range=[0, 1.02], dtick=0.1)
    return fig


def roc_figure(signals: Mapping[str, tuple[Sequence[float], Sequence[bool]]], *, subtitle: str = "") -> go.Figure:
    """The ROC curve of each signal (name → its scores, higher = "more ambiguous", and the true
    labels, true = ambiguous), its AUROC in the legend, and the chance diagonal."""
    title = "Does the model know it is ambiguous? ROC of its uncertainty signals"
    drawn = {name: (roc_curve(*pair), auroc(*pair)) for name, pair in signals.items()}
    drawn = {name: found for name, found in drawn.items() if found[0][0]}
    if not drawn:
        return empty_figure(title, "No signal scores on both ambiguous and unambiguous sentences yet.")
    fig = go.Figure()
    for i, (name, ((fpr, tpr), area)) in enumerate(drawn.items()):
        color = _CURVE_COLORS[i % len(_CURVE_COLORS)]
        label = plain_label(name)
        fig.add_trace(go.Scatter(
            x=list(fpr), y=list(tpr), mode="lines", name=f"{label} (AUROC {area:.2f})", line={"color": color, "width": 3},
            hovertemplate=f"<b>{label}</b><br>false-positive rate %{{x:.2f}}<br>true-positive rate %{{y:.2f}}"
                          "<extra></extra>",
            meta={"group": "roc", "signal": name, "auroc": area}))
    fig.add_trace(go.Scatter(x=[0.0, 1.0], y=[0.0, 1.0], mode="lines", name="chance (AUROC 0.5)",
                             line={"color": IDEAL_COLOR, "dash": "dash", "width": 2}, hoverinfo="skip",
                             meta={"group": "chance"}))
    sub = subtitle or "positive = ambiguous sentence; higher score = more ambiguous"
    apply_layout(fig, f"{title}<br><sup>{plain_label(sub)}</sup>", height=540)
    fig.update_xaxes(title={"text": "false-positive rate (unambiguous flagged)"}, range=[-0.02, 1.02], dtick=0.1,
                     constrain="domain")
    fig.update_yaxes(title={"text": "true-positive rate (ambiguous flagged)"}, range=[-0.02, 1.02], dtick=0.1,
                     scaleanchor="x", scaleratio=1, constrain="domain")
    return fig
