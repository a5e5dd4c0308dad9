"""Figures of P(LF0) calibration: the reliability diagram and the model-vs-class scatter.

Pure functions of :mod:`amp.evaluation.calibration`'s records:

* :func:`reliability_diagram` — the observed rate of top-1 = LF0 per P(LF0) bin against the
  diagonal of perfect calibration, with ECE and the Brier score (Guo et al. 2017, Fig. 1 style);
  one bar series for all records, or one line per type or per prompt ratio r;
* :func:`poll_scatter` — the model's P(LF0) against a class poll's P(LF0) per sentence, with the
  diagonal and Pearson's r (the paper's Fig. 5 analogue: model vs human preferences).

Both draw on fixed 0–1 axes so that figures of small and large sweeps compare directly; empty
input gives an empty figure whose title says what is missing.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.colors import find_intermediate_color, hex_to_rgb, label_rgb

from amp.data.types import type_color
from amp.evaluation.calibration import Calibration, CalibrationReport, GroupBy, PollAgreement
from amp.reporting.style import IDEAL_COLOR, LF0_COLOR, LF1_COLOR, apply_layout, empty_figure, plain_label, type_label

__all__ = ["poll_scatter", "ratio_color", "reliability_diagram"]

_GROUP_TITLES = {"all": "all records", "type": "per ambiguity type", "ratio": "per LF0 ratio r"}


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def ratio_color(ratio: float) -> str:
    """A ratio's colour: LF1's orange at r = 0 through to LF0's blue at r = 1 (r = fraction of LF0)."""
    r = min(1.0, max(0.0, float(ratio)))
    low, high = hex_to_rgb(LF1_COLOR), hex_to_rgb(LF0_COLOR)
    mixed = find_intermediate_color(low, high, r)
    return label_rgb(tuple(round(c) for c in mixed))


def _diagonal() -> go.Scatter:
    return go.Scatter(x=[0.0, 1.0], y=[0.0, 1.0], mode="lines", name="perfectly calibrated",
                      line={"color": IDEAL_COLOR, "dash": "dash", "width": 2}, hoverinfo="skip",
                      meta={"group": "ideal"})


def _meta(c: Calibration) -> dict[str, object]:
    return {"group_by": c.group_by, "group": c.group, "n": c.n, "ece": c.ece, "brier": c.brier}


def _bars(c: Calibration, n_bins: int) -> go.Bar:
    """All records: one bar per non-empty bin at the bin's centre, its height the observed rate."""
    full = [b for b in c.bins if b.n]
    return go.Bar(
        x=[(b.lower + b.upper) / 2 for b in full], y=[b.observed_lf0 for b in full], width=1 / n_bins,
        name="observed rate of top-1 = LF0", marker={"color": LF0_COLOR, "line": {"color": "white", "width": 1}},
        text=[f"n={b.n}" for b in full] if n_bins <= 20 else None, textposition="outside",
        customdata=[[b.lower, b.upper, b.n, b.mean_p_lf0] for b in full],
        hovertemplate=("P(LF0) in [%{customdata[0]:.2f}, %{customdata[1]:.2f}]<br>n = %{customdata[2]}"
                       "<br>mean P(LF0) = %{customdata[3]:.3f}<br>observed LF0 rate = %{y:.3f}<extra></extra>"),
        meta=_meta(c),
    )


def _line(c: Calibration) -> go.Scatter:
    """One group: a point per non-empty bin at (mean P(LF0), observed rate)."""
    full = [b for b in c.bins if b.n]
    if c.group_by == "type":
        name, color = type_label(c.group), type_color(c.group)
    else:
        name, color = f"r = {c.group}", ratio_color(c.ratio if c.ratio is not None else 0.5)
    return go.Scatter(
        x=[b.mean_p_lf0 for b in full], y=[b.observed_lf0 for b in full], mode="lines+markers",
        name=f"{name} (ECE {_num(c.ece, 2)}, Brier {_num(c.brier, 2)}, n = {c.n})",
        line={"color": color, "width": 3}, marker={"size": 10, "color": color},
        customdata=[[b.lower, b.upper, b.n] for b in full],
        hovertemplate=(f"<b>{plain_label(name)}</b><br>P(LF0) bin [%{{customdata[0]:.2f}}, %{{customdata[1]:.2f}}]"
                       "<br>n = %{customdata[2]}<br>mean P(LF0) = %{x:.3f}<br>observed LF0 rate = %{y:.3f}"
                       "<extra></extra>"),
        meta=_meta(c),
    )


