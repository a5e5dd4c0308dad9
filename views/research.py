"""Research: the reproduction's tables and figures for saved runs, two side by side.

Runs are the manifests ``python -m amp reproduce`` writes into ``<cache root>/runs/``, and the sweeps
finished on the Zero-shot and Ratio sweep pages (saved there in the same format).  Each side
picks a run and a canonicaliser ("logical" or the paper's), re-matched from the stored beams
(:func:`amp.evaluation.experiments.rematch`), so no model is needed here.  Below them, "Does the
model know it is ambiguous?" (:mod:`ui.inspection.detection_view`) runs the sidebar's model on request.
"""

from __future__ import annotations

import streamlit as st

from amp.errors import AmpError
from amp.evaluation import experiments as ex
from amp.evaluation import runs as saved_runs
from amp.parser.search.settings import DEFAULT_SEARCH
from amp.reporting import report
from ui.inspection.detection_view import detection_section
from ui.shared import settings_widgets
from ui.shared.common import chart, plain
from ui.shared.halt import halt

st.title("Research: reproduced tables and figures")
st.caption("Runs saved by `python -m amp reproduce` and sweeps finished on the Zero-shot and Ratio sweep pages "
           "(Table 2: ZM_5; Table 3: FDM 0–2 and FIM; Fig. 2, 3, 6). "
           "Pick two runs — two models, or one run under both canonicalisers — to compare them side by side.")

runs = saved_runs.list_runs()
if not runs:
    st.info("No saved runs yet. Finish a sweep on the Zero-shot or Ratio sweep page, or run "
            "`python -m amp reproduce --model … --out DIR`.", icon=":material/info:")
    detection_section()  # it needs a model, not a run
    halt()
names = [p.stem for p in runs]
by_name = dict(zip(names, runs, strict=True))


def side(col, slot: int) -> None:
    with col:
        name = st.selectbox("Run", names, index=min(slot, len(names) - 1), key=f"research_run_{slot}")
        mode = settings_widgets.mode_radio(st, f"research_mode_{slot}")
        try:
            run = saved_runs.load_manifest(by_name[name])
        except AmpError as exc:
            st.error(str(exc))
            return
        settings = run["settings"]
        st.caption(" · ".join(f"**{plain(k)}** {plain(v)}" for k, v in settings.items()))
        zero = ex.rematch(run["zero_shot"], mode)
        few = ex.rematch(run["few_shot"], mode)
        k = int(settings.get("beams") or DEFAULT_SEARCH.beams)
        try:
            tabs = report.tables(zero, few, k=k, mode=mode)
        except AmpError as exc:  # e.g. a gold LF the paper's canonicaliser cannot read
            st.error(f"This run cannot be summarised in {mode} mode: {exc}", icon=":material/error:")
            return
        st.markdown(f"**Table 2 — ZM_{k} (%)**")
        st.dataframe(tabs["table2_zm"], hide_index=True, key=f"research_t2_{slot}")
        st.markdown("**Table 3 — FDM / FIM**")
        st.dataframe(tabs["table3_fdm_fim"], hide_index=True, key=f"research_t3_{slot}")
        figs = report.figures(tabs, zero, k=k)
        for stem, fig in figs.items():
            chart(fig, filename=f"{name}-{stem}", key=f"research_{stem}_{slot}")


left, right = st.columns(2)
side(left, 0)
side(right, 1)
st.divider()
detection_section()
