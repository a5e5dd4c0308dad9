"""Figures of a contrastive attribution (docs/paper-notes.md §18): the prompt with each token's
attribution as a diverging background, the test sentence's words as bars, and each example's
attribution against its influence (Spearman's ρ).

Colours follow :mod:`amp.reporting.style`: toward LF0 is LF0's blue, toward LF1 LF1's orange
(Okabe–Ito, colour-blind safe), white = no push; an example's marker has the colour of the reading
it is shown with (grey for an unambiguous ingredient).  User text is never markup: the prompt
HTML escapes every character (:func:`html.escape`), plotly labels and hovers go through
:func:`~amp.reporting.style.plain_label`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from amp.evaluation.attribution import Attribution, BesideRow
from amp.reporting.style import (
    IDEAL_COLOR,
    LF0_COLOR,
    LF1_COLOR,
    NEITHER_COLOR,
    apply_layout,
    empty_figure,
    plain_label,
)

__all__ = ["attribution_frame", "example_scatter", "prompt_html", "prompt_html_page", "word_bars"]


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return int(hex_color[1:3], 16), int(hex_color[3:5], 16), int(hex_color[5:7], 16)


#: The most opaque a token's background gets: the page's text stays readable on it (WCAG 2.1 AA,
#: 4.5:1; on the full colours dark text would be 3.4–3.6:1, docs/paper-notes.md §20).
MAX_TOKEN_OPACITY = 0.75


def _background(value: float, scale: float) -> str:
    """The token's background: LF0's blue (> 0) or LF1's orange (< 0), opacity |value| / scale
    times :data:`MAX_TOKEN_OPACITY`."""
    if scale <= 0 or value == 0:
        return "transparent"
    r, g, b = _rgb(LF0_COLOR if value > 0 else LF1_COLOR)
    return f"rgba({r}, {g}, {b}, {MAX_TOKEN_OPACITY * min(1.0, abs(value) / scale):.3f})"


def _label_color(label: int | None) -> str:
    return LF0_COLOR if label == 0 else LF1_COLOR if label == 1 else NEITHER_COLOR


def prompt_html(attr: Attribution) -> str:
    """The prompt as escaped text in ``<span>`` s whose background is the token's attribution
    (scaled to the largest |attribution|); the hover title gives the value.  A fragment."""
    scale = max((abs(t.attribution) for t in attr.tokens if t.attributed), default=0.0)
    spans = []
    for t in attr.tokens:
        if t.end <= t.start:
            continue  # a special token has no characters in the prompt
        text = html.escape(attr.prompt[t.start:t.end])
        title = html.escape(f"{attr.prompt[t.start:t.end]!r}: {t.attribution:+.4f}")
        spans.append(f'<span class="amp-token" style="background:{_background(t.attribution, scale)}" '
                     f'title="{title}" data-attribution="{t.attribution:.6g}">{text}</span>')
    legend = (f'<div class="amp-legend" style="font-size:0.85em;margin-bottom:0.4em">'
              f'<span style="background:{LF0_COLOR};color:white;padding:0 0.3em">toward LF0</span> '
              f'<span style="background:{LF1_COLOR};color:white;padding:0 0.3em">toward LF1</span> '
              f'(opacity: |attribution| / {scale:.3g} × {MAX_TOKEN_OPACITY:g})</div>')
    return (f'<div class="amp-attribution">{legend}<pre style="white-space:pre-wrap;font-family:monospace;'
            f'line-height:1.5">{"".join(spans)}</pre></div>')


def prompt_html_page(attr: Attribution) -> str:
    """:func:`prompt_html` as a stand-alone HTML page (the export)."""
    title = html.escape(f"Attribution: {attr.test_utterance}")
    meta = html.escape(f"{attr.method}, {attr.steps} step(s), {attr.baseline} baseline; target {attr.target}: "
                       f"{attr.token_lf0!r} (LF0) vs {attr.token_lf1!r} (LF1); f(x) = {attr.value:+.4f}, "
                       f"f(x′) = {attr.baseline_value:+.4f}; {attr.note}")
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>'
            f"<body><h3>{title}</h3><p>{meta}</p>{prompt_html(attr)}</body></html>")


def attribution_frame(attr: Attribution) -> pd.DataFrame:
    """One row per prompt token: position, text, characters, attribution, example and word (1-based)."""
    return pd.DataFrame([{
        "position": t.index, "token": t.token, "start": t.start, "end": t.end, "attribution": t.attribution,
        "example": None if t.example is None else t.example + 1, "word": None if t.word is None else t.word + 1,
        "attributed": t.attributed,
    } for t in attr.tokens], columns=["position", "token", "start", "end", "attribution", "example", "word",
                                       "attributed"])


def word_bars(attr: Attribution) -> go.Figure:
    """The test sentence's words, each a bar of its summed attribution (blue: toward LF0)."""
    title = "Which words of the test sentence push toward LF0 or LF1"
    if not attr.words:
        return empty_figure(title, "The test sentence has no words.")
    labels = [f"{w.index + 1}. {plain_label(w.word)}" for w in attr.words]
    values = [w.attribution for w in attr.words]
    fig = go.Figure(go.Bar(
        x=labels, y=values, marker_color=[LF0_COLOR if v >= 0 else LF1_COLOR for v in values],
        customdata=[plain_label(w.word) for w in attr.words],
        hovertemplate="%{customdata}: %{y:+.4f}<extra></extra>", meta={"kind": "words"},
    ))
    fig.add_hline(y=0, line_color=IDEAL_COLOR, line_width=1)
    apply_layout(fig, title, height=360, showlegend=False,
                 xaxis_title="word of the test sentence", yaxis_title="attribution (> 0: toward LF0)")
    return fig


def example_scatter(rows: Sequence[BesideRow], rho: float | None) -> go.Figure:
    """Each example's attribution (y) against its influence (x, ΔP(LF0) when removed), coloured by
    the reading it is shown with; Spearman's ρ in the title."""
    title = "Examples: attribution against influence"
    points = [r for r in rows if r.influence is not None]
    if not points:
        return empty_figure(title, "No example has a defined influence.")
    fig = go.Figure()
    for label, name in ((0, "shown with LF0"), (1, "shown with LF1"), (None, "plain (unambiguous)")):
        mine = [r for r in points if r.label == label]
        if not mine:
            continue
        fig.add_trace(go.Scatter(
            x=[r.influence for r in mine], y=[r.attribution for r in mine], mode="markers+text", name=name,
            text=[str(r.index + 1) for r in mine], textposition="top center",
            marker={"color": _label_color(label), "size": 12},
            customdata=[plain_label(r.utterance) for r in mine],
            hovertemplate="%{text}. %{customdata}<br>Δ P(LF0) %{x:+.4f}<br>attribution %{y:+.4f}<extra></extra>",
            meta={"label": "plain" if label is None else f"lf{label}"},
        ))
    fig.add_hline(y=0, line_color=IDEAL_COLOR, line_width=1)
    fig.add_vline(x=0, line_color=IDEAL_COLOR, line_width=1)
    rho_text = "–" if rho is None else f"{rho:+.2f}"
    apply_layout(fig, f"{title} (Spearman ρ = {rho_text})", height=420,
                 xaxis_title="influence: Δ P(LF0) when the example is removed",
                 yaxis_title="attribution (> 0: toward LF0)")
    return fig
