"""The pool's sentences a poll or a presentation is made of, with an error box instead of an error.

Streamlit glue over :func:`amp.data.generate.pairs` and :func:`amp.data.generate.sample_pairs`.
"""

from __future__ import annotations

import streamlit as st

from amp.data import generate as gen
from amp.errors import AmpError
from ui.shared.common import describe_error


def guard_pairs(type_: str, word: str | None) -> list[gen.AmbiguousPair]:
    """The pool's pairs of a type whose surface or slots contain ``word`` (``[]`` + error if bad)."""
    try:
        return gen.pairs(type_, word=word)
    except AmpError as exc:
        st.error(describe_error(exc), icon=":material/error:")
        return []


def guard_sample(type_: str, n: int, seed: int) -> list[gen.AmbiguousPair]:
    """``n`` seeded pairs of a type (``[]`` + error if impossible)."""
    try:
        return gen.sample_pairs(type_, n, seed)
    except AmpError as exc:
        st.error(describe_error(exc), icon=":material/error:")
        return []
