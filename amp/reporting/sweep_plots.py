"""Figures of sweep summaries: the paper's Tables 2–3 and Figures 2, 3 and 6.

Pure functions of :mod:`amp.evaluation.sweep_summary`'s frames (paper numbering: Stengel-Eskin
et al. 2023, arXiv 2306.00824).  Each ambiguity type always has the colour and name declared with
it in :mod:`amp.data.types`; probabilities and accuracies are fractions in the frames, shown as
percentages or 0–1 on fixed axis ranges, so figures of partial and complete sweeps compare directly.

* :func:`accuracy_bars` — zero-shot top-1 LF0 vs LF1 accuracy per type (Fig. 2);
* :func:`zm_bars` — ZM_k per type (Table 2);
* :func:`fdm_fim_table` — few-shot FDM and FIM per type (Table 3), drawn as a table;
* :func:`p_lf0_distribution` — per-type distribution of P(LF0) (Fig. 3);
* :func:`accuracy_vs_ratio` — few-shot LF0/LF1 accuracy vs the prompt ratio r (Fig. 6);
* :func:`p_lf0_vs_ratio` — few-shot mean P(LF0) vs r with the ideal diagonal (the quantity FIM
  measures, docs/paper-notes.md §13.5);
* :func:`overlay_fewshot` — few-shot curves of several saved runs on one figure.
"""

from __future__ import annotations

import textwrap
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from amp.data.types import display_name, order_types, type_color
from amp.evaluation.bootstrap import DEFAULT_LEVEL
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.evaluation.sweep_intervals import interval_columns
from amp.evaluation.sweep_run import optional_float
from amp.reporting.figure_notes import (
    INTERVAL_NOTE,
    NOTE_WIDTH,
    error_bars,
    has_intervals,
    interval_cells,
    n_note,
    text_position,
    with_notes,
)
from amp.reporting.style import (
    IDEAL_COLOR,
    LF0_COLOR,
    LF1_COLOR,
    apply_layout,
    empty_figure,
    plain_label,
    require_columns,
    type_label,
)

#: Fig. 6's markers: LF1's open diamond is larger than LF0's dot, so a point where both curves
#: meet shows both.
LF0_MARKER: dict[str, Any] = {"symbol": "circle", "size": 8}
LF1_MARKER: dict[str, Any] = {"symbol": "diamond-open", "size": 14, "line": {"width": 2}}
#: Fig. 6's height, margins (px) and legend position (paper y, its top): the bottom margin holds
#: the x-axis title and, below it, the legend (two rows at most); the top margin the title, its
#: notes and the coincide note above the panels' titles.
FIG6_HEIGHT = 560
FIG6_MARGIN = (("t", 170), ("b", 130), ("l", 80), ("r", 30))
FIG6_LEGEND_Y = -0.2
#: Pixels between the panels' top and the coincide note's bottom, above the panel titles.
FIG6_NOTE_SHIFT = 26
COINCIDE_NOTE = ("Where the LF0 and LF1 curves meet ({types}), the line drawn last covers the other: "
                 "LF0 is the filled dot, LF1 the open diamond around it.")

#: A type with fewer P(LF0) values than this is drawn as points only in Fig. 3 (a box of one or two
#: points is a flat line that says nothing), and the figure says so.
MIN_BOX_N = 5

__all__ = [
    "COINCIDE_NOTE",
    "MIN_BOX_N",
    "LF0_MARKER",
    "LF1_MARKER",
    "accuracy_bars",
    "accuracy_vs_ratio",
    "fdm_fim_table",
    "overlay_fewshot",
    "p_lf0_distribution",
    "p_lf0_vs_ratio",
    "zm_bars",
]


# --------------------------------------------------------------------------- few-shot figures


