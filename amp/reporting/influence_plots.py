"""Figures of why the model picked a reading (issue #15 points 1 and 2): each example's influence
on P(LF0), by size and by position, and the contrastive strip of LF0 against LF1.

Colours follow :mod:`amp.reporting.style`: an example's bar has the colour of the reading it is
shown with (LF0 blue, LF1 orange, an unambiguous ingredient grey); the log-odds scale runs
from LF1's orange through white to LF0's blue (a colour-blind-safe pair), centred
on 0 = no preference.  Every text a user may have typed goes through :func:`plain_label`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from amp.evaluation.contrastive import Contrast, ContrastColumn
from amp.evaluation.influence import Change, ExampleInfluence, Influence, Version
from amp.reporting.style import (
    IDEAL_COLOR,
    LF0_COLOR,
    LF1_COLOR,
    NEITHER_COLOR,
    apply_layout,
    empty_figure,
    plain_label,
)

__all__ = ["LOG_ODDS_COLORSCALE", "contrast_alternatives", "contrast_frame", "contrast_strip", "influence_bars",
           "influence_frame", "influence_by_position"]

#: Log-odds log p(LF0 token) − log p(LF1 token): orange (prefers LF1) — white — blue (LF0).
LOG_ODDS_COLORSCALE = [[0.0, LF1_COLOR], [0.5, "#FFFFFF"], [1.0, LF0_COLOR]]

_CHANGE_NAMES = {"removed": "removed", "flipped": "flipped to its other reading"}
_VERSION_NAMES = {"min": "min-token P(LF0)", "total": "total-probability P(LF0)"}


def _label_color(label: int | None) -> str:
    return LF0_COLOR if label == 0 else LF1_COLOR if label == 1 else NEITHER_COLOR


def _short(text: str, n: int = 42) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def influence_frame(inf: Influence) -> pd.DataFrame:
    """One row per example: position (1-based), sentence, label and every score and change."""
    rows = [{"position": e.index + 1, "example": e.utterance,
             "shown with": "plain" if e.label is None else f"LF{e.label}",
             **{k: getattr(e, k) for k in ("removed_p_lf0", "delta_removed", "flipped_p_lf0", "delta_flipped",
                                           "removed_p_lf0_total", "delta_removed_total", "flipped_p_lf0_total",
                                           "delta_flipped_total")}}
            for e in inf.examples]
    frame = pd.DataFrame(rows)
    frame.attrs["base_p_lf0"], frame.attrs["base_p_lf0_total"] = inf.base_p_lf0, inf.base_p_lf0_total
    return frame


def _turn_mark(inf: Influence, e: ExampleInfluence, change: Change, version: Version) -> str:
    """`` ⇄`` after an example whose change turns the model's preferred reading, else nothing."""
    return " ⇄" if inf.turns(e, change, version) else ""


def influence_bars(inf: Influence, change: Change = "removed", version: Version = "min") -> go.Figure:
    """Horizontal bars from the base P(LF0) (the dashed line) to each variant's P(LF0), in the order
    of every front end (:meth:`~amp.evaluation.influence.Influence.ranked`) from the top: the changes
    that turn the preferred reading first (marked ⇄), then the largest |Δ|; coloured by the reading
    the example is shown with."""
    title = f"Which examples moved P(LF0)? (each {_CHANGE_NAMES[change]})"
    base = inf.base(version)
    ranked = [e for e in inf.ranked(change, version) if e.delta(change, version) is not None]
    if not ranked or base is None:
        return empty_figure(title, "No example has a defined change (unambiguous examples cannot be flipped).")
    ranked.reverse()  # plotly draws the first bar at the bottom
    fig = go.Figure(go.Bar(
        x=[e.delta(change, version) for e in ranked], base=[base] * len(ranked),
        y=[f"{e.index + 1}. {plain_label(_short(e.utterance))}{_turn_mark(inf, e, change, version)}" for e in ranked],
        orientation="h", marker_color=[_label_color(e.label) for e in ranked],
        customdata=[[e.index + 1, plain_label(e.utterance), "plain" if e.label is None else f"LF{e.label}",
                     e.delta(change, version),
                     "<br>⇄ turns the preferred reading" if inf.turns(e, change, version) else ""] for e in ranked],
        hovertemplate="example %{customdata[0]}: %{customdata[1]}<br>shown with %{customdata[2]}"
                      "<br>P(LF0) %{base:.3f} → %{x:.3f} (Δ %{customdata[3]:+.3f})%{customdata[4]}<extra></extra>",
        showlegend=False,
    ))
    for name, color in (("shown with LF0", LF0_COLOR), ("shown with LF1", LF1_COLOR), ("plain", NEITHER_COLOR)):
        fig.add_trace(go.Bar(x=[None], y=[None], marker_color=color, name=name, orientation="h"))
    fig.add_vline(x=base, line_color=IDEAL_COLOR, line_width=2, line_dash="dash",
                  annotation_text=f"base {base:.3f}", annotation_position="top")
    apply_layout(fig, f"{title}<br><sup>{_VERSION_NAMES[version]}: from the base prompt's (dashed) to the "
                 "prompt's without that example</sup>" if change == "removed" else
                 f"{title}<br><sup>{_VERSION_NAMES[version]}: from the base prompt's (dashed) to the prompt's "
                 "with that example flipped</sup>",
                 height=max(320, 90 + 34 * len(ranked)), xaxis_title=_VERSION_NAMES[version],
                 legend={"orientation": "h", "y": -0.2}, margin={"l": 20, "r": 20, "t": 100, "b": 60})
    return fig


