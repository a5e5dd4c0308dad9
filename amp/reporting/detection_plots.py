"""Figures of ambiguity detection (issue #43; docs/paper-notes.md §22).

Pure functions:

* :func:`probe_layer_figure` — a :class:`~amp.detection.probe.ProbeReport`: the probe's TEST AUROC
  per layer (one line per pooling) with its bootstrap band, the shuffled-label control per layer
  (dotted) and the bag-of-words baseline (a dashed level line with its band), on a fixed 0–1 axis
  with chance (0.5) marked;
* :func:`auroc_bars` — the lesson's slide (:mod:`ui.classroom.detection_slide`): one horizontal bar
  per detector (:class:`AurocBar`: a signal, a probe, a control), its AUROC with its 95 % interval
  as error bars, chance (0.5) marked, in projector-sized type, as high as its box;
* :func:`roc_figure` — plain scores and labels per signal (so the signals' report and the command
  line can feed it): each signal's ROC curve (:func:`amp.detection.auroc.roc_curve`; higher score =
  "more ambiguous") with its AUROC in the legend, and the chance diagonal.

Empty input gives an empty figure whose title says what is missing; the figures' text
alternatives are :func:`amp.reporting.chart_text.figure_text`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import plotly.graph_objects as go

from amp.detection.auroc import auroc, roc_curve
from amp.detection.hidden_states import Pooling
from amp.detection.probe import ProbeReport
from amp.detection.report import CHANCE_AUROC
from amp.evaluation.bootstrap import Interval
from amp.reporting.poll_plots import PROJECTOR_FONT_PX, PROJECTOR_TICK_PX
from amp.reporting.style import IDEAL_COLOR, LF0_COLOR, LF1_COLOR, apply_layout, empty_figure, plain_label

__all__ = ["AurocBar", "BarKind", "auroc_bars", "probe_layer_figure", "roc_figure", "short_model"]

#: Colours of the probe's poolings and of the controls, in order (Okabe–Ito: blue, vermillion, green, purple).
_CURVE_COLORS = (LF0_COLOR, LF1_COLOR, "#009E73", "#CC79A7")
_WORDS_COLOR = "#6B4E00"
_BAND_ALPHA = 0.15


def short_model(model: str, keep: int = 48) -> str:
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
           f" · {plain_label(short_model(report.model))}")
    apply_layout(fig, f"{title}<br><sup>{sub}</sup>", height=520, legend={"orientation": "h", "y": -0.2})
    fig.update_xaxes(title={"text": "layer (0 = the embeddings)"}, dtick=1 if span[1] - span[0] <= 30 else None)
    fig.update_yaxes(title={"text": "AUROC (ambiguous vs unambiguous)"}, range=[0, 1.02], dtick=0.1)
    return fig


class BarKind(StrEnum):
    """What a bar of :func:`auroc_bars` measures (its colour)."""

    SIGNAL = "uncertainty signal"
    PROBE = "probe on hidden states"
    CONTROL = "control"


_BAR_COLORS = {BarKind.SIGNAL: LF0_COLOR, BarKind.PROBE: LF1_COLOR, BarKind.CONTROL: _WORDS_COLOR}


@dataclass(frozen=True)
class AurocBar:
    """One bar of :func:`auroc_bars`: its label (plain text), the AUROC with its interval, its kind."""

    label: str
    auroc: Interval
    kind: BarKind


def auroc_bars(bars: Sequence[AurocBar]) -> go.Figure:
    """One horizontal bar per detector, top to bottom in the order given: its AUROC (the value at the
    bar's end) with its 95 % interval as error bars, on a fixed 0–1 axis with chance (0.5) a dashed
    line; projector-sized type, no title (the slide says the question), as high as its box."""
    title = "How well each detector tells ambiguous from unambiguous sentences"
    drawn = [b for b in bars if not np.isnan(b.auroc.estimate)]
    if not drawn:
        return empty_figure(title, "No AUROC to show yet: measure it on the Research page.")
    drawn.reverse()  # plotly draws the first category at the bottom
    labels = [plain_label(b.label) for b in drawn]
    fig = go.Figure(go.Bar(
        y=labels, x=[b.auroc.estimate for b in drawn], orientation="h",
        marker_color=[_BAR_COLORS[b.kind] for b in drawn],
        error_x={"type": "data", "symmetric": False, "thickness": 3, "width": 8, "color": "#222222",
                 "array": [0.0 if np.isnan(b.auroc.high) else b.auroc.high - b.auroc.estimate for b in drawn],
                 "arrayminus": [0.0 if np.isnan(b.auroc.low) else b.auroc.estimate - b.auroc.low for b in drawn]},
        text=[f"{b.auroc.estimate:.2f}" for b in drawn], textposition="inside", insidetextanchor="start",
        textfont={"color": "#ffffff", "size": PROJECTOR_TICK_PX},
        customdata=[[b.auroc.low, b.auroc.high, b.auroc.n, str(b.kind)] for b in drawn],
        hovertemplate=("%{y}<br>%{customdata[3]}<br>AUROC %{x:.2f} [%{customdata[0]:.2f}, %{customdata[1]:.2f}]"
                       "<br>n = %{customdata[2]}<extra></extra>"),
        meta={"group": "auroc", "kinds": [str(b.kind) for b in drawn]}))
    fig.add_vline(x=CHANCE_AUROC, line={"color": IDEAL_COLOR, "dash": "dash", "width": 2})
    fig.add_annotation(x=CHANCE_AUROC, y=1.0, yref="paper", yanchor="bottom", text="chance", showarrow=False,
                       font={"size": PROJECTOR_TICK_PX, "color": IDEAL_COLOR})
    apply_layout(fig, "", showlegend=False, plot_bgcolor="white", margin={"l": 10, "r": 20, "t": 34, "b": 10})
    fig.update_layout(font={"size": PROJECTOR_FONT_PX})
    fig.update_xaxes(title={"text": "AUROC (0.5 = chance, 1 = perfect)", "font": {"size": PROJECTOR_TICK_PX}},
                     range=[0, 1], dtick=0.25,
                     tickfont={"size": PROJECTOR_TICK_PX}, gridcolor="#dddddd")
    fig.update_yaxes(tickfont={"size": PROJECTOR_TICK_PX})
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