def p_lf0_vs_ratio(per_ratio_df: pd.DataFrame | None, *, error: Literal["ci", "sem", "std"] = "ci") -> go.Figure:
    """Mean P(LF0) against the prompt's LF0 ratio r, one line per type, with the ideal y = r.

    ``per_ratio_df`` is the first frame of :func:`amp.evaluation.experiments.fewshot_summary` (columns
    ``type, ratio, n, mean_p_lf0`` and ``sem_p_lf0``/``std_p_lf0``).  A model that follows the
    prompt's mix lies on the dashed diagonal; FIM (docs/paper-notes.md §13.5) is the mean squared
    distance of the per-sentence P(LF0) from it.  Error bars are the bootstrap interval
    (``error="ci"``, the default, where the frame has ``mean_p_lf0_low``/``_high``, docs/paper-notes.md
    §21; else the standard error), the standard error of the mean (``error="sem"``) or the standard
    deviation (``error="std"``).  The title says n and what the bars show.
    """
    title = "Does P(LF0) follow the prompt? Mean P(LF0) vs LF0 ratio r"
    df = require_columns(per_ratio_df, ("type", "ratio", "mean_p_lf0"))
    if df is None:
        return empty_figure(title, "No few-shot results yet: run a few-shot sweep.")
    if error == "ci" and not has_intervals(df, ("mean_p_lf0",)):
        error = "sem"
    err_col = f"{error}_p_lf0"
    fig = go.Figure()
    for t in order_types(df["type"]):
        sub = df[df["type"] == t].sort_values("ratio")
        xs = [float(r) for r in sub["ratio"]]
        ys = [optional_float(v) for v in sub["mean_p_lf0"]]
        errs = [optional_float(v) or 0.0 for v in sub[err_col]] if err_col in sub else [0.0] * len(xs)
        bars = (error_bars(sub, "mean_p_lf0", ys) if error == "ci" else None) or {
            "type": "data", "array": errs, "visible": True, "thickness": 1.5}
        low, high = interval_columns("mean_p_lf0")
        spread = ([f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(sub[low], sub[high], strict=True)]
                  if error == "ci" else [f"{e:.3f}" for e in errs])
        ns = [int(v) for v in sub["n"]] if "n" in sub else [0] * len(xs)
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines+markers", name=type_label(t),
                line={"color": type_color(t), "width": 3}, marker={"size": 9},
                error_y=bars,
                customdata=[[n, e] for n, e in zip(ns, spread, strict=True)],
                hovertemplate=(
                    f"<b>{type_label(t)}</b><br>r = %{{x:.1f}}<br>mean P(LF0) = %{{y:.3f}}"
                    f"<br>{f'{DEFAULT_LEVEL:.0%} interval' if error == 'ci' else error} = %{{customdata[1]}}"
                    "<br>n = %{customdata[0]}<extra></extra>"
                ),
                meta={"type": t},
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[0.0, 1.0], y=[0.0, 1.0], mode="lines", name="ideal: P(LF0) = r",
            line={"color": IDEAL_COLOR, "dash": "dash", "width": 2}, hoverinfo="skip",
            meta={"type": "ideal"},
        )
    )
    shown = INTERVAL_NOTE if error == "ci" else f"bars: ± {'standard error' if error == 'sem' else 'standard deviation'}"
    apply_layout(fig, with_notes(title, n_note(df["n"] if "n" in df else [], "sentences per type and ratio"), shown),
                 height=540, legend={"title": {"text": "ambiguity type"}})
    fig.update_xaxes(title={"text": "LF0 ratio r in the prompt (fraction of examples showing LF0)"},
                     range=[-0.03, 1.03], dtick=0.1)
    fig.update_yaxes(title={"text": "mean P(LF0) (0–1, min-token prob. normalised)"},
                     range=[-0.03, 1.03], dtick=0.1)
    return fig


