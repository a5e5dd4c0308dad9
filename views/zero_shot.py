"""Zero-shot: with only unambiguous "ingredients" in the prompt, does the model find both readings?"""

from __future__ import annotations

import streamlit as st

from amp.data.types import type_ids
from amp.evaluation import experiments as ex
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.evaluation.sweep_summary import records_view
from amp.parser.search.settings import SearchSettings
from amp.reporting import plots
from ui.model import api as ui_api
from ui.model import parsers
from ui.shared import settings_widgets
from ui.shared.common import chart, csv_download, guarded, readable_numbers, type_label
from ui.shared.halt import halt
from ui.shared.meaning_view import meaning_table
from ui.sweeps import sweep
from ui.sweeps.coverage_view import coverage_section

KEY = "zeroshot_sweep"

st.title("Zero-shot")
st.caption("Each test sentence is parsed under a prompt of unambiguous examples built from its own words "
           "(paper §3). ZM_k: how often *both* readings appear among the top k beams (Table 2); Fig. 2: "
           "which reading wins at top-1; Fig. 3: how P(LF0) is spread.")

c1, c2, c3, c4 = st.columns([2, 1, 1, 1])
types = c1.multiselect("Ambiguity types", type_ids(), default=["pp"], format_func=type_label,
                       key="zs_types", persist_state="session")
n = c2.number_input("Test sentences per type", 1, 200, 2, key="zs_n", persist_state="session")
seed = c3.number_input("Seed", 0, 2**31 - 1, 0, key="zs_seed", persist_state="session")
beams = settings_widgets.beams_input(c4, "zs_beams")
mode = settings_widgets.mode_radio(st, "zs_mode", persist_state="session", help=settings_widgets.MODE_HELP)

if not types:
    st.warning("Choose at least one ambiguity type.", icon=":material/warning:")
    halt()
config = guarded(lambda: ex.ZeroShotConfig(types=tuple(types), n=int(n), seed=int(seed),
                                           search=SearchSettings(beams=beams), mode=mode),
                 what="Invalid sweep settings")
if config is None:
    halt()
items = guarded(lambda: ex.plan_zeroshot(config), what="Cannot plan the sweep") or []


def draw(records: list, final: bool) -> None:
    tag = "" if final else f"_{len(records)}"
    state = st.session_state.get(KEY)
    max_k = (state.config if state is not None else config).search.beams  # the beams the records have
    k = st.slider("k for ZM_k (up to the beam size)", 1, max_k, max_k, key=f"zs_k{tag}",
                  disabled=not final) if max_k > 1 else 1
    summary = ex.zeroshot_summary(records, k=int(k), mode=config.mode)
    chart(plots.zm_bars(summary, int(k)), filename=f"zm_{k}", key=f"zs_zm{tag}")
    if len(summary) and int(summary["n"].max()) == 1:
        st.caption("Each bar is one test sentence (n = 1 per type): these figures carry little information. "
                   "Raise *Test sentences per type* for a measurement.")
    coverage_section(records, max_k, config.mode, final=final, tag=tag)
    chart(plots.accuracy_bars(summary), filename="zeroshot_accuracy", key=f"zs_acc{tag}")
    frame = records_view(records)  # match and P(LF0) first
    no_scores = ui_api.why_no_scores(parsers.peek_parser())  # a model behind an API without log-probs
    if no_scores:
        st.info(f"Fig. 3 is empty: {no_scores}", icon=":material/info:")
    else:
        column = st.radio("P(LF0) from", [m.value for m in PLf0Measure], horizontal=True, key=f"zs_pcol{tag}",
                          format_func=lambda c: PLf0Measure(c).choice,
                          help="\n\n".join(f"{m.choice}: {m.how}" for m in PLf0Measure))
        chart(plots.p_lf0_distribution(frame, column=column), filename="p_lf0_distribution",
              key=f"zs_dist{tag}")
    st.dataframe(summary, hide_index=True, column_config=readable_numbers(summary, **{
        f"ZM_{k}": st.column_config.NumberColumn(format="%.1f %%", help="0–100, higher = both readings found")}))
    if final:
        with st.expander(f"All {len(frame)} results"):
            table = frame.drop(columns=["beams"])
            st.dataframe(table, hide_index=True, column_config=readable_numbers(table))
        d1, d2 = st.columns(2)
        with d1:
            csv_download(summary, "zeroshot_per_type.csv", label="Per-type CSV", key="zs_csv_type")
        with d2:
            csv_download(frame, "zeroshot_records.csv", label="All results CSV", key="zs_csv_all")
        meaning_table(summary, key="zs_meaning", filename="zeroshot_meaning_uncertainty.csv")


sweep.drive(KEY, config, items, prefix="zs", draw=draw)
