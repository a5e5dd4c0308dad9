"""Prompt builder: a zero-shot or mixed prompt, edited by hand, handed to the Parse page."""

from __future__ import annotations

import streamlit as st

from amp import prompts
from amp.data import generate as gen
from amp.data.types import get_type, type_ids
from amp.logic.vocabulary import Format
from amp.teaching import lesson
from ui.shared import readings, settings_widgets
from ui.shared.common import guarded, plain, type_label
from ui.shared.halt import halt
from ui.shared.prompt_state import (
    IMPORTED_KEY,
    PROMPT_KEY,
    RECIPE_KEY,
    add_example,
    edit,
    example_badge,
    exchange_section,
    pool_surfaces,
    typed_test_golds,
)

st.title("Prompt builder")
st.caption("Build the few-shot prompt the model sees. A **mixed** prompt shows k same-type examples, "
           "a fraction r of them with LF0; a **zero-shot** prompt shows only unambiguous "
           "“ingredients” of the test sentence. The Parse page uses the prompt built here.")

c1, c2, c3 = st.columns([1.2, 1.3, 1])
mode = c1.segmented_control("Prompt", ["mixed", "zero-shot"], default="mixed", required=True,
                            key="pb_mode", persist_state="session",
                            format_func=lambda m: "Mixed (few-shot)" if m == "mixed" else "Zero-shot (ingredients)")
type_ = c2.selectbox("Ambiguity type", type_ids(), format_func=type_label, key="pb_type",
                     persist_state="session")
fmt = settings_widgets.format_radio(c3, "pb_fmt", persist_state="session", disabled=mode == "zero-shot",
                                   help="Zero-shot prompts are FOL only, as in the paper.")
fmt = Format.FOL if mode == "zero-shot" else fmt

if mode == "mixed":
    s1, s2, s3 = st.columns([2, 1, 1])
    ratio = s1.slider("LF0 ratio r (fraction of examples shown with LF0)", 0.0, 1.0, 0.3, 0.1,
                      key="pb_ratio", persist_state="session")
    k = s2.number_input("Examples k", 1, 20, 10, key="pb_k", persist_state="session")
else:
    ratio, k = None, 0
    s3 = st.columns([2, 1, 1])[2]
seed = s3.number_input("Seed", 0, 2**31 - 1, 0, key="pb_seed", persist_state="session")

surfaces = pool_surfaces(type_)
t1, t2 = st.columns([1, 3])
source = t1.radio("Test sentence", ["from the pool", "typed"], key="pb_test_source", persist_state="session")
if source == "from the pool":
    test = t2.selectbox(f"Pool sentence ({len(surfaces):,} {type_} sentences; type to search)", surfaces,
                        key=f"pb_test_{type_}", persist_state="session")
    golds: tuple[str | None, str | None] | None = None
else:
    test = t2.text_input("Your sentence", key="pb_test_typed", persist_state="session",
                         placeholder="e.g. the girl saw the man with the telescope").strip()
    golds = typed_test_golds(test, fmt) if test else None

recipe = (mode, type_, ratio, int(k), int(seed), fmt, source, test, golds)
if not test:
    st.info("Type a test sentence (or pick one from the pool) to build the prompt.", icon=":material/info:")
    halt()
if st.session_state.pop(IMPORTED_KEY, False) and PROMPT_KEY in st.session_state:
    st.session_state[RECIPE_KEY] = recipe  # the widgets show the imported prompt's settings: keep it
if st.session_state.get(RECIPE_KEY) != recipe or PROMPT_KEY not in st.session_state:
    found = gen.find_pair(test) if source == "typed" else None
    own = lesson.own_sentence(test) if source == "typed" and found is None else None
    direct = source == "from the pool" or (found is not None and found.type == type_)
    if own is not None:  # a sentence of the teacher's library: its type's examples, its own words
        if mode == "zero-shot" or fmt != Format.FOL:
            st.error("A sentence of your own library is parsed with a mixed FOL prompt (its readings are FOL and "
                     "it has no template ingredients): choose Mixed and FOL.", icon=":material/error:")
            halt()
        built_own = guarded(lambda: own.prompt("mixed", float(ratio), k=int(k), seed=int(seed)),
                            what="Cannot build this prompt")
        if built_own is None:
            halt()
        st.session_state[PROMPT_KEY] = built_own
        st.session_state[RECIPE_KEY] = recipe
    elif not direct and mode == "zero-shot":
        st.error("Zero-shot ingredients are built from the words of a pool sentence of this type; "
                 "pick one from the pool, or use a mixed prompt for your own sentence.", icon=":material/error:")
        halt()
    else:
        base = test if direct else surfaces[0]
        build = ((lambda: prompts.mixed_prompt(base, float(ratio), seed=int(seed), k=int(k), fmt=fmt))
                 if mode == "mixed" else (lambda: prompts.zero_shot_prompt(base, seed=int(seed))))
        built = guarded(build, what="Cannot build this prompt")
        if built is None:
            halt()
        if not direct:
            built = built.with_test(test, *(golds or (None, None)))
        st.session_state[PROMPT_KEY] = built
        st.session_state[RECIPE_KEY] = recipe
