"""The paper's Fig. 4 view: the model's parse and *both* readings, token by token (issue #26 point 4).

Three rows per block: the model's parse (its top beam, each token coloured by its probability),
then LF0 and LF1 force-decoded after the same prompt.  The rows are aligned by content
(:func:`~amp.reporting.token_layout.aligned_rows`: equal tokens share a column, a token one row
lacks faces an empty cell), so the readings' tokens stand one above the other.  The readings are
compared in the prompt convention (docs/paper-notes.md §16: golds, own sentences and typed LFs
are scored in it), and the **divergence point** is where they part *in meaning*: the first token
of the items :func:`~amp.evaluation.semantic_divergence.semantic_divergence` finds (solid box
across the block's three rows, dashed boxes round each reading's item); when the readings mean
the same, no box and a note saying so.

Long rows wrap into blocks no wider than :data:`PLOT_PX` (a page 1280 px wide holds it beside
the sidebar): each column is as wide as its longest token (one heatmap trace per block, its cell
edges in pixels), blocks follow one another with no blank row, and every row of every block
holds a token or a note in that row: "(ended)" only when the row has no token in a later block,
"(continues below)" when it resumes further down; a parse that runs on past both readings (a
beam cut off at its token budget) is drawn :data:`TAIL_COLS` columns further and its rest summed
up ("+N tokens").  The layout holds at 1280×720 and 1920×1080 (issue #40 point 7): row labels
are whole (the left margin is as wide as the longest, :func:`label_px`), and the "readings part
in meaning" tag stands in a strip reserved above the plot area, over the boxed column, so it
covers no cell.  Cell texts and hovers are escaped (a token of a teacher's own word is never
markup).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from amp.evaluation.matching import Match
from amp.evaluation.semantic_divergence import SAME_MEANING, semantic_divergence, token_indices
from amp.evaluation.sweep_run import optional_float
from amp.logic.errors import LFParseError
from amp.reporting.beam_table import MATCH_NAMES
from amp.reporting.style import PROB_COLORSCALE, apply_layout, empty_figure, plain_label
from amp.reporting.token_layout import CELL_PAD_PX, CHAR_PX, MIN_CELL_PX, aligned_rows, fit_text, pack_blocks
from amp.reporting.token_plots import SEMANTIC_EDGE, SEMANTIC_LINE, TOKEN_LINE, ProbKind, _display_token, _hover

__all__ = ["FIG4_CAPTION", "PLOT_PX", "ReadingRows", "label_px", "reading_rows", "readings_heatmap"]

#: Widest figure (pixels): Streamlit's main column beside the sidebar on a 1280 px wide screen.
PLOT_PX = 840
#: Narrowest left margin for the row labels (wider when a label needs it, :func:`label_px`),
#: right margin for the colour bar.
LABEL_PX = 150
BAR_PX = 90
ROW_PX = 46
#: Width of one character of a row label (15 px type; a generous bound, as :data:`CHAR_PX`), and
#: the room between the label and the plot.
LABEL_CHAR_PX = 9.0
LABEL_PAD_PX = 24
#: Top margin: the title and its note, and the strip above the plot area that holds the
#: "readings part in meaning" tag (so the tag covers no cell).
TITLE_PX = 90
TAG_PX = 30
#: The tag over the divergence column.
DIVERGENCE_TAG = "readings part in meaning"
#: A parse longer than both readings is drawn this many columns past their end, the rest summed up.
TAIL_COLS = 6
#: What the page says under the figure.
FIG4_CAPTION = ("Each block: the model's parse (its best beam), then LF0 and LF1 force-decoded after the same "
                "prompt, every token coloured by its probability (scale on the right); equal tokens stand in one "
                "column, an empty cell is a token the other rows lack. Solid box: where the readings part in "
                "meaning; dashed boxes: the items that differ. Hover a cell for the whole token and the top "
                "alternatives.")
#: The three rows of a block, top to bottom.
ROWS = ("parse", "lf0", "lf1")


@dataclass(frozen=True)
class ReadingRows:
    """What the figure draws: per row its label and token steps, the aligned column of each
    token, the columns of each reading's meaning item (LF0 row, LF1 row), the divergence
    column (``None``: the readings mean the same, or their tokens do not spell them) and the
    sentence the figure says about it."""

    labels: tuple[str, str, str]
    steps: tuple[tuple[Any, ...], ...]
    columns: tuple[tuple[int, ...], ...]
    items: tuple[tuple[int, ...], tuple[int, ...]]
    divergence: int | None
    note: str


def _tokens(steps: Any) -> list[str]:
    return [str(s.token) for s in steps]


def reading_rows(ins: Any) -> ReadingRows:
    """The rows of an :class:`~amp.evaluation.inspection.Inspection`: its top beam, LF0, LF1."""
    match = MATCH_NAMES.get(Match(ins.predicted_match), str(ins.predicted_match))
    labels = (f"parse: {match}", "LF0 (forced)", "LF1 (forced)")  # whole: the margin fits them (label_px)
    steps = (tuple(ins.predicted_steps), tuple(ins.pair.lf0.steps), tuple(ins.pair.lf1.steps))
    shown = [[_display_token(t) for t in _tokens(s)] for s in steps]
    # align the readings first (they are what the divergence compares), then the parse
    cols = aligned_rows([shown[1], shown[2], shown[0]])
    columns = (tuple(cols[2]), tuple(cols[0]), tuple(cols[1]))
    items: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    divergence: int | None = None
    try:
        sem = semantic_divergence(ins.lf0, ins.lf1, ins.fmt)
    except LFParseError:
        sem = None
    if sem is None:
        note = f"LF0 and LF1: {SAME_MEANING} (they differ only in naming or order)." \
            if shown[1] != shown[2] else "LF0 and LF1 are the same tokens."
    else:
        found = []
        for row, (item, lf) in ((1, (sem.a, sem.lf_a)), (2, (sem.b, sem.lf_b))):
            idx = token_indices(_tokens(steps[row]), lf, item.start, item.end) if item is not None else ()
            found.append(tuple(sorted(columns[row][i] for i in idx)))
        items = (found[0], found[1])
        firsts = [c[0] for c in items if c]
        divergence = min(firsts) if firsts else None
        note = (f"The readings part in meaning at the boxed column: {sem.description}."
                if divergence is not None else f"The readings differ in meaning ({sem.description}).")
    return ReadingRows(labels, steps, columns, items, divergence, note)


def label_px(labels: tuple[str, ...]) -> int:
    """The left margin that holds every row label whole (at least :data:`LABEL_PX`)."""
    return max(LABEL_PX, round(LABEL_CHAR_PX * max(len(label) for label in labels) + LABEL_PAD_PX))


def readings_heatmap(ins: Any, *, prob: ProbKind = "raw", n_alternatives: int = 5,
                     title: str | None = None) -> go.Figure:
    """The Fig. 4 view of an inspection (module docstring); ``prob`` as in
    :func:`~amp.reporting.token_plots.token_heatmap`.  ``layout.meta`` holds the blocks'
    columns (``blocks``), the rows' labels and the divergence column, for tests and exports."""
    kind = "grammar-renormalised probability" if prob == "grammar" else "model probability"
    title = plain_label(title) if title else f"The model's parse and both readings, token by token ({kind})"
    rows = reading_rows(ins)
    if not any(rows.steps):
        return empty_figure(title, "No tokens to show: parse first.")
    left = label_px(rows.labels)
    grid, texts, widths, blocks, ends, cut = _layout(rows, left)
    more = f"+{cut} tokens"
    tail = CHAR_PX * len(more) + CELL_PAD_PX if cut else 0.0
    traces: list[go.Heatmap] = []
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    tickvals, ticktext = [], []
    edges_of: dict[int, tuple[float, float, int]] = {}  # column → (x0, x1, block)
    for b, block in enumerate(blocks):
        edges = [0.0]
        for c in block:
            edges.append(edges[-1] + widths[c])
            edges_of[c] = (edges[-2], edges[-1], b)
        ys = [b * len(ROWS) + r for r in range(len(ROWS))]
        z: list[list[float | None]] = [[None] * len(block) for _ in ROWS]
        hover = [[""] * len(block) for _ in ROWS]
        for r in range(len(ROWS)):
            for k, c in enumerate(block):
                at = grid[r][c]
                if at is not None:
                    z[r][k] = _prob(rows.steps[r][at], prob)
                    hover[r][k] = _hover(rows.labels[r], at, rows.steps[r][at], prob, n_alternatives)
        text = [[plain_label(texts[r][c]) for c in block] for r in range(len(ROWS))]
        traces.append(go.Heatmap(
            z=z, x=edges, y=ys, text=text, texttemplate="%{text}", textfont={"size": 14}, customdata=hover,
            hovertemplate="%{customdata}<extra></extra>", hoverongaps=False, coloraxis="coloraxis",
            xgap=2, ygap=2, name=f"block {b + 1}"))
        for r in range(len(ROWS)):
            tickvals.append(ys[r])
            ticktext.append(rows.labels[r])
            if all(grid[r][c] is None for c in block):  # a row without a token in this block
                notes.append(_row_note(grid[r], block, ys[r], edges[0]))
        if b:  # a white rule between blocks (no blank row)
            shapes.append({"type": "line", "x0": 0, "x1": max(edges), "y0": ys[0] - 0.5, "y1": ys[0] - 0.5,
                           "xref": "x", "yref": "y", "line": {"color": "white", "width": 6}, "name": "block rule"})
    if cut:  # the cut-off rest of the parse, after the last block's parse cell
        x0 = edges_of[blocks[-1][-1]][1]
        notes.append({"x": x0 + 4, "y": (len(blocks) - 1) * len(ROWS), "xref": "x", "yref": "y", "xanchor": "left",
                      "showarrow": False, "text": more, "font": {"size": 13, "color": "#444444"}, "name": "more"})
    widest = max(edges_of[block[-1]][1] for block in blocks) + tail
    _marks(shapes, notes, rows, edges_of, widest)
    fig = go.Figure(data=traces, layout={"shapes": shapes, "annotations": notes})
    _frame(fig, title, rows, blocks, widest, (tickvals, ticktext), cut, left)
    return fig


