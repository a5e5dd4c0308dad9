"""First-party cookies of this app: read from the connection, written by a tiny script in the page.

Streamlit 1.67 reads cookies (``st.context.cookies``: those the browser sent when this session's
connection opened, so a reload or a new tab sees what an earlier page wrote) but has no call to
write one.  :func:`write_cookie` / :func:`delete_cookie` put a one-line script in a hidden
container (``st.html(..., unsafe_allow_javascript=True)``, the same mechanism as the Presentation's
full-screen script) that sets ``document.cookie`` on this app's origin: ``path=/``,
``SameSite=Strict``, ``Secure`` when the page is served over https.  Names and values are
restricted to ``[A-Za-z0-9_.-]`` (checked here, then JSON-quoted into the script), so no user text
ever reaches the script.
"""

from __future__ import annotations

import json
import re

import streamlit as st

#: What a cookie name or value made by this app may contain: a safety rule of the writer, for every
#: cookie (what a poll's voter id is, is :mod:`amp.teaching.voter`'s to say; its ids fit inside this).
_SAFE = re.compile(r"[A-Za-z0-9_.\-]{1,200}")
#: Key prefix of the hidden containers the scripts go into (hidden by :data:`_HIDE_CSS`).
CONTAINER_KEY = "amp_cookie_js"
_HIDE_CSS = f'<style>[class*="st-key-{CONTAINER_KEY}"]{{display:none}}</style>'


def read_cookie(name: str) -> str | None:
    """The cookie ``name`` as the browser sent it when this session connected (None: absent)."""
    try:
        value = st.context.cookies.get(name)
    except (AttributeError, RuntimeError):  # pragma: no cover - no client context (bare mode)
        return None
    return value if isinstance(value, str) and value else None  # AppTest's context: not a str


def _check(part: str, what: str) -> str:
    if not _SAFE.fullmatch(part):
        raise ValueError(f"cookie {what} {part!r} is not made of [A-Za-z0-9_.-]")
    return part


def _script(name: str, value: str, max_age_s: int) -> str:
    spec = json.dumps(f"{_check(name, 'name')}={_check(value, 'value') if value else ''}; path=/; "
                      f"max-age={int(max_age_s)}; SameSite=Strict")
    return ("<script>(() => { document.cookie = " + spec
            + " + (location.protocol === 'https:' ? '; Secure' : ''); })();</script>")


def _emit(script: str, key: str) -> None:
    st.html(_HIDE_CSS)
    with st.container(key=f"{CONTAINER_KEY}_{key}"):
        st.html(script, unsafe_allow_javascript=True)


def write_cookie(name: str, value: str, max_age_s: int, *, key: str | None = None) -> None:
    """Set cookie ``name`` = ``value`` in this browser for ``max_age_s`` seconds (from the page)."""
    _emit(_script(name, value, max_age_s), key or name)


def delete_cookie(name: str, *, key: str | None = None) -> None:
    """Remove cookie ``name`` from this browser (from the page)."""
    _emit(_script(name, "", 0), key or f"{name}_del")