prompt = st.session_state[PROMPT_KEY]

left, right = st.columns([1.15, 1], gap="large")
with left:
    frac = prompt.lf0_fraction
    m1, m2, m3 = st.columns(3)
    m1.metric("Examples", len(prompt.examples))
    m2.metric("Live LF0 fraction", "–" if frac is None else f"{frac:.0%}",
              help="Fraction of the ambiguous examples shown with LF0 (after your edits).")
    m3.metric("Target r", "–" if ratio is None else f"{ratio:.0%}")
    st.caption(f"LF0 = {get_type(type_).notes[0]} · LF1 = {get_type(type_).notes[1]}. "
               "Changing a setting above rebuilds the prompt and drops manual edits.")
    words = lesson.readings_in_words(prompt.test_utterance)
    if words:
        st.markdown(f"Test sentence *{plain(prompt.test_utterance)}*: {readings.reading_line(type_, 0, words[0])} · "
                    f"{readings.reading_line(type_, 1, words[1])}")
    n = len(prompt.examples)
    for i, ex in enumerate(prompt.examples):
        with st.container(border=True):
            row = st.columns([4.7, 0.5, 0.5, 0.5, 0.5, 0.5], vertical_alignment="center", gap="small")
            row[0].markdown(f"{example_badge(ex)} **{i + 1}.** {plain(ex.utterance)}")
            row[1].button("", key=f"pb_top_{i}", icon=":material/vertical_align_top:", disabled=i == 0,
                          help="Move to the top", on_click=edit, args=("move", i, 0))
            row[2].button("", key=f"pb_up_{i}", icon=":material/arrow_upward:", disabled=i == 0,
                          help="Move up", on_click=edit, args=("move", i, i - 1))
            row[3].button("", key=f"pb_down_{i}", icon=":material/arrow_downward:", disabled=i == n - 1,
                          help="Move down", on_click=edit, args=("move", i, i + 1))
            row[4].button("", key=f"pb_flip_{i}", icon=":material/swap_horiz:", disabled=not ex.is_ambiguous,
                          help="Flip LF0 ↔ LF1", on_click=edit, args=("flip", i))
            row[5].button("", key=f"pb_del_{i}", icon=":material/close:", help="Remove",
                          on_click=edit, args=("remove", i))
    with st.expander("Add an example from the pool", icon=":material/add:"):
        a1, a2, a3 = st.columns([3, 1, 1], vertical_alignment="bottom")
        used = {e.utterance for e in prompt.examples} | {prompt.test_utterance}
        extra = a1.selectbox("Sentence", [s for s in surfaces if s not in used], key="pb_add_surface")
        label = a2.radio("Shown with", [0, 1], format_func=lambda v: f"LF{v}", horizontal=True, key="pb_add_label")
        a3.button("Add", key="pb_add", icon=":material/add:", on_click=add_example, args=(extra, label, fmt))
with right:
    st.markdown("**Rendered prompt** (copy with the icon at the top right)")
    if readings.logic_toggle():
        st.caption("The logical forms are hidden (turn off **Hide the logic** to see the rendered prompt).")
    else:
        st.code(prompt.render(), language=None, wrap_lines=True)
    exchange_section(prompt)
    if prompt.gold_lf0 is None:
        st.warning("This test sentence is not in the pool and no gold LFs were given: the Parse page "
                   "can parse it but cannot label beams LF0/LF1.", icon=":material/warning:")
    st.page_link("views/parse_inspect.py", label="Parse this prompt", icon=":material/arrow_forward:")
