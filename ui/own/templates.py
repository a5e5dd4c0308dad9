"""The teacher's own template form: a sentence with ``{slots}``, word lists, two reading patterns.

Streamlit glue only: the template, its validation and its expansion are
:mod:`amp.teaching.own_templates`.  :func:`template_section` draws the form; "Preview" validates
it (an error box with the message, the inputs kept) and shows the filled-in sentences as a table
and the new words they need; "Add these sentences" hands them to the page's ``on_add`` (the own
sentence library decides what to do with them).  Widget keys start with ``ot_``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from amp.errors import AmpError
from amp.teaching.own_templates import (
    MAX_LF_CHARS,
    MAX_LISTS_CHARS,
    MAX_NAME_CHARS,
    MAX_PATTERN_CHARS,
    ExpandedSentence,
    OwnTemplate,
    expand,
    template_from_form,
    words,
)
from ui.shared.common import describe_error, plain

#: session_state key: the last template that passed "Preview" (an :class:`OwnTemplate`).
PREVIEW_KEY = "ot_template"
#: session_state key: what the last "Add these sentences" did (shown once, then dropped).
ADDED_KEY = "ot_added"

_LISTS_HELP = ("One slot a line: `slot: word, word`. A word whose logical-form word differs from "
               "what the sentence shows is written `word=lf_word` (e.g. `geese=goose`); otherwise "
               "spaces become `_` (picked up → picked_up).")
_LF_HELP = "First-order logic with the slots where the words go, e.g. `exists x . {animal}(x) AND …`."


def template_section(on_add: Callable[[Sequence[ExpandedSentence]], None]) -> None:
    """The own-template form, its preview and the button that passes the sentences to ``on_add``."""
    with st.form("ot_form", border=True):
        name = st.text_input("Template name", key="ot_name", max_chars=MAX_NAME_CHARS,
                             placeholder="her duck")
        sentence = st.text_input("Sentence with {slots}", key="ot_sentence", max_chars=MAX_PATTERN_CHARS,
                                 placeholder="I saw her {animal}")
        lists = st.text_area("Word lists", key="ot_lists", max_chars=MAX_LISTS_CHARS, height=100,
                             placeholder="animal: duck, goose", help=_LISTS_HELP)
        lf0 = st.text_area("Reading LF0", key="ot_lf0", max_chars=MAX_LF_CHARS, height=80, help=_LF_HELP)
        lf1 = st.text_area("Reading LF1", key="ot_lf1", max_chars=MAX_LF_CHARS, height=80, help=_LF_HELP)
        para0 = st.text_input("Paraphrase of LF0", key="ot_para0", max_chars=MAX_PATTERN_CHARS,
                              placeholder="I saw her {animal} down")
        para1 = st.text_input("Paraphrase of LF1", key="ot_para1", max_chars=MAX_PATTERN_CHARS,
                              placeholder="I saw the {animal} that she has")
        previewed = st.form_submit_button("Preview", key="ot_preview", icon=":material/preview:")
    if previewed:
        st.session_state.pop(ADDED_KEY, None)
        try:
            st.session_state[PREVIEW_KEY] = template_from_form(name, sentence, lists, lf0, lf1, para0, para1)
        except AmpError as exc:
            st.session_state.pop(PREVIEW_KEY, None)
            st.error(describe_error(exc), icon=":material/error:")
    added = st.session_state.pop(ADDED_KEY, None)
    if added:
        st.success(plain(added), icon=":material/check:")
    template = st.session_state.get(PREVIEW_KEY)
    if isinstance(template, OwnTemplate):
        _preview(template, on_add)


def _preview(template: OwnTemplate, on_add: Callable[[Sequence[ExpandedSentence]], None]) -> None:
    """The filled-in sentences (plain text in a table), the new words, and the add button."""
    sentences = expand(template)
    st.caption(plain(f"Template {template.name!r}: {len(sentences)} sentences"))
    rows = [{"sentence": s.surface, "LF0": s.lf0, "LF1": s.lf1,
             "paraphrase 0": s.paraphrase0, "paraphrase 1": s.paraphrase1} for s in sentences]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.markdown("New words: " + plain(words(template).describe()))
    if st.button("Add these sentences", key="ot_add", icon=":material/playlist_add:"):
        try:
            on_add(sentences)
        except AmpError as exc:
            st.error(describe_error(exc), icon=":material/error:")
            return
        st.session_state.pop(PREVIEW_KEY, None)
        st.session_state[ADDED_KEY] = f"Added {len(sentences)} sentences from template {template.name!r}."
        st.rerun()
