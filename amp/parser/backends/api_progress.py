"""Hearing of an API backend's requests while they run: requests done, retries, time left.

A parse against a slow endpoint can take minutes with nothing to show (issue #46: 400 s of
silence).  A caller installs a listener with :func:`request_progress_scope`; the API backend
(:mod:`amp.parser.backends.api`) counts the requests it plans and makes for calls started inside
the scope in a :class:`RequestWatch`, and calls the listener **in the caller's thread** — after
each reply and about once a second while it waits (so a page can redraw, a terminal line can
tick) — with a :class:`RequestProgress`.  The library prints nothing: the CLI writes the line to
stderr (:mod:`amp.cli.progress`), the pages show it in their live line (:mod:`ui.model.progress`).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["RequestProgress", "RequestWatch", "current_watch", "request_progress_scope"]


@dataclass(frozen=True)
class RequestProgress:
    """The requests of one scope so far: ``done`` of ``total`` planned (a retry is not a new one),
    ``retries`` made, ``in_flight`` now (of ``limit`` allowed), the ``timeout_s`` a request gets now,
    ``elapsed_s`` since the first was planned, and ``left_s``: about how long the rest take at the
    pace so far (None before the first reply: no pace yet)."""

    done: int
    total: int
    retries: int
    in_flight: int
    limit: int
    timeout_s: float
    elapsed_s: float
    left_s: float | None


Listener = Callable[[RequestProgress], None]


class RequestWatch:
    """The counts of one :func:`request_progress_scope` (updated from the request threads)."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self._lock = threading.Lock()
        self._start: float | None = None
        self._planned = self._done = self._retries = 0
        self._done_at = 0.0
        self._timeout_s: float | None = None  # the timeout of the latest request sent

    def planned(self, n: int) -> None:
        with self._lock:
            if self._start is None:
                self._start = time.monotonic()
            self._planned += n

    def finished(self) -> None:
        with self._lock:
            self._done += 1
            self._done_at = time.monotonic() - (self._start or time.monotonic())

    def retried(self) -> None:
        with self._lock:
            self._retries += 1

    def sent(self, timeout_s: float) -> None:
        """A request (or a retry) was sent with ``timeout_s``."""
        with self._lock:
            self._timeout_s = timeout_s

    def snapshot(self, *, in_flight: int, limit: int, timeout_s: float) -> RequestProgress:
        """The counts now, with the backend's ``in_flight``, ``limit`` and ``timeout_s`` (the
        latest request's own timeout instead, once one was sent)."""
        with self._lock:
            elapsed = time.monotonic() - self._start if self._start is not None else 0.0
            left = None
            if self._done:
                per = self._done_at / self._done
                left = max(0.0, per * (self._planned - self._done) - max(0.0, elapsed - self._done_at))
            return RequestProgress(done=self._done, total=self._planned, retries=self._retries, in_flight=in_flight,
                                   limit=limit, timeout_s=self._timeout_s if self._timeout_s is not None else timeout_s,
                                   elapsed_s=elapsed, left_s=left)

    def tell(self, *, in_flight: int, limit: int, timeout_s: float) -> None:
        """Call the listener with :meth:`snapshot` (from the caller's thread)."""
        self.listener(self.snapshot(in_flight=in_flight, limit=limit, timeout_s=timeout_s))


_WATCH: contextvars.ContextVar[RequestWatch | None] = contextvars.ContextVar("amp_api_watch", default=None)


@contextlib.contextmanager
def request_progress_scope(listener: Listener | None) -> Iterator[RequestWatch | None]:
    """API requests of calls started inside (this thread/context) are counted and ``listener`` told."""
    watch = RequestWatch(listener) if listener is not None else None
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


def current_watch() -> RequestWatch | None:
    """The watch of the innermost :func:`request_progress_scope` (None outside any)."""
    return _WATCH.get()
