"""AppTest: the Presentation page's full-screen mode (issue #11 point 3).

The "Full screen" button turns on the chrome-free layout (state, ``?full=1``, the CSS that hides
Streamlit's header and sidebar, "Exit full screen", the F11 caption); "Exit full screen" turns it
off; a fresh session opened with ``?full=1`` starts in it; the exit control is there even when
the page stops early.  The browser's own full screen is covered in
``tests/e2e/test_present_fullscreen_browser.py``.
"""

from __future__ import annotations

from app_helpers import APP, TIMEOUT, assert_ok, goto, plotly_spec, texts

from amp.data import generate as gen
from amp.reporting.poll_plots import PROJECTOR_FONT_PX
from amp.teaching.poll import PollItem, PollStore
from ui.classroom import present

HIDE_HEADER = '[data-testid="stHeader"]'


def _css(app) -> str:
    styles = [m for m in texts(app, "markdown") if m.startswith("<style>") and ".present-s" in m]
    assert len(styles) == 1, styles
    return styles[0]


def _buttons(app) -> set[str]:
    return {b.key for b in app.button}


def _html(app) -> str:
    return " ".join(e.proto.body for e in app.get("html"))


def _is_normal(app) -> None:
    assert app.session_state[present.FULL_KEY] is False
    assert present.FULL_PARAM not in app.query_params
    assert HIDE_HEADER not in _css(app)
    assert present.ENTER_KEY in _buttons(app) and present.EXIT_KEY not in _buttons(app)
    assert not any("F11" in c for c in texts(app, "caption"))


def _is_full(app) -> None:
    assert app.session_state[present.FULL_KEY] is True
    assert app.query_params.get(present.FULL_PARAM) == "1"
    css = _css(app)
    assert HIDE_HEADER in css and '[data-testid="stSidebar"]' in css and "display:none !important" in css
    assert ".present-s{font-size:clamp(1.8rem,min(3.6vw,6.2vh),5.6rem)}" in css  # type that follows the screen
    assert present.EXIT_KEY in _buttons(app) and present.ENTER_KEY not in _buttons(app)
    assert next(b for b in app.button if b.key == present.EXIT_KEY).label == "Exit full screen"
    assert any("press F11 for the browser's full screen" in c for c in texts(app, "caption"))


def test_full_screen_button_toggles_the_layout(at):
    goto(at, "teach_present")
    _is_normal(at)
    assert next(b for b in at.button if b.key == present.ENTER_KEY).label == "Full screen"
    # the click script is on the page before the first click (the gesture must reach it)
    script = _html(at)
    assert "requestFullscreen" in script and f".st-key-{present.ENTER_KEY} button" in script
    assert f".st-key-{present.EXIT_KEY} button" in script and "exitFullscreen" in script

    at.button(key=present.ENTER_KEY).click().run()
    assert_ok(at)
    assert not at.error
    _is_full(at)
    assert "requestFullscreen" in _html(at)
    # the presentation itself is unchanged: the sentence, the other controls, and they work
    assert any("present-s" in m for m in texts(at, "markdown"))
    assert {"present_prev", "present_next", "present_reveal_0"} <= _buttons(at)
    at.button(key="present_next").click().run()
    assert_ok(at)
    assert at.session_state["present_pos"] == 1
    _is_full(at)  # moving on keeps full screen

    at.button(key=present.EXIT_KEY).click().run()
    assert_ok(at)
    assert not at.error
    _is_normal(at)
    assert at.session_state["present_pos"] == 1


def test_a_reload_with_full_1_starts_in_full_screen():
    """A new session (a reload) whose address says ``?full=1`` opens in the full-screen layout."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    app.query_params[present.FULL_PARAM] = "1"
    goto(app, "teach_present")
    _is_full(app)
    app.button(key=present.EXIT_KEY).click().run()
    assert_ok(app)
    _is_normal(app)


def test_a_wrong_poll_code_in_full_screen_keeps_the_exit_control(at):
    """The page stops early on a wrong code; the teacher, without a sidebar, can still leave."""
    goto(at, "teach_present")
    at.button(key=present.ENTER_KEY).click().run()
    at.text_input(key="present_code").set_value("ZZZZZZ").run()
    assert_ok(at)
    assert at.error and "ZZZZZZ" in at.error[0].value
    assert present.EXIT_KEY in _buttons(at)
    at.button(key=present.EXIT_KEY).click().run()
    assert_ok(at)
    _is_normal(at)


def test_full_screen_keeps_the_class_votes(at):
    """The live vote chart (a fragment with run_every) is still drawn in full screen."""
    store = PollStore()  # under $AMP_CACHE_DIR (the app_env fixture)
    poll = store.create_poll([PollItem.from_pair(gen.pairs("pp")[0])], "full screen votes")
    store.submit_vote(poll.code, 0, "c" * 32, 1, 2)
    goto(at, "teach_present")
    at.text_input(key="present_code").set_value(poll.code).run()
    at.button(key=present.ENTER_KEY).click().run()
    assert_ok(at)
    _is_full(at)
    assert len(at.get("plotly_chart")) == 1
    assert any("Class: 1 vote(s)" in c for c in texts(at, "caption"))
    # projector-sized chart type (issue #27 item 4: the labels were about 12 px on a projector)
    assert plotly_spec(at)["layout"]["font"]["size"] == PROJECTOR_FONT_PX >= 20
