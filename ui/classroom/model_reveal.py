"""The model's parse and P(LF0) of a class sentence, for the Class poll and the Presentation.

Streamlit glue over :func:`amp.teaching.lesson.model_reveal`: the session's model
(:mod:`ui.model.parsers`, :mod:`ui.model.use`), the examples the teacher chose for an own sentence
(:mod:`ui.own.examples`), a spinner, and a memo per model in this session.
"""

from __future__ import annotations

import streamlit as st

from amp.teaching import lesson
from amp.teaching.own_examples import choice_prompt
from amp.teaching.own_library import OwnLibrary
from ui.model import choice as model_choice
from ui.model import parsers
from ui.model import use as model_use
from ui.own import examples as own_examples

#: session_state key: {(model, surface, example choice): ModelReveal or None} of this session; the model is
#: the parser server, or the sidebar's (spec, engine, precision): a reveal belongs to the model that computed it.
MODEL_REVEAL_KEY = "teach_model_reveal"


def model_reveal(surface: str) -> lesson.ModelReveal | None:
    """The current model's parse and P(LF0) of a pool or own sentence (:func:`amp.teaching.lesson.model_reveal`),
    memoised per model in this session; ``None`` if the sentence or the model is unavailable."""
    model = (model_choice.current_server(), model_choice.current_choice().key)
    own = lesson.own_sentence(surface) if lesson.pool_pair(surface) is None else None
    choice = own_examples.chosen(surface) if own is not None else None  # the examples the teacher chose
    memo = st.session_state.setdefault(MODEL_REVEAL_KEY, {})
    if (model, surface, choice) in memo:
        return memo[(model, surface, choice)]
    parser = parsers.peek_parser()
    if parser is None or lesson.sentence_item(surface) is None:
        return None
    try:
        prompt = choice_prompt(own, choice, OwnLibrary().list()) if own is not None and choice is not None else None
        with st.spinner("Parsing the sentence and scoring both readings with the model…"), \
                model_use.using(parser, what="parsing a class sentence"):
            reveal = lesson.model_reveal(parser, surface, prompt)
    except Exception:  # noqa: BLE001 - a missing model never breaks a class
        return None
    memo[(model, surface, choice)] = reveal
    return reveal
