"""Token-level figures: per-token probabilities of parses and where two readings diverge.

* :func:`token_heatmap` — per-token probabilities of one or two parses, long LFs wrapped into
  blocks, the first differing token boxed (paper Fig. 4) and/or the items where the readings
  differ in meaning, rows optionally aligned by content; :func:`inspection_heatmap` draws it
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
from amp.evaluation.semantic_divergence import SemanticDivergence, token_indices
from amp.evaluation.sweep_run import optional_float
from amp.reporting.style import (
    LF0_COLOR,
    LF1_COLOR,
    PROB_COLORSCALE,
    apply_layout,
    empty_figure,
    plain_label,
)
from amp.reporting.token_layout import (
    CHAR_PX,
    aligned_columns,
    cell_px,
    columns_per_block,
    fit_text,
    short_label,
    visible_text,
)

__all__ = [
    "MARKS",
    "Mark",
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
        f"<b>{plain_label(re.sub(r'<[^>]*>', '', label))}</b>, token {index}",
        f"token: <b>{plain_label(repr(str(step.token)))}</b>",
        f"p ({kind}) = {p_text}",
    ]
    alts = _step_alternatives(step, prob)[:n_alternatives]
    if alts:
        lines.append("top alternatives:")
        for alt in alts:
            ap = optional_float(getattr(alt, "prob", None))
            lines.append(f"&nbsp;&nbsp;{plain_label(repr(str(alt.token)))}  {'n/a' if ap is None else f'{ap:.3f}'}")
    else:
        lines.append("top alternatives: (none recorded)")
    return "<br>".join(lines)


Mark = Literal["token", "semantic", "both"]
MARKS: tuple[str, ...] = ("token", "semantic", "both")

#: The two marks' styles: solid black (tokens part) and white-edged black dashes (meanings
#: differ), told apart by line style, not colour (colour-blind safe on the Viridis cells).
TOKEN_LINE = {"color": "black", "width": 4}
SEMANTIC_EDGE = {"color": "white", "width": 7}
SEMANTIC_LINE = {"color": "black", "width": 3, "dash": "dash"}
MARK_LEGEND = "solid box: where the tokens part · dashed box: where the meanings differ"


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
    align: bool = False,
    semantic: SemanticDivergence | None = None,
    mark: Mark = "token",
) -> go.Figure:
    """Per-token probability heatmap of one parse, or two parses one above the other.

    ``pred`` and ``alt`` are :class:`~amp.parser.core.results.ForcedScore` objects (or beams, or any
    object with ``.steps``), or plain sequences of :class:`~amp.parser.core.results.TokenStep`.  Each
    parse is one row (``pred`` on top, ``alt`` below), each token one cell; the colour is the
    token's probability on a fixed 0–1 scale (``prob="raw"``: the model's softmax probability, as
    in the paper's forced decode, docs/paper-notes.md §12; ``prob="grammar"``: renormalised over the
    tokens the grammar allows).  The cell text is the token (cut to
    :data:`~amp.reporting.token_layout.MAX_CELL_CHARS` with an ellipsis), and hovering a cell
    shows the position, the whole token, its probability and the top ``n_alternatives``
    alternatives at that position (``alternatives`` or ``alternatives_grammar`` per ``prob``).
    Cells are as wide as the longest text shown (``layout.meta["cell_px"]``, the figure's
    ``width`` fits them), so no text overlaps its cell; show it at that width.

    **Marks.**  ``divergence`` (a :class:`~amp.parser.core.results.Divergence`, anything with
    ``.index``, or an int) is the first token where the parses differ: with ``mark="token"`` (or
    ``"both"``) a solid black box on both rows and a "diverges here" note (paper Fig. 4).
    ``semantic`` (:class:`~amp.evaluation.semantic_divergence.SemanticDivergence` of the two
    rows' LFs, ``lf_a`` the top row) is where the readings differ in meaning: with
    ``mark="semantic"`` (or ``"both"``) a dashed box round each row's item and a "meanings
    differ" note (a row whose tokens do not spell its LF gets none; when no row gets one, the
    token box is drawn instead).

    **Alignment.**  ``align=True`` aligns the two rows by content after the divergence
    (:func:`~amp.reporting.token_layout.aligned_columns`: equal tokens in the same column, gaps
    as empty cells) and shortens the row labels to
    :data:`~amp.reporting.token_layout.LABEL_CHARS` characters; otherwise token ``i`` is column
    ``i``.  **Long LFs wrap**: rows longer than ``wrap`` columns (aligned: fewer when wide cells
    would not fit :data:`~amp.reporting.token_layout.MAX_PLOT_PX`) fold into blocks, one under the other
    (each block shows the two parses again, separated by a blank row).  Column ``c`` is at
    ``x = c % width`` in block ``c // width``; block ``b`` has the ``pred`` row at
    ``y = b * (rows + 1)`` and the ``alt`` row just below.  Empty cells are ``None``.
    """
    if prob not in ("raw", "grammar"):
        raise ValueError(f"prob must be 'raw' or 'grammar', not {prob!r}")
    if wrap < 1:
        raise ValueError(f"wrap must be >= 1, not {wrap}")
    if mark not in MARKS:
        raise ValueError(f"mark must be one of {MARKS}, not {mark!r}")
    kind = "grammar-renormalised probability" if prob == "grammar" else "model probability"
    title = plain_label(title) if title else f"Token confidence of the parses ({kind})"
    rows_steps = [_steps_of(pred)]
    row_labels = [labels[0]]
    if alt is not None:
        rows_steps.append(_steps_of(alt))
        row_labels.append(labels[1] if len(labels) > 1 else "alternative parse")
    if not any(rows_steps):
        return empty_figure(title, "No tokens to show: score or inspect a parse first.")
    shown = [[_display_token(str(s.token)) for s in steps] for steps in rows_steps]
    columns = ([list(c) for c in aligned_columns(shown[0], shown[1])] if align and len(shown) == 2
               else [list(range(len(row))) for row in shown])
    if align:
        row_labels = [short_label(label) for label in row_labels]
    px = cell_px([fit_text(t) for row in shown for t in row])
    n_columns = max(max(c, default=-1) for c in columns) + 1
    grid = _Grid.of(len(rows_steps), n_columns, columns_per_block(wrap, n_columns, px, fit=align), columns)
    fig = go.Figure(_heat(grid, rows_steps, row_labels, prob, n_alternatives))
    _axes(fig, grid, row_labels, title, px, ranges=not align)
    index = _divergence_index(divergence)
    sem_cols = _semantic_columns(semantic, rows_steps, columns) if mark != "token" else None
    token_box = index is not None and 0 <= index < grid.length and (mark != "semantic" or not sem_cols)
    if token_box:
        _mark_divergence(fig, grid, index)  # type: ignore[arg-type]
    if sem_cols:
        _mark_semantic(fig, grid, sem_cols)
        if token_box:
            fig.add_annotation(text=MARK_LEGEND, xref="paper", yref="paper", x=0, y=1, yanchor="bottom",
                               yshift=34, xanchor="left", showarrow=False, font={"size": 12}, name="legend")
            fig.update_layout(margin_t=110)  # room for the legend line under the title
    return fig


@dataclass(frozen=True)
class _Grid:
    """Where column ``c`` sits once long rows wrap into blocks of ``width`` columns, and the
    column of each token of each row (``columns[row][i]``)."""

    n_rows: int
    length: int
    width: int
    n_blocks: int
    stride: int  # rows per block, plus one blank row between blocks
    total_rows: int
    columns: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, n_rows: int, length: int, width: int, columns: list[list[int]]) -> _Grid:
        n_blocks = math.ceil(length / width)
        stride = n_rows + 1 if n_blocks > 1 else n_rows
        return cls(n_rows, length, width, n_blocks, stride, (n_blocks - 1) * stride + n_rows,
                   tuple(tuple(c) for c in columns))

    def at(self, row: int, column: int) -> tuple[int, int]:
        """``(y, x)`` of column ``column`` on parse row ``row``."""
        return (column // self.width) * self.stride + row, column % self.width

    def cell(self, row: int, index: int) -> tuple[int, int]:
        """``(y, x)`` of token ``index`` of parse ``row``."""
        return self.at(row, self.columns[row][index])


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
            text[y][x] = plain_label(fit_text(_display_token(str(step.token))))
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


def _axes(fig: go.Figure, grid: _Grid, row_labels: list[str], title: str, px: float, *, ranges: bool) -> None:
    """Layout and axes: columns across, one labelled tick per parse row and block down; the
    figure as wide as its cells need (``ranges``: token ranges in the labels of wrapped rows)."""
    tickvals: list[int] = []
    ticktext: list[str] = []
    for b in range(grid.n_blocks):
        for r in range(grid.n_rows):
            tickvals.append(b * grid.stride + r)
            start = b * grid.width
            suffix = (f" (tokens {start}–{min(start + grid.width, grid.length) - 1})"
                      if grid.n_blocks > 1 and ranges else "")
            ticktext.append(row_labels[r] + suffix)
    left = 20 + CHAR_PX * max(len(visible_text(t)) for t in ticktext)
    margin = {"l": round(left), "r": 110, "t": 80, "b": 70}
    row_px = 56
    apply_layout(fig, title, height=150 + row_px * grid.total_rows, margin=margin,
                 width=round(margin["l"] + margin["r"] + px * grid.width),
                 meta={"cell_px": px, "char_px": CHAR_PX})
    positional = ranges or grid.n_rows == 1
    fig.update_xaxes(
        title={"text": ("token position" if positional else "column (tokens aligned by content)")
               + (" within the row" if grid.n_blocks > 1 else "")},
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
        line=TOKEN_LINE, fillcolor="rgba(0,0,0,0)", name="divergence",
    )
    fig.add_annotation(
        x=x, y=y0, xref="x", yref="y", text="<b>diverges here</b>", showarrow=True,
        arrowhead=2, ax=0, ay=-30, font={"size": 14}, bgcolor="rgba(255,255,255,0.85)",
        name="divergence",
    )


def _semantic_columns(semantic: SemanticDivergence | None, rows_steps: list[list[Any]],
                      columns: list[list[int]]) -> list[list[int]] | None:
    """Per row, the columns of its semantic item's tokens (none for a row whose reading has no
    such item or whose tokens do not spell that LF); ``None`` when no row has any."""
    if semantic is None:
        return None
    out: list[list[int]] = []
    for r, (item, lf) in enumerate(((semantic.a, semantic.lf_a), (semantic.b, semantic.lf_b))[:len(rows_steps)]):
        if item is None:
            out.append([])
            continue
        tokens = [str(s.token) for s in rows_steps[r]]
        found = token_indices(tokens, lf, item.start, item.end)
        out.append(sorted(columns[r][i] for i in found))
    return out if any(out) else None


def _mark_semantic(fig: go.Figure, grid: _Grid, sem_cols: list[list[int]]) -> None:
    """A dashed box round each row's semantic item (one per block it spans), and a "meanings
    differ" note below the first box of the last row that has one (the token note is above)."""
    boxes: list[tuple[int, float, float]] = []
    for row, cols in enumerate(sem_cols):
        for block in sorted({c // grid.width for c in cols}):
            xs = [c % grid.width for c in cols if c // grid.width == block]
            y = block * grid.stride + row
            box = {"type": "rect", "x0": min(xs) - 0.45, "x1": max(xs) + 0.45, "y0": y - 0.42, "y1": y + 0.42,
                   "xref": "x", "yref": "y", "fillcolor": "rgba(0,0,0,0)"}
            fig.add_shape(**box, line=SEMANTIC_EDGE, name="semantic edge")
            fig.add_shape(**box, line=SEMANTIC_LINE, name="semantic")
            boxes.append((row, float(min(xs)), y + 0.42))
    last = max(row for row, _, _ in boxes)
    _, note_x, note_y = next(b for b in boxes if b[0] == last)
    fig.add_annotation(x=note_x, y=note_y, xref="x", yref="y", text="<b>meanings differ</b>", showarrow=True,
                       arrowhead=2, ax=0, ay=30, font={"size": 14}, bgcolor="rgba(255,255,255,0.85)",
                       name="semantic")


def _lf_label(which: str, role: str) -> str:
    """Row label naming the reading, coloured like that reading everywhere else."""
    color = {"lf0": LF0_COLOR, "lf1": LF1_COLOR}.get(which)
    name = which.upper() if which in ("lf0", "lf1") else which
    return f"{role} (<span style='color:{color}'><b>{name}</b></span>)" if color else f"{role} ({name})"


def inspection_heatmap(inspection: Inspection, *, prob: ProbKind = "raw", wrap: int = 16) -> go.Figure:
    """:func:`token_heatmap` of an :class:`~amp.evaluation.inspection.Inspection` (paper Fig. 4).

    Top row: the predicted (top) beam's tokens; bottom row: the forced decode of the other
    reading; the rows are labelled with the reading each one is (LF0 blue, LF1 orange) and
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
    title = plain_label(title)
    if not rows:
        return empty_figure(title)
    frames = {label: char_axis_frame(toks, probs) for label, (toks, probs) in rows.items()}
    width = max((len(f) for f in frames.values()), default=0)
    z, text, hover = [], [], []
    for label, f in frames.items():
        probs = list(f["prob"]) + [None] * (width - len(f))
        chars = list(f["char"]) + [""] * (width - len(f))
        z.append(probs)
        text.append([plain_label(c) for c in chars])
        hover.append([f"{plain_label(label)}<br>token {i}: {plain_label(repr(t))}<br>p={p:.3f}" for i, t, p in
                      zip(f["token_index"], f["token"], f["prob"], strict=True)] + [""] * (width - len(f)))
    fig = go.Figure(go.Heatmap(z=z, y=[plain_label(label) for label in frames], text=text, texttemplate="%{text}", hovertext=hover,
                               hoverinfo="text", zmin=0, zmax=1, colorscale="Viridis"))
    fig.update_layout(title=title, xaxis_title="character", height=140 + 50 * len(frames))
    return fig
