"""The teacher sign-in (widgets only; the passphrase logic is :mod:`amp.teaching.teacher_auth`).

:func:`teacher_signed_in` is called by ``app.py`` before the frame: True when the app is open
(loopback, no passphrase configured) or this browser session has given the passphrase; otherwise
it draws the sign-in form (students are pointed to their poll link) and returns False.
"""

from __future__ import annotations

import streamlit as st

from amp.teaching import teacher_auth

#: Session-state key remembering a successful sign-in for this browser session.
SIGNED_IN_KEY = "teacher_signed_in"


def listen_address() -> str | None:
    """Streamlit's ``server.address`` (``run.sh app`` passes ``--server.address ${AMP_ADDRESS}``)."""
    try:
        value = st.get_option("server.address")
    except RuntimeError:  # pragma: no cover - an unknown option in another Streamlit version
        return None
    return str(value) if value else None


def teacher_signed_in() -> bool:
    """Whether this session may see the whole app; draws the sign-in form when not."""
    expected = teacher_auth.required_passphrase(listen_address())
    if expected is None or st.session_state.get(SIGNED_IN_KEY):
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
        if teacher_auth.passphrase_matches(given or "", expected):
            st.session_state[SIGNED_IN_KEY] = True
            st.rerun()
        st.error("That is not the teacher passphrase.", icon=":material/lock:")
    return False