def accuracy_vs_ratio(per_ratio_df: pd.DataFrame | None) -> go.Figure:
    """Top-1 LF0 and LF1 accuracy against the prompt's LF0 ratio r, one panel per type (Fig. 6).

    LF0 is solid blue with filled dots, LF1 dashed orange with larger open diamonds (so where the
    two coincide, e.g. both 0 %, both stay visible, and a note under the figure names the types where
    they meet); faint dotted lines show where a model
    that exactly follows the prompt would lie (LF0: y = r, LF1: y = 1 − r).  FDM (docs/paper-notes.md
    §13.4, range 0–2) is the summed distance of the two solid/dashed curves from their
    dotted ideals, averaged over r.  ``per_ratio_df`` is the first frame of
    :func:`amp.evaluation.experiments.fewshot_summary` (accuracies as fractions 0–1, shown as %),
    with error bars where it has the intervals of :func:`amp.evaluation.sweep_intervals.fewshot_with_intervals`.

    Layout (issue #46): n, what the bars show and the coincide note are lines under the title,
    wrapped at :data:`NOTE_WIDTH` characters; the legend sits alone in the bottom margin, which is
    tall enough for it, so no text overlaps another or runs past the right edge.
    """
    title = "Few-shot top-1 accuracy vs LF0 ratio r (paper Fig. 6)"
    df = require_columns(per_ratio_df, ("type", "ratio", "acc_lf0", "acc_lf1"))
    if df is None:
        return empty_figure(title, "No few-shot results yet: run a few-shot sweep.")
    types = order_types(df["type"])
    coincide: list[str] = []
    fig = make_subplots(
        rows=1, cols=len(types), shared_yaxes=True, horizontal_spacing=0.03,
        subplot_titles=[type_label(t) for t in types],
    )
    for col, t in enumerate(types, start=1):
        if _accuracy_panel(fig, col, t, df[df["type"] == t].sort_values("ratio")):
            coincide.append(display_name(t))
    notes = [n_note(df["n"] if "n" in df else [], "sentences per type and ratio"),
             INTERVAL_NOTE if has_intervals(df, ("acc_lf0", "acc_lf1")) else ""]
    apply_layout(fig, with_notes(title, *notes), height=FIG6_HEIGHT, margin=dict(FIG6_MARGIN),
                 legend={"orientation": "h", "x": 0, "xanchor": "left", "y": FIG6_LEGEND_Y, "yanchor": "top"})
    if coincide:  # one line would hide the other: the markers tell them apart, and a note says so
        note = "<br>".join(textwrap.wrap(plain_label(COINCIDE_NOTE.format(types=", ".join(coincide))), NOTE_WIDTH))
        fig.add_annotation(text=note, xref="paper", yref="paper", x=0, y=1, yshift=FIG6_NOTE_SHIFT,
                           showarrow=False, xanchor="left", yanchor="bottom", align="left", font={"size": 12},
                           name="coincide-note")
    fig.update_xaxes(range=[-0.05, 1.05], dtick=0.5, title={"text": "LF0 ratio r"})
    fig.update_yaxes(range=[-0.03, 1.03], tickformat=".0%")
    fig.update_yaxes(title={"text": "top-1 accuracy (% of test sentences)"}, row=1, col=1)
    return fig


def _accuracy_panel(fig: go.Figure, col: int, t: str, sub: pd.DataFrame) -> bool:
    """Type ``t``'s panel of :func:`accuracy_vs_ratio` (LF0 and LF1 accuracy with their ideals) into
    column ``col``; whether the two curves meet somewhere (both accuracies equal at some r)."""
    xs = [float(r) for r in sub["ratio"]]
    ns = [int(v) for v in sub["n"]] if "n" in sub else [0] * len(xs)
    same = [optional_float(a) is not None and optional_float(a) == optional_float(b)
            for a, b in zip(sub["acc_lf0"], sub["acc_lf1"], strict=True)]
    for which, color, dash, ideal, marker in (
        ("lf0", LF0_COLOR, "solid", [0.0, 1.0], LF0_MARKER),
        ("lf1", LF1_COLOR, "dash", [1.0, 0.0], LF1_MARKER),
    ):
        name = which.upper()
        ys = [optional_float(v) for v in sub[f"acc_{which}"]]
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines+markers", name=f"{name} accuracy",
                legendgroup=which, showlegend=col == 1,
                line={"color": color, "dash": dash, "width": 3}, marker={**marker, "color": color},
                error_y={**(error_bars(sub, f"acc_{which}", ys) or {"visible": False}), "color": color},
                customdata=ns,
                hovertemplate=(
                    f"<b>{type_label(t)}</b><br>r = %{{x:.1f}}<br>{name} top-1 accuracy = "
                    "%{y:.0%}<br>n = %{customdata}<extra></extra>"
                ),
                meta={"type": t, "lf": which},
            ),
            row=1, col=col,
        )
        fig.add_trace(
            go.Scatter(
                x=[0.0, 1.0], y=ideal, mode="lines", name=f"{name} ideal (follows the prompt)",
                legendgroup=f"{which}-ideal", showlegend=col == 1, opacity=0.45,
                line={"color": color, "dash": "dot", "width": 1.5}, hoverinfo="skip",
                meta={"type": t, "lf": which, "ideal": True},
            ),
            row=1, col=col,
        )
    return any(same)


