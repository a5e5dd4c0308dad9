"""A chart's text alternative (:mod:`amp.reporting.chart_text`), with expectations written by hand."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from amp.reporting.chart_text import MAX_POINTS, figure_text, plain_text
from amp.reporting.poll_plots import poll_bars
from amp.reporting.style import apply_layout, empty_figure, plain_label


def test_plain_text_drops_tags_and_decodes_what_users_typed() -> None:
    assert plain_text("LF0 · a long<br>name") == "LF0 · a long name"
    assert plain_text(plain_label("<b>bold</b> & co")) == "<b>bold</b> & co"
    assert plain_text("P(LF0)<br><sup>No data yet.</sup>") == "P(LF0) No data yet."


def test_the_vote_bars_read_as_each_readings_votes() -> None:
    fig = poll_bars(["LF0 · with <i>the</i> telescope", "LF1 · instrument"], [3, 1], ["", ""])
    assert figure_text(fig) == ("Chart (y: votes)", "LF0 · with <i>the</i> telescope: 3", "LF1 · instrument: 1")


def test_title_axes_and_points_in_order() -> None:
    fig = go.Figure()
    fig.add_scatter(x=[0.0, 0.5, 1.0], y=[0.1, 0.4567, 0.9], name="LF0")
    fig.add_bar(x=[2, 7], y=["pp", "scope"], orientation="h", name="count")
    apply_layout(fig, "P(LF0) against r", xaxis_title="r", yaxis_title="P(LF0)")
    assert figure_text(fig) == ("P(LF0) against r (x: r; y: P(LF0))",
                                "LF0: 0: 0.1, 0.5: 0.457, 1: 0.9",
                                "count: pp: 2, scope: 7")


def test_a_long_trace_and_a_heatmap_are_summed_up() -> None:
    fig = go.Figure()
    fig.add_scatter(x=np.arange(MAX_POINTS + 1), y=np.linspace(0.0, 0.5, MAX_POINTS + 1))
    fig.add_heatmap(z=[[0.25, 0.5, 1.0], [0.0, 0.75, np.nan]], name="confidence")
    assert figure_text(fig)[1:] == ("series 1: 13 points, from 0 to 12, values from 0 to 0.5",
                                    "confidence: heatmap, 2 rows × 3 columns, values from 0 to 1")


def test_an_empty_figure_says_so() -> None:
    assert figure_text(empty_figure("Coverage", "Run a sweep first.")) == ("Coverage Run a sweep first.", "No data.")
