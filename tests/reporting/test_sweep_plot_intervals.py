"""The sweep figures say n and draw the bootstrap intervals (issue #46 point 4; docs/paper-notes.md §21)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from amp.reporting.figure_notes import INTERVAL_NOTE, NOTE_WIDTH, n_note
from amp.reporting.sweep_plots import (
    MIN_BOX_N,
    accuracy_bars,
    accuracy_vs_ratio,
    fdm_fim_table,
    p_lf0_distribution,
    p_lf0_vs_ratio,
    zm_bars,
)


@pytest.fixture
def zero() -> pd.DataFrame:
    return pd.DataFrame({"type": ["pp", "scope"], "n": [40, 38], "ZM_5": [50.0, 20.0], "ZM_5_low": [35.0, 10.0],
                         "ZM_5_high": [65.0, 31.0], "acc_lf0": [0.5, 0.25], "acc_lf0_low": [0.4, 0.1],
                         "acc_lf0_high": [0.55, 0.3], "acc_lf1": [0.2, 0.5], "acc_lf1_low": [0.1, 0.45],
                         "acc_lf1_high": [0.3, 0.6], "mean_p_lf0": [0.6, 0.4], "mean_p_lf0_low": [0.5, 0.3],
                         "mean_p_lf0_high": [0.7, 0.45]})


@pytest.fixture
def per_ratio() -> pd.DataFrame:
    return pd.DataFrame({"type": ["pp", "pp"], "ratio": [0.0, 1.0], "n": [12, 12], "acc_lf0": [0.25, 0.75],
                         "acc_lf0_low": [0.0, 0.5], "acc_lf0_high": [0.5, 1.0], "acc_lf1": [0.5, 0.0],
                         "acc_lf1_low": [0.25, 0.0], "acc_lf1_high": [0.75, 0.25], "mean_p_lf0": [0.3, 0.6],
                         "mean_p_lf0_low": [0.2, 0.55], "mean_p_lf0_high": [0.35, 0.8],
                         "sem_p_lf0": [0.01, 0.02]})


def test_n_note():
    assert n_note([200, 200]) == "n = 200 sentences per type"
    assert n_note([180, 200, 190], "sentences per type and ratio") == "n = 180–200 sentences per type and ratio"
    assert n_note([1]) == "n = 1 sentence per type"
    assert n_note([]) == "" and n_note([math.nan]) == ""


def test_zm_bars_draw_the_interval_and_say_n(zero):
    fig = zm_bars(zero, 5)
    bar = fig.data[0]
    assert list(bar.error_y.array) == pytest.approx([15.0, 11.0])  # high − estimate
    assert list(bar.error_y.arrayminus) == pytest.approx([15.0, 10.0])  # estimate − low
    assert bar.error_y.symmetric is False and bar.textposition == "inside"  # values clear of the bars
    assert "n = 38–40 sentences per type" in fig.layout.title.text and INTERVAL_NOTE in fig.layout.title.text
    plain = zm_bars(zero[["type", "n", "ZM_5"]], 5)
    assert plain.data[0].error_y.array is None and INTERVAL_NOTE not in plain.layout.title.text
    assert plain.data[0].textposition == "outside"


def test_accuracy_bars_draw_each_lfs_interval(zero):
    fig = accuracy_bars(zero)
    lf0, lf1 = fig.data
    assert list(lf0.error_y.array) == pytest.approx([0.05, 0.05]) and list(lf0.error_y.arrayminus) == pytest.approx(
        [0.1, 0.15])
    assert list(lf1.error_y.array) == pytest.approx([0.1, 0.1])
    assert "n = 38–40" in fig.layout.title.text


def test_fig6_curves_have_interval_bars_and_n(per_ratio):
    fig = accuracy_vs_ratio(per_ratio)
    lf0 = next(t for t in fig.data if t.meta == {"type": "pp", "lf": "lf0"})
    assert list(lf0.error_y.array) == pytest.approx([0.25, 0.25])
    assert list(lf0.error_y.arrayminus) == pytest.approx([0.25, 0.25])
    assert "n = 12 sentences per type and ratio" in fig.layout.title.text
    p = p_lf0_vs_ratio(per_ratio)
    line = next(t for t in p.data if t.meta == {"type": "pp"})
    assert list(line.error_y.array) == pytest.approx([0.05, 0.2]) and list(line.error_y.arrayminus) == pytest.approx(
        [0.1, 0.05])
    assert INTERVAL_NOTE in p.layout.title.text
    sem = p_lf0_vs_ratio(per_ratio, error="sem")  # asked for: ± standard error, and the title says so
    assert list(next(t for t in sem.data if t.meta == {"type": "pp"}).error_y.array) == pytest.approx([0.01, 0.02])
    assert "standard error" in sem.layout.title.text
    no_ci = p_lf0_vs_ratio(per_ratio.drop(columns=["mean_p_lf0_low", "mean_p_lf0_high"]))  # falls back to sem
    assert "standard error" in no_ci.layout.title.text


def test_fig6_notes_are_wrapped_above_the_panels_and_the_legend_below(per_ratio):
    both_zero = per_ratio.assign(acc_lf0=0.0, acc_lf1=0.0)
    fig = accuracy_vs_ratio(both_zero)
    (note,) = [a for a in fig.layout.annotations if a.name == "coincide-note"]
    assert note.y == 1 and note.yanchor == "bottom" and note.yshift > 0  # above the panels, not under the legend
    assert all(len(line) <= NOTE_WIDTH for line in note.text.split("<br>"))
    assert fig.layout.legend.y < 0 and fig.layout.legend.yanchor == "top"
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert -fig.layout.legend.y * plot_px + 2 * 25 <= fig.layout.margin.b  # two legend rows fit the margin


def test_fig3_at_n_1_says_so_and_draws_points_not_flat_boxes():
    one = pd.DataFrame({"type": ["pp", "scope"], "surface": ["a", "b"], "ratio": [math.nan] * 2, "p_lf0": [0.3, 0.8]})
    fig = p_lf0_distribution(one)
    assert "n = 1 sentence per type" in fig.layout.title.text
    assert f"points only where n < {MIN_BOX_N}" in fig.layout.title.text
    for box in fig.data:
        assert box.line.width == 0 and box.boxmean is False and box.fillcolor == "rgba(0,0,0,0)"
    many = pd.DataFrame({"type": ["pp"] * MIN_BOX_N, "surface": list("abcde"), "ratio": [math.nan] * MIN_BOX_N,
                         "p_lf0": [0.1, 0.2, 0.3, 0.4, 0.5]})
    boxed = p_lf0_distribution(many)
    assert boxed.data[0].line.width == 2 and "points only" not in boxed.layout.title.text
    assert "n = 5 sentences per type" in boxed.layout.title.text


def test_fig3_adds_the_means_with_their_intervals(zero):
    records = pd.DataFrame({"type": ["pp"] * 6 + ["scope"] * 6, "surface": list("abcdefghijkl"),
                            "ratio": [math.nan] * 12, "p_lf0": [0.5] * 12, "p_lf0_total": [0.5] * 12})
    fig = p_lf0_distribution(records, means=zero)
    (mean,) = [t for t in fig.data if t.meta == {"type": "mean"}]
    assert list(mean.y) == [0.6, 0.4]
    assert list(mean.error_y.array) == pytest.approx([0.1, 0.05]) and list(mean.error_y.arrayminus) == pytest.approx(
        [0.1, 0.1])
    assert INTERVAL_NOTE in fig.layout.title.text
    total = p_lf0_distribution(records, column="p_lf0_total", means=zero)  # no interval of that measure: no means
    assert not [t for t in total.data if t.meta == {"type": "mean"}]


def test_table3_cells_show_the_interval():
    per_type = pd.DataFrame({"type": ["pp"], "FDM": [0.5], "FDM_low": [0.25], "FDM_high": [0.75], "FIM": [0.1],
                             "FIM_low": [0.05], "FIM_high": [0.2], "n": [100], "n_ratios": [11]})
    cells = fdm_fim_table(per_type).data[0].cells.values
    assert list(cells[1]) == ["0.500 [0.250, 0.750]"] and list(cells[2]) == ["0.100 [0.050, 0.200]"]
    assert fdm_fim_table(per_type).data[0].header.values[3] == "<b>n (sentences)</b>"