# --------------------------------------------------------------------------- zero-shot figures


def zm_bars(zeroshot_df: pd.DataFrame | None, k: int) -> go.Figure:
    """ZM_k per type as bars (the paper's Table 2 as a figure; 0–100 %).

    ZM_k (docs/paper-notes.md §13.3) is the percentage of test sentences with *both* LFs among the
    top-k beams: 100 % means the model always surfaces both readings.  ``zeroshot_df`` is
    :func:`amp.evaluation.experiments.zeroshot_summary`'s frame, which has a ``ZM_<k>`` column;
    with the intervals of :func:`amp.evaluation.sweep_intervals.zeroshot_with_intervals` the bars get
    error bars (and the values move inside the bars, clear of them).  The title says n.
    """
    title = f"Zero-shot ZM_{k}: both readings among the top {k} beams"
    col = f"ZM_{k}"
    df = require_columns(zeroshot_df, ("type", col))
    if df is None:
        return empty_figure(title, "No zero-shot results yet: run a zero-shot sweep.")
    types = order_types(df["type"])
    rows = df.set_index("type").loc[types]
    ys = [optional_float(v) for v in rows[col]]
    ns = [int(v) for v in rows["n"]] if "n" in rows else [0] * len(types)
    fig = go.Figure(
        go.Bar(
            x=[type_label(t) for t in types], y=ys, name=col,
            marker={"color": [type_color(t) for t in types]},
            text=[("" if v is None else f"{v:.0f}%") for v in ys], textposition=text_position(rows, (col,)),
            error_y=error_bars(rows, col, ys), customdata=ns,
            hovertemplate=f"%{{x}}<br>{col} = %{{y:.1f}}%<br>n = %{{customdata}}<extra></extra>",
        )
    )
    apply_layout(fig, with_notes(title, n_note(rows["n"] if "n" in rows else []), INTERVAL_NOTE if has_intervals(rows, (col,)) else ""),
                 height=480, showlegend=False)
    fig.update_xaxes(title={"text": "ambiguity type"})
    fig.update_yaxes(title={"text": f"{col} (% of test sentences)"}, range=[0, 109], dtick=20)
    return fig


def _cell(value: Any, digits: int) -> str:
    v = optional_float(value)
    return "–" if v is None else f"{v:.{digits}f}"


def fdm_fim_table(per_type_df: pd.DataFrame | None) -> go.Figure:
    """Few-shot FDM and FIM per type as a table figure (the paper's Table 3).

    FDM (paper Eq. 2; range **0–2**, docs/paper-notes.md §13.4) and FIM (paper Eq. 3; range 0–1,
    docs/paper-notes.md §13.5) are both lower-is-better.  ``per_type_df`` is the ``per_type`` frame of
    :func:`amp.evaluation.experiments.fewshot_summary`; ``n`` (sentences) and ``n_ratios`` are shown
    when present, and each value as ``estimate [low, high]`` where the frame has its interval
    (:func:`amp.evaluation.sweep_intervals.fewshot_with_intervals`).
    Used for the report's PNG/HTML of Table 3 (the app shows the frame itself).
    """
    title = "Few-shot FDM and FIM per type (lower is better)"
    df = require_columns(per_type_df, ("type", "FDM", "FIM"))
    if df is None:
        return empty_figure(title, "No few-shot results yet: run a few-shot sweep.")
    types = order_types(df["type"])
    rows = df.drop_duplicates("type").set_index("type").loc[types]
    header = ["ambiguity type", "FDM (0–2) ↓", "FIM (0–1) ↓"]
    cells: list[list[str]] = [
        [type_label(t) for t in types],
        interval_cells(rows, "FDM", 3),
        interval_cells(rows, "FIM", 3),
    ]
    for col, name in (("n", "n (sentences)"), ("n_ratios", "ratios")):
        if col in rows:
            header.append(name)
            cells.append([_cell(v, 0) for v in rows[col]])
    row_height = 38
    fig = go.Figure(
        go.Table(
            columnwidth=[2.2] + [2.6 if has_intervals(rows, ("FDM", "FIM")) else 1.4] * 2 + [1] * (len(header) - 3),
            header={"values": [f"<b>{h}</b>" for h in header], "fill_color": "#EEEEEE",
                    "line_color": "#CCCCCC", "align": ["left"] + ["right"] * (len(header) - 1),
                    "font": {"size": 16}, "height": row_height},
            cells={"values": cells, "fill_color": "white", "line_color": "#DDDDDD",
                   "align": ["left"] + ["right"] * (len(header) - 1),
                   "font": {"size": 16, "color": [[type_color(t) for t in types]] + [["#222222"]] * (len(header) - 1)},
                   "height": row_height},
        )
    )
    # tall enough for every row, never taller than wide (the title and margins take ~130 px)
    apply_layout(fig, title, height=max(320, 140 + row_height * (len(types) + 1)),
            margin={"l": 30, "r": 30, "t": 80, "b": 30})
    return fig


