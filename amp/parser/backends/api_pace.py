"""The pace of an endpoint: measured reply times, and the timeout and concurrency that follow them.

A server on a laptop's CPU answers one request at a time: requests sent together queue there,
and the last of four waits four replies long — past a fixed timeout, then retried, queueing
again (issue #46: 88 s replies, four in flight, a 120 s timeout).  :class:`Pace` measures each
reply (from the moment it was sent, not while it waited on this side) and adapts, within bounds
(docs/paper-notes.md §23):

* **the timeout** of a request, once :data:`MEASURED_BEFORE_ADAPTING` replies of its kind (a
  generation, a forced scoring: their times differ) are in:
  ``min(MAX_TIMEOUT_S, max(floor, TIMEOUT_FACTOR × p90 × size, 2 × the timeout a request of the
  kind last ran past))`` — ``floor`` is ``--api-timeout`` (it never shrinks below what was
  asked), p90 the 90th percentile of the kind's last :data:`WINDOW` replies per unit of size (a
  scoring's time grows with the prompt it echoes: its size is the prompt's length, so the tiny
  echo probe already paces the first scoring; a generation's size is 1); after a timeout, the
  retry gets twice as long (the server is likely still busy with the request given up on);
* **the requests in flight**: the first request goes alone (nothing is known yet); each reply
  that came back within :data:`SLOW_FACTOR` × the median reply of a request that was alone in
  flight, though sent with as many in flight as allowed, lets one more in, up to
  ``--api-concurrency``; a slower one (the server queues what it is sent) or a timeout halves
  them, down to one.

With ``adaptive`` off the timeout is ``--api-timeout`` and the concurrency ``--api-concurrency``,
as given.  Every wait for a free place ends when the backend closes or the budget runs out.
"""

from __future__ import annotations

import math
import statistics
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from amp.parser.backends.api_protocol import MAX_TIMEOUT_S

#: A request's timeout is this many times the p90 of the measured replies (at least --api-timeout).
TIMEOUT_FACTOR = 4.0
#: Replies of a kind measured before its timeout follows them.
MEASURED_BEFORE_ADAPTING = 1
#: Replies the p90 is taken over (the most recent).
WINDOW = 16
#: A reply slower than this many times the quickest one seen says the server queues requests.
SLOW_FACTOR = 1.6
#: Seconds between two looks of a request waiting for a free place (a close or the budget ends it).
LOOK_S = 0.25


def p90(values: list[float]) -> float:
    """The 90th percentile of ``values`` (nearest rank; ``values`` non-empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


class Pace:
    """Reply times of one endpoint and what follows from them (thread-safe).

    ``floor_s``: ``--api-timeout``; ``ceiling``: ``--api-concurrency``; ``adaptive``: adapt both
    (else they stay as given)."""

    def __init__(self, *, floor_s: float, ceiling: int, adaptive: bool = True) -> None:
        self.floor_s = float(floor_s)
        self.ceiling = int(ceiling)
        self.adaptive = adaptive
        self._lock = threading.Condition()
        self._replies: dict[str, deque[float]] = {}  # per kind
        self._alone: dict[str, deque[float]] = {}  # per kind: replies of requests alone in flight all along
        self._stretched: dict[str, float] = {}  # per kind: 2 × the timeout a request last ran past
        self._limit = 1 if adaptive else self.ceiling
        self._in_flight = 0
        self._entered = 0  # requests that took a place so far

    # -- what it says now -----------------------------------------------------------------------------

    @property
    def limit(self) -> int:
        """The requests allowed in flight now."""
        with self._lock:
            return self._limit

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    def timeout_s(self, kind: str = "", size: float = 1.0) -> float:
        """The timeout of a request of ``kind`` and ``size`` sent now (see the module docstring)."""
        with self._lock:
            if not self.adaptive:
                return self.floor_s
            replies = self._replies.get(kind, ())
            enough = len(replies) >= MEASURED_BEFORE_ADAPTING
            measured = TIMEOUT_FACTOR * p90(list(replies)) * max(size, 0.0) if enough else 0.0
            return min(MAX_TIMEOUT_S, max(self.floor_s, measured, self._stretched.get(kind, 0.0)))

    def reply_p90(self, kind: str = "") -> float | None:
        """The p90 of the measured replies of ``kind``, in seconds per unit of size (None before the first)."""
        with self._lock:
            replies = self._replies.get(kind)
            return p90(list(replies)) if replies else None

    # -- what happens -----------------------------------------------------------------------------------

    def enter(self, stop: Callable[[], bool]) -> Ticket:
        """Take one of the places in flight for a request (waiting for one; ``stop()`` true ends
        the wait with :class:`StopWaiting`); its ticket.  :meth:`leave` gives the place back."""
        with self._lock:
            while self._in_flight >= self._limit:
                if stop():
                    raise StopWaiting
                self._lock.wait(LOOK_S)
            self._in_flight += 1
            self._entered += 1
            return Ticket(in_flight=self._in_flight, entered=self._entered)

    def leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._lock.notify_all()

    def replied(self, seconds: float, ticket: Ticket, kind: str = "", size: float = 1.0) -> None:
        """The reply of the request of ``ticket`` (a request of ``kind`` and ``size``) came back
        ``seconds`` after it was sent: measure it (per unit of size); then half as many in flight
        if it was slow for its kind, one more if it was quick though sent with as many in flight
        as allowed.  (Call before :meth:`leave`.)"""
        seconds = max(0.0, seconds) / max(size, 1e-9)
        in_flight = ticket.in_flight
        with self._lock:
            self._replies.setdefault(kind, deque(maxlen=WINDOW)).append(seconds)
            self._stretched.pop(kind, None)  # a reply came: the measured ones speak again
            alone = self._alone.setdefault(kind, deque(maxlen=WINDOW))
            baseline = statistics.median(alone) if alone else None  # before this reply counts
            if in_flight == 1 and self._entered == ticket.entered:  # alone from its start to its reply
                alone.append(seconds)
            if self.adaptive:
                if baseline is not None and seconds > SLOW_FACTOR * baseline:
                    self._limit = max(1, self._limit // 2)
                elif in_flight >= self._limit and self._limit < self.ceiling:
                    self._limit += 1
            self._lock.notify_all()

    def timed_out(self, timeout_s: float, kind: str = "") -> None:
        """A request of ``kind`` ran past its timeout of ``timeout_s``: half as many in flight, and
        the next of its kind gets twice as long (at most :data:`MAX_TIMEOUT_S`)."""
        with self._lock:
            if self.adaptive:
                self._limit = max(1, self._limit // 2)
                self._stretched[kind] = min(MAX_TIMEOUT_S, max(self._stretched.get(kind, 0.0), 2.0 * timeout_s))


@dataclass(frozen=True)
class Ticket:
    """A request's place in flight: how many were in flight with it when it was sent (itself
    included) and the count of requests that had taken a place by then (itself included)."""

    in_flight: int
    entered: int


class StopWaiting(Exception):
    """A wait for a place in flight ended because its ``stop()`` turned true."""

