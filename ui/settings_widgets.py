"""The decoding-settings widgets the pages share: LF format, canonical match, beams.

Their options and defaults are the library's (:mod:`amp.logic.vocabulary`,
:data:`amp.parser.search.settings.DEFAULT_SEARCH`), so no page declares its own list or default.
``where`` is ``st`` or a column/container; other keywords go to the Streamlit widget as is.
"""

from __future__ import annotations

from typing import Any

from amp.logic.vocabulary import FORMATS, MODES
from amp.parser.search.settings import DEFAULT_SEARCH

#: The most beams a page offers (a CPU-friendly cap, below :data:`amp.parser.core.limits.MAX_BEAMS`).
MAX_PAGE_BEAMS = 10
#: What the two canonicalisers mean, for a widget's help.
MODE_HELP = "logical: true logical equivalence; paper: the original (faithful) canonicaliser."


def format_radio(where: Any, key: str, **options: Any) -> str:
    """``LF format``: FOL or LISP, horizontal."""
    return str(where.radio("LF format", list(FORMATS), format_func=str.upper, horizontal=True, key=key, **options))


def mode_radio(where: Any, key: str, **options: Any) -> str:
    """``Canonical match``: logical or paper, horizontal."""
    return str(where.radio("Canonical match", list(MODES), horizontal=True, key=key, **options))


def beams_input(where: Any, key: str, label: str = "Beams") -> int:
    """A beam count from 1 to :data:`MAX_PAGE_BEAMS`, the library's default first, kept for the session."""
    return int(where.number_input(label, 1, MAX_PAGE_BEAMS, DEFAULT_SEARCH.beams, key=key,
                                  persist_state="session"))
