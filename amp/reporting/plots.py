"""Plotly figures of AmP results: pure functions of result objects and summary frames.

This is the visualisation layer of the inseq-like split (``docs/style.md``): the parser returns
plain result objects (:class:`~amp.parser.results.ForcedScore`, :class:`~amp.parser.results.ParseResult`),
:mod:`amp.evaluation.experiments` turns sweeps into records and summary frames, and this module turns those
into figures.  Pages only place figures, so the same figure serves the app, the CLI report and a
notebook, and a test can read a figure's spec (``fig.to_dict()``) instead of looking at pixels.

Conventions, shared by every figure so that they read at a glance on a projector:

* template ``plotly_white``, a title on every figure, axis titles that say the unit;
* LF0 is always :data:`LF0_COLOR` (blue) and LF1 always :data:`LF1_COLOR` (vermillion), from the
  colour-blind-safe Okabe–Ito palette; LF0 lines are solid, LF1 lines dashed;
* each ambiguity type always has the same colour and name, those declared with the type in
  :mod:`amp.data.types` (:func:`type_color`, :func:`~amp.data.types.display_name`);
* probabilities and accuracies are fractions in the frames and shown as percentages or 0–1 on
  fixed axis ranges, so figures of partial and complete sweeps are directly comparable;
* empty input gives an empty figure whose title says what is missing, never an exception.

Figures (paper numbering: Stengel-Eskin et al. 2023, arXiv 2306.00824):

* :func:`token_heatmap` — per-token probabilities of two parses and where they diverge
  (paper Fig. 4; :func:`inspection_heatmap` draws it straight from ``Parser.inspect``);
* :func:`accuracy_bars` — zero-shot top-1 LF0 vs LF1 accuracy per type (Fig. 2);
* :func:`zm_bars` — ZM_k per type (Table 2);
* :func:`fdm_fim_table` — few-shot FDM and FIM per type (Table 3), drawn as a table;
* :func:`p_lf0_distribution` — per-type distribution of P(LF0) (Fig. 3);
* :func:`accuracy_vs_ratio` — few-shot LF0/LF1 accuracy vs the prompt ratio r (Fig. 6);
* :func:`p_lf0_vs_ratio` — few-shot mean P(LF0) vs r with the ideal diagonal (the quantity FIM
  measures, §13.5 of the reference);
* :func:`beam_table` — the beams of one parse as a table with their LF0/LF1 match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from amp.data.types import display_name, order_types, type_color
from amp.evaluation.metrics import prediction_key

__all__ = [
    "IDEAL_COLOR",
    "LF0_COLOR",
    "LF1_COLOR",
    "NEITHER_COLOR",
    "PROB_COLORSCALE",
    "TEMPLATE",
    "accuracy_bars",
    "accuracy_vs_ratio",
    "beam_table",
    "empty_figure",
    "fdm_fim_table",
    "inspection_heatmap",
    "p_lf0_distribution",
    "p_lf0_vs_ratio",
    "token_heatmap",
    "type_color",
    "zm_bars",
]

# --------------------------------------------------------------------------- style constants

#: Plotly template of every figure.
TEMPLATE = "plotly_white"
#: Colour of LF0 (the first reading) in every figure (Okabe–Ito blue).
LF0_COLOR = "#0072B2"
#: Colour of LF1 (the second reading) in every figure (Okabe–Ito vermillion).
LF1_COLOR = "#D55E00"
#: Colour of "neither LF" (a prediction matching no gold LF).
NEITHER_COLOR = "#999999"
#: Colour of reference lines (ideal diagonal, "no preference" line).
IDEAL_COLOR = "#555555"
#: Colour scale of token probabilities, fixed to 0–1: dark purple = the model doubts, yellow = it
#: is sure.  Viridis (perceptually uniform, colour-blind-safe) on purpose: a red/blue scale would
#: read as "LF1/LF0" next to the LF colours.
PROB_COLORSCALE = "Viridis"

_FONT = {"size": 15}
_TITLE_FONT = {"size": 19}

def _layout(fig: go.Figure, title: str, **kwargs: Any) -> go.Figure:
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title, "font": _TITLE_FONT, "x": 0.02, "xanchor": "left"},
        font=_FONT,
        hoverlabel={"font_size": 14},
        **kwargs,
    )
    return fig


def empty_figure(title: str, message: str = "No data yet.") -> go.Figure:
    """An empty figure whose title and centred note say what is missing (used for empty input)."""
    fig = go.Figure()
    _layout(fig, f"{title}<br><sup>{message}</sup>", height=320)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.add_annotation(
        text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
        font={"size": 17, "color": IDEAL_COLOR},
    )
    return fig


def _num(value: Any) -> float | None:
    """A float, or None for missing values (so plotly leaves a gap; JSON-safe, unlike NaN)."""
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _require(df: pd.DataFrame | None, columns: Sequence[str]) -> pd.DataFrame | None:
    """``df`` if it has rows and all ``columns``; else None (the caller draws an empty figure)."""
    if df is None or len(df) == 0:
        return None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"frame lacks column(s) {missing}; it has {list(df.columns)}")
    return df


# --------------------------------------------------------------------------- token heatmap

ProbKind = Literal["raw", "grammar"]


def _steps_of(obj: Any) -> list[Any]:
    """The token steps of a ForcedScore / Beam (anything with ``.steps``) or a plain sequence."""
    if obj is None:
        return []
    steps = getattr(obj, "steps", obj)
    return list(steps) if steps is not None else []


def _display_token(token: str) -> str:
    """Cell text of a token: newline as ⏎, pure whitespace as ␣, else the stripped token."""
    if token == "":
        return "∅"
    if "\n" in token:
        stripped = token.replace("\n", "").strip()
        return (stripped + "⏎") if stripped else "⏎"
    if token.strip() == "":
        return "␣" * len(token)
    return token.strip()


def _esc(text: str) -> str:
    """Escape a token for plotly's HTML-ish hover labels."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _step_prob(step: Any, prob: ProbKind) -> float | None:
    return _num(getattr(step, "prob_grammar" if prob == "grammar" else "prob", None))


