"""Layout rules of the teacher's pages that Streamlit's defaults get wrong on a projector.

Streamlit cuts a button's or a metric's label that is wider than its column with an ellipsis
("Present this sente…", "neither re…"); at 1280 px with the sidebar open that hides words a
class needs.  :func:`label_css` lets those labels wrap onto a second line instead (issue #27
item 4; ``tests/e2e/test_projector_layout_browser.py`` measures every label).
"""

from __future__ import annotations

import streamlit as st

#: Buttons and metric labels in the main area wrap instead of being cut.
LABEL_CSS = (
    '[data-testid="stMain"] button{max-width:100%;min-width:0;height:auto}'
    ' [data-testid="stMain"] button *{white-space:normal !important;text-overflow:clip !important;'
    "overflow-wrap:break-word;min-width:0}"
    ' [data-testid="stMain"] button [data-testid="stMarkdownContainer"],[data-testid="stMain"] button p'
    "{overflow:visible !important}"
    ' [data-testid="stMetricLabel"],[data-testid="stMetricLabel"] *{white-space:normal !important;'
    "overflow:visible !important;text-overflow:clip !important}"
)


def label_css() -> None:
    """Install :data:`LABEL_CSS` (a style-only element: it takes no space on the page)."""
    st.html(f"<style>{LABEL_CSS}</style>")