def accuracy_bars(zeroshot_df: pd.DataFrame | None) -> go.Figure:
    """Zero-shot top-1 accuracy of LF0 vs LF1 per type, grouped bars (paper Fig. 2).

    The gap between the two bars of a type shows which reading the model prefers when the prompt
    gives no hint; their sum is at most 100 %.  Accuracies are fractions in the frame
    (:func:`amp.evaluation.experiments.zeroshot_summary`) and shown as %.
    """
    title = "Zero-shot top-1 accuracy: LF0 vs LF1 (paper Fig. 2)"
    df = require_columns(zeroshot_df, ("type", "acc_lf0", "acc_lf1"))
    if df is None:
        return empty_figure(title, "No zero-shot results yet: run a zero-shot sweep.")
    types = order_types(df["type"])
    rows = df.set_index("type").loc[types]
    ns = [int(v) for v in rows["n"]] if "n" in rows else [0] * len(types)
    fig = go.Figure()
    for which, color in (("lf0", LF0_COLOR), ("lf1", LF1_COLOR)):
        ys = [optional_float(v) for v in rows[f"acc_{which}"]]
        fig.add_trace(
            go.Bar(
                x=[type_label(t) for t in types], y=ys, name=f"{which.upper()} (top-1)",
                marker={"color": color},
                text=[("" if v is None else f"{v:.0%}") for v in ys],
                textposition=text_position(rows, (f"acc_{which}",)),
                error_y=error_bars(rows, f"acc_{which}", ys), customdata=ns,
                hovertemplate=(
                    f"%{{x}}<br>{which.upper()} top-1 accuracy = %{{y:.1%}}<br>n = %{{customdata}}<extra></extra>"
                ),
                meta={"lf": which},
            )
        )
    notes = (n_note(rows["n"] if "n" in rows else []), INTERVAL_NOTE if has_intervals(rows, ("acc_lf0", "acc_lf1")) else "")
    apply_layout(fig, with_notes(title, *notes), height=480, barmode="group",
                 legend={"title": {"text": "top-1 prediction is"}})
    fig.update_xaxes(title={"text": "ambiguity type"})
    fig.update_yaxes(title={"text": "top-1 accuracy (% of test sentences)"}, range=[0, 1.09],
                     tickformat=".0%")
    return fig


