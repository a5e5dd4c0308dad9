"""A plotly figure in words: the text alternative of a chart (WCAG 2.1 success criterion 1.1.1).

A screen reader, and axe-core, cannot read the SVG plotly draws; the app puts these lines next
to every chart whose caller gives no summary of its own (:func:`ui.shared.common.chart`).
:func:`figure_text` says the figure's title and axes, then each trace's points in order (a long
trace: how many, and the range of its values).  The strings of a figure are HTML for plotly
(:func:`amp.reporting.style.plain_label` escapes what users typed); here they become plain text
again: tags such as ``<br>`` and ``<sup>`` dropped, entities decoded, so a reading named
``<b>x</b>`` reads as typed.
"""

from __future__ import annotations

import html
import math
import numbers
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_POINTS", "figure_text", "plain_text"]

#: A trace of at most this many points is read out point by point; a longer one as a range.
MAX_POINTS = 12
_TAG = re.compile(r"<[^>]*>")


def plain_text(label: object) -> str:
    """A figure string as plain text: plotly's tags become spaces, entities the characters typed."""
    return " ".join(html.unescape(_TAG.sub(" ", str(label))).split())


def _seq(values: Any) -> list[Any]:
    """A trace's array (a list, a tuple, a numpy array or nothing) as a list."""
    return [] if values is None else list(values)


def _value(v: Any) -> str:
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return str(int(v))
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return "–" if math.isnan(float(v)) else f"{float(v):.3g}"
    return plain_text(v)


def _numbers(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values
            if isinstance(v, numbers.Real) and not isinstance(v, bool) and not math.isnan(float(v))]


def _span(values: Sequence[Any]) -> str:
    nums = _numbers(values)
    return f"from {min(nums):.3g} to {max(nums):.3g}" if nums else "no numbers"


def _get(obj: Any, name: str) -> Any:
    """A property of a plotly object (a trace, the layout, an axis), or None where it has none."""
    try:
        return obj[name]
    except (KeyError, ValueError, TypeError):
        return None


def _title(obj: Any) -> str:
    title = _get(obj, "title")
    return plain_text(_get(title, "text") or "") if title is not None else ""


def _trace_line(index: int, trace: Any) -> str:
    name = plain_text(_get(trace, "name") or "") or f"series {index + 1}"
    kind = _get(trace, "type") or "scatter"
    if kind in ("heatmap", "contour", "histogram2d"):
        rows = [_seq(row) for row in _seq(_get(trace, "z"))]
        cells = [c for row in rows for c in row]
        width = max((len(row) for row in rows), default=0)
        return f"{name}: {kind}, {len(rows)} rows × {width} columns, values {_span(cells)}"
    x, y = _seq(_get(trace, "x")), _seq(_get(trace, "y"))
    horizontal = _get(trace, "orientation") == "h"
    keys, values = (y, x) if horizontal else (x, y)
    if not values and keys:  # a histogram or a box: only the sample
        return f"{name}: {len(keys)} values {_span(keys)}"
    if not keys:
        keys = list(range(len(values)))
    if len(values) > MAX_POINTS:
        return f"{name}: {len(values)} points, {_span(keys) if _numbers(keys) else 'categories'}, values {_span(values)}"
    if len(values) == 1 and _value(keys[0]) == name:  # one bar named as its trace
        return f"{name}: {_value(values[0])}"
    points = ", ".join(f"{_value(k)}: {_value(v)}" for k, v in zip(keys, values))
    return f"{name}: {points}" if points else f"{name}: no points"


def figure_text(fig: Any) -> tuple[str, ...]:
    """The figure (a plotly ``Figure``) in words: a first line with its title and axes, then one
    line per trace (its name, then ``x: y`` for each point, or for a long trace how many points
    and the range of its values; a heatmap its size and value range; no trace: ``No data.``)."""
    layout = fig.layout
    head = _title(layout) or "Chart"
    axes = [f"{axis}: {text}" for axis, text in (("x", _title(_get(layout, "xaxis"))), ("y", _title(_get(layout, "yaxis"))))
            if text]
    traces = list(fig.data)
    first = head + (f" ({'; '.join(axes)})" if axes else "")
    return (first, *(_trace_line(i, t) for i, t in enumerate(traces))) if traces else (first, "No data.")
