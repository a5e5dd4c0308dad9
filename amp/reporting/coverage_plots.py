"""The interpretation-coverage figure: recall, precision and both-found over k, next to ZM_k.

A pure function of :func:`amp.evaluation.coverage.coverage_frame`'s table (one row per type and
k).  The four curves share one 0–100 % axis: ZM_k (paper Eq. 1) is in percent in the frame, the
coverage measures are fractions there and shown as percentages.  LF0 blue and LF1 orange are
kept for the readings themselves, so the measures take the other Okabe–Ito colours and each its
own dash and marker (legible without colour).

When no beam was one of the two readings at any k (every defined value 0), four lines stacked
on the zero line say nothing legible: the figure says so in words instead (issue #32).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from amp.data.types import order_types
from amp.evaluation.sweep_run import optional_float
from amp.reporting.style import IDEAL_COLOR, apply_layout, empty_figure, plain_label, require_columns, type_label

__all__ = ["COVERAGE_MEASURES", "NOTHING_FOUND", "coverage_curves_figure"]

#: (column, legend name, colour, dash, marker) per curve; colours from the Okabe–Ito palette.
COVERAGE_MEASURES: tuple[tuple[str, str, str, str, str], ...] = (
    ("recall", "recall: share of the two readings found", "#009E73", "solid", "circle"),
    ("precision", "precision: share of the interpretations that are a reading", "#CC79A7", "dot", "diamond"),
    ("both_found", "both found (distinct top-k)", "#000000", "solid", "square"),
    ("zm", "ZM_k (raw top-k beams, paper Eq. 1)", IDEAL_COLOR, "dash", "x"),
)


def coverage_curves_figure(coverage_df: pd.DataFrame | None, type_: str | None = None) -> go.Figure:
    """Coverage of one ambiguity type over k = 1 … K (default: the first type of the frame).

    ``coverage_df`` is :func:`amp.evaluation.coverage.coverage_frame`'s table.  Recall, precision
    and both-found are computed on the top-k *distinct* interpretations, ZM_k on the raw top-k
    beams; both-found is never below ZM_k, and the gap is what duplicate or unparseable beams hide.
    """
    title = "Interpretation coverage over k"
    df = require_columns(coverage_df, ("type", "k", "n", "recall", "precision", "both_found", "zm"))
    if df is None:
        return empty_figure(title, "No zero-shot results yet: run a zero-shot sweep.")
    types = order_types(df["type"])
    chosen = type_ if type_ in types else types[0]
    sub = df[df["type"] == chosen].sort_values("k")
    ks = [int(k) for k in sub["k"]]
    n = int(sub["n"].iloc[0]) if len(sub) else 0
    full_title = f"{title} — {type_label(chosen)} (n = {n})"
    values = {column: [optional_float(x) for x in sub[column]] for column, *_ in COVERAGE_MEASURES}
    defined = [v for vs in values.values() for v in vs if v is not None]
    if defined and not any(defined):
        return _nothing_found(full_title, n, max(ks, default=1), parsed=any(v is not None for v in values["precision"]))
    fig = go.Figure()
    for column, name, color, dash, marker in COVERAGE_MEASURES:
        scale = 1.0 if column == "zm" else 100.0
        ys = [None if v is None else v * scale for v in values[column]]
        fig.add_trace(go.Scatter(
            x=ks, y=ys, mode="lines+markers", name=name,
            line={"color": color, "dash": dash, "width": 3}, marker={"size": 9, "symbol": marker},
            hovertemplate=f"<b>{plain_label(name)}</b><br>k = %{{x}}<br>%{{y:.1f}}%<extra></extra>",
            meta={"type": chosen, "measure": column},
        ))
    apply_layout(fig, full_title, height=480,
                 legend={"orientation": "h", "y": -0.22, "x": 0})
    fig.update_xaxes(title={"text": "k (top-k distinct interpretations; beams for ZM_k)"}, dtick=1,
                     range=[0.7, max(ks, default=1) + 0.3])
    fig.update_yaxes(title={"text": "mean over test sentences (%)"}, range=[-3, 103], dtick=20)
    return fig


#: The words of a coverage figure with nothing to draw (every measure 0 at every k).
NOTHING_FOUND = "No beam was one of the two readings"


def _nothing_found(title: str, n: int, max_k: int, *, parsed: bool) -> go.Figure:
    """The coverage figure when every measure is 0 at every k: a sentence instead of four flat lines."""
    sentences = "the one sentence" if n == 1 else f"any of the {n} sentences"
    detail = ("Recall, precision, both found and ZM_k are 0 at every k." if parsed else
              "No beam parsed as a logical form (so precision is undefined); recall, both found and ZM_k are 0.")
    fig = empty_figure(title, f"{NOTHING_FOUND} at any k from 1 to {max_k}, in {sentences}.")
    fig.add_annotation(text=detail, x=0.5, y=0.3, xref="paper", yref="paper", showarrow=False,
                       font={"size": 14, "color": IDEAL_COLOR})
    fig.update_layout(meta={"nothing_found": True})
    return fig