def p_lf0_distribution(records_df: pd.DataFrame | None, *, column: str = "p_lf0",
                       means: pd.DataFrame | None = None) -> go.Figure:
    """Per-type distribution of P(LF0) over test sentences: box plus every point (paper Fig. 3).

    ``records_df`` is :func:`amp.evaluation.experiments.records_frame`'s frame.  ``column`` is a
    :class:`~amp.evaluation.p_lf0_measures.PLf0Measure` value: ``"p_lf0"`` (the minimum token
    probability normalised between the two LFs, the paper's definition), ``"p_lf0_parted"`` (the
    same from where the readings part) or ``"p_lf0_total"`` (normalised total sequence
    probability, which is what the paper's Fig. 3 notebook actually plotted, docs/paper-notes.md
    §12).  The dotted line at 0.5 is "no preference"; hovering a point shows its sentence.

    The title says n per type; a type with fewer than :data:`MIN_BOX_N` values is drawn as its
    points only (no flat box), and the title says that too.  ``means`` (a frame with ``type``,
    ``mean_<column>`` and its interval, :func:`amp.evaluation.sweep_intervals.zeroshot_with_intervals`)
    adds each type's mean with its bootstrap interval as a black diamond with error bars.
    """
    name = PLf0Measure(column).chart
    title = f"Distribution of {name} per type (paper Fig. 3)"
    df = require_columns(records_df, ("type", column))
    if df is not None:
        df = df[pd.to_numeric(df[column], errors="coerce").notna()]
    if df is None or len(df) == 0:
        return empty_figure(title, "No P(LF0) scores yet: run a sweep with scoring on.")
    fig = go.Figure()
    counts: list[int] = []
    for t in order_types(df["type"]):
        sub = df[df["type"] == t]
        ys = [float(v) for v in sub[column]]
        counts.append(len(ys))
        boxed = len(ys) >= MIN_BOX_N
        surfaces = [plain_label(str(s)) for s in sub["surface"]] if "surface" in sub else [""] * len(ys)
        ratios = (
            [("" if optional_float(r) is None else f"{float(r):.1f}") for r in sub["ratio"]]
            if "ratio" in sub else [""] * len(ys)
        )
        fig.add_trace(
            go.Box(
                x=[type_label(t)] * len(ys), y=ys, name=type_label(t),
                boxpoints="all", jitter=0.4, pointpos=0, boxmean=boxed,
                marker={"color": type_color(t), "size": 7 if boxed else 10, "opacity": 0.7 if boxed else 1.0},
                line={"color": type_color(t), "width": 2 if boxed else 0},
                fillcolor=None if boxed else "rgba(0,0,0,0)",
                customdata=[[s, r] for s, r in zip(surfaces, ratios, strict=True)],
                hovertemplate=(
                    "%{customdata[0]}<br>" + plain_label(name) + " = %{y:.3f}<br>r = %{customdata[1]}<extra></extra>"
                ),
                meta={"type": t},
            )
        )
    fig.add_hline(y=0.5, line={"color": IDEAL_COLOR, "dash": "dot"},
                  annotation_text="no preference (0.5)", annotation_position="top left")
    mean_col = f"mean_{column}"
    with_means = means is not None and len(means) > 0 and has_intervals(means, (mean_col,))
    if with_means and means is not None:
        _add_means(fig, means, mean_col)
    few = f"points only where n < {MIN_BOX_N}" if min(counts) < MIN_BOX_N else ""
    notes = (n_note(counts), few, f"◆ mean, {INTERVAL_NOTE}" if with_means else "")
    apply_layout(fig, with_notes(title, *notes), height=520, showlegend=False)
    fig.update_xaxes(title={"text": "ambiguity type"})
    fig.update_yaxes(title={"text": f"{name} (0–1; 1 = sure of LF0)"}, range=[-0.03, 1.03], dtick=0.1)
    return fig


def _add_means(fig: go.Figure, means: pd.DataFrame, mean_col: str) -> None:
    """Fig. 3's per-type means with their bootstrap intervals (black diamonds with error bars)."""
    rows = means[means["type"].isin({str(m["type"]) for m in (t.meta for t in fig.data)})]
    types = order_types(rows["type"])
    rows = rows.drop_duplicates("type").set_index("type").loc[types]
    ys = [optional_float(v) for v in rows[mean_col]]
    fig.add_trace(go.Scatter(
        x=[type_label(t) for t in types], y=ys, mode="markers", name="mean",
        marker={"symbol": "diamond", "size": 12, "color": "#222222"},
        error_y={**(error_bars(rows, mean_col, ys) or {}), "color": "#222222", "thickness": 2, "width": 10},
        hovertemplate="%{x}<br>mean = %{y:.3f}<extra></extra>", meta={"type": "mean"},
    ))


def overlay_fewshot(per_ratio: dict[str, pd.DataFrame], column: str = "mean_p_lf0") -> go.Figure:
    """Few-shot curves of several runs on one figure: ``column`` against the ratio, per run and type."""
    fig = go.Figure()
    for name, df in per_ratio.items():
        for type_, sub in df.groupby("type", sort=False):
            fig.add_trace(go.Scatter(x=sub["ratio"], y=sub[column], mode="lines+markers", name=f"{plain_label(name)} · {type_label(str(type_))}"))
    fig.update_layout(title=f"{column} vs LF0 ratio", xaxis_title="ratio r of LF0 examples", yaxis_title=column)
    return fig
