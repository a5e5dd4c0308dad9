"""Token-level figures: per-token probabilities of parses and where two readings diverge.

* :func:`token_heatmap` — per-token probabilities of one or two parses, long LFs wrapped into
  blocks, the first differing token boxed (paper Fig. 4); :func:`inspection_heatmap` draws it
  straight from an :class:`~amp.evaluation.inspection.Inspection`;
* :func:`char_heatmap` — token probabilities of several tokenizers of the same text on one
  character axis (:func:`token_char_spans`, :func:`char_axis_frame`), to compare two models.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go

from amp.evaluation.inspection import Inspection
from amp.evaluation.sweep_run import optional_float
from amp.reporting.style import LF0_COLOR, LF1_COLOR, PROB_COLORSCALE, apply_layout, empty_figure, hover_escape

__all__ = [
    "ProbKind",
    "char_axis_frame",
    "char_heatmap",
    "inspection_heatmap",
    "token_char_spans",
    "token_heatmap",
]

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


def _step_prob(step: Any, prob: ProbKind) -> float | None:
    return optional_float(getattr(step, "prob_grammar" if prob == "grammar" else "prob", None))


def _step_alternatives(step: Any, prob: ProbKind) -> list[Any]:
    alts = getattr(step, "alternatives_grammar" if prob == "grammar" else "alternatives", None)
    return list(alts or ())


def _hover(label: str, index: int, step: Any, prob: ProbKind, n_alternatives: int) -> str:
    p = _step_prob(step, prob)
    p_text = "n/a" if p is None else f"{p:.3f}"
    kind = "grammar-renormalised" if prob == "grammar" else "raw model"
    lines = [
        f"<b>{hover_escape(re.sub(r'<[^>]*>', '', label))}</b>, token {index}",
        f"token: <b>{hover_escape(repr(str(step.token)))}</b>",
        f"p ({kind}) = {p_text}",
    ]
    alts = _step_alternatives(step, prob)[:n_alternatives]
    if alts:
        lines.append("top alternatives:")
        for alt in alts:
            ap = optional_float(getattr(alt, "prob", None))
            lines.append(f"&nbsp;&nbsp;{hover_escape(repr(str(alt.token)))}  {'n/a' if ap is None else f'{ap:.3f}'}")
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
    grid = _Grid.of(rows_steps, wrap)
    fig = go.Figure(_heat(grid, rows_steps, row_labels, prob, n_alternatives))
    _axes(fig, grid, row_labels, title)
    index = _divergence_index(divergence)
    if index is not None and 0 <= index < grid.length:
        _mark_divergence(fig, grid, index)
    return fig


@dataclass(frozen=True)
class _Grid:
    """Where token ``i`` of row ``r`` sits once long rows wrap into blocks of ``width`` columns."""

    n_rows: int
    length: int
    width: int
    n_blocks: int
    stride: int  # rows per block, plus one blank row between blocks
    total_rows: int

    @classmethod
    def of(cls, rows_steps: list[list[Any]], wrap: int) -> _Grid:
        n_rows = len(rows_steps)
        length = max(len(s) for s in rows_steps)
        width = min(wrap, length)
        n_blocks = math.ceil(length / width)
        stride = n_rows + 1 if n_blocks > 1 else n_rows
        return cls(n_rows, length, width, n_blocks, stride, (n_blocks - 1) * stride + n_rows)

    def cell(self, row: int, index: int) -> tuple[int, int]:
        """``(y, x)`` of token ``index`` of parse ``row``."""
        return (index // self.width) * self.stride + row, index % self.width


def _heat(grid: _Grid, rows_steps: list[list[Any]], row_labels: list[str], prob: ProbKind,
          n_alternatives: int) -> go.Heatmap:
    """The heatmap trace: one cell per token, coloured by its probability, the token as text."""
    z: list[list[float | None]] = [[None] * grid.width for _ in range(grid.total_rows)]
    text: list[list[str]] = [[""] * grid.width for _ in range(grid.total_rows)]
    hover: list[list[str]] = [[""] * grid.width for _ in range(grid.total_rows)]
    for r, steps in enumerate(rows_steps):
        for i, step in enumerate(steps):
            y, x = grid.cell(r, i)
            z[y][x] = _step_prob(step, prob)
            text[y][x] = _display_token(str(step.token))
            hover[y][x] = _hover(row_labels[r], i, step, prob, n_alternatives)
    return go.Heatmap(
        z=z,
        x=list(range(grid.width)),
        y=list(range(grid.total_rows)),
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


def _axes(fig: go.Figure, grid: _Grid, row_labels: list[str], title: str) -> None:
    """Layout and axes: token positions across, one labelled tick per parse row and block down."""
    tickvals: list[int] = []
    ticktext: list[str] = []
    for b in range(grid.n_blocks):
        for r in range(grid.n_rows):
            tickvals.append(b * grid.stride + r)
            start = b * grid.width
            suffix = f" (tokens {start}–{min(start + grid.width, grid.length) - 1})" if grid.n_blocks > 1 else ""
            ticktext.append(row_labels[r] + suffix)
    row_px = 56
    apply_layout(fig, title, height=150 + row_px * grid.total_rows, margin={"l": 10, "r": 10, "t": 80, "b": 50})
    fig.update_xaxes(
        title={"text": "token position within the row" if grid.n_blocks > 1 else "token position"},
        tickmode="array",
        tickvals=list(range(grid.width)),
        ticktext=[str(i) for i in range(grid.width)] if grid.n_blocks == 1 else [f"+{i}" for i in range(grid.width)],
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(tickmode="array", tickvals=tickvals, ticktext=ticktext, autorange="reversed",
                     showgrid=False, zeroline=False)


def _mark_divergence(fig: go.Figure, grid: _Grid, index: int) -> None:
    """A black box round token ``index`` on every row of its block, and a "diverges here" note."""
    x = index % grid.width
    block = index // grid.width
    y0 = block * grid.stride - 0.5
    y1 = block * grid.stride + grid.n_rows - 0.5
    fig.add_shape(
        type="rect", x0=x - 0.5, x1=x + 0.5, y0=y0, y1=y1, xref="x", yref="y",
        line={"color": "black", "width": 4}, fillcolor="rgba(0,0,0,0)", name="divergence",
    )
    fig.add_annotation(
        x=x, y=y0, xref="x", yref="y", text="<b>diverges here</b>", showarrow=True,
        arrowhead=2, ax=0, ay=-30, font={"size": 14}, bgcolor="rgba(255,255,255,0.85)",
        name="divergence",
    )


def _lf_label(which: str, role: str) -> str:
    """Row label naming the reading, coloured like that reading everywhere else."""
    color = {"lf0": LF0_COLOR, "lf1": LF1_COLOR}.get(which)
    name = which.upper() if which in ("lf0", "lf1") else which
    return f"{role} (<span style='color:{color}'><b>{name}</b></span>)" if color else f"{role} ({name})"


def inspection_heatmap(inspection: Inspection, *, prob: ProbKind = "raw", wrap: int = 16) -> go.Figure:
    """:func:`token_heatmap` of an :class:`~amp.evaluation.inspection.Inspection` (paper Fig. 4).

    Top row: the predicted (top) beam's tokens; bottom row: the forced decode of the other
    reading; the rows are labelled with the reading each one is (LF0 blue, LF1 vermillion) and
    the first differing token is marked.
    """
    return token_heatmap(
        inspection.predicted_steps,
        inspection.alternative_steps,
        divergence=inspection.divergence,
        prob=prob,
        wrap=wrap,
        labels=(_lf_label(inspection.predicted_match, "predicted parse"),
                _lf_label(inspection.alternative, "other reading")),
    )


def _divergence_index(divergence: Any) -> int | None:
    if divergence is None:
        return None
    if isinstance(divergence, int):
        return divergence
    index = getattr(divergence, "index", None)
    return int(index) if index is not None else None


def token_char_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """``[(start, end), …]``: each token's half-open character span in the concatenated text.

    Two tokenizations of the same text then share one character axis (a token covering
    characters 3–7 of one model lines up with the tokens covering them in the other).
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    for tok in tokens:
        spans.append((pos, pos + len(tok)))
        pos += len(tok)
    return spans


