"""The interpretation-coverage section of the Zero-shot page: curves over k and their CSV."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from amp.errors import AmpError
from amp.evaluation.coverage import coverage_curves, coverage_frame
from amp.reporting.coverage_plots import coverage_curves_figure
from ui.shared.common import chart, csv_download, describe_error, type_label

EXPLAIN = ("**Interpretation coverage** over the top-k *distinct* interpretations (beams deduplicated by "
           "canonical form, unparseable ones dropped): **recall** — the share of the two readings found; "
           "**precision** — the share of the interpretations offered that are one of the readings (a sentence "
           "with no parseable beam offers none and is left out of it); **both found** — both readings there. "
           "ZM_k (dashed) counts both readings among the raw top-k beams.")


def coverage_section(records: Sequence[Any], max_k: int, mode: str, *, final: bool, tag: str = "") -> None:
    """Curves of one chosen type (all types in the CSV); ``tag`` keeps live redraws' keys unique."""
    try:
        frame = coverage_frame(coverage_curves(records, max_k=max_k, mode=mode))
    except AmpError as exc:
        st.error(f"Cannot compute the interpretation coverage: {describe_error(exc)}", icon=":material/error:")
        return
    st.markdown(EXPLAIN)
    types = list(dict.fromkeys(frame["type"]))
    chosen = None
    if len(types) > 1:
        chosen = st.selectbox("Coverage of", types, format_func=type_label, key=f"zs_cov_type{tag}",
                              disabled=not final)
    chart(coverage_curves_figure(frame, chosen), filename="zeroshot_coverage", key=f"zs_cov{tag}")
    if final:
        csv_download(frame, "zeroshot_coverage.csv", label="Coverage CSV (all types, every k)", key="zs_csv_cov")
