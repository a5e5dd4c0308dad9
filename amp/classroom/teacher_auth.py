"""The teacher's passphrase: who may use the whole app when it is reachable from a classroom network.

Pure logic (the sign-in widget is :mod:`ui.frame.auth`).  The passphrase is ``$AMP_TEACHER_PASSWORD``;
without it, an app listening beyond loopback gets one generated at start (printed in the
terminal, :func:`generated_passphrase`), and an app on loopback stays open (the single-user
laptop).  Comparison is constant-time (:func:`hmac.compare_digest`).  A sign-in becomes a signed,
expiring session token (:func:`issue_session`, kept in a cookie by ``ui.frame.auth`` so a reload keeps
it; :func:`end_session` signs out), and wrong passphrases are limited per client
(:class:`SignInLimiter`).
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable

from amp.errors import SettingError

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


# --- the signed session cookie (a reload keeps the teacher signed in) -------------------------

#: The cookie that keeps a teacher signed in across reloads and tabs (``ui.frame.auth``).
SESSION_COOKIE = "amp_teacher"
#: How long a sign-in lasts (a school day); then the passphrase is asked again.
SESSION_TTL_S = 12 * 3600
#: This process's signing secret: a restart of the app ends every session.
_SESSION_SECRET = secrets.token_bytes(32)
_REVOKED: set[str] = set()


def _signature(expected: str, expiry: int, nonce: str) -> str:
    key = hmac.new(_SESSION_SECRET, expected.encode("utf-8", "surrogatepass"), "sha256").digest()
    return hmac.new(key, f"{expiry}.{nonce}".encode("ascii"), "sha256").hexdigest()


def issue_session(expected: str, *, now: float | None = None, ttl_s: int = SESSION_TTL_S) -> str:
    """A signed session token ``<expiry>.<nonce>.<hmac>`` for a teacher who gave ``expected``.

    Signed with this process's secret and the passphrase, so it is worthless after a restart or
    a change of passphrase; it carries its own expiry (``ttl_s`` from ``now``, Unix seconds)."""
    expiry = int((time.time() if now is None else now) + ttl_s)
    nonce = secrets.token_hex(16)
    return f"{expiry}.{nonce}.{_signature(expected, expiry, nonce)}"


def session_valid(token: object, expected: str, *, now: float | None = None) -> bool:
    """Whether ``token`` was made by :func:`issue_session` for ``expected``, is not expired and
    was not ended by :func:`end_session` (constant-time signature check)."""
    if not isinstance(token, str) or len(token) > 200:
        return False
    parts = token.split(".")
    if len(parts) != 3 or not parts[0].isdigit() or len(parts[1]) != 32 or len(parts[2]) != 64:
        return False
    expiry, nonce, signature = int(parts[0]), parts[1], parts[2]
    if expiry <= (time.time() if now is None else now):
        return False
    with _LOCK:
        if nonce in _REVOKED:
            return False
    return hmac.compare_digest(signature.encode("ascii", "replace"), _signature(expected, expiry, nonce).encode("ascii"))


def end_session(token: object) -> None:
    """Sign out: ``token`` is refused from now on (in every tab that holds it)."""
    if isinstance(token, str) and token.count(".") == 2:
        with _LOCK:
            _REVOKED.add(token.split(".")[1])


def session_seconds_left(token: str, *, now: float | None = None) -> int:
    """Seconds until a valid ``token`` expires (the cookie's max-age)."""
    return max(0, int(token.split(".")[0]) - int(time.time() if now is None else now))


# --- sign-in attempts, limited per client ---------------------------------------------------


class SignInLimiter:
    """At most ``max_failures`` wrong passphrases per client in ``window_s`` seconds.

    A client over the limit waits (:meth:`wait_s`) until its oldest failure in the window is
    ``window_s`` old; while it waits, not even the right passphrase is checked.  A success
    forgets the client's failures.  Memory is bounded: at most ``max_clients`` clients are kept;
    a failure from a client the full table lacks drops the client whose last failure is the
    oldest (at equal clock readings, the one whose last failure came first), never the one failing now, so
    a new client is limited like any other.  ``clock`` (monotonic seconds, default
    :func:`time.monotonic`) is injectable, so tests move time by hand instead of sleeping.

    Raises :class:`~amp.errors.SettingError` for a ``max_failures`` or ``max_clients`` below 1 or
    a ``window_s`` that is not a positive finite number (each would switch the limit off).
    """

    def __init__(self, max_failures: int = 5, window_s: float = 60.0, *, max_clients: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:
        for name, count in (("max_failures", max_failures), ("max_clients", max_clients)):
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise SettingError(f"SignInLimiter {name} must be a whole number of at least 1, not {count!r}")
        if not (isinstance(window_s, int | float) and 0 < window_s < math.inf):
            raise SettingError(f"SignInLimiter window_s must be a positive number of seconds, not {window_s!r}")
        self.max_failures = max_failures
        self.window_s = window_s
        self.max_clients = max_clients
        self._clock = clock
        #: Client → its failure times in the window, oldest first; the dict's order is the order
        #: of the clients' last failures (a failure moves its client to the end).
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> list[float]:
        times = [t for t in self._failures.get(client, ()) if now - t < self.window_s]
        if times:
            self._failures[client] = times
        else:
            self._failures.pop(client, None)
        return times

    def wait_s(self, client: str) -> float:
        """Seconds ``client`` must wait before its next attempt (0: it may try now)."""
        with self._lock:
            now = self._clock()
            times = self._recent(client, now)
            if len(times) < self.max_failures:
                return 0.0
            return max(0.0, times[-self.max_failures] + self.window_s - now)

    def failed(self, client: str) -> int:
        """Record a wrong passphrase from ``client``; returns how many tries it has left before
        it must wait."""
        with self._lock:
            now = self._clock()
            times = self._recent(client, now)
            times.append(now)
            self._failures.pop(client, None)
            self._failures[client] = times[-self.max_failures:]  # last in order: the freshest
            while len(self._failures) > self.max_clients:
                del self._failures[next(iter(self._failures))]  # the stalest; never ``client`` (max_clients ≥ 1)
            return max(0, self.max_failures - len(times))

    def succeeded(self, client: str) -> None:
        """Forget ``client``'s failures (it gave the right passphrase)."""
        with self._lock:
            self._failures.pop(client, None)

    def reset(self) -> None:
        """Forget every client (a fresh process)."""
        with self._lock:
            self._failures.clear()


#: The app's limiter (one per process, shared by every browser session).
LIMITER = SignInLimiter()
