"""The lesson's one prompt, chosen once by the teacher (Class poll, Presentation), and where it is said.

Widgets over :mod:`amp.teaching.lesson_prompt`: the choice lives in this session under
:data:`LESSON_KEY`; a poll stores the prompt each item was scored under, so the choice only decides
new polls and sentences shown without a poll.
"""

from __future__ import annotations

import streamlit as st

from amp.errors import AmpError
from amp.prompts import Prompt
from amp.teaching.lesson import DEFAULT_LESSON
from amp.teaching.lesson_prompt import LESSON_PROMPT_KINDS, LessonPrompt, LessonPromptKind, describe_prompt
from ui.shared.common import describe_error, plain

#: session_state key: this session's :class:`~amp.teaching.lesson_prompt.LessonPrompt`.
LESSON_KEY = "lesson_prompt"

_KIND_NAMES = {LessonPromptKind.MIXED: "mixed prompt", LessonPromptKind.ZERO_SHOT: "zero-shot"}


def current() -> LessonPrompt:
    """The lesson's prompt choice of this session (the default mixed prompt until chosen)."""
    chosen = st.session_state.get(LESSON_KEY)
    return chosen if isinstance(chosen, LessonPrompt) else DEFAULT_LESSON


def picker(key: str) -> LessonPrompt:
    """Choose the lesson's prompt: zero-shot, or mixed with the fraction of examples shown with
    LF0; stored for the session and returned.  A choice that cannot be used keeps the last one and
    says why."""
    now = current()
    c1, c2 = st.columns([1, 1], vertical_alignment="bottom")
    kind = c1.segmented_control(
        "Prompt for this lesson", list(LESSON_PROMPT_KINDS), default=now.kind, required=True, key=f"{key}_kind",
        format_func=lambda k: _KIND_NAMES[LessonPromptKind(k)],
        help="Every page scores a class sentence under this one prompt (the reveal, the poll's model "
             "P(LF0), Parse this sentence) and names it. Your own sentences use the examples you chose for them.")
    ratio = now.ratio
    if kind == LessonPromptKind.MIXED:
        ratio = c2.slider("Shown with LF0", 0.0, 1.0, now.ratio, 0.1, key=f"{key}_ratio", format="%.1f",
                          help=f"Of the {now.k} examples of the sentence's type, this fraction shows LF0.")
    try:
        chosen = LessonPrompt(LessonPromptKind(kind), float(ratio), now.k, now.seed)
    except AmpError as exc:
        st.error(f"This prompt cannot be used: {describe_error(exc)}", icon=":material/error:")
        return now
    st.session_state[LESSON_KEY] = chosen
    st.caption(f"New polls and slides without a poll: {plain(chosen.label)}.")
    return chosen


def prompt_caption(prompt: Prompt | None) -> str:
    """The prompt a number is under, for a caption ("under 10 examples, 3 of them LF0"), or ''."""
    return describe_prompt(prompt) if prompt is not None else ""