def char_axis_frame(tokens: Sequence[str], probs: Sequence[float]) -> pd.DataFrame:
    """One row per character: ``char``, ``token_index``, ``token``, ``prob`` of its token."""
    rows = []
    for i, ((start, end), tok, p) in enumerate(zip(token_char_spans(tokens), tokens, probs, strict=True)):
        for c in range(start, end):
            rows.append({"pos": c, "char": tok[c - start], "token_index": i, "token": tok, "prob": float(p)})
    return pd.DataFrame(rows, columns=["pos", "char", "token_index", "token", "prob"])


def char_heatmap(rows: dict[str, tuple[Sequence[str], Sequence[float]]], title: str = "Token probabilities") -> go.Figure:
    """A heatmap with one row per label on a shared character axis (tokens of any tokenizer).

    ``rows`` maps a label (a model) to ``(tokens, probs)`` of the *same* text; every character
    takes its token's probability, so token boundaries of different tokenizers line up.
    """
    if not rows:
        return empty_figure(title)
    frames = {label: char_axis_frame(toks, probs) for label, (toks, probs) in rows.items()}
    width = max((len(f) for f in frames.values()), default=0)
    z, text, hover = [], [], []
    for label, f in frames.items():
        probs = list(f["prob"]) + [None] * (width - len(f))
        chars = list(f["char"]) + [""] * (width - len(f))
        z.append(probs)
        text.append(chars)
        hover.append([f"{label}<br>token {i}: {t!r}<br>p={p:.3f}" for i, t, p in
                      zip(f["token_index"], f["token"], f["prob"], strict=True)] + [""] * (width - len(f)))
    fig = go.Figure(go.Heatmap(z=z, y=list(frames), text=text, texttemplate="%{text}", hovertext=hover,
                               hoverinfo="text", zmin=0, zmax=1, colorscale="Viridis"))
    fig.update_layout(title=title, xaxis_title="character", height=140 + 50 * len(frames))
    return fig