#: What an empty row of a block says, by whether the row has tokens in earlier and later blocks.
_ROW_NOTES = {(True, False): ("(ended)", "ended"), (True, True): ("(continues below)", "continues"),
              (False, True): ("(starts below)", "continues"), (False, False): ("(no tokens)", "ended")}


def _row_note(cells: list[int | None], block: range, y: int, x: float) -> dict[str, Any]:
    """The note of a row that has no token in ``block``: "(ended)" only when none follows in a later
    block (a row that resumes further down says so), at the row's left, inside its row."""
    earlier = any(i is not None for i in cells[:block.start])
    later = any(i is not None for i in cells[block.stop:])
    text, name = _ROW_NOTES[(earlier, later)]
    return {"x": x, "y": y, "xref": "x", "yref": "y", "xanchor": "left", "yanchor": "middle", "showarrow": False,
            "text": text, "font": {"size": 13, "color": "#666666"}, "name": name}


def _layout(rows: ReadingRows, left: int) -> tuple[list[list[int | None]], list[list[str]], list[float], list[range],
                                                   list[int], int]:
    """Where each token of the three rows goes: the grid (token index at row, column), the cells'
    texts and widths, the columns packed into blocks that fit the plot's width (beside a label
    margin of ``left`` pixels), the last column of each reading, and how many trailing parse
    tokens are cut into one "+N tokens" cell."""
    # a parse that runs on past the readings (a cut-off beam) is shown up to TAIL_COLS columns
    # further; the rest is one "+N tokens" cell (the debugging heatmap shows every token)
    ends = [max(c) for c in rows.columns[1:] if c]
    keep = max(ends) + TAIL_COLS if ends else None
    cut = sum(1 for c in rows.columns[0] if keep is not None and c > keep)
    n_cols = max((max(c) for c in (rows.columns[0][:len(rows.columns[0]) - cut], *rows.columns[1:]) if c),
                 default=-1) + 1
    grid: list[list[int | None]] = [[None] * n_cols for _ in ROWS]  # token index at (row, column)
    for r, cols in enumerate(rows.columns):
        for i, c in enumerate(cols):
            if c < n_cols:
                grid[r][c] = i
    texts = [[fit_text(_display_token(str(rows.steps[r][i].token))) if i is not None else "" for i in grid[r]]
             for r in range(len(ROWS))]
    widths = [max(MIN_CELL_PX, CHAR_PX * max(len(texts[r][c]) for r in range(len(ROWS))) + CELL_PAD_PX)
              for c in range(n_cols)]
    tail = CHAR_PX * len(f"+{cut} tokens") + CELL_PAD_PX if cut else 0.0
    blocks = pack_blocks(widths, PLOT_PX - left - BAR_PX - tail)
    # the parse's columns past both readings ride on the last block, so no block lacks a reading
    head = max(ends) + 1 if ends else n_cols
    if len(blocks) > 1 and blocks[-1].start >= head:  # hand the last reading column over
        start = min(head - 1, blocks[-1].start - 1)
        blocks[-2:] = [range(blocks[-2].start, start), range(start, blocks[-1].stop)]
        blocks = [b for b in blocks if len(b)]
    return grid, texts, widths, blocks, ends, cut


