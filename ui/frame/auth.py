"""The teacher sign-in (widgets only; the passphrase logic is :mod:`amp.classroom.teacher_auth`).

:func:`teacher_signed_in` is called by ``app.py`` before the frame: True when the app is open
(loopback, no passphrase configured) or this browser session has given the passphrase; otherwise
it draws the sign-in form (students are pointed to their poll link) and returns False.  The
sign-in lives in a signed, expiring cookie, so a reload keeps it; wrong passphrases are limited
per client (:data:`amp.classroom.teacher_auth.LIMITER`); an empty one is refused.
:func:`keep_asked_page` (``app.py`` calls it under the form) keeps the page the browser asked
for, so signing in from ``/teach_poll?code=…`` lands there, query and all (issue #40 point 6).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import streamlit as st

from amp.classroom import teacher_auth
from ui.shared import browser_store

#: Session-state key holding this session's signed session token (see :func:`teacher_signed_in`).
SIGNED_IN_KEY = "teacher_signed_in"
#: Session-state flags: write the session cookie on the next run / remove it / signed out here.
_WRITE_COOKIE = "teacher_cookie_write"
_DROP_COOKIE = "teacher_cookie_drop"
_SIGNED_OUT = "teacher_signed_out"


def listen_address() -> str | None:
    """Streamlit's ``server.address`` (``run.sh app`` passes ``--server.address ${AMP_ADDRESS}``)."""
    try:
        value = st.get_option("server.address")
    except RuntimeError:  # pragma: no cover - an unknown option in another Streamlit version
        return None
    return str(value) if value else None


def _client() -> str:
    """Who is signing in, for the attempt limit: the browser's IP address as Streamlit sees it."""
    try:
        address = st.context.ip_address
    except (AttributeError, RuntimeError):  # pragma: no cover - no client context (bare mode)
        return "unknown"
    return address if isinstance(address, str) and address else "unknown"  # AppTest: not a str


def teacher_signed_in() -> bool:
    """Whether this session may see the whole app; draws the sign-in form when not.

    Signed in means a valid session token (:func:`amp.classroom.teacher_auth.session_valid`) in
    this session, or in the browser's cookie (:data:`teacher_auth.SESSION_COOKIE`): a reload, a
    new tab or a bookmark of any page keeps the teacher signed in, on that page, until the token
    expires or the teacher signs out (:func:`sign_out_button`)."""
    expected = teacher_auth.required_passphrase(listen_address())
    if expected is None:
        return True
    state = st.session_state
    if state.pop(_DROP_COOKIE, False):
        browser_store.delete_cookie(teacher_auth.SESSION_COOKIE)
    token = state.get(SIGNED_IN_KEY)
    if teacher_auth.session_valid(token, expected):
        if state.pop(_WRITE_COOKIE, False):
            browser_store.write_cookie(teacher_auth.SESSION_COOKIE, str(token),
                                       teacher_auth.session_seconds_left(str(token)))
        return True
    state.pop(SIGNED_IN_KEY, None)
    cookie = browser_store.read_cookie(teacher_auth.SESSION_COOKIE)
    if not state.get(_SIGNED_OUT) and teacher_auth.session_valid(cookie, expected):
        state[SIGNED_IN_KEY] = cookie
        return True
    st.title("AmP Explorer")
    st.info("Students: open the poll link your teacher gave you (it ends in ?poll=CODE).",
            icon=":material/how_to_vote:")
    with st.form("teacher_sign_in", clear_on_submit=True):
        st.markdown("**Teacher sign-in**")
        given = st.text_input("Teacher passphrase", type="password", key="teacher_passphrase",
                              help=f"The app's {teacher_auth.ENV}, or the passphrase printed in the terminal "
                                   "that started it.")
        submitted = st.form_submit_button("Sign in", icon=":material/login:")
    if submitted:
        client = _client()
        wait = teacher_auth.LIMITER.wait_s(client)
        if wait > 0:
            st.error(f"Too many wrong passphrases from this computer: wait {math.ceil(wait)} s, then try again.",
                     icon=":material/timer:")
        elif not given:
            st.warning("Type the teacher passphrase first.", icon=":material/lock:")
        elif teacher_auth.passphrase_matches(given, expected):
            teacher_auth.LIMITER.succeeded(client)
            state[SIGNED_IN_KEY] = teacher_auth.issue_session(expected)
            state[_WRITE_COOKIE] = True
            state.pop(_SIGNED_OUT, None)
            st.rerun()
        else:
            left = teacher_auth.LIMITER.failed(client)
            st.error(f"That is not the teacher passphrase ({left} more {'try' if left == 1 else 'tries'} "
                     "before a wait).", icon=":material/lock:")
    return False


def keep_asked_page(pages: Sequence[Any]) -> None:
    """Before the teacher has signed in: keep the page the browser asked for (``/teach_poll?code=…``).

    The sign-in form is drawn without the teacher's pages; resolving them here, hidden and not
    run, tells the browser which page this is, so the address keeps its path and query and the
    sign-in's rerun runs that page (issue #40 point 6) instead of the default one."""
    st.navigation(list(pages), position="hidden")


def _sign_out() -> None:
    teacher_auth.end_session(st.session_state.pop(SIGNED_IN_KEY, None))
    st.session_state[_DROP_COOKIE] = True
    st.session_state[_SIGNED_OUT] = True


def sign_out_button() -> None:
    """A "Sign out" button (in the sidebar) when the app needs a passphrase: it ends the session
    token everywhere (every tab holding it) and removes the cookie from this browser."""
    if teacher_auth.required_passphrase(listen_address()) is None:
        return
    st.button("Sign out", icon=":material/logout:", key="teacher_sign_out", on_click=_sign_out)
