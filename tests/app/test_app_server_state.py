"""Issue #28 point 2: failures in plain sight.  The parser server that does not answer (a loopback
port with nothing listening, or a real tiny HTTP server stopped mid-session) is an *expanded*
error box with the reason and the way out; the sidebar's server state comes from a real check,
with its age, and is taken again on reconnect — never "connected" because a URL is set."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_helpers import APP, TIMEOUT, assert_ok, goto, texts
from info_server import InfoServer

from ui.model.server import HEALTH_KEY, ServerHealth
from ui.shared.common import plain

FALLBACK = "Use a model in this app instead"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def service() -> Iterator[InfoServer]:
    svc = InfoServer()
    yield svc
    if svc.thread.is_alive():
        svc.stop()


def _open(monkeypatch: pytest.MonkeyPatch, url: str):  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("AMP_PARSER_URL", url)
    app = AppTest.from_file(APP, default_timeout=TIMEOUT)
    app.run()
    assert_ok(app)
    return app


def _server_label(at) -> str:  # type: ignore[no-untyped-def]
    (label,) = [e.label for e in at.sidebar.expander if e.label.startswith("Parser server")]
    return label


def _top_level(at, kind: str) -> list[object]:  # type: ignore[no-untyped-def]
    """The page's elements of ``kind`` that sit on the page itself, not inside a status box or expander."""
    return [node for node in at.main.children.values() if node.type == kind]


def test_a_server_with_nothing_listening_is_not_connected(app_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{_free_port()}"  # a real refused connection
    at = _open(monkeypatch, url)
    assert _server_label(at) == "Parser server · not answering · checked just now"
    (shown,) = [e for e in texts(at.sidebar, "error") if plain(url) in e]
    assert "cannot reach the parser server" in shown
    assert not [s for s in texts(at.sidebar, "success") if "Server model" in s]
    # the page that needs the model: the reason and the way out, on the page
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    (box,) = [e.value for e in _top_level(at, "error") if "cannot be used" in e.value]
    assert "cannot reach the parser server" in box
    at.button(key="server_fallback").click().run()  # the way out: the model in this app
    assert_ok(at)
    assert at.session_state["parser_server"] == ""
    assert _server_label(at) == "Parser server" and not texts(at.sidebar, "error")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert not texts(at, "error") and at.dataframe[0].value.shape[0] == 5


def test_a_server_that_stops_mid_session_is_an_open_error_box(app_env: Path, monkeypatch: pytest.MonkeyPatch,
                                                              service: InfoServer) -> None:
    at = _open(monkeypatch, service.url)
    assert _server_label(at) == "Parser server · connected · checked just now"
    assert any("Server model **amp-tests/remote-only**" in s and "connected" in s for s in texts(at.sidebar, "success"))
    goto(at, "parse_inspect")
    service.stop()
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    # not inside the (collapsed) status box: on the page, with its reason and its button
    (box,) = [e.value for e in _top_level(at, "error")]
    assert box.startswith(f"**{plain(f'The parser server {service.url} did not answer.')}**") and "cannot reach" in box
    (status,) = _top_level(at, "status")
    assert status.label == "The parser server did not answer" and status.state == "error"
    assert not [c for c in status.children.values() if c.type == "error"]
    fallback = [b for b in at.button if b.label == FALLBACK and b.key.startswith("server_fallback_")]
    assert len(fallback) == 1
    # the sidebar says so on the same run, from the failure
    assert any(plain(service.url) in e and "not answering" in e for e in texts(at.sidebar, "error"))
    fallback[0].click().run()
    assert_ok(at)
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert not texts(at, "error") and at.dataframe[0].value.shape[0] == 5


def test_the_sidebar_state_has_its_age_and_is_checked_again(app_env: Path, monkeypatch: pytest.MonkeyPatch,
                                                           service: InfoServer) -> None:
    at = _open(monkeypatch, service.url)
    kept = at.session_state[HEALTH_KEY]
    assert isinstance(kept, ServerHealth) and kept.ok
    at.session_state[HEALTH_KEY] = ServerHealth(kept.url, kept.token, True, "", time.time() - 12)
    at.run()
    assert _server_label(at).startswith("Parser server · connected · checked 1")  # 12 s (13 under load)
    service.stop()
    at.run()  # a young check is kept ...
    assert "connected" in _server_label(at)
    at.session_state[HEALTH_KEY] = ServerHealth(kept.url, kept.token, True, "", time.time() - 60)
    at.run()  # ... an old one is taken again: the server is gone
    assert _server_label(at) == "Parser server · not answering · checked just now"
    # reconnect (Update with another server): checked at once
    other = InfoServer()
    try:
        at.text_input(key="server_typed").input(other.url)
        at.get("form_submit_button")[-1].click().run()
        assert_ok(at)
        assert at.session_state["parser_server"] == other.url
        assert _server_label(at) == "Parser server · connected · checked just now"
    finally:
        other.stop()
