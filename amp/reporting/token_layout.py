"""Where the cells of a token heatmap go: content-aligned columns, cell sizes, short texts.

* :func:`aligned_columns` — the column of every token of two parses: the shared prefix and
  the first differing token one token per column, the rest aligned **by content** (:class:`difflib.SequenceMatcher` on the
  token texts), so after the divergence equal tokens sit in the same column and a token one
  parse has and the other lacks faces an empty cell;
* :func:`fit_text` and :func:`cell_px` — cell texts are cut to :data:`MAX_CELL_CHARS` (with an
  ellipsis; the hover keeps the whole token) and cells are as wide as the longest text shown
  plus padding, so a cell never overlaps its text; :func:`columns_per_block` wraps rows so a
  block stays within :data:`MAX_PLOT_PX`;
* :func:`short_label` — row labels of at most :data:`LABEL_CHARS` visible characters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from difflib import SequenceMatcher

__all__ = [
    "CELL_PAD_PX",
    "CHAR_PX",
    "LABEL_CHARS",
    "MAX_CELL_CHARS",
    "MAX_PLOT_PX",
    "aligned_columns",
    "aligned_rows",
    "cell_px",
    "columns_per_block",
    "fit_text",
    "pack_blocks",
    "short_label",
    "visible_text",
]

#: Longest cell text; longer tokens end in "…" (their hover shows them whole).
MAX_CELL_CHARS = 10
#: Width of one character of the 14 px cell font (a generous bound for plotly's Open Sans).
CHAR_PX = 9.0
#: Free space left and right of a cell's text, plus the gap between cells.
CELL_PAD_PX = 16.0
#: Narrowest cell (a one-character token keeps a square-ish cell).
MIN_CELL_PX = 36.0
#: Widest plot area of one block; rows with wider cells wrap into more blocks.
MAX_PLOT_PX = 860.0
#: Most visible characters of a row label.
LABEL_CHARS = 14


def fit_text(text: str, limit: int = MAX_CELL_CHARS) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when it was longer."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def cell_px(texts: Sequence[str]) -> float:
    """Cell width in pixels for the longest of ``texts`` (already fitted)."""
    longest = max((len(t) for t in texts), default=1)
    return max(MIN_CELL_PX, CHAR_PX * longest + CELL_PAD_PX)


def columns_per_block(wrap: int, n_columns: int, width_px: float, *, fit: bool = True) -> int:
    """How many columns one block shows: at most ``wrap`` and the columns there are, and with
    ``fit`` what fits in :data:`MAX_PLOT_PX` at ``width_px`` per cell (never fewer than 4)."""
    fits = max(4, math.floor(MAX_PLOT_PX / width_px)) if fit else wrap
    return max(1, min(wrap, n_columns, fits))


def aligned_columns(a: Sequence[str], b: Sequence[str]) -> tuple[list[int], list[int]]:
    """Column of each token of ``a`` and of ``b``: positional up to and including the first
    differing token (so the token box holds both rows' diverging tokens), then aligned by
    content (equal runs share columns; a replaced run takes the longer run's columns, each side
    from its start; an inserted or deleted run faces empty cells)."""
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    head_a, head_b = min(len(a), start + 1), min(len(b), start + 1)
    cols_a, cols_b = list(range(head_a)), list(range(head_b))
    col = max(head_a, head_b)
    matcher = SequenceMatcher(None, list(a[head_a:]), list(b[head_b:]), autojunk=False)
    for _tag, i0, i1, j0, j1 in matcher.get_opcodes():
        cols_a += [col + k for k in range(i1 - i0)]
        cols_b += [col + k for k in range(j1 - j0)]
        col += max(i1 - i0, j1 - j0)
    return cols_a, cols_b


def aligned_rows(rows: Sequence[Sequence[str]]) -> list[list[int]]:
    """Column of each token of every row, all rows aligned **by content** (a diff alignment, not
    a fixed wrap): row 0 gives the first columns, every next row is aligned with the columns so
    far — positionally up to and including its first differing token (as :func:`aligned_columns`),
    then by :class:`difflib.SequenceMatcher` on the token texts against each column's first token:
    equal tokens share a column, a replaced run pairs up from its start (the longer side's extra
    tokens get columns of their own), an inserted run gets new columns and a deleted one leaves
    the row's cells empty.  Every row's columns increase with its tokens."""
    cols: list[dict[int, int]] = [{0: i} for i in range(len(rows[0]))] if rows else []
    for r in range(1, len(rows)):
        rep = [rows[min(col)][col[min(col)]] for col in cols]
        row = list(rows[r])
        start = next((i for i, (x, y) in enumerate(zip(rep, row, strict=False)) if x != y), min(len(rep), len(row)))
        head = min(len(rep), len(row), start + 1)  # the shared prefix and the first differing token, positional
        merged: list[dict[int, int]] = [{**cols[i], r: i} for i in range(head)]
        matcher = SequenceMatcher(None, rep[head:], row[head:], autojunk=False)
        for tag, i0, i1, j0, j1 in ((t, a + head, b + head, c + head, d + head)
                                    for t, a, b, c, d in matcher.get_opcodes()):
            if tag == "insert":
                merged += [{r: j} for j in range(j0, j1)]
                continue
            for k in range(max(i1 - i0, j1 - j0 if tag != "delete" else 0)):
                col = dict(cols[i0 + k]) if k < i1 - i0 else {}
                if tag != "delete" and k < j1 - j0:
                    col[r] = j0 + k
                merged.append(col)
        cols = merged
    return [[c for c, col in enumerate(cols) if r in col] for r in range(len(rows))]


def pack_blocks(widths: Sequence[float], limit: float) -> list[range]:
    """Consecutive columns packed into blocks no wider than ``limit`` pixels (a column wider than
    it gets a block of its own), evened out: each block aims at the total width over the fewest
    blocks that can hold it (plus a tenth), so the last block is not a stub."""
    if not widths:
        return []
    total = sum(widths)
    cap = min(limit, max(1.1 * total / math.ceil(total / limit), max(widths)))
    blocks: list[range] = []
    start, used = 0, 0.0
    for c, w in enumerate(widths):
        if c > start and used + w > cap:
            blocks.append(range(start, c))
            start, used = c, 0.0
        used += w
    blocks.append(range(start, len(widths)))
    return blocks


_TAG = re.compile(r"<[^>]*>")


def visible_text(label: str) -> str:
    """A label without its HTML tags (what the reader sees)."""
    return _TAG.sub("", label)


def short_label(label: str, limit: int = LABEL_CHARS) -> str:
    """``label`` as is when its visible text fits ``limit`` characters, else that text cut
    with an ellipsis (tags dropped, so no half tag survives)."""
    seen = visible_text(label)
    return label if len(seen) <= limit else fit_text(seen, limit)