def _step_alternatives(step: Any, prob: ProbKind) -> list[Any]:
    alts = getattr(step, "alternatives_grammar" if prob == "grammar" else "alternatives", None)
    return list(alts or ())


def _hover(label: str, index: int, step: Any, prob: ProbKind, n_alternatives: int) -> str:
    p = _step_prob(step, prob)
    p_text = "n/a" if p is None else f"{p:.3f}"
    kind = "grammar-renormalised" if prob == "grammar" else "raw model"
    lines = [
        f"<b>{_esc(re.sub(r'<[^>]*>', '', label))}</b>, token {index}",
        f"token: <b>{_esc(repr(str(step.token)))}</b>",
        f"p ({kind}) = {p_text}",
    ]
    alts = _step_alternatives(step, prob)[:n_alternatives]
    if alts:
        lines.append("top alternatives:")
        for alt in alts:
            ap = _num(getattr(alt, "prob", None))
            lines.append(f"&nbsp;&nbsp;{_esc(repr(str(alt.token)))}  {'n/a' if ap is None else f'{ap:.3f}'}")
    else:
        lines.append("top alternatives: (none recorded)")
    return "<br>".join(lines)


def token_heatmap(
    pred: Any,
    alt: Any = None,
    *,
    divergence: Any = None,
    prob: ProbKind = "raw",
    labels: tuple[str, str] = ("predicted parse", "alternative parse"),
    wrap: int = 16,
    n_alternatives: int = 5,
    title: str | None = None,
) -> go.Figure:
    """Per-token probability heatmap of one parse, or two parses one above the other.

    ``pred`` and ``alt`` are :class:`~amp.parser.results.ForcedScore` objects (or beams, or any
    object with ``.steps``), or plain sequences of :class:`~amp.parser.results.TokenStep`.  Each
    parse is one row (``pred`` on top, ``alt`` below), each token one cell; the colour is the
    token's probability on a fixed 0–1 scale (``prob="raw"``: the model's softmax probability, as
    in the paper's forced decode, §12 of the reference; ``prob="grammar"``: renormalised over the
    tokens the grammar allows).  The cell text is the token, and hovering a cell shows the
    position, the token, its probability and the top ``n_alternatives`` alternatives at that
    position (``alternatives`` or ``alternatives_grammar`` per ``prob``).

    ``divergence`` (a :class:`~amp.parser.results.Divergence`, or any object with ``.index``, or
    an int) marks the first token where the parses differ with a black box on both rows and a
    "diverges here" note: where the two readings part ways (paper Fig. 4), usually the token
    whose probability decides P(LF0).

    **Long LFs wrap.**  Rows longer than ``wrap`` tokens are folded into blocks of ``wrap``
    columns, one block under the other (each block shows the two parses again, separated by a
    blank row), so a 40–60-token LF stays legible at projector size without horizontal scrolling.
    In cell coordinates, token ``i`` is at ``x = i % wrap`` in block ``i // wrap``; block ``b``
    has the ``pred`` row at ``y = b * (rows + 1)`` and the ``alt`` row just below (``rows`` is
    1 or 2).  Rows of different lengths are padded with empty (``None``) cells.
    """
    if prob not in ("raw", "grammar"):
        raise ValueError(f"prob must be 'raw' or 'grammar', not {prob!r}")
    if wrap < 1:
        raise ValueError(f"wrap must be >= 1, not {wrap}")
    kind = "grammar-renormalised probability" if prob == "grammar" else "model probability"
    title = title or f"Token confidence of the parses ({kind})"

    rows_steps = [_steps_of(pred)]
    row_labels = [labels[0]]
    if alt is not None:
        rows_steps.append(_steps_of(alt))
        row_labels.append(labels[1] if len(labels) > 1 else "alternative parse")
    if not any(rows_steps):
        return empty_figure(title, "No tokens to show: score or inspect a parse first.")

    n_rows = len(rows_steps)
    length = max(len(s) for s in rows_steps)
    width = min(wrap, length)
    n_blocks = math.ceil(length / width)
    stride = n_rows + 1 if n_blocks > 1 else n_rows  # one blank row between blocks
    total_rows = (n_blocks - 1) * stride + n_rows

    z: list[list[float | None]] = [[None] * width for _ in range(total_rows)]
    text: list[list[str]] = [[""] * width for _ in range(total_rows)]
    hover: list[list[str]] = [[""] * width for _ in range(total_rows)]
    for r, steps in enumerate(rows_steps):
        for i, step in enumerate(steps):
            y = (i // width) * stride + r
            x = i % width
            z[y][x] = _step_prob(step, prob)
            text[y][x] = _display_token(str(step.token))
            hover[y][x] = _hover(row_labels[r], i, step, prob, n_alternatives)

    tickvals: list[int] = []
    ticktext: list[str] = []
    for b in range(n_blocks):
        for r in range(n_rows):
            tickvals.append(b * stride + r)
            start = b * width
            suffix = f" (tokens {start}–{min(start + width, length) - 1})" if n_blocks > 1 else ""
            ticktext.append(row_labels[r] + suffix)

    heat = go.Heatmap(
        z=z,
        x=list(range(width)),
        y=list(range(total_rows)),
        text=text,
        texttemplate="%{text}",
        textfont={"size": 14},
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
        hoverongaps=False,
        zmin=0.0,
        zmax=1.0,
        colorscale=PROB_COLORSCALE,
        colorbar={"title": {"text": "p (0–1)"}, "tickformat": ".1f", "len": 0.9},
        xgap=2,
        ygap=2,
        name="token probability",
    )
    fig = go.Figure(heat)
    row_px = 56
    _layout(
        fig,
        title,
        height=150 + row_px * total_rows,
        margin={"l": 10, "r": 10, "t": 80, "b": 50},
    )
    fig.update_xaxes(
        title={"text": "token position within the row" if n_blocks > 1 else "token position"},
        tickmode="array",
        tickvals=list(range(width)),
        ticktext=[str(i) for i in range(width)] if n_blocks == 1 else [f"+{i}" for i in range(width)],
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=tickvals,
        ticktext=ticktext,
        autorange="reversed",
        showgrid=False,
        zeroline=False,
    )

    index = _divergence_index(divergence)
    if index is not None and 0 <= index < length:
        x = index % width
        block = index // width
        y0 = block * stride - 0.5
        y1 = block * stride + n_rows - 0.5
        fig.add_shape(
            type="rect", x0=x - 0.5, x1=x + 0.5, y0=y0, y1=y1, xref="x", yref="y",
            line={"color": "black", "width": 4}, fillcolor="rgba(0,0,0,0)", name="divergence",
        )
        fig.add_annotation(
            x=x, y=y0, xref="x", yref="y", text="<b>diverges here</b>", showarrow=True,
            arrowhead=2, ax=0, ay=-30, font={"size": 14}, bgcolor="rgba(255,255,255,0.85)",
            name="divergence",
        )
    return fig


def _lf_label(which: str, role: str) -> str:
    """Row label naming the reading, coloured like that reading everywhere else."""
    color = {"lf0": LF0_COLOR, "lf1": LF1_COLOR}.get(which)
    name = which.upper() if which in ("lf0", "lf1") else which
    return f"{role} (<span style='color:{color}'><b>{name}</b></span>)" if color else f"{role} ({name})"


def inspection_heatmap(inspection: Any, *, prob: ProbKind = "raw", wrap: int = 16) -> go.Figure:
    """:func:`token_heatmap` of a :class:`~amp.parser.parser.Inspection` (paper Fig. 4).

    Top row: the predicted (top) beam's tokens; bottom row: the forced decode of the other
    reading; the rows are labelled with the reading each one is (LF0 blue, LF1 vermillion) and
    the first differing token is marked.
    """
    predicted = getattr(inspection, "predicted_match", "neither")
    alternative = getattr(inspection, "alternative", "")
    return token_heatmap(
        getattr(inspection, "predicted_steps", ()),
        getattr(inspection, "alternative_steps", None),
        divergence=getattr(inspection, "divergence", None),
        prob=prob,
        wrap=wrap,
        labels=(_lf_label(predicted, "predicted parse"), _lf_label(alternative, "other reading")),
    )


def _divergence_index(divergence: Any) -> int | None:
    if divergence is None:
        return None
    if isinstance(divergence, int):
        return divergence
    index = getattr(divergence, "index", None)
    return int(index) if index is not None else None


# --------------------------------------------------------------------------- few-shot figures


def p_lf0_vs_ratio(per_ratio_df: pd.DataFrame | None, *, error: Literal["sem", "std"] = "sem") -> go.Figure:
    """Mean P(LF0) against the prompt's LF0 ratio r, one line per type, with the ideal y = r.

    ``per_ratio_df`` is the first frame of :func:`amp.evaluation.experiments.fewshot_summary` (columns
    ``type, ratio, n, mean_p_lf0`` and ``sem_p_lf0``/``std_p_lf0``).  A model that follows the
    prompt's mix lies on the dashed diagonal; FIM (§13.5 of the reference) is the mean squared
    distance of the per-sentence P(LF0) from it.  Error bars are the standard error of the mean
    (``error="sem"``) or the standard deviation (``error="std"``).
    """
    title = "Does P(LF0) follow the prompt? Mean P(LF0) vs LF0 ratio r"
    df = _require(per_ratio_df, ("type", "ratio", "mean_p_lf0"))
    if df is None:
        return empty_figure(title, "No few-shot results yet: run a few-shot sweep.")
    err_col = f"{error}_p_lf0"
    fig = go.Figure()
    for t in order_types(df["type"]):
        sub = df[df["type"] == t].sort_values("ratio")
        xs = [float(r) for r in sub["ratio"]]
        ys = [_num(v) for v in sub["mean_p_lf0"]]
        errs = [_num(v) or 0.0 for v in sub[err_col]] if err_col in sub else [0.0] * len(xs)
        ns = [int(v) for v in sub["n"]] if "n" in sub else [0] * len(xs)
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines+markers", name=display_name(t),
                line={"color": type_color(t), "width": 3}, marker={"size": 9},
                error_y={"type": "data", "array": errs, "visible": True, "thickness": 1.5},
                customdata=[[n, e] for n, e in zip(ns, errs, strict=True)],
                hovertemplate=(
                    f"<b>{_esc(display_name(t))}</b><br>r = %{{x:.1f}}<br>mean P(LF0) = %{{y:.3f}}"
                    f"<br>{error} = %{{customdata[1]:.3f}}<br>n = %{{customdata[0]}}<extra></extra>"
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
    _layout(fig, title, height=520, legend={"title": {"text": "ambiguity type"}})
    fig.update_xaxes(title={"text": "LF0 ratio r in the prompt (fraction of examples showing LF0)"},
                     range=[-0.03, 1.03], dtick=0.1)
    fig.update_yaxes(title={"text": "mean P(LF0) (0–1, min-token prob. normalised)"},
                     range=[-0.03, 1.03], dtick=0.1)
    return fig


def accuracy_vs_ratio(per_ratio_df: pd.DataFrame | None) -> go.Figure:
    """Top-1 LF0 and LF1 accuracy against the prompt's LF0 ratio r, one panel per type (Fig. 6).

    LF0 is solid blue, LF1 dashed vermillion in every panel; faint dotted lines show where a model
    that exactly follows the prompt would lie (LF0: y = r, LF1: y = 1 − r).  FDM (§13.4 of the
    reference, range 0–2) is the summed distance of the two solid/dashed curves from their
    dotted ideals, averaged over r.  ``per_ratio_df`` is the first frame of
    :func:`amp.evaluation.experiments.fewshot_summary` (accuracies as fractions 0–1, shown as %).
    """
    title = "Few-shot top-1 accuracy vs LF0 ratio r (paper Fig. 6)"
    df = _require(per_ratio_df, ("type", "ratio", "acc_lf0", "acc_lf1"))
    if df is None:
        return empty_figure(title, "No few-shot results yet: run a few-shot sweep.")
    types = order_types(df["type"])
    fig = make_subplots(
        rows=1, cols=len(types), shared_yaxes=True, horizontal_spacing=0.03,
        subplot_titles=[display_name(t) for t in types],
    )
    for col, t in enumerate(types, start=1):
        sub = df[df["type"] == t].sort_values("ratio")
        xs = [float(r) for r in sub["ratio"]]
        ns = [int(v) for v in sub["n"]] if "n" in sub else [0] * len(xs)
        for which, color, dash, ideal in (
            ("lf0", LF0_COLOR, "solid", [0.0, 1.0]),
            ("lf1", LF1_COLOR, "dash", [1.0, 0.0]),
        ):
            name = which.upper()
            ys = [_num(v) for v in sub[f"acc_{which}"]]
            fig.add_trace(
                go.Scatter(
                    x=xs, y=ys, mode="lines+markers", name=f"{name} accuracy",
                    legendgroup=which, showlegend=col == 1,
                    line={"color": color, "dash": dash, "width": 3}, marker={"size": 8},
                    customdata=ns,
                    hovertemplate=(
                        f"<b>{_esc(display_name(t))}</b><br>r = %{{x:.1f}}<br>{name} top-1 accuracy = "
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
    _layout(fig, title, height=460, legend={"orientation": "h", "y": -0.22, "x": 0})
    fig.update_xaxes(range=[-0.05, 1.05], dtick=0.5, title={"text": "LF0 ratio r"})
    fig.update_yaxes(range=[-0.03, 1.03], tickformat=".0%")
    fig.update_yaxes(title={"text": "top-1 accuracy (% of test sentences)"}, row=1, col=1)
    return fig


# --------------------------------------------------------------------------- zero-shot figures


def zm_bars(zeroshot_df: pd.DataFrame | None, k: int) -> go.Figure:
    """ZM_k per type as bars (the paper's Table 2 as a figure; 0–100 %).

    ZM_k (§13.3 of the reference) is the percentage of test sentences with *both* LFs among the
    top-k beams: 100 % means the model always surfaces both readings.  ``zeroshot_df`` is
    :func:`amp.evaluation.experiments.zeroshot_summary`'s frame, which has a ``ZM_<k>`` column.
    """
    title = f"Zero-shot ZM_{k}: both readings among the top {k} beams"
    col = f"ZM_{k}"
    df = _require(zeroshot_df, ("type", col))
    if df is None:
        return empty_figure(title, "No zero-shot results yet: run a zero-shot sweep.")
    types = order_types(df["type"])
    rows = df.set_index("type").loc[types]
    ys = [_num(v) for v in rows[col]]
    ns = [int(v) for v in rows["n"]] if "n" in rows else [0] * len(types)
    fig = go.Figure(
        go.Bar(
            x=[display_name(t) for t in types], y=ys, name=col,
            marker={"color": [type_color(t) for t in types]},
            text=[("" if v is None else f"{v:.0f}%") for v in ys], textposition="outside",
            customdata=ns,
            hovertemplate=f"%{{x}}<br>{col} = %{{y:.1f}}%<br>n = %{{customdata}}<extra></extra>",
        )
    )
    _layout(fig, title, height=460, showlegend=False)
    fig.update_xaxes(title={"text": "ambiguity type"})
    fig.update_yaxes(title={"text": f"{col} (% of test sentences)"}, range=[0, 109], dtick=20)
    return fig


def _cell(value: Any, digits: int) -> str:
    v = _num(value)
    return "–" if v is None else f"{v:.{digits}f}"


def fdm_fim_table(per_type_df: pd.DataFrame | None) -> go.Figure:
    """Few-shot FDM and FIM per type as a table figure (the paper's Table 3).

    FDM (paper Eq. 2; range **0–2**, reference §13.4) and FIM (paper Eq. 3; range 0–1,
    reference §13.5) are both lower-is-better.  ``per_type_df`` is the ``per_type`` frame of
    :func:`amp.evaluation.experiments.fewshot_summary`; ``n`` and ``n_ratios`` are shown when present.
    Used for the report's PNG/HTML of Table 3 (the app shows the frame itself).
    """
    title = "Few-shot FDM and FIM per type (lower is better)"
    df = _require(per_type_df, ("type", "FDM", "FIM"))
    if df is None:
        return empty_figure(title, "No few-shot results yet: run a few-shot sweep.")
    types = order_types(df["type"])
    rows = df.drop_duplicates("type").set_index("type").loc[types]
    header = ["ambiguity type", "FDM (0–2) ↓", "FIM (0–1) ↓"]
    cells: list[list[str]] = [
        [display_name(t) for t in types],
        [_cell(v, 3) for v in rows["FDM"]],
        [_cell(v, 3) for v in rows["FIM"]],
    ]
    for col, name in (("n", "n"), ("n_ratios", "ratios")):
        if col in rows:
            header.append(name)
            cells.append([_cell(v, 0) for v in rows[col]])
    row_height = 38
    fig = go.Figure(
        go.Table(
            columnwidth=[2.2] + [1.4] * 2 + [1] * (len(header) - 3),
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
    _layout(fig, title, height=max(320, 140 + row_height * (len(types) + 1)),
            margin={"l": 30, "r": 30, "t": 80, "b": 30})
    return fig


def accuracy_bars(zeroshot_df: pd.DataFrame | None) -> go.Figure:
    """Zero-shot top-1 accuracy of LF0 vs LF1 per type, grouped bars (paper Fig. 2).

    The gap between the two bars of a type shows which reading the model prefers when the prompt
    gives no hint; their sum is at most 100 %.  Accuracies are fractions in the frame
    (:func:`amp.evaluation.experiments.zeroshot_summary`) and shown as %.
    """
    title = "Zero-shot top-1 accuracy: LF0 vs LF1 (paper Fig. 2)"
    df = _require(zeroshot_df, ("type", "acc_lf0", "acc_lf1"))
    if df is None:
        return empty_figure(title, "No zero-shot results yet: run a zero-shot sweep.")
    types = order_types(df["type"])
    rows = df.set_index("type").loc[types]
    ns = [int(v) for v in rows["n"]] if "n" in rows else [0] * len(types)
    fig = go.Figure()
    for which, color in (("lf0", LF0_COLOR), ("lf1", LF1_COLOR)):
        ys = [_num(v) for v in rows[f"acc_{which}"]]
        fig.add_trace(
            go.Bar(
                x=[display_name(t) for t in types], y=ys, name=f"{which.upper()} (top-1)",
                marker={"color": color},
                text=[("" if v is None else f"{v:.0%}") for v in ys], textposition="outside",
                customdata=ns,
                hovertemplate=(
                    f"%{{x}}<br>{which.upper()} top-1 accuracy = %{{y:.1%}}<br>n = %{{customdata}}<extra></extra>"
                ),
                meta={"lf": which},
            )
        )
    _layout(fig, title, height=460, barmode="group", legend={"title": {"text": "top-1 prediction is"}})
    fig.update_xaxes(title={"text": "ambiguity type"})
    fig.update_yaxes(title={"text": "top-1 accuracy (% of test sentences)"}, range=[0, 1.09],
                     tickformat=".0%")
    return fig


def p_lf0_distribution(records_df: pd.DataFrame | None, *, column: str = "p_lf0") -> go.Figure:
    """Per-type distribution of P(LF0) over test sentences: box plus every point (paper Fig. 3).

    ``records_df`` is :func:`amp.evaluation.experiments.records_frame`'s frame.  ``column`` is ``"p_lf0"``
    (the minimum token probability normalised between the two LFs, the paper's definition) or
    ``"p_lf0_total"`` (normalised total sequence probability, which is what the paper's Fig. 3
    notebook actually plotted, §12 of the reference).  The dotted line at 0.5 is "no
    preference"; hovering a point shows its sentence.
    """
    name = "P(LF0) from total sequence probability" if column == "p_lf0_total" else "P(LF0)"
    title = f"Distribution of {name} per type (paper Fig. 3)"
    df = _require(records_df, ("type", column))
    if df is not None:
        df = df[pd.to_numeric(df[column], errors="coerce").notna()]
    if df is None or len(df) == 0:
        return empty_figure(title, "No P(LF0) scores yet: run a sweep with scoring on.")
    fig = go.Figure()
    for t in order_types(df["type"]):
        sub = df[df["type"] == t]
        ys = [float(v) for v in sub[column]]
        surfaces = [str(s) for s in sub["surface"]] if "surface" in sub else [""] * len(ys)
        ratios = (
            [("" if _num(r) is None else f"{float(r):.1f}") for r in sub["ratio"]]
            if "ratio" in sub else [""] * len(ys)
        )
        fig.add_trace(
            go.Box(
                x=[display_name(t)] * len(ys), y=ys, name=display_name(t),
                boxpoints="all", jitter=0.4, pointpos=0, boxmean=True,
                marker={"color": type_color(t), "size": 7, "opacity": 0.7},
                line={"color": type_color(t)},
                customdata=[[s, r] for s, r in zip(surfaces, ratios, strict=True)],
                hovertemplate=(
                    "%{customdata[0]}<br>" + _esc(name) + " = %{y:.3f}<br>r = %{customdata[1]}<extra></extra>"
                ),
                meta={"type": t},
            )
        )
    fig.add_hline(y=0.5, line={"color": IDEAL_COLOR, "dash": "dot"},
                  annotation_text="no preference (0.5)", annotation_position="top left")
    _layout(fig, title, height=500, showlegend=False)
    fig.update_xaxes(title={"text": "ambiguity type"})
    fig.update_yaxes(title={"text": f"{name} (0–1; 1 = sure of LF0)"}, range=[-0.03, 1.03], dtick=0.1)
    return fig


# --------------------------------------------------------------------------- beam table

BEAM_TABLE_COLUMNS = ("rank", "LF", "score", "log-prob", "finished", "parses", "match")


def beam_table(parse_result: Any, lf0: str | None, lf1: str | None, mode: str = "logical",
               *, fmt: str = "fol") -> pd.DataFrame:
    """The beams of one :class:`~amp.parser.results.ParseResult` as a table for the app.

    Columns: ``rank`` (1 = best), ``LF`` (the beam's text), ``score`` (length-normalised, what
    the beam search ranks by), ``log-prob`` (summed token log-probability), ``finished``,
    ``parses`` (whether the text parses as an LF), ``match`` (``"LF0"``, ``"LF1"``,
    ``"LF0 = LF1"`` when the two golds canonicalise alike, ``"other"`` for a well-formed LF that
    is neither, ``"unparseable"``).  Matching is canonical string equality in ``mode``
    (``"logical"`` or ``"paper"``, :func:`amp.evaluation.metrics.prediction_key`), as in §13.1 of the
    reference; a gold LF that does not parse matches nothing.  ``parse_result`` may also be a plain sequence of beams.
    """
    beams = list(getattr(parse_result, "beams", parse_result) or ())
    gold0 = prediction_key(lf0, mode, fmt)
    gold1 = prediction_key(lf1, mode, fmt)
    rows = []
    for position, beam in enumerate(beams):
        text = str(getattr(beam, "text", ""))
        canon = prediction_key(text, mode, fmt)
        if canon is None:
            match = "unparseable"
        elif canon == gold0 and canon == gold1:
            match = "LF0 = LF1"
        elif canon == gold0:
            match = "LF0"
        elif canon == gold1:
            match = "LF1"
        else:
            match = "other"
        rows.append({
            "rank": position + 1,
            "LF": text,
            "score": _num(getattr(beam, "score", None)),
            "log-prob": _num(getattr(beam, "logprob", None)),
            "finished": bool(getattr(beam, "finished", True)),
            "parses": bool(getattr(beam, "parses", canon is not None)),
            "match": match,
        })
    return pd.DataFrame(rows, columns=list(BEAM_TABLE_COLUMNS))

