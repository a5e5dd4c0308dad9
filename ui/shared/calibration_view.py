"""Calibration sections: the reliability diagram of a sweep (Ratio sweep page) and the
model-vs-class P(LF0) scatter of stored polls (Class poll page).

Presentation only: the numbers come from :mod:`amp.evaluation.calibration` (and
:mod:`amp.teaching.poll_calibration` for polls), the figures from :mod:`amp.reporting.calibration_plots`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import streamlit as st

from amp.errors import AmpError
from amp.evaluation import calibration as cal
from amp.evaluation.sweep_run import rematch
from amp.reporting.calibration_plots import poll_scatter, reliability_diagram
from amp.teaching.poll_calibration import stored_agreement
from ui.shared.common import chart, csv_download, describe_error, fmt_prob, guarded

if TYPE_CHECKING:
    from amp.evaluation.sweep_run import SweepRecord
    from amp.teaching.poll_store import PollStore

_GROUPS = {"all": "all records", "type": "per type", "ratio": "per ratio r"}
_SCOPES = {"all": "all stored polls", "this": "this poll"}

ECE_HELP = ("Expected calibration error (Guo et al. 2017): Σ over bins of (share of records in the bin) × "
            "|observed LF0 rate − mean P(LF0)|. 0 = P(LF0) is exactly how often the top beam is LF0; lower is better.")
BRIER_HELP = ("Mean of (P(LF0) − y)², y = 1 when the top beam is LF0 (also when it equals both LFs), else 0. "
              "0 = sure and right every time; always answering 0.5 scores 0.25. Lower is better.")


def sweep_calibration(records: Sequence[SweepRecord], mode: str, *, prefix: str = "fs_cal") -> None:
    """Calibration of a finished sweep: ECE, Brier, the reliability diagram (overall / per type /
    per ratio) and its tables as CSV.  ``mode`` is the canonicaliser the page matches with."""
    st.markdown("**Calibration of P(LF0)** — is P(LF0) how often the top beam *is* LF0? Records are binned by "
                "P(LF0); a calibrated model's bars reach the dashed diagonal.")
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    bins = c1.number_input("P(LF0) bins", cal.MIN_BINS, cal.MAX_BINS, cal.DEFAULT_BINS, key=f"{prefix}_bins",
                           help="equal-width bins of P(LF0) over 0–1")
    by = c2.radio("Show", list(_GROUPS), format_func=_GROUPS.__getitem__, horizontal=True, key=f"{prefix}_by")
    report = guarded(lambda: cal.calibrate(rematch(records, mode), int(bins)), what="Cannot compute the calibration")
    if report is None:
        return
    overall = report.overall
    m1, m2, m3 = st.columns(3)
    m1.metric("ECE", fmt_prob(overall.ece), help=ECE_HELP)
    m2.metric("Brier score", fmt_prob(overall.brier), help=BRIER_HELP)
    m3.metric("Scored predictions", overall.n,
              help=f"Left out: {overall.n_errors} failed, {overall.n_unscored} without P(LF0), "
                   f"{overall.n_unparsed} without beams.")
    chart(reliability_diagram(report, cast(cal.GroupBy, by or "all")), key=f"{prefix}_diagram", filename="reliability_diagram")
    summary = cal.summary_frame(report)
    with st.expander("ECE and Brier score per group"):
        st.dataframe(summary, hide_index=True)
    d1, d2, _ = st.columns([1, 1, 2])
    with d1:
        csv_download(cal.reliability_frame(report), "calibration_bins.csv", label="Reliability table CSV",
                     key=f"{prefix}_csv_bins")
    with d2:
        csv_download(summary, "calibration_summary.csv", label="ECE and Brier CSV", key=f"{prefix}_csv_summary")


def poll_agreement_section(store: PollStore, code: str, *, live: bool = False, prefix: str = "tp_cal") -> None:
    """Model vs class P(LF0) for the sentences of stored polls that have both a stored model
    P(LF0) and a vote (no model is run); refreshed every 5 s while ``live``."""
    st.fragment(lambda: _poll_agreement(store, code, prefix), run_every=5 if live else None)()


def _poll_agreement(store: PollStore, code: str, prefix: str) -> None:
    st.markdown("**Model vs class** — each point a polled sentence with a vote and the model's P(LF0) stored with "
                "its poll: on the dashed diagonal the class and the model agree (the paper's Fig. 5 analogue).")
    scope = st.radio("Sentences from", list(_SCOPES), format_func=_SCOPES.__getitem__, horizontal=True,
                     key=f"{prefix}_scope")
    try:
        agreement = stored_agreement(store, [code] if scope == "this" else None)
    except AmpError as exc:
        st.error(f"Cannot compare the model with the class: {describe_error(exc)}", icon=":material/error:")
        return
    m1, m2, m3 = st.columns(3)
    m1.metric("Pearson r", fmt_prob(agreement.pearson_r), help="correlation of model and class P(LF0); "
              "– with fewer than 2 sentences or when one side is the same everywhere")
    m2.metric("Mean |model − class|", fmt_prob(agreement.mean_abs_diff))
    m3.metric("Sentences compared", agreement.n)
    chart(poll_scatter(agreement), key=f"{prefix}_scatter", filename="model_vs_class_p_lf0")
    csv_download(cal.agreement_frame(agreement), "model_vs_class_p_lf0.csv", label="Model vs class CSV",
                 key=f"{prefix}_csv")
