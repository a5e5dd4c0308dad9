"""AppTest: the lesson survives the projector (issue #40 point 6).

The Presentation and Class poll keep the open poll's code (and the Presentation its slide) in the
URL, so a fresh session — F5, a new tab, a laptop waking up — shows the same poll and slide with
the votes (they live in the poll store); a code that is no code or no poll gives an error box with
a way out and the page stays usable; a slide out of range is clamped; signing in lands on the page
the browser asked for, with its query.  (A fresh ``AppTest`` is a fresh session.)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from app_helpers import APP, TIMEOUT, assert_ok, goto, texts

from amp.classroom import teacher_auth
from amp.data import generate as gen
from amp.teaching.poll import PollItem, PollStore
from ui.classroom import class_poll, present
from ui.classroom.lesson_url import LessonParam, slide_index


@pytest.fixture
def poll_code(app_env) -> str:
    """A poll of three sentences; the second has two votes, the third one."""
    store = PollStore()  # under $AMP_CACHE_DIR (the app_env fixture)
    poll = store.create_poll([PollItem.from_pair(p) for p in gen.pairs("pp")[:3]], "reload")
    store.submit_vote(poll.code, 1, "a" * 32, 0, 2)
    store.submit_vote(poll.code, 1, "b" * 32, 1, 3)
    store.submit_vote(poll.code, 2, "a" * 32, 1, 1)
    return poll.code


def _fresh(page: str, **params: str):
    """A new session (a reload) whose address is ``/<page>?<params>``."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    for name, value in params.items():
        app.query_params[name] = value
    return goto(app, page)


def _slide(app) -> str:
    """The Presentation's position caption ("2 / 3 · PP attachment · poll **K7QX2M**")."""
    (nav,) = [c for c in texts(app, "caption") if " / " in c and "·" in c]
    return nav


# ------------------------------------------------------------------------------------ Presentation


def test_a_reload_of_the_presentation_keeps_the_poll_the_slide_and_the_votes(poll_code: str) -> None:
    app = _fresh("teach_present", code=poll_code.lower(), slide="2", full="1")  # a code as typed: normalised
    assert not app.error
    assert _slide(app).startswith("2 / 3 · ") and f"poll **{poll_code}**" in _slide(app)
    assert app.session_state[present.CODE_KEY] == poll_code and app.session_state[present.POS_KEY] == 1
    assert any("Class: 2 vote(s)" in c for c in texts(app, "caption"))  # the votes, from the store
    assert app.session_state[present.FULL_KEY] is True  # full screen: nothing to retype in a hidden sidebar
    assert app.query_params[LessonParam.CODE] == poll_code and app.query_params[LessonParam.SLIDE] == "2"

    app.button(key="present_next").click().run()  # the URL follows the slide
    assert_ok(app)
    assert _slide(app).startswith("3 / 3 · ") and app.query_params[LessonParam.SLIDE] == "3"
    again = _fresh("teach_present", **{k: str(v) for k, v in app.query_params.items()})  # F5 on slide 3
    assert _slide(again).startswith("3 / 3 · ") and any("Class: 1 vote(s)" in c for c in texts(again, "caption"))


def test_a_presentation_opened_from_the_poll_puts_code_and_slide_in_the_url(poll_code: str) -> None:
    app = _fresh("teach_poll")
    app.session_state[class_poll.POLL_CODE_KEY] = poll_code
    app.run()
    surface = gen.pairs("pp")[2].surface
    app.selectbox(key="tp_route_sentence").select(surface).run()
    app.button(key="tp_route_present").click().run()
    assert_ok(app)
    assert _slide(app).startswith("3 / 3 · ")
    assert app.query_params[LessonParam.CODE] == poll_code and app.query_params[LessonParam.SLIDE] == "3"


@pytest.mark.parametrize(("slide", "shown"), [("99", "3 / 3"), ("0", "1 / 3"), ("-4", "1 / 3"), ("two", "1 / 3")])
def test_a_slide_out_of_range_is_clamped(poll_code: str, slide: str, shown: str) -> None:
    app = _fresh("teach_present", code=poll_code, slide=slide)
    assert not app.error
    assert _slide(app).startswith(f"{shown} · ")
    assert app.query_params[LessonParam.SLIDE] == shown.split(" / ")[0]  # the URL says the slide shown


def test_slide_numbers_from_the_url() -> None:
    assert [slide_index(v) for v in (None, "1", " 3 ", "0", "-2", "x", "1e3", "")] == [None, 0, 2, 0, 0, 0, 0, 0]


def test_a_code_in_the_url_that_is_no_code_gives_a_way_out(app_env) -> None:
    app = _fresh("teach_present", code="not a code!", slide="2")
    (box,) = texts(app, "error")
    assert "The address names no poll" in box and "is not a poll code" in box and "present without a poll" in box
    assert LessonParam.CODE not in app.query_params and LessonParam.SLIDE not in app.query_params
    assert _slide(app).startswith("1 / 5 · ")  # the page goes on: a sample of sentences
    assert {"present_no_poll_url", "present_next", "present_reveal_0"} <= {b.key for b in app.button}
    assert [link.proto.label for link in app.main.get("page_link")] == ["Start or open another poll"]


