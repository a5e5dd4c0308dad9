"""Your own sentences: a teacher's ambiguous sentences with their two readings (issue #11 point 1).

Add one (from scratch, or starting from a template sentence's readings), keep it in a small
library, and parse, present or poll it like a template sentence.  Widgets: :mod:`ui.own.sentences`.
"""

from __future__ import annotations

import streamlit as st

from amp.data.types import type_ids
from amp.errors import AmpError
from ui.own import sentences as own
from ui.shared import readings
from ui.shared.common import type_label
from ui.shared.halt import halt
from ui.shared.prompt_state import pool_surfaces

st.title("Your own sentences")
st.caption("Type any ambiguous sentence with its two readings, in words and as logical forms. Words the "
           "lexicon lacks become new words of the model's grammar; each sentence says which few-shot "
           "examples it is parsed with: a template type's pool, your own examples, or your other sentences.")
readings.logic_toggle()
types = list(type_ids())

with st.expander("Add a sentence", icon=":material/add:", expanded=True):
    with st.container(border=True):
        st.markdown("**Start from a template pattern** (optional): copy a pool sentence's readings, then edit them.")
        kind = st.selectbox("Ambiguity type", types, key="own_pattern_type", format_func=type_label)
        own.pattern_picker(types, pool_surfaces(kind), kind)
    own.sentence_form(types)
own.show_message()

lib = own.library()
try:
    sentences = lib.list()
except AmpError as exc:  # a broken library file: say so, the page stays usable
    st.error(own.error_text(exc), icon=":material/error:")
    halt()

st.header(f"Your library ({len(sentences)})")  # h2 under the h1 (headings in order)
if not sentences:
    st.info("No sentences yet: add one above, or import a file below.", icon=":material/info:")
for sentence in sentences:
    own.sentence_card(sentence, sentences)
if sentences:
    st.markdown("**Class poll** from the sentences ticked *In the poll*")
    own.poll_section(sentences)
st.markdown("**Export and import**")
own.exchange_section(lib)