def reliability_diagram(report: CalibrationReport, by: GroupBy = "all") -> go.Figure:
    """Reliability diagram of P(LF0): observed rate of top-1 = LF0 per P(LF0) bin vs the diagonal.

    ``report`` is :func:`amp.evaluation.calibration.calibrate`'s result.  ``by="all"`` draws one
    bar per non-empty bin (at the bin's centre; hover: its range, count and mean P(LF0));
    ``"type"``/``"ratio"`` draw one line per group through (mean P(LF0), observed rate) of its
    bins, the group's ECE and Brier score in its legend entry.  The subtitle gives the overall
    ECE = Σ_b (n_b/N)·|acc_b − conf_b| (Guo et al. 2017) and Brier score.  Points above the
    diagonal: the model picks LF0 more often than its P(LF0) says.
    """
    overall = report.overall
    title = f"Reliability of P(LF0), {_GROUP_TITLES.get(by, by)}: observed top-1 LF0 rate per P(LF0) bin"
    groups = [c for c in report.groups(by) if c.n]
    if not groups:
        return empty_figure(title, "No scored predictions yet: run a sweep with parsing and scoring on.")
    left = f" ({overall.n_left_out} left out)" if overall.n_left_out else ""
    sub = f"ECE = {_num(overall.ece)} · Brier = {_num(overall.brier)} · n = {overall.n}{left} · {report.n_bins} bins"
    fig = go.Figure()
    if by == "all":
        fig.add_trace(_bars(overall, report.n_bins))
    else:
        for c in groups:
            fig.add_trace(_line(c))
    fig.add_trace(_diagonal())
    apply_layout(fig, f"{title}<br><sup>{sub}</sup>", height=540,
                 legend={"title": {"text": "ambiguity type" if by == "type" else "ratio" if by == "ratio" else ""}})
    fig.update_xaxes(title={"text": "predicted P(LF0) (min-token prob. normalised)"}, range=[0, 1], dtick=0.1)
    fig.update_yaxes(title={"text": "observed rate of top-1 = LF0"}, range=[0, 1.08], dtick=0.1)
    return fig


def poll_scatter(agreement: PollAgreement) -> go.Figure:
    """The model's P(LF0) (x) against the class's P(LF0) (y), one point per sentence, and y = x.

    ``agreement`` is :func:`amp.evaluation.calibration.poll_agreement`'s result; Pearson's r and
    the mean |model − class| are in the title; hovering a point shows its sentence (as text).
    The paper's Fig. 5 analogue: where the class prefers a reading the model should too.
    """
    title = "Model vs class P(LF0) per sentence (paper Fig. 5 analogue)"
    if not agreement.points:
        return empty_figure(title, "No sentence has both a model P(LF0) and a class vote yet.")
    r = "r = n/a (needs 2+ sentences with spread)" if agreement.pearson_r is None else f"r = {agreement.pearson_r:.3f}"
    sub = f"Pearson {r} · mean |model − class| = {_num(agreement.mean_abs_diff)} · n = {agreement.n}"
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[p.model_p_lf0 for p in agreement.points], y=[p.class_p_lf0 for p in agreement.points],
        mode="markers", name="sentences", text=[plain_label(p.surface) for p in agreement.points],
        marker={"color": LF0_COLOR, "size": 12, "opacity": 0.8, "line": {"color": "white", "width": 1}},
        hovertemplate="%{text}<br>model P(LF0) = %{x:.3f}<br>class P(LF0) = %{y:.3f}<extra></extra>",
        meta={"group": "sentences", "pearson_r": agreement.pearson_r, "mean_abs_diff": agreement.mean_abs_diff},
    ))
    fig.add_trace(go.Scatter(x=[0.0, 1.0], y=[0.0, 1.0], mode="lines", name="model = class",
                             line={"color": IDEAL_COLOR, "dash": "dash", "width": 2}, hoverinfo="skip",
                             meta={"group": "ideal"}))
    apply_layout(fig, f"{title}<br><sup>{sub}</sup>", height=540, showlegend=False)
    # a square plot (the diagonal at 45°), shrunk to fit rather than widened past 0–1
    fig.update_xaxes(title={"text": "model P(LF0) (stored with the poll item)"}, range=[-0.03, 1.03], dtick=0.1,
                     constrain="domain")
    fig.update_yaxes(title={"text": "class P(LF0) (votes × confidence, A.5)"},
                     range=[-0.03, 1.03], dtick=0.1, scaleanchor="x", scaleratio=1, constrain="domain")
    return fig