def influence_by_position(inf: Influence, change: Change = "removed", version: Version = "min") -> go.Figure:
    """Δ P(LF0) against the example's position (does the last example matter more?), with the
    Spearman correlation of position and |Δ| in the title."""
    title = "Does an example's position matter?"
    points = [(e, d) for e in inf.examples if (d := e.delta(change, version)) is not None]
    if not points:
        return empty_figure(title, "No example has a defined change.")
    summary = inf.position_summary(change, version)
    rho = "–" if summary.spearman is None else f"{summary.spearman:+.2f}"
    fig = go.Figure(go.Scatter(
        x=[e.index + 1 for e, _ in points], y=[d for _, d in points], mode="lines+markers",
        line={"color": IDEAL_COLOR, "width": 1}, marker={"size": 12, "color": [_label_color(e.label) for e, _ in points]},
        customdata=[plain_label(e.utterance) for e, _ in points],
        hovertemplate="position %{x}: %{customdata}<br>Δ P(LF0) = %{y:+.3f}<extra></extra>", showlegend=False,
    ))
    fig.add_hline(y=0, line_color=IDEAL_COLOR, line_width=1)
    apply_layout(fig, f"{title}<br><sup>Spearman ρ(position, |Δ|) = {rho} over {summary.n} examples</sup>",
                 height=340, xaxis_title="position in the prompt (1 = first)",
                 yaxis_title=f"Δ {_VERSION_NAMES[version]}", xaxis={"dtick": 1})
    return fig


def contrast_frame(c: Contrast) -> pd.DataFrame:
    """One row per position: both tokens, their log-probabilities and the log-odds."""
    return pd.DataFrame([{"position": col.position, "shared prefix": col.shared, "LF0 token": col.token_lf0,
                          "LF1 token": col.token_lf1, "log p LF0": col.logprob_lf0, "log p LF1": col.logprob_lf1,
                          "log-odds LF0 − LF1": col.log_odds} for col in c.columns])


def _finite(x: float) -> float:
    return x if math.isfinite(x) else math.copysign(50.0, x)


def _cell_token(token: str | None, n: int = 8) -> str:
    """A token as a cell shows it: ∅ where the reading has ended, long ones ellipsised."""
    if token is None:
        return "∅"
    text = token if len(token) <= n else token[: n - 1] + "…"
    return plain_label(text.replace(" ", "␣") if not text.strip() else text.strip())


