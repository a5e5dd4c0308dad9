"""Widget helpers of the Presentation page: what it shows, its layout CSS and its full-screen mode
(issue #11 point 3).

What it shows is session state other pages set: a poll and a position in it (:func:`present_poll_item`),
or one sentence alone (:func:`present_sentence`); without either, a seeded sample of a type.

Full screen is two things.  The *layout* (Streamlit's header, toolbar and sidebar hidden, no top
padding, larger type, the control row pinned at the top with an "Exit full screen" button) is
server state: ``st.session_state[FULL_KEY]``, mirrored in the query parameter ``?full=1`` so a
reload keeps it.  The *browser's* full screen (the Fullscreen API on the top document) needs a
user gesture, and a Streamlit button's click reaches Python only after the gesture is over; so
a small script, installed once in the page, listens for clicks on the "Full screen" and "Exit
full screen" buttons and calls ``requestFullscreen()`` / ``exitFullscreen()`` inside the click
itself.  Where the browser refuses (or the teacher pressed Esc), the layout stays and a caption,
shown by CSS only while the document is not in full screen, says to press F11.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui.classroom.lesson_url import LessonParam

#: session_state key: whether the Presentation page is in its full-screen layout.
FULL_KEY = "present_full"
#: the query parameter (``?full=1``) that keeps the full-screen layout across a reload.
FULL_PARAM = LessonParam.FULL.value
#: widget keys of the two buttons; the script below finds them by their ``st-key-…`` classes.
ENTER_KEY = "present_full_on"
EXIT_KEY = "present_full_off"
#: key of the container with the F11 caption (hidden by CSS while the browser is in full screen).
HINT_KEY = "present_f11"
#: key of the (always hidden) container of the script.
SCRIPT_KEY = "present_fullscreen_js"
#: key of the control row (pinned at the top in full screen).
NAV_KEY = "present_nav"
F11_HINT = "If the browser did not switch to full screen, press F11 for the browser's full screen."

#: Key prefix of the box the vote chart fills (:func:`ui.classroom.class_poll.item_chart` with ``height=None``).
CHART_BOX = "projector_"

#: session_state keys of what the page shows: the poll code (its sidebar box), the position in
#: the poll or sample, and the one sentence set by "Present this sentence" (no poll needed).
#: A poll's code and position are kept in the URL too (:mod:`ui.classroom.lesson_url`).
CODE_KEY = "present_code"
POS_KEY = "present_pos"
SENTENCE_KEY = "present_sentence"


def present_sentence(surface: str) -> None:
    """Make the Presentation page show ``surface`` alone (no poll needed)."""
    st.session_state[SENTENCE_KEY] = surface
    st.session_state[CODE_KEY] = ""
    st.session_state[POS_KEY] = 0


def _present_without_poll() -> None:
    st.session_state[CODE_KEY] = ""
    st.session_state[POS_KEY] = 0


def no_poll_box(message: str, *, key: str = "present_no_poll") -> None:
    """A poll that cannot be shown (a code that is no code, or no such poll), with the ways out in
    the page itself (the sidebar is hidden in full screen): present without a poll, or go to the
    Class poll to start or open another one.  ``message`` is plain text already."""
    st.error(f"{message} Start or open another poll on the Class poll page, or present without a poll.",
             icon=":material/error:")
    row = st.container(horizontal=True, gap="small")
    row.button("Present without a poll", key=key, icon=":material/slideshow:",
               on_click=_present_without_poll)
    row.page_link("views/teach_poll.py", label="Start or open another poll", icon=":material/how_to_vote:")


def present_poll_item(code: str, index: int) -> None:
    """Make the Presentation page show item ``index`` of poll ``code``, with the class's votes on
    it (Previous/Next go on through the poll)."""
    st.session_state.pop(SENTENCE_KEY, None)
    st.session_state[CODE_KEY] = code
    st.session_state[POS_KEY] = index

#: The page's own styles: the sentence and its readings in large type, controls below the header.
#: Type and the vote chart scale with the window (``vw``/``vh`` inside ``clamp``), from a laptop's
#: 1280×720 to a projector's 1920×1080 (issue #27 item 4).
BASE_CSS = (
    ".block-container{padding-top:4.5rem} .present-s{font-size:clamp(2rem,3.2vw,4.8rem);font-weight:700;"
    "line-height:1.15;margin:.3rem 0 .8rem} .present-r{font-size:clamp(1.2rem,1.7vw,2.6rem);line-height:1.3;"
    "margin:.2rem 0}"
    ' [data-testid="stMetricValue"]{font-size:clamp(2.25rem,3vw,4rem)}'
    f" .st-key-{SCRIPT_KEY}{{display:none}}"
)

#: Full screen: no Streamlit chrome, no top padding, larger type, the control row pinned on top.
FULL_CSS = (
    '[data-testid="stHeader"],[data-testid="stToolbar"],[data-testid="stSidebar"],'
    '[data-testid="stExpandSidebarButton"],[data-testid="stDecoration"]{display:none !important}'
    " .block-container{padding:.75rem 3rem 2rem !important;max-width:100% !important}"
    " .present-s{font-size:clamp(1.8rem,min(3.6vw,6.2vh),5.6rem)}"
    " .present-r{font-size:clamp(1.1rem,min(1.9vw,3.3vh),2.8rem)}"
    f" .st-key-{NAV_KEY}{{position:sticky;top:0;z-index:1000;background:#ffffff;padding:.35rem 0}}"
    f" .st-key-{NAV_KEY} button p,.st-key-{NAV_KEY} [data-testid=\"stCaptionContainer\"]{{font-size:1.15rem}}"
    f" :root:fullscreen .st-key-{HINT_KEY}{{display:none}}"
    f" @media (display-mode: fullscreen){{.st-key-{HINT_KEY}{{display:none}}}}"
)

#: The vote chart's box follows the window's height (through ``st.html``: Markdown would take the
#: ``*`` of ``[class*=…]`` for emphasis).
CHART_CSS = (
    f'[class*="st-key-{CHART_BOX}"],[data-testid="stLayoutWrapper"]:has(> [class*="st-key-{CHART_BOX}"])'
    f'{{height:clamp(180px,32vh,560px) !important;min-height:clamp(180px,32vh,560px) !important;'
    f'max-height:clamp(180px,32vh,560px) !important;flex:0 0 auto !important}}'
)
#: The same in full screen: a little less, so the chart and the tally stay on a 720 px screen.
FULL_CHART_CSS = (
    f'[class*="st-key-{CHART_BOX}"],[data-testid="stLayoutWrapper"]:has(> [class*="st-key-{CHART_BOX}"])'
    f'{{height:clamp(150px,28vh,600px) !important;min-height:clamp(150px,28vh,600px) !important;'
    f'max-height:clamp(150px,28vh,600px) !important;flex:0 0 auto !important}}'
)

#: Installed once per browser tab (a window flag guards against a second listener on reruns).
#: Capture phase, so it runs inside the click's user gesture, before Streamlit's own handler.
FULLSCREEN_SCRIPT = f"""<script>
(() => {{
  if (window.__ampPresentFullscreen) return;
  window.__ampPresentFullscreen = true;
  document.addEventListener("click", (event) => {{
    const target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    const root = document.documentElement;
    if (target.closest(".st-key-{ENTER_KEY} button")) {{
      if (!document.fullscreenElement && root.requestFullscreen) root.requestFullscreen().catch(() => {{}});
    }} else if (target.closest(".st-key-{EXIT_KEY} button")) {{
      if (document.fullscreenElement && document.exitFullscreen) document.exitFullscreen().catch(() => {{}});
    }}
  }}, true);
}})();
</script>"""


def full_screen() -> bool:
    """Whether the page is in its full-screen layout (``?full=1`` on a fresh session turns it on).

    While it is on, the query parameter is (re)written, so a reload of this page keeps it.
    """
    state = st.session_state
    if FULL_KEY not in state:
        state[FULL_KEY] = st.query_params.get(FULL_PARAM) == "1"
    if state[FULL_KEY] and st.query_params.get(FULL_PARAM) != "1":
        st.query_params[FULL_PARAM] = "1"
    return bool(state[FULL_KEY])


def _set_full(on: bool) -> None:
    st.session_state[FULL_KEY] = on
    if on:
        st.query_params[FULL_PARAM] = "1"
    elif FULL_PARAM in st.query_params:
        del st.query_params[FULL_PARAM]


def page_css(full: bool) -> None:
    """The page's styles; in full screen also the chrome-free layout."""
    st.markdown(f"<style>{BASE_CSS}{' ' + FULL_CSS if full else ''}</style>", unsafe_allow_html=True)
    st.html(f"<style>{CHART_CSS}{' ' + FULL_CHART_CSS if full else ''}</style>")  # style only: takes no space


def nav_row(full: bool) -> DeltaGenerator:
    """The control row, created at the top of the page before anything can halt it, so the
    full-screen button (and in full screen "Exit full screen") is there even when the page stops
    early (a wrong poll code); returns the part of the row the page fills with its own controls.

    Buttons are as wide as their labels; in full screen the row is pinned at the top.
    """
    row = st.container(horizontal=True, vertical_alignment="center", gap="small", key=NAV_KEY)
    controls = row.container(horizontal=True, vertical_alignment="center", gap="small")
    if full:
        row.button("Exit full screen", key=EXIT_KEY, icon=":material/fullscreen_exit:",
                   on_click=_set_full, args=(False,))
    else:
        row.button("Full screen", key=ENTER_KEY, icon=":material/fullscreen:",
                   on_click=_set_full, args=(True,))
    with row.container(key=SCRIPT_KEY, width="content"):
        st.html(FULLSCREEN_SCRIPT, unsafe_allow_javascript=True)
    if full:
        with st.container(key=HINT_KEY):
            st.caption(F11_HINT)
    return controls
