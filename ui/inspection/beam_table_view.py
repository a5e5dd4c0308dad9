"""The Beams table on the page: every LF whole (rows tall enough to wrap it) and where each beam
differs from the top beam (:func:`amp.reporting.beam_table.difference_from`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from amp.reporting.beam_table import DIFFERENCE_COLUMN, MARK_CLOSE, MARK_MISSING, MARK_OPEN, lf_lines

#: Characters of an LF per wrapped line in the table's wide LF column, and the pixels of one line.
CHARS_PER_LINE = 55
LINE_PX = 21
#: The tallest row (the grid shows the rest of a longer LF on hover and in the CSV).
MAX_LINES = 8


def row_height(table: pd.DataFrame) -> int:
    """Pixels per row so the longest LF of ``table`` wraps whole (within :data:`MAX_LINES` lines)."""
    texts = [str(t) for t in table["LF"]] if "LF" in table else []
    return 14 + LINE_PX * min(MAX_LINES, lf_lines(texts, CHARS_PER_LINE))


def show_beam_table(table: pd.DataFrame) -> None:
    """``table`` (:func:`amp.reporting.beam_table.beam_table`) as a data grid, LFs wrapped whole."""
    st.dataframe(table, hide_index=True, width="stretch", row_height=row_height(table), column_config={
        "LF": st.column_config.TextColumn(width="large"),
        DIFFERENCE_COLUMN: st.column_config.TextColumn(
            width="medium", help=f"Where this beam's LF differs from the top beam's: the differing part between "
                                 f"{MARK_OPEN} {MARK_CLOSE}, {MARK_MISSING} where it lacks what the top beam has."),
        "score": st.column_config.NumberColumn(format="%.3f"),
        "log-prob": st.column_config.NumberColumn(format="%.2f")})
