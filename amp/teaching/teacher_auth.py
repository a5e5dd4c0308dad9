"""The teacher's passphrase: who may use the whole app when it is reachable from a classroom network.

Pure logic (the sign-in widget is :mod:`ui.auth`).  The passphrase is ``$AMP_TEACHER_PASSWORD``;
without it, an app listening beyond loopback gets one generated at start (printed in the
terminal, :func:`generated_passphrase`), and an app on loopback stays open (the single-user
laptop).  Comparison is constant-time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import sys
import threading

#: The environment variable holding the teacher's passphrase.
ENV = "AMP_TEACHER_PASSWORD"
#: Bytes of randomness in a generated passphrase (16 → 22 URL-safe characters).
GENERATED_BYTES = 16

_LOCK = threading.Lock()
_GENERATED: list[str] = []


def listens_on_loopback(address: str | None) -> bool:
    """Whether a server bound to ``address`` is reachable from this machine only.

    ``None``/empty (Streamlit's default: every interface), ``0.0.0.0``, ``::`` and any other
    address or host name count as reachable from the network; ``localhost``, ``127.x.x.x`` and
    ``::1`` are loopback.
    """
    host = (address or "").strip().strip("[]")
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def generated_passphrase(*, announce: bool = True) -> str:
    """This process's generated passphrase (made on the first call; printed once to stderr)."""
    with _LOCK:
        if not _GENERATED:
            _GENERATED.append(secrets.token_urlsafe(GENERATED_BYTES))
            if announce:
                print(f"AmP Explorer: the app is reachable from the network and {ENV} is not set; "
                      f"teacher passphrase for this run: {_GENERATED[0]}", file=sys.stderr, flush=True)
        return _GENERATED[0]


def required_passphrase(address: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The passphrase the teacher must give, or None when the app stays open (loopback, none set)."""
    env = os.environ if environ is None else environ
    configured = env.get(ENV, "")
    if configured:
        return configured
    if listens_on_loopback(address):
        return None
    return generated_passphrase()


def passphrase_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of what was typed with the passphrase."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))
