"""The few-shot example picker of an own sentence (issue #26 point 6): a template type, the
sentence's own examples, or other library sentences with a chosen reading; and what it says.

The choice per sentence lives in ``st.session_state[CHOICES_KEY][surface]`` (an
:class:`~amp.teaching.own_examples.ExampleChoice`), so the Parse, Presentation and poll pages
score the sentence with the examples the teacher chose.  The logic is
:mod:`amp.teaching.own_examples`; everything typed is shown as plain text.
"""

from __future__ import annotations

import streamlit as st

from amp.data.types import type_ids
from amp.prompts import Prompt
from amp.teaching.own_examples import (
    DEFAULT_CHOICE,
    EXAMPLE_SOURCES,
    ExampleChoice,
    ExampleSource,
    choice_prompt,
    describe_examples,
)
from amp.teaching.own_sentences import OwnSentence
from ui.shared.common import plain, type_label

#: session_state key: {surface: ExampleChoice} of this session's choices.
CHOICES_KEY = "own_example_choices"
#: session_state key: (surface, description) of the examples of the prompt last sent to Parse & inspect.
USED_KEY = "own_examples_used"

_SOURCE_NAMES = {ExampleSource.TYPE: "a template type", ExampleSource.OWN: "my examples",
                 ExampleSource.LIBRARY: "my other sentences"}


def chosen(surface: str) -> ExampleChoice:
    """This session's choice for a sentence (the default: its saved type's pool)."""
    return st.session_state.get(CHOICES_KEY, {}).get(surface, DEFAULT_CHOICE)


def picker(sentence: OwnSentence, library: tuple[OwnSentence, ...], key: str) -> ExampleChoice:
    """Widgets choosing the sentence's few-shot examples; the choice is stored and returned, and
    the examples it gives are said under it."""
    source = ExampleSource(st.segmented_control(
        "Few-shot examples from", list(EXAMPLE_SOURCES), default=ExampleSource.TYPE, required=True,
        key=f"own_src_{key}", format_func=lambda s: _SOURCE_NAMES[ExampleSource(s)]
        + (f" ({len(sentence.examples)})" if s == ExampleSource.OWN else "")))
    choice = DEFAULT_CHOICE
    others = [s for s in library if s.surface != sentence.surface]
    if source == ExampleSource.TYPE:
        types = list(type_ids())
        kind = st.selectbox("Template type", types, index=types.index(sentence.type), key=f"own_type_{key}",
                            format_func=type_label)
        choice = ExampleChoice(ExampleSource.TYPE, "" if kind == sentence.type else str(kind))
    elif source == ExampleSource.OWN:
        choice = ExampleChoice(ExampleSource.OWN)
    else:
        picks = st.multiselect("Your other sentences", [s.surface for s in others], key=f"own_picks_{key}",
                               placeholder="Pick sentences to show as examples")
        by = {s.surface: s for s in others}
        readings = []
        for n, surface in enumerate(picks):
            other = by[surface]
            idx = st.radio(f"Reading shown for “{surface}”", (0, 1), horizontal=True, key=f"own_pick_r_{key}_{n}",
                           format_func=lambda i, o=other: f"LF{i}" + (f" · {(o.name0, o.name1)[i]}"
                                                                      if (o.name0, o.name1)[i] else ""))
            readings.append((surface, int(idx)))
        choice = ExampleChoice(ExampleSource.LIBRARY, picks=tuple(readings))
    st.session_state.setdefault(CHOICES_KEY, {})[sentence.surface] = choice
    st.caption(plain(describe_examples(sentence, choice, library)))
    return choice


def prompt_for(sentence: OwnSentence, library: tuple[OwnSentence, ...]) -> Prompt:
    """The sentence's prompt with this session's choice (raises OwnSentenceError), and note
    which examples it holds for Parse & inspect."""
    choice = chosen(sentence.surface)
    built = choice_prompt(sentence, choice, library)
    st.session_state[USED_KEY] = (sentence.surface, describe_examples(sentence, choice, library))
    return built


def used_caption(test_utterance: str) -> None:
    """On Parse & inspect: which examples an own sentence's prompt holds (when it was sent from
    the Own sentences page and is still the test sentence)."""
    used = st.session_state.get(USED_KEY)
    if used and used[0] == test_utterance:
        st.caption(f"Your own sentence. {plain(used[1])}")
