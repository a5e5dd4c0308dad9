"""The model's parse and P(LF0) of a class sentence, for the Class poll and the Presentation.

Streamlit glue over :func:`amp.teaching.lesson.reveal_under`: the session's model
(:mod:`ui.model.parsers`, :mod:`ui.model.use`), the one prompt of the sentence
(:func:`amp.teaching.lesson.item_prompt`: a poll item's own, else the lesson's,
:mod:`ui.classroom.lesson_choice`, or the examples the teacher chose for an own sentence,
:mod:`ui.own.examples`), a spinner, and a memo per model and prompt in this session.
"""

from __future__ import annotations

import streamlit as st

from amp.errors import AmpError
from amp.parser.search.cancel import cancel_scope
from amp.prompts import Prompt
from amp.teaching import lesson
from amp.teaching.own_examples import choice_prompt
from amp.teaching.own_library import OwnLibrary
from amp.teaching.poll_records import PollItem
from ui.classroom import lesson_choice
from ui.model import choice as model_choice
from ui.model import parsers
from ui.model import use as model_use
from ui.model.progress import LiveLine
from ui.own import examples as own_examples

#: session_state key: {(model, prompt text, LF0, LF1, words): ModelReveal} of this session; the model is
#: the parser server, or the sidebar's (spec, engine, precision): a reveal belongs to the model that computed it.
MODEL_REVEAL_KEY = "teach_model_reveal"


def sentence_prompt(item: PollItem | str) -> Prompt | None:
    """The one prompt of a class sentence (:func:`amp.teaching.lesson.item_prompt`): the item's
    own, else the lesson's for a template sentence, or the examples chosen for an own sentence;
    ``None`` when the sentence is in no pool nor the library, or its chosen examples cannot be used."""
    surface = item if isinstance(item, str) else item.surface
    own = lesson.own_sentence(surface) if lesson.pool_pair(surface) is None else None
    own_prompt = None
    if own is not None and (not isinstance(item, PollItem) or item.prompt is None):
        try:
            own_prompt = choice_prompt(own, own_examples.chosen(surface), OwnLibrary().list())
        except AmpError:
            own_prompt = None  # the default mixed prompt, as item_prompt gives it
    return lesson.item_prompt(item, lesson_choice.current(), own_prompt)


def model_reveal(item: PollItem | str, prompt: Prompt | None = None, *,
                 progress: LiveLine | None = None) -> lesson.ModelReveal | None:
    """The current model's parse and P(LF0) of a pool or own sentence under its one prompt
    (:func:`sentence_prompt`, or ``prompt`` when given), memoised per model and prompt in this
    session; ``None`` if the sentence or the model is unavailable (or the run was cancelled).

    ``progress``: a live line whose check the decoder calls every step (its Cancel stops the model,
    :mod:`ui.model.progress`) instead of a spinner (:mod:`ui.classroom.poll_creation`)."""
    prompt = prompt if prompt is not None else sentence_prompt(item)
    if prompt is None:
        return None
    model = (model_choice.current_server(), model_choice.current_choice().key)
    key = (model, prompt.render(), prompt.gold_lf0, prompt.gold_lf1, prompt.words)
    memo = st.session_state.setdefault(MODEL_REVEAL_KEY, {})
    if key in memo:
        return memo[key]
    parser = parsers.peek_parser()
    if parser is None:
        return None
    try:
        if progress is None:
            with st.spinner("Parsing the sentence and scoring both readings with the model…"), \
                    model_use.using(parser, what="parsing a class sentence"):
                reveal = lesson.reveal_under(parser, prompt)
        else:
            # inside using(): its own check (rerun_requested) would otherwise be the innermost one
            with model_use.using(parser, what="parsing a class sentence"), cancel_scope(progress.check):
                reveal = lesson.reveal_under(parser, prompt)
    except Exception:  # noqa: BLE001 - a missing model (or a Cancel) never breaks a class
        return None
    memo[key] = reveal
    return reveal
