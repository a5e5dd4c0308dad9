"""The two readings of a sentence as every page shows them: the "Hide the logic" toggle, a
reading's badge, name and paraphrase, both readings side by side, and the model's verdict.

Streamlit glue only: what is said about a sentence comes from :mod:`amp.teaching.lesson`
(reading names, readings in words), the verdict from :mod:`amp.evaluation.verdict`, the LF
colours from :mod:`amp.reporting.plots`.  Used by Templates, the Prompt builder, Parse & inspect,
Your own sentences and the Presentation.
"""

from __future__ import annotations

import html

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from amp.evaluation.verdict import Verdict
from amp.reporting.plots import LF0_COLOR, LF1_COLOR
from amp.teaching import lesson
from ui.shared.common import plain

#: session_state key of the "Hide the logic" toggle (shared by every page that shows LFs).
HIDE_LOGIC_KEY = "teach_hide_logic"
TOGGLE_KEY = "teach_hide_logic_toggle"

COLORS = (LF0_COLOR, LF1_COLOR)
BADGES = (":blue-badge[LF0]", ":orange-badge[LF1]")


def logic_toggle(where: DeltaGenerator | None = None) -> bool:
    """The "Hide the logic" toggle (same state on every page); True when the logic is hidden.

    The state lives in :data:`HIDE_LOGIC_KEY`, a plain session_state key (widget keys are
    dropped on pages that do not draw the widget); the toggle is re-seeded from it on each page.
    """
    box = where if where is not None else st
    st.session_state[TOGGLE_KEY] = logic_hidden()
    box.toggle("Hide the logic", key=TOGGLE_KEY, on_change=_store_toggle,
               help="Show only the English readings, not the logical forms (for audiences who do not read logic).")
    return logic_hidden()


def _store_toggle() -> None:
    st.session_state[HIDE_LOGIC_KEY] = bool(st.session_state.get(TOGGLE_KEY, False))


def logic_hidden() -> bool:
    return bool(st.session_state.get(HIDE_LOGIC_KEY, False))


def reading_line(type_: str | None, idx: int, paraphrase: str | None, name: str | None = None) -> str:
    """Markdown: ``LF0`` badge, short label (``name``, else the type's) and the paraphrase in quotes,
    both as plain text (a teacher's own sentence brings its own words)."""
    name = name or (lesson.reading_name(type_, idx) if type_ else None)
    label = f" **{plain(name)}**" if name else ""
    text = f" — “{plain(paraphrase)}”" if paraphrase else ""
    return f"{BADGES[idx]}{label}{text}"


def show_readings(surface: str, type_: str | None, lfs: tuple[str, str] | None = None, *,
                  columns: bool = True) -> None:
    """Both readings of ``surface`` in words (label + paraphrase) and, unless hidden, their LFs."""
    texts = lesson.readings_in_words(surface)
    hide = logic_hidden()
    cols = st.columns(2) if columns else (st.container(), st.container())
    for idx, col in enumerate(cols):
        col.markdown(reading_line(type_, idx, texts[idx] if texts else None))
        if lfs is not None and not hide:
            col.code(lfs[idx], language=None, wrap_lines=True)


def show_verdict(v: Verdict, *, large: bool = False) -> None:
    """The verdict as plain text: what the model wrote (in the reading's colour; large on the
    Presentation), then which reading it scores higher."""
    color = COLORS[v.wrote_index] if v.wrote_index is not None else "#444444"
    size = "font-size:2.2rem;font-weight:700;" if large else "font-weight:600;"
    st.markdown(f"<div class='amp-wrote{' present-r' if large else ''}' style='{size}color:{html.escape(color)}'>"
                f"{html.escape(v.wrote_text)}</div>", unsafe_allow_html=True)
    st.markdown(f"<div class='amp-scores{' present-r' if large else ''}'>{html.escape(v.scores_text)}</div>",
                unsafe_allow_html=True)