def contrast_strip(c: Contrast, *, context: int = 3, per_row: int = 12) -> go.Figure:
    """The log-odds strip: the last ``context`` shared tokens (grey), then every position from
    the divergence on, each cell coloured by log p(LF0 token) − log p(LF1 token) on a symmetric
    diverging scale and labelled with both tokens (LF0's on top); ``per_row`` cells a row, so
    every cell is wide enough for its tokens (rows are labelled with their positions)."""
    title = "LF0 against LF1, token by token"
    if c.divergence is None:
        return empty_figure(title, "The two readings are the same token sequence.")
    if per_row < 1:
        raise ValueError(f"per_row must be at least 1, got {per_row}")
    cols = c.columns[max(0, c.divergence - context):]
    odds = [_finite(col.log_odds) for col in cols]
    bound = max(1.0, max(abs(v) for v in odds))
    rows = [cols[i:i + per_row] for i in range(0, len(cols), per_row)]
    def grid(cell: Callable[[ContrastColumn], Any], fill: Any = None) -> list[list[Any]]:
        """One value per cell, row by row, the last row padded with ``fill``."""
        return [([cell(col) for col in row] + [fill] * per_row)[:per_row] for row in rows]

    def tokens(col: ContrastColumn) -> str:
        return f"{_cell_token(col.token_lf0)}<br>{_cell_token(col.token_lf1)}"

    hover = grid(fill="", cell=lambda col: f"position {col.position}{' (shared)' if col.shared else ''}<br>LF0: "
                 f"{plain_label(repr(col.token_lf0))} log p {_fmt(col.logprob_lf0)}<br>LF1: "
                 f"{plain_label(repr(col.token_lf1))} log p {_fmt(col.logprob_lf1)}<br>log-odds {col.log_odds:+.2f}")
    labels = [f"{row[0].position}–{row[-1].position}" if len(row) > 1 else str(row[0].position) for row in rows]
    cells = {"y": labels, "texttemplate": "%{text}", "hovertext": hover, "hoverinfo": "text", "xgap": 3, "ygap": 3,
             "textfont": {"size": 13}}
    fig = go.Figure(go.Heatmap(  # the shared prefix, grey
        z=grid(lambda col: 0.0 if col.shared else None), text=grid(lambda col: tokens(col) if col.shared else "", ""),
        colorscale=[[0, "#DDDDDD"], [1, "#DDDDDD"]], showscale=False, **cells))
    fig.add_trace(go.Heatmap(  # from the divergence on, by log-odds
        z=grid(lambda col: None if col.shared else _finite(col.log_odds)),
        text=grid(lambda col: "" if col.shared else tokens(col), ""), zmid=0, zmin=-bound, zmax=bound,
        colorscale=LOG_ODDS_COLORSCALE, colorbar={"title": {"text": "log p(LF0)<br>− log p(LF1)"}}, **cells))
    at = "–" if c.log_odds_at_divergence is None else f"{c.log_odds_at_divergence:+.2f}"
    apply_layout(fig, f"{title}<br><sup>they part at position {c.divergence}: log-odds {at} there "
                 f"(> 0 prefers LF0); summed {c.total_log_odds:+.2f} = log P(LF0) − log P(LF1)</sup>",
                 height=130 + 62 * len(rows), yaxis_title="positions", plot_bgcolor="white",
                 margin={"l": 20, "r": 20, "t": 80, "b": 30})
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(showticklabels=False, title={"text": "in each cell: LF0's token over LF1's (∅: ended)"})
    return fig


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def contrast_alternatives(c: Contrast) -> go.Figure:
    """The grammar-allowed tokens at the divergence and their probabilities (renormalised over
    the allowed tokens), LF0's and LF1's own tokens in their colours."""
    title = "What the grammar allowed where the readings part"
    if c.divergence is None or not c.alternatives:
        return empty_figure(title, "No divergence, or no alternatives were recorded.")
    colors = [LF0_COLOR if i == c.alternative_lf0 else LF1_COLOR if i == c.alternative_lf1 else NEITHER_COLOR
              for i in range(len(c.alternatives))]
    names = [("LF0: " if i == c.alternative_lf0 else "LF1: " if i == c.alternative_lf1 else "") + repr(a.token)
             for i, a in enumerate(c.alternatives)]
    fig = go.Figure(go.Bar(x=[plain_label(n) for n in names], y=[a.prob for a in c.alternatives],
                           marker_color=colors, hovertemplate="%{x}<br>p = %{y:.3f}<extra></extra>"))
    apply_layout(fig, f"{title}<br><sup>position {c.divergence}, probabilities over the allowed tokens</sup>",
                 height=320, yaxis_title="probability", yaxis={"range": [0, 1]})
    return fig
