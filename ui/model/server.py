"""The parser server's state as the sidebar shows it: from a real check, with its age.

"Connected" is said only after the server answered: ``GET /health`` (a short timeout), then its
``/v1/info`` with this session's token (which also checks the token and the versions).  The result
is kept for this session with the time it was taken (:data:`HEALTH_KEY`) and taken again when it
is older than :data:`MAX_AGE_S`, when the server URL or token changes (the sidebar's Update), and a
call that fails on a page records the failure at once (:func:`record_failure`), so the sidebar never
says "connected" about a server that did not answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from amp.parser.backends.remote import RemoteBackend
from amp.parser.core.errors import BackendError

#: session_state key of the last :class:`ServerHealth`.
HEALTH_KEY = "parser_server_health"
#: A check older than this (seconds) is taken again on the next run of any page.
MAX_AGE_S = 30.0
#: How long the liveness check waits for ``/health`` (seconds).
HEALTH_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ServerHealth:
    """One check of the server at ``url``: whether it answered, why not, and when (``time.time()``)."""

    url: str
    token: str | None
    ok: bool
    reason: str
    checked_at: float

    def age_s(self, now: float | None = None) -> float:
        return max(0.0, (time.time() if now is None else now) - self.checked_at)

    def summary(self, now: float | None = None) -> str:
        """``"connected · checked 5 s ago"`` or ``"not answering · checked just now"``."""
        state = "connected" if self.ok else "not answering"
        return f"{state} · checked {age_words(self.age_s(now))}"


def age_words(seconds: float) -> str:
    """``"just now"``, ``"12 s ago"``, ``"3 min ago"``."""
    if seconds < 1:
        return "just now"
    if seconds < 120:
        return f"{int(seconds)} s ago"
    return f"{int(seconds // 60)} min ago"


def check(url: str, token: str | None) -> ServerHealth:
    """Ask the server at ``url`` now: ``/health``, then ``/v1/info`` with ``token``."""
    try:
        backend = RemoteBackend(url, token=token)
        reply = backend.request("GET", "/health", timeout_s=HEALTH_TIMEOUT_S)
        if not isinstance(reply, dict) or reply.get("status") != "ok":
            raise BackendError(f"the parser server at {backend.url} answered /health without 'ok'",
                               kind="protocol")
        backend.info(refresh=True)  # the token and the versions
    except BackendError as exc:
        return ServerHealth(url, token, False, str(exc), time.time())
    return ServerHealth(url, token, True, "", time.time())


def current(url: str, token: str | None, *, max_age_s: float = MAX_AGE_S) -> ServerHealth:
    """This session's last check of ``url`` with ``token``, taken again when missing, for another
    server or token, or older than ``max_age_s``."""
    kept = st.session_state.get(HEALTH_KEY)
    if (not isinstance(kept, ServerHealth) or kept.url != url or kept.token != token
            or kept.age_s() > max_age_s):
        kept = check(url, token)
        st.session_state[HEALTH_KEY] = kept
    return kept


def forget() -> None:
    """Drop the kept check (the server URL or token changed: check again on this run)."""
    st.session_state.pop(HEALTH_KEY, None)


def record_failure(url: str, token: str | None, exc: BaseException) -> None:
    """A call to the server failed on a page: the sidebar says so from now on (until a check answers)."""
    if isinstance(exc, BackendError) and exc.kind in ("refused", "server"):
        return  # the server answered: it refused this request, it is not down
    st.session_state[HEALTH_KEY] = ServerHealth(url, token, False, str(exc), time.time())


__all__ = ["HEALTH_KEY", "MAX_AGE_S", "ServerHealth", "age_words", "check", "current", "forget",
           "record_failure"]
