"""Notes and error bars of the sweep figures: the n a figure is computed on, what its bars show
(the bootstrap intervals of :mod:`amp.evaluation.sweep_intervals`, docs/paper-notes.md §21), and
note lines wrapped so that none runs past a figure's right edge (pure).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Any

import pandas as pd

from amp.evaluation.bootstrap import DEFAULT_LEVEL
from amp.evaluation.sweep_intervals import interval_columns
from amp.evaluation.sweep_run import optional_float

__all__ = ["INTERVAL_NOTE", "NOTE_WIDTH", "error_bars", "has_intervals", "interval_cells", "interval_text", "n_note",
           "text_position", "with_notes"]

#: What a figure's error bars show when its frame has ``<stat>_low``/``<stat>_high`` (docs/paper-notes.md §21).
INTERVAL_NOTE = f"bars: {DEFAULT_LEVEL:.0%} bootstrap interval over sentences"
#: Characters per line of a note under a figure's title, so that none runs past the right edge.
NOTE_WIDTH = 110


def n_note(ns: Iterable[Any], what: str = "sentences per type") -> str:
    """``n = 200 sentences per type`` (or ``n = 180–200 …`` where the counts differ): the n of a figure."""
    got = sorted({int(v) for v in ns if optional_float(v) is not None})
    if not got:
        return ""
    span = str(got[0]) if len(got) == 1 else f"{got[0]}–{got[-1]}"
    return f"n = {span} {what.replace('sentences', 'sentence') if got == [1] else what}"


def with_notes(title: str, *notes: str) -> str:
    """``title`` with the notes on smaller lines under it, wrapped at :data:`NOTE_WIDTH` characters."""
    text = " · ".join(n for n in notes if n)
    if not text:
        return title
    return f"{title}<br><sup>{'<br>'.join(textwrap.wrap(text, NOTE_WIDTH))}</sup>"


def error_bars(sub: pd.DataFrame, stat: str, ys: list[float | None]) -> dict[str, Any] | None:
    """Plotly ``error_y`` from ``stat``'s interval columns (None where the frame has none)."""
    low, high = interval_columns(stat)
    if low not in sub or high not in sub:
        return None
    lows, highs = [optional_float(v) for v in sub[low]], [optional_float(v) for v in sub[high]]
    return {
        "type": "data", "symmetric": False, "visible": True, "thickness": 1.5,
        "array": [0.0 if y is None or h is None else max(h - y, 0.0) for y, h in zip(ys, highs, strict=True)],
        "arrayminus": [0.0 if y is None or lo is None else max(y - lo, 0.0) for y, lo in zip(ys, lows, strict=True)],
    }


def has_intervals(df: pd.DataFrame, stats: Iterable[str]) -> bool:
    """Whether ``df`` has the interval columns of any of ``stats``."""
    return any(interval_columns(stat)[0] in df for stat in stats)


def text_position(df: pd.DataFrame, stats: Iterable[str]) -> str:
    """Bar values sit above the bars, or inside them where error bars take the space above."""
    return "inside" if has_intervals(df, stats) else "outside"


def interval_text(value: Any, low: Any = None, high: Any = None, digits: int = 3) -> str:
    """``0.530 [0.410, 0.660]``; the estimate alone where the interval is undefined; ``–`` for no value."""
    v, lo, hi = optional_float(value), optional_float(low), optional_float(high)
    if v is None:
        return "–"
    return f"{v:.{digits}f}" if lo is None or hi is None else f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def interval_cells(rows: pd.DataFrame, stat: str, digits: int = 3) -> list[str]:
    """:func:`interval_text` of ``stat`` per row, with its interval where ``rows`` has one (tables)."""
    low, high = interval_columns(stat)
    if low not in rows or high not in rows:
        return [interval_text(v, digits=digits) for v in rows[stat]]
    return [interval_text(v, lo, hi, digits) for v, lo, hi in zip(rows[stat], rows[low], rows[high], strict=True)]