def _frame(fig: go.Figure, title: str, rows: ReadingRows, blocks: list[range], widest: float,
           ticks: tuple[list[int], list[str]], cut: int, left: int) -> None:
    """Title and note, size, colour bar and axes of :func:`readings_heatmap`'s figure; ``layout.meta``
    holds the blocks' columns, the rows' labels and the divergence column, for tests and exports.
    The top margin holds the title and, below it and above the plot area, a strip of
    :data:`TAG_PX` for the divergence tag (when there is one)."""
    tickvals, ticktext = ticks
    n_rows = len(blocks) * len(ROWS)
    top = TITLE_PX + (TAG_PX if rows.divergence is not None else 0)
    apply_layout(fig, f"{title}<br><sup>{plain_label(rows.note)}</sup>",
                 height=top + 40 + ROW_PX * n_rows, width=round(left + BAR_PX + widest),
                 margin={"l": left, "r": BAR_PX, "t": top, "b": 30},
                 coloraxis={"colorscale": PROB_COLORSCALE, "cmin": 0.0, "cmax": 1.0,
                            "colorbar": {"title": {"text": "p"}, "tickformat": ".1f", "len": 0.9}},
                 meta={"blocks": [list(b) for b in blocks], "labels": list(rows.labels), "cut": cut,
                       "divergence": rows.divergence, "rows": len(ROWS)})
    fig.update_xaxes(visible=False, range=[0, widest])
    fig.update_yaxes(tickmode="array", tickvals=tickvals, ticktext=[plain_label(t) for t in ticktext],
                     autorange="reversed", showgrid=False, zeroline=False, range=None, automargin=False)

