"""Hostile input in the app (AppTest, issue #12): a classroom-safe frame and no untrusted markup.

* teacher sign-in: with ``AMP_TEACHER_PASSWORD`` set, or a generated passphrase when the app
  listens beyond loopback, a browser without it gets only the sign-in form (the sidebar's cache,
  model and server controls are never drawn) or, with ``?poll=``, the student page; the
  passphrase is remembered for the browser session; on loopback with none set the app is open;
* text from the URL and from polls is shown as plain text: no live link, image or HTML.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator

import pytest
from app_helpers import APP, REPO, TIMEOUT, assert_ok, goto, texts

from amp.classroom import teacher_auth
from amp.data import generate as gen
from amp.teaching.poll import PollItem, PollStore

MARKUP = "[link](http://evil.example/x) ![img](http://evil.example/x.png) <img src=x onerror=alert(1)>"


def _app(poll: str | None = None):
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if poll is not None:
        app.query_params["poll"] = poll
    app.run()
    assert_ok(app)
    return app


def _rendered(app) -> list[str]:
    return [*texts(app, "markdown"), *texts(app, "caption"), *texts(app, "error"), *texts(app, "info"),
            *texts(app, "success"), *texts(app, "warning"), *texts(app, "title")]


#: A link or image target, an HTML tag, or a bare URL that GFM would turn into a link.
LIVE = re.compile(r"(?<!\\)\]\(|(?<!\\)<img|https?\\?://|www\\?\.")


#: A fenced code block: Markdown shows its content literally.
FENCED = re.compile(r"```.*?```", re.S)


def _assert_no_live_markup(app) -> None:
    for value in _rendered(app):
        assert not LIVE.search(FENCED.sub("", value)), value


@pytest.fixture
def open_app(app_env, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(teacher_auth.ENV, raising=False)
    return app_env


@pytest.fixture
def on_the_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Streamlit's ``server.address`` as ``run.sh app`` sets it with ``AMP_ADDRESS=0.0.0.0``."""
    from streamlit import config

    before = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    yield
    config.set_option("server.address", before)


# ------------------------------------------------------------------------ 2. no untrusted markup


def test_poll_code_from_the_url_is_plain_text(open_app) -> None:
    app = _app(poll=MARKUP)
    assert app.error and "no poll" in app.error[0].value.lower()
    assert "\\[link\\]\\(http\\:\u2060//evil\\.example/x\\)" in app.error[0].value  # word joiner: no autolink
    _assert_no_live_markup(app)


def test_student_page_shows_poll_text_as_plain_text(open_app) -> None:
    import dataclasses

    store = PollStore()
    base = PollItem.from_pair(gen.pairs("pp")[0], 0.7)
    item = dataclasses.replace(base, surface=f"{MARKUP} saw", paraphrase0=f"**bold** {MARKUP}")
    poll = store.create_poll([item], f"title {MARKUP}")
    app = _app(poll=poll.code)
    _assert_no_live_markup(app)
    assert any(r"\!\[img\]" in m for m in texts(app, "markdown"))
    assert not any(LIVE.search(o) for o in app.radio[0].options)


def test_error_details_never_reach_a_browser() -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["showErrorDetails"] in ("type", "none")  # no traceback, no server path


# ------------------------------------------------------------------------ 1. teacher sign-in


def test_loopback_without_passphrase_stays_open(open_app) -> None:
    app = _app()
    assert "sidebar_clear_cache" in [b.key for b in app.sidebar.button]
    assert not [t for t in app.text_input if t.key == "teacher_passphrase"]


def _locked(app) -> None:
    assert [t for t in app.text_input if t.key == "teacher_passphrase"]
    assert not app.sidebar.button and not app.sidebar.radio and not app.sidebar.text_input


def _sign_in(app, passphrase: str) -> None:
    app.text_input(key="teacher_passphrase").input(passphrase)
    next(b for b in app.button if b.label == "Sign in").click()
    app.run()
    assert_ok(app)


