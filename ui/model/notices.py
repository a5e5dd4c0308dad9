"""The model's failure boxes and their ways out: an error box with a button back to what works.

A model that failed to load offers the exact path (transformers in float32) or the default model; a
parser server that did not answer offers a model in this app; a misspelt name offers the close names
checked at Load.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from amp.parser.engines import DEFAULT_ENGINE
from ui.model.choice import (
    SUGGEST_KEY,
    ModelChoice,
    current_choice,
    default_spec,
    set_server,
    set_spec,
    use_exact,
)
from ui.shared.common import plain


def suggestion_buttons(box: Any, spec: str) -> None:
    """A button for each close name of a misspelt ``spec`` (``Use 'default'``), as checked at Load."""
    for i, name in enumerate(st.session_state.get(SUGGEST_KEY, {}).get(spec, ())):
        box.button(f"Use {name!r}", key=f"model_suggestion_{i}", on_click=set_spec, args=(name,),
                   icon=":material/spellcheck:")


def error_box(box: Any, text: str) -> None:
    box.error(text, icon=":material/error:")


def server_failure(box: Any, headline: str, reason: str, key: str) -> None:
    """The parser server cannot be used: an error box with the reason, and the way out below it."""
    box.error(f"**{plain(headline)}** {plain(reason)}", icon=":material/cloud_off:")
    box.button("Use a model in this app instead", key=key, on_click=set_server, args=("",), icon=":material/undo:")


def show_failure(box: Any, choice: ModelChoice, message: str) -> None:
    box.error(f"**Model {plain(repr(choice.label()))} could not be loaded.** {plain(message)}", icon=":material/error:")
    if choice != current_choice():  # a page's own model (Compare's B): the sidebar's buttons do not apply
        return
    spec, tag = choice.spec, abs(hash(choice.key))
    if choice.engine != DEFAULT_ENGINE or choice.dtype:  # not the exact path: one click back to it
        box.button("Use the exact precision instead", key=f"exact_{tag}", on_click=use_exact, icon=":material/undo:")
        return
    if spec != default_spec():
        box.button("Use the default model instead", key=f"fallback_{tag}",
                   on_click=set_spec, args=(default_spec(),), icon=":material/undo:")
    else:
        box.button("Try loading again", key=f"retry_{tag}", on_click=set_spec, args=(spec,),
                   icon=":material/refresh:")
