"""Widget helpers shared by the pages: charts with PNG export, table downloads, error boxes.

Only presentation lives here (no AmP logic): the pages call :mod:`amp` for everything else.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from amp.data.types import display_name
from amp.errors import AmpError
from amp.evaluation.sweep_summary import json_cells
from amp.logic.errors import LFParseError
from amp.reporting.chart_text import figure_text

T = TypeVar("T")


#: Characters that Markdown (links, images, emphasis, code, headings, tables, LaTeX, icons) or HTML
#: would interpret; :func:`plain` backslash-escapes each (CommonMark shows an escaped one as itself).
_MARKUP = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&=\"'])")


#: Where GFM turns bare text into a link (``http://…``, ``www.…``, ``name@host``) despite escapes:
#: an invisible word joiner (U+2060) goes in between, so no autolink forms.
_AUTOLINK = re.compile(r"(:)(//)|(?i:(www))(\.)|(@)")


def plain(text: object) -> str:
    """``text`` for an element that renders Markdown, shown as plain text: no live link, no image
    fetch, no HTML, no emphasis — whatever a URL or a student typed (issue #12).  Line breaks
    become spaces (a heading or list cannot start mid-text)."""
    one_line = " ".join(str(text).split())
    unlinked = _AUTOLINK.sub(lambda m: "\u2060".join(g for g in m.groups() if g) if m.group(5) is None
                             else "\u2060@", one_line)
    return _MARKUP.sub(r"\\\1", unlinked)


def type_label(type_: str) -> str:
    """``pp`` → ``PP attachment (pp)``: for select boxes (the name declared in :mod:`amp.data.types`,
    the same as in the figures)."""
    return f"{display_name(type_)} ({type_})"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "figure"


#: The label of the expander holding a chart's data in words (:func:`chart`).
CHART_TEXT_LABEL = "Chart as text"


def figure_html(fig: Any) -> str:
    """A figure as a stand-alone interactive HTML page (plotly.js embedded: it opens offline)."""
    return str(fig.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False}))


def chart(fig: Any, *, key: str | None = None, filename: str = "figure", html_download: bool = True,
          summary: str | None = None, summary_beside: bool = False, **kwargs: Any) -> None:
    """Place a plotly figure; the toolbar camera downloads it as a PNG named ``filename``, and a
    small button under it as an interactive HTML page (built only when clicked; not with
    ``html_download=False``: a projector's slide, where every line of height counts).

    Every chart has a text alternative (WCAG 2.1 AA, 1.1.1: neither a screen reader nor axe-core
    reads plotly's SVG): ``summary``, one short line shown under it as plain text; without one, the
    figure's title, axes and data in words (:func:`amp.reporting.chart_text.figure_text`) in a
    collapsed "Chart as text" expander.  ``summary_beside=True``: the caller shows the summary next
    to the chart itself (the Presentation's tally, beside its chart), so nothing is added here."""
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": _slug(filename), "scale": 2},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)  # long axis titles are not clipped at the left edge
    st.plotly_chart(fig, key=key, config=config, theme=None, **kwargs)
    if summary is not None and not summary_beside:
        st.caption(plain(summary))
    elif not summary_beside:
        with st.expander(CHART_TEXT_LABEL, icon=":material/notes:"):
            st.markdown("\n".join(f"- {plain(line)}" for line in figure_text(fig)))
    if not html_download:
        return
    st.download_button("HTML", data=lambda: figure_html(fig), file_name=f"{_slug(filename)}.html",
                       mime="text/html", key=f"{key}_html" if key else None, type="tertiary",
                       icon=":material/download:", on_click="ignore",
                       help="Download this figure as an interactive HTML page (the camera icon above: PNG)")


def csv_download(df: pd.DataFrame, filename: str, *, label: str = "Download CSV", key: str | None = None) -> None:
    """A download button for a table as CSV (:func:`csv_text`)."""
    st.download_button(label, csv_text(df), file_name=filename, mime="text/csv",
                       key=key, icon=":material/download:", on_click="ignore")


def csv_text(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index), list and tuple cells (beams) as JSON lists, as the
    reproduction's CSVs write them."""
    buf = io.StringIO()
    json_cells(df).to_csv(buf, index=False)
    return buf.getvalue()


def describe_error(exc: BaseException) -> str:
    """A user-facing message for a library error (column/expected for unparseable LFs), as
    Markdown in which the error's own text is plain (it may quote what a user typed)."""
    if isinstance(exc, LFParseError):
        return lf_error_text(exc)
    return plain(str(exc) or exc.__class__.__name__)


def lf_error_text(exc: LFParseError) -> str:
    """Markdown: the parser's message (column, what was found and expected) and a caret line."""
    text = getattr(exc, "text", "") or ""
    col = int(getattr(exc, "column", 1) or 1)
    line_no = int(getattr(exc, "line", 1) or 1)
    lines = text.splitlines() or [text]
    line = lines[line_no - 1] if 0 < line_no <= len(lines) else text
    message = str(exc)
    message = plain(message[:1].upper() + message[1:])
    caret = f"{line}\n{' ' * max(col - 1, 0)}^ column {col}".replace("```", "` ` `")
    return f"**This LF does not parse.** {message}.\n\n```text\n{caret}\n```"


def guarded(fn: Callable[[], T], *, what: str) -> T | None:
    """Run ``fn``; an :class:`~amp.errors.AmpError` becomes an ``st.error`` and ``None``."""
    try:
        return fn()
    except AmpError as exc:
        st.error(f"{what}: {describe_error(exc)}" if not isinstance(exc, LFParseError)
                 else describe_error(exc), icon=":material/error:")
        return None


def fmt_prob(p: float | None, digits: int = 3) -> str:
    """A probability for a metric tile ("–" when missing)."""
    if p is None or math.isnan(p):
        return "–"
    return f"{p:.{digits}f}"


#: How a table shows its floats unless a column says otherwise: three significant digits, so a
#: tiny probability reads ``5.11e-43`` (not ``0.000…05`` or ``0``) and a common one ``0.484``.
READABLE_FLOAT = "%.3g"


def readable_numbers(df: pd.DataFrame, **configured: Any) -> dict[str, Any]:
    """An ``st.dataframe`` ``column_config``: every float column of ``df`` in :data:`READABLE_FLOAT`,
    except the columns ``configured`` here (their own ``st.column_config``)."""
    config: dict[str, Any] = {column: st.column_config.NumberColumn(format=READABLE_FLOAT)
                              for column in df.columns if pd.api.types.is_float_dtype(df[column])}
    config.update(configured)
    return config
