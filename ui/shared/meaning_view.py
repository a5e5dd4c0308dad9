"""Meaning-level uncertainty on the sweep pages: semantic entropy of the beams' meanings per type
(and ratio), with their mass on LF0, LF1 and neither (docs/paper-notes.md §17)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from amp.errors import AmpError
from amp.evaluation.semantic_entropy import beam_shares, semantic_entropy
from amp.evaluation.sweep_summary import MEANING_COLUMNS
from amp.parser.core.results import ParseResult
from ui.shared.common import csv_download, plain, readable_numbers

HELP = ("Semantic entropy groups the beams by meaning (logical canonical form: the same LF written "
        "differently counts once) and weighs each meaning by the beams' probability: 0 nats = one "
        "meaning, ln 2 ≈ 0.693 = two equally likely meanings. Mass on LF0 / LF1 / neither: the share "
        "of the beams' probability on each reading and on anything else. Means over the test sentences.")


def meaning_table(summary: pd.DataFrame, *, key: str, filename: str) -> None:
    """The summary's meaning columns (with ``type``, ``ratio`` where present and ``n``), a caption, a CSV."""
    cols = [c for c in ("type", "ratio", "n") if c in summary.columns] + list(MEANING_COLUMNS)
    table = summary[cols]
    st.markdown("**Meaning-level uncertainty** — semantic entropy of the beams' meanings (nats) and "
                "their probability mass on LF0, LF1 and neither", help=HELP)
    st.dataframe(table, hide_index=True, key=key, column_config=readable_numbers(
        table, semantic_entropy=st.column_config.NumberColumn(format="%.3f", help="nats; 0 = one meaning")))
    csv_download(table, filename, label="Meaning-level uncertainty CSV", key=f"{key}_csv")


def beam_meanings(parse: ParseResult, lf0: str, lf1: str, mode: str, fmt: str) -> None:
    """One line under a parse's beams: their semantic entropy and mass on LF0 / LF1 / neither."""
    beams = parse.beams
    if not beams:
        return
    shares = beam_shares([b.logprob for b in beams])
    try:
        se = semantic_entropy([b.text for b in beams], list(shares) or None, lf0, lf1, mode=mode, fmt=fmt)
    except AmpError as exc:
        st.caption(f"No meaning-level uncertainty: {plain(str(exc))}")
        return
    st.markdown(f"**Meanings among the beams:** {se.n_meanings} · semantic entropy {se.entropy:.3f} nats · "
                f"mass on LF0 {se.p_lf0:.1%}, LF1 {se.p_lf1:.1%}, neither {se.p_neither:.1%}", help=HELP)