def test_an_unknown_poll_in_the_url_gives_a_way_out_and_the_page_goes_on(app_env) -> None:
    app = _fresh("teach_present", code="ZZZZZZ", full="1")
    (box,) = texts(app, "error")
    assert box.startswith("Poll ZZZZZZ: no poll with code") and "Start or open another poll" in box
    assert [link.proto.label for link in app.main.get("page_link")] == ["Start or open another poll"]
    assert present.EXIT_KEY in {b.key for b in app.button}  # full screen: the controls are in the page
    app.button(key="present_no_poll").click().run()  # the way out: present without a poll
    assert_ok(app)
    assert not app.error and _slide(app).startswith("1 / 5 · ")
    assert LessonParam.CODE not in app.query_params and app.query_params[LessonParam.FULL] == "1"


# ---------------------------------------------------------------------------------------- Class poll


def test_a_reload_of_the_class_poll_keeps_the_open_poll_and_its_votes(poll_code: str) -> None:
    app = _fresh("teach_poll", code=f" {poll_code.lower()} ")
    assert not app.error
    assert app.session_state[class_poll.POLL_CODE_KEY] == poll_code
    assert any(f"?poll={poll_code}" in m for m in texts(app, "markdown"))  # the student link of that poll
    assert app.metric[0].value == "3"  # its votes
    assert app.query_params[LessonParam.CODE] == poll_code


def test_a_new_poll_and_an_opened_poll_go_into_the_url(poll_code: str) -> None:
    app = _fresh("teach_poll")
    assert LessonParam.CODE not in app.query_params
    app.radio(key="tp_how").set_value("sampled sequence").run()
    app.checkbox(key="tp_with_model").set_value(False).run()
    app.button(key="tp_create").click().run()
    assert_ok(app)
    created = app.session_state[class_poll.POLL_CODE_KEY]
    assert created != poll_code and app.query_params[LessonParam.CODE] == created
    app.text_input(key="tp_open_code").set_value(poll_code)
    app.button(key="tp_open").click().run()
    assert_ok(app)
    assert app.query_params[LessonParam.CODE] == poll_code


@pytest.mark.parametrize(("code", "says"), [("ZZZZZZ", "no poll with code"), ("<b>x</b>", "is not a poll code")])
def test_a_bad_code_in_the_class_poll_url_gives_a_way_out(poll_code: str, code: str, says: str) -> None:
    app = _fresh("teach_poll", code=code)
    (box,) = texts(app, "error")
    assert box.startswith("Cannot open poll: ") and says in box and "Start a new poll or open another one" in box
    assert "<b>" not in box  # what the URL said is plain text
    assert class_poll.POLL_CODE_KEY not in app.session_state and LessonParam.CODE not in app.query_params
    app.text_input(key="tp_open_code").set_value(poll_code)  # the page is usable: open the right one
    app.button(key="tp_open").click().run()
    assert_ok(app)
    assert not app.error and app.metric[0].value == "3" and app.query_params[LessonParam.CODE] == poll_code


# ------------------------------------------------------------------------------------------- sign-in


@pytest.fixture
def passphrase(app_env, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv(teacher_auth.ENV, "correct horse battery")
    teacher_auth.LIMITER.reset()
    yield "correct horse battery"
    teacher_auth.LIMITER.reset()


def _as_a_browser_would(app) -> None:
    """The next request names the page the last run told the browser it is on — through the pages
    it registered (``st.navigation``) — or, if it told none, the default page (the browser's
    address then loses its path).  ``AppTest`` itself would ask for the page of ``switch_page`` again."""
    known = {info.get("url_pathname"): page for page, info in app._registered_pages.items()}
    asked = known.get("teach_poll", "")
    app._page_hash = asked
    app._finished_page_script_hash = asked


def test_signing_in_lands_on_the_page_asked_for_with_its_query(poll_code: str, passphrase: str) -> None:
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.query_params[LessonParam.CODE] = poll_code
    app.switch_page("views/teach_poll.py").run()  # a bookmark of /teach_poll?code=…
    assert_ok(app)
    assert [t for t in app.text_input if t.key == "teacher_passphrase"] and not app.sidebar.button
    assert not app.get("page_link") and not app.title[1:]  # nothing but the sign-in form
    _as_a_browser_would(app)
    app.text_input(key="teacher_passphrase").input(passphrase)
    next(b for b in app.button if b.label == "Sign in").click()
    app.run()
    assert_ok(app)
    assert [t.value for t in app.title] == ["Class poll"]
    assert app.session_state[class_poll.POLL_CODE_KEY] == poll_code and app.metric[0].value == "3"
    assert app.query_params[LessonParam.CODE] == poll_code