def test_configured_passphrase_is_required_and_remembered(app_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(teacher_auth.ENV, "correct horse battery")
    app = _app()
    _locked(app)
    _sign_in(app, "correct horse")
    _locked(app)
    assert any("not the teacher passphrase" in e for e in texts(app, "error"))
    _sign_in(app, "correct horse battery")
    assert "sidebar_clear_cache" in [b.key for b in app.sidebar.button]
    goto(app, "about")  # remembered for this browser session
    assert "sidebar_clear_cache" in [b.key for b in app.sidebar.button]


@pytest.fixture(autouse=True)
def _fresh_sign_in_limit() -> Iterator[None]:
    """Every test starts with no failed sign-ins recorded (the limiter is one per process)."""
    teacher_auth.LIMITER.reset()
    yield
    teacher_auth.LIMITER.reset()


def test_an_empty_passphrase_is_refused(app_env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #34 item 2: submitting the form empty does not sign in (and says what to do)."""
    monkeypatch.setenv(teacher_auth.ENV, "correct horse battery")
    app = _app()
    _locked(app)
    _sign_in(app, "")
    _locked(app)
    assert any("Type the teacher passphrase" in w for w in texts(app, "warning"))


def test_sign_in_attempts_are_limited_per_client(app_env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #27 item 2: after 5 wrong passphrases, not even the right one is checked; the form
    says how long to wait."""
    monkeypatch.setenv(teacher_auth.ENV, "correct horse battery")
    app = _app()
    for i in range(teacher_auth.LIMITER.max_failures):
        _sign_in(app, f"guess {i}")
        assert any("not the teacher passphrase" in e for e in texts(app, "error"))
    _sign_in(app, "correct horse battery")
    _locked(app)
    waits = [e for e in texts(app, "error") if "Too many wrong passphrases" in e]
    assert waits and re.search(r"wait \d+ s", waits[0]), texts(app, "error")
    teacher_auth.LIMITER.reset()  # the window has passed
    _sign_in(app, "correct horse battery")
    assert "sidebar_clear_cache" in [b.key for b in app.sidebar.button]


def test_the_right_passphrase_forgets_the_wrong_ones(app_env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #45: the sign-in form resets the client's count when the right passphrase is given
    (the form, not only the limiter).  Four wrong, the right one, sign out, four wrong again: each
    still leaves tries, and the right one is still checked.  The limiter's clock stands still, so
    no failure ages out of the window however slow the machine is."""
    monkeypatch.setenv(teacher_auth.ENV, "correct horse battery")
    monkeypatch.setattr(teacher_auth, "LIMITER", teacher_auth.SignInLimiter(5, 60, clock=lambda: 100.0))
    app = _app()
    for _ in range(4):
        _sign_in(app, "wrong horse")
    assert "That is not the teacher passphrase (1 more try before a wait)." in texts(app, "error")
    _sign_in(app, "correct horse battery")
    assert "sidebar_clear_cache" in [b.key for b in app.sidebar.button]
    app.sidebar.button(key="teacher_sign_out").click().run()
    assert_ok(app)
    _locked(app)
    for left in ("4 more tries", "3 more tries", "2 more tries", "1 more try"):
        _sign_in(app, "wrong horse")
        assert f"That is not the teacher passphrase ({left} before a wait)." in texts(app, "error")
    _sign_in(app, "correct horse battery")
    assert "sidebar_clear_cache" in [b.key for b in app.sidebar.button]


def test_sign_out_ends_the_session(app_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(teacher_auth.ENV, "correct horse battery")
    app = _app()
    _sign_in(app, "correct horse battery")
    token = app.session_state["teacher_signed_in"]
    assert teacher_auth.session_valid(token, "correct horse battery")
    app.sidebar.button(key="teacher_sign_out").click().run()
    assert_ok(app)
    _locked(app)
    assert not teacher_auth.session_valid(token, "correct horse battery")  # a copied cookie is dead too


def test_student_link_works_without_the_passphrase(app_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(teacher_auth.ENV, "correct horse battery")
    poll = PollStore().create_poll([PollItem.from_pair(gen.pairs("pp")[0], 0.7)], "class")
    app = _app(poll=poll.code)
    assert app.radio and not app.sidebar.button
    assert not [t for t in app.text_input if t.key == "teacher_passphrase"]


def test_beyond_loopback_a_passphrase_is_generated(open_app, on_the_network) -> None:
    app = _app()
    _locked(app)
    _sign_in(app, teacher_auth.generated_passphrase())
    assert "sidebar_clear_cache" in [b.key for b in app.sidebar.button]


# ------------------------------------------------------------------------ 4/5. hostile LFs in pages

#: (id, LF typed by a user, what the error box says)
HOSTILE_LFS = [
    ("deep-brackets", "exists x . " + "( man(x) AND " * 200 + "boy(x)" + " )" * 200, "nested more than"),
    ("deep-quantifiers", " ".join(f"exists v{i} ." for i in range(300)) + " man(v0)", "nested more than"),
    ("markup", "[link](http://evil.example) AND ![x](http://evil.example/x.png)", "does not parse"),
    ("unbalanced", ")" * 50 + "man(x)", "does not parse"),
]


@pytest.mark.parametrize(("lf", "message"), [row[1:] for row in HOSTILE_LFS], ids=[row[0] for row in HOSTILE_LFS])
def test_prompt_builder_gold_lf_table(at, lf: str, message: str) -> None:
    goto(at, "prompt_builder")
    at.radio(key="pb_test_source").set_value("typed").run()
    at.text_input(key="pb_test_typed").input("the girl saw a ghost").run()
    at.text_input(key="pb_gold0").input(lf).run()
    assert_ok(at)  # no RecursionError, no traceback
    assert any(message in e for e in texts(at, "error")), texts(at, "error")
    _assert_no_live_markup(at)
    assert at.session_state["prompt"].gold_lf0 is None


@pytest.mark.parametrize(("lf", "message"), [row[1:] for row in HOSTILE_LFS], ids=[row[0] for row in HOSTILE_LFS])
def test_parse_inspect_score_your_own_lf_table(at, lf: str, message: str) -> None:
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    at.text_area(key="pi_custom").input(lf)
    at.get("form_submit_button")[0].click().run()
    assert_ok(at)
    assert any(message in e for e in texts(at, "error")), texts(at, "error")
    _assert_no_live_markup(at)
    assert "custom_score" not in at.session_state or at.session_state["custom_score"] is None


def test_lf_inputs_are_length_capped(at) -> None:
    from amp.parser.core.limits import MAX_LF_CHARS

    goto(at, "prompt_builder")
    at.radio(key="pb_test_source").set_value("typed").run()
    at.text_input(key="pb_test_typed").input("the girl saw a ghost").run()
    assert at.text_input(key="pb_gold0").max_chars == MAX_LF_CHARS
