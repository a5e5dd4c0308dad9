"""The look shared by every AmP figure: colours, fonts, layout, the empty figure.

Conventions, so that figures read at a glance on a projector: template ``plotly_white``, a title
on every figure, axis titles that say the unit; LF0 is always :data:`LF0_COLOR` (blue) and LF1
always :data:`LF1_COLOR` (dark orange): a colour-blind-safe pair (blue against orange, after the
Okabe–Ito palette), each readable as text on white and on the sidebar's grey (WCAG 2.1 AA, contrast
≥ 4.5:1; ``tests/reporting/test_contrast.py``), and never the only carrier of a reading: the words
LF0/LF1 (or the reading's name) stand next to every coloured item; empty input
gives an empty figure whose title says what is missing (:func:`empty_figure`), never an exception.
Type colours and names are declared with the type (:mod:`amp.data.types`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from amp.data.types import display_name

__all__ = ["IDEAL_COLOR", "LF0_COLOR", "LF1_COLOR", "NEITHER_COLOR", "PROB_COLORSCALE", "TEMPLATE",
           "apply_layout", "empty_figure", "plain_label", "require_columns", "type_label"]

#: Plotly template of every figure.
TEMPLATE = "plotly_white"
#: Colour of LF0 (the first reading) in every figure (Okabe–Ito blue).
LF0_COLOR = "#0072B2"
#: Colour of LF1 (the second reading) in every figure: Okabe–Ito's vermillion (``#D55E00``, 3.9:1 on
#: white) darkened to 5.5:1, so that LF1 written in its colour is readable text (WCAG 2.1 AA).
LF1_COLOR = "#B34700"
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


def apply_layout(fig: go.Figure, title: str, **kwargs: Any) -> go.Figure:
    """Title, template and fonts shared by every figure; ``kwargs`` go to ``update_layout``."""
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
    apply_layout(fig, f"{title}<br><sup>{message}</sup>", height=320)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.add_annotation(
        text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
        font={"size": 17, "color": IDEAL_COLOR},
    )
    return fig


def require_columns(df: pd.DataFrame | None, columns: Sequence[str]) -> pd.DataFrame | None:
    """``df`` if it has rows and all ``columns``; else None (the caller draws an empty figure)."""
    if df is None or len(df) == 0:
        return None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"frame lacks column(s) {missing}; it has {list(df.columns)}")
    return df


def plain_label(text: object) -> str:
    """``text`` as plain text for any string of a plotly figure (labels, hovers, titles, legend
    names, annotations, tick labels).

    Plotly renders a subset of HTML in those strings (``<a href>`` becomes a live link, ``<b>``
    bold, ``<br>`` a line break); with ``&``, ``<`` and ``>`` written as entities, what a user
    typed is shown as the characters typed.  Every figure builder passes user text through this
    (``tests/reporting/test_plain_labels.py`` walks them all with hostile text)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def type_label(name: str) -> str:
    """An ambiguity type's display name as plain figure text (own types are named by users)."""
    return plain_label(display_name(name))

