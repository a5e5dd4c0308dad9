"""Ratio sweep (few-shot): does the model follow the LF0 ratio r of a mixed prompt? (paper Fig. 6)"""

from __future__ import annotations

import streamlit as st

from amp.data.types import type_ids
from amp.evaluation import experiments as ex
from amp.evaluation.sweep_summary import records_view
from amp.parser.search.settings import SearchSettings
from amp.reporting import plots
from ui.shared import calibration_view, settings_widgets
from ui.shared.common import chart, csv_download, guarded, readable_numbers, type_label
from ui.shared.halt import halt
from ui.shared.meaning_view import meaning_table
from ui.sweeps import sweep

KEY = "fewshot_sweep"

st.title("Ratio sweep (few-shot)")
st.caption("For each test sentence and each ratio r, the model parses a mixed prompt of k examples of "
           "the same type, a fraction r of them shown with LF0. A model that follows the prompt has "
           "P(LF0) ≈ r and top-1 LF0 accuracy ≈ r.")

c1, c2 = st.columns([1, 2])
types = c1.multiselect("Ambiguity types", type_ids(), default=["pp"], format_func=type_label,
                       key="fs_types", persist_state="session")
ratios = c2.pills("Ratios r (the paper uses all 11)", ex.DEFAULT_RATIOS, selection_mode="multi",
                  default=[0.0, 0.5, 1.0], format_func=lambda r: f"{r:.1f}", key="fs_ratios",
                  persist_state="session")
c3, c4, c5, c6 = st.columns(4)
n = c3.number_input("Test sentences per ratio", 1, 100, 2, key="fs_n", persist_state="session")
seed = c4.number_input("Seed", 0, 2**31 - 1, 0, key="fs_seed", persist_state="session")
k = c5.number_input("Examples per prompt k", 1, 20, 10, key="fs_k", persist_state="session")
beams = settings_widgets.beams_input(c6, "fs_beams")
with st.expander("More settings"):
    fmt = settings_widgets.format_radio(st, "fs_fmt", persist_state="session")
    mode = settings_widgets.mode_radio(st, "fs_mode", persist_state="session", help=settings_widgets.MODE_HELP)

if not types or not ratios:
    st.warning("Choose at least one type and one ratio.", icon=":material/warning:")
    halt()
config = guarded(lambda: ex.FewShotConfig(types=tuple(types), ratios=tuple(sorted(ratios)), n_per_ratio=int(n),
                                          seed=int(seed), k=int(k), fmt=fmt, search=SearchSettings(beams=beams),
                                          mode=mode),
                 what="Invalid sweep settings")
if config is None:
    halt()
items = guarded(lambda: ex.plan_fewshot(config), what="Cannot plan the sweep") or []


def draw(records: list, final: bool) -> None:
    per_ratio, per_type = ex.fewshot_summary(records, config.mode)
    tag = "" if final else f"_{len(records)}"  # unique element keys for each live redraw
    st.markdown("**FDM and FIM per type** — FDM (Eq. 2) ranges **0–2** (0 = accuracies follow r exactly; "
                "1 = never predicts either LF); FIM (Eq. 3) ranges 0–1. Lower is better for both.")
    st.dataframe(per_type, hide_index=True, column_config=readable_numbers(
        per_type, FDM=st.column_config.NumberColumn(format="%.3f", help="range 0–2, lower is better"),
        FIM=st.column_config.NumberColumn(format="%.3f", help="range 0–1, lower is better")))
    chart(plots.p_lf0_vs_ratio(per_ratio), filename="p_lf0_vs_ratio", key=f"fs_plf0{tag}")
    chart(plots.accuracy_vs_ratio(per_ratio), filename="accuracy_vs_ratio", key=f"fs_acc{tag}")
    if len(per_ratio) and int(per_ratio["n"].max()) == 1:
        st.caption("Each point is one test sentence (n = 1 per ratio): these curves carry little information. "
                   "Raise *Test sentences per ratio* for a measurement.")
    if final:
        frame = records_view(records)  # match and P(LF0) first
        with st.expander(f"All {len(frame)} results (one row per test sentence and ratio)"):
            table = frame.drop(columns=["beams"])
            st.dataframe(table, hide_index=True, column_config=readable_numbers(table))
        d1, d2, d3 = st.columns(3)
        with d1:
            csv_download(per_type, "fewshot_per_type.csv", label="Per-type CSV", key="fs_csv_type")
        with d2:
            csv_download(per_ratio, "fewshot_per_ratio.csv", label="Per-ratio CSV", key="fs_csv_ratio")
        with d3:
            csv_download(frame, "fewshot_records.csv", label="All results CSV", key="fs_csv_all")
        meaning_table(per_ratio, key="fs_meaning", filename="fewshot_meaning_uncertainty.csv")
        calibration_view.sweep_calibration(records, config.mode)


sweep.drive(KEY, config, items, prefix="fs", draw=draw)