def _prob(step: Any, prob: ProbKind) -> float | None:
    return optional_float(getattr(step, "prob_grammar" if prob == "grammar" else "prob", None))


def _marks(shapes: list[dict[str, Any]], notes: list[dict[str, Any]], rows: ReadingRows,
           edges_of: dict[int, tuple[float, float, int]], widest: float) -> None:
    """Dashed boxes round each reading's meaning item, a solid box across the block at the
    divergence column and its tag above the plot area (``widest``: the plot's width in x)."""
    for r, cols in ((1, rows.items[0]), (2, rows.items[1])):
        by_block: dict[int, list[int]] = {}
        for c in cols:
            by_block.setdefault(edges_of[c][2], []).append(c)
        for block, cs in by_block.items():
            y = block * len(ROWS) + r
            box = {"type": "rect", "x0": edges_of[min(cs)][0] + 2, "x1": edges_of[max(cs)][1] - 2,
                   "y0": y - 0.42, "y1": y + 0.42, "xref": "x", "yref": "y", "fillcolor": "rgba(0,0,0,0)"}
            shapes.append({**box, "line": SEMANTIC_EDGE, "name": "meaning edge"})
            shapes.append({**box, "line": SEMANTIC_LINE, "name": "meaning"})
    if rows.divergence is None:
        return
    x0, x1, block = edges_of[rows.divergence]
    y0 = block * len(ROWS) - 0.5
    shapes.append({"type": "rect", "x0": x0, "x1": x1, "y0": y0, "y1": y0 + len(ROWS), "xref": "x", "yref": "y",
                   "line": TOKEN_LINE, "fillcolor": "rgba(0,0,0,0)", "name": "divergence"})
    # the tag: in the strip above the plot area (no cell under it), over the boxed column, its text
    # running towards the plot's wider side
    where = DIVERGENCE_TAG if block == 0 else f"{DIVERGENCE_TAG}: block {block + 1}"
    right = (x0 + x1) / 2 > widest / 2
    notes.append({"x": x1 if right else x0, "y": 1, "xref": "x", "yref": "paper", "yanchor": "bottom",
                  "xanchor": "right" if right else "left", "yshift": 2, "text": f"<b>{where} ↓</b>",
                  "showarrow": False, "font": {"size": 13}, "name": "divergence"})
