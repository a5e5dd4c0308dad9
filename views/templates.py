"""Templates & examples: the five ambiguity types, their templates, and generated sentences."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from amp.data import generate as gen
from amp.data.types import get_type, type_ids
from amp.teaching import lesson
from ui.classroom import present
from ui.shared import readings, settings_widgets
from ui.shared.common import csv_download, guarded, plain, type_label
from ui.shared.prompt_state import SENTENCE_PROMPT_MODES, use_sentence

ALL = "(all templates)"


@st.cache_data(show_spinner="Generating examples…", max_entries=32)
def examples_table(type_: str, template: str | None, n: int | None, seed: int, fmt: str):
    """(table with one row per sentence and both LFs, JSONL text of the records)."""
    records = gen.generate(type_, template=template, n=n, seed=seed if n else None, fmt=fmt)
    rows: dict[str, dict] = {}
    for r in records:
        row = rows.setdefault(r.surface, {"sentence": r.surface, "LF0": "", "LF1": "", "template": r.template})
        row["LF0" if r.template_idx == 0 else "LF1"] = r.lf
    return pd.DataFrame(list(rows.values())), gen.dumps_jsonl(records, include_template=True)


def sentence_actions(surface: str, type_: str, fmt: str) -> None:
    """Routes from a sentence: parse it (under a visible, changeable prompt) or present it."""
    a1, a2, a3 = st.columns([1.6, 1, 1], vertical_alignment="bottom")
    how = a1.segmented_control("Prompt", SENTENCE_PROMPT_MODES, default="mixed", required=True, key="tpl_prompt_how",
                               format_func=lambda m: "mixed: 10 examples, 30 % LF0" if m == "mixed" else "zero-shot",
                               help="The prompt the Parse page gets; change it further in the Prompt builder.")
    if a2.button("Parse this sentence", key="tpl_parse", icon=":material/troubleshoot:"):
        if use_sentence(surface, type_, str(how), fmt):
            st.switch_page("views/parse_inspect.py")
    if a3.button("Present this sentence", key="tpl_present", icon=":material/slideshow:"):
        present.present_sentence(surface)
        st.switch_page("views/teach_present.py")


st.title("Templates & examples")
st.caption("Every AmP sentence is generated from a small template; each has exactly two logical forms, "
           "LF0 and LF1.")
readings.logic_toggle()

c1, c2 = st.columns([1, 2])
type_ = c1.selectbox("Ambiguity type", type_ids(), format_func=type_label,
                     key="tpl_type", persist_state="session")
tpls = gen.templates(type_)
by_id = {t.id: t for t in tpls}
choice = c2.selectbox("Template", [ALL, *by_id], key=f"tpl_template_{type_}", persist_state="session",
                      format_func=lambda i: i if i == ALL else f"{i} — {by_id[i].description or by_id[i].spec}")

lf0_text, lf1_text = get_type(type_).notes
shown = tpls if choice == ALL else [by_id[choice]]
with st.expander(f"{get_type(type_).name}: {len(shown)} template(s) — surface, LF0/LF1 and slot words",
                 expanded=choice != ALL):
    for t in shown:
        st.markdown(f"**`{t.id}`** · {t.size():,} sentences · surface template:")
        st.code(t.spec, language=None, wrap_lines=True)
        example = next(iter(gen.pairs(type_, template=t.id)), None)
        for idx, text in enumerate((lf0_text, lf1_text)):
            words = lesson.readings_in_words(example) if example else None
            st.markdown(f"**LF{idx}** — {text}" + (f" · e.g. “{words[idx]}”" if words else ""))
            if not readings.logic_hidden():
                st.code(t.lfs[idx], language=None, wrap_lines=True)
        slots = [(s.tag, s.words, ", ".join(w)) for s, w in zip(t.slots, t.choices(), strict=True) if s.tag]
        st.dataframe(pd.DataFrame(slots, columns=["slot", "word list", "words"]), hide_index=True)

st.header("Generated sentences")  # h2 under the h1 title (WCAG: headings in order)
g1, g2, g3, g4 = st.columns([1.3, 1, 1, 1])
how = g1.radio("Generate", ["seeded sample", "all"], horizontal=True, key="tpl_how", persist_state="session")
n = g2.number_input("Sample size N", 1, 5000, 20, key="tpl_n", persist_state="session", disabled=how == "all")
seed = g3.number_input("Seed", 0, 2**31 - 1, 0, key="tpl_seed", persist_state="session")
fmt = settings_widgets.format_radio(g4, "tpl_fmt", persist_state="session")
query = st.text_input("Filter (text in the sentence or an LF, case-insensitive)", key="tpl_filter",
                      persist_state="session", placeholder="e.g. telescope, Mary, forall")

result = guarded(lambda: examples_table(type_, None if choice == ALL else choice,
                                        None if how == "all" else int(n), int(seed), fmt),
                 what="Cannot generate these examples")
if result is not None:
    table, jsonl = result
    if query.strip():
        q = query.strip().lower()
        mask = table.apply(lambda col: col.astype(str).str.lower().str.contains(q, regex=False)).any(axis=1)
        table = table[mask]
    if table.empty:
        st.warning("No sentence matches this filter. Clear the filter or pick another template.")
    else:
        detail = st.container(border=True)  # filled below, shown above the table
        st.caption(f"{len(table):,} sentence(s), LFs in {fmt.upper()}. Click a row to see its two LFs in full above.")
        event = st.dataframe(table, hide_index=True, width="stretch", height=320, key="tpl_table",
                             on_select="rerun", selection_mode="single-row",
                             column_config={"sentence": st.column_config.TextColumn(width="large"),
                                            "LF0": st.column_config.TextColumn(width="medium"),
                                            "LF1": st.column_config.TextColumn(width="medium")})
        rows = event["selection"]["rows"] if event else []
        row = table.iloc[rows[0] if rows and rows[0] < len(table) else 0]
        with detail:
            st.markdown(f"### *{plain(row['sentence'])}*")  # h3 under "Generated sentences"
            readings.show_readings(row["sentence"], type_, (row["LF0"], row["LF1"]))
            sentence_actions(row["sentence"], type_, fmt)
    d1, d2, _ = st.columns([1, 1, 4])
    with d1:
        csv_download(table, f"amp-{type_}-{fmt}.csv", key="tpl_csv")
    d2.download_button("Download JSONL", jsonl, file_name=f"amp-{type_}-{fmt}.jsonl",
                       mime="application/jsonl", key="tpl_jsonl", icon=":material/download:",
                       on_click="ignore", help="All records (one line per sentence and LF), unfiltered.")
