"""Plotly figures of AmP results: pure functions of result objects and summary frames.

This is the visualisation layer of the inseq-like split (``docs/style.md``): the parser returns
plain result objects (:class:`~amp.parser.core.results.ForcedScore`, :class:`~amp.parser.core.results.ParseResult`),
:mod:`amp.evaluation.experiments` turns sweeps into records and summary frames, and the reporting
modules turn those into figures.  Pages only place figures, so the same figure serves the app, the
CLI report and a notebook, and a test can read a figure's spec (``fig.to_dict()``) instead of
looking at pixels.  This module gathers their public names in one import (``from amp.reporting
import plots; plots.token_heatmap(...)``):

* :mod:`amp.reporting.style` — colours, fonts, layout, the empty figure;
* :mod:`amp.reporting.token_plots` — token heatmaps (paper Fig. 4) and the shared character axis;
* :mod:`amp.reporting.sweep_plots` — Tables 2–3 and Figures 2, 3 and 6 from sweep summaries;
* :mod:`amp.reporting.beam_table` — the beams of one parse as a table with their gold-LF match.
"""

from __future__ import annotations

from amp.data.types import type_color
from amp.reporting.beam_table import BEAM_TABLE_COLUMNS, MATCH_NAMES, beam_table
from amp.reporting.style import (
    IDEAL_COLOR,
    LF0_COLOR,
    LF1_COLOR,
    NEITHER_COLOR,
    PROB_COLORSCALE,
    TEMPLATE,
    empty_figure,
)
from amp.reporting.sweep_plots import (
    accuracy_bars,
    accuracy_vs_ratio,
    fdm_fim_table,
    overlay_fewshot,
    p_lf0_distribution,
    p_lf0_vs_ratio,
    zm_bars,
)
from amp.reporting.token_plots import (
    ProbKind,
    char_axis_frame,
    char_heatmap,
    inspection_heatmap,
    token_char_spans,
    token_heatmap,
)

__all__ = [
    "BEAM_TABLE_COLUMNS",
    "MATCH_NAMES",
    "IDEAL_COLOR",
    "LF0_COLOR",
    "LF1_COLOR",
    "NEITHER_COLOR",
    "PROB_COLORSCALE",
    "TEMPLATE",
    "ProbKind",
    "accuracy_bars",
    "accuracy_vs_ratio",
    "beam_table",
    "char_axis_frame",
    "char_heatmap",
    "empty_figure",
    "fdm_fim_table",
    "inspection_heatmap",
    "overlay_fewshot",
    "p_lf0_distribution",
    "p_lf0_vs_ratio",
    "token_char_spans",
    "token_heatmap",
    "type_color",
    "zm_bars",
]
