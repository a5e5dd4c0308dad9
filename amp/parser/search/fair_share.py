"""One model shared fairly between concurrent requests, a decode step at a time (issue #44).

A :class:`StepGate` lets one request at a time use the model: the request holding *the turn*
computes, the others wait.  Every decode step of a search (the per-step check that
:func:`amp.parser.search.cancel.cancel_scope` installs) is a point where the holder hands the
turn over — to the waiting request that has held it the least so far (*least attained
service*).  A small request that arrives behind a search of minutes therefore waits for at most
one of its steps, runs as if alone (it has attained nothing yet), and the long search goes on
after it; several long searches take turns step by step.  One request computes at a time, so
the long one does not compete with the small one for the CPU's cores either.

A request that is cancelled (or passes its deadline) while it waits leaves the queue at once:
:meth:`StepGate.enter` and :meth:`StepGate.between_steps` poll its ``stopped`` check.

Inside a turn of an interleaving gate the model's own lock is not taken
(:func:`model_lock`): the gate already serialises every use of the model in its process, and a
request that kept the lock while it waits for its next turn would block the one that has it.
An engine whose model holds per-call state between steps (llama.cpp's cells) uses a gate with
``interleave=False``: the turn then passes only between calls.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from amp.parser.core.errors import SearchCancelled

#: Seconds a waiting request sleeps between looks at its ``stopped`` check (it is woken at once
#: when the turn passes; this only bounds how late a cancel or a deadline is noticed).
POLL_S = 0.05

_IN_TURN: contextvars.ContextVar[bool] = contextvars.ContextVar("amp_in_turn", default=False)


class Ticket:
    """One request's place at a gate: when it arrived and how long it has held the turn."""

    __slots__ = ("arrival", "attained", "name", "since")

    def __init__(self, name: str, arrival: int) -> None:
        self.name = name
        self.arrival = arrival
        #: Seconds of the gate's clock this request has held the turn (its current turn excluded).
        self.attained = 0.0
        #: When its current turn began (None: not holding the turn).
        self.since: float | None = None

    def rank(self) -> tuple[float, int]:
        """Who goes first among waiting requests: the least attained, then the earliest."""
        return self.attained, self.arrival

    def __repr__(self) -> str:
        return f"Ticket({self.name!r}, attained={self.attained:.3f})"


class StepGate:
    """The turn of one model (see the module docstring).  ``clock`` measures attained service
    (monotonic seconds; a test passes its own); ``interleave=False`` hands the turn over only
    between calls, never between steps."""

    def __init__(self, *, interleave: bool = True, clock: Callable[[], float] = time.monotonic,
                 poll_s: float = POLL_S) -> None:
        self.interleave = interleave
        self._clock = clock
        self._poll_s = poll_s
        self._cond = threading.Condition()
        self._holder: Ticket | None = None
        self._waiting: list[Ticket] = []
        self._arrivals = itertools.count()

    def ticket(self, name: str = "") -> Ticket:
        """A new request's ticket (it arrives now)."""
        return Ticket(name, next(self._arrivals))

    @property
    def waiting(self) -> int:
        """Requests waiting for the turn."""
        with self._cond:
            return len(self._waiting)

    def _best(self) -> Ticket | None:
        return min(self._waiting, key=Ticket.rank, default=None)

    def _wait_for_turn(self, ticket: Ticket, stopped: Callable[[], bool]) -> bool:
        """(Lock held, ``ticket`` waiting.)  Until ``ticket`` holds the turn (True) or ``stopped()``
        turns true first (False, and it leaves the queue)."""
        while not (self._holder is None and self._best() is ticket):
            if stopped():
                self._waiting.remove(ticket)
                self._cond.notify_all()  # the first in line may be another now
                return False
            self._cond.wait(self._poll_s)
        self._waiting.remove(ticket)
        self._holder = ticket
        ticket.since = self._clock()
        return True

    def enter(self, ticket: Ticket, stopped: Callable[[], bool] = lambda: False) -> bool:
        """Wait for the turn: True once ``ticket`` holds it, False if ``stopped()`` came first."""
        with self._cond:
            self._waiting.append(ticket)
            return self._wait_for_turn(ticket, stopped)

    def between_steps(self, ticket: Ticket, stopped: Callable[[], bool] = lambda: False) -> bool:
        """A step boundary of the holder ``ticket``: it keeps the turn unless a waiting request has
        attained less; then it waits for its next turn.  False if ``stopped()`` while waiting."""
        if not self.interleave:
            return True
        with self._cond:
            if self._holder is not ticket or ticket.since is None:  # (it lost its turn: it queues again)
                if ticket not in self._waiting:
                    self._waiting.append(ticket)
                return self._wait_for_turn(ticket, stopped)
            now = self._clock()
            held = ticket.attained + (now - ticket.since)
            first = self._best()
            if first is None or first.rank() >= (held, ticket.arrival):
                return True
            ticket.attained, ticket.since, self._holder = held, None, None
            self._waiting.append(ticket)
            self._cond.notify_all()
            return self._wait_for_turn(ticket, stopped)

    def leave(self, ticket: Ticket) -> None:
        """``ticket`` is done: the turn (if it holds it) passes to the first in line."""
        with self._cond:
            if self._holder is ticket:
                if ticket.since is not None:
                    ticket.attained += self._clock() - ticket.since
                ticket.since, self._holder = None, None
            elif ticket in self._waiting:
                self._waiting.remove(ticket)
            self._cond.notify_all()

    @contextlib.contextmanager
    def turn(self, ticket: Ticket, stopped: Callable[[], bool] = lambda: False) -> Iterator[None]:
        """Hold the turn inside (:class:`SearchCancelled` if ``stopped()`` before it came); the
        model's lock is skipped inside when this gate interleaves (:func:`model_lock`)."""
        if not self.enter(ticket, stopped):
            raise SearchCancelled("the request was stopped while it waited for the model")
        token = _IN_TURN.set(self.interleave)
        try:
            yield
        finally:
            _IN_TURN.reset(token)
            self.leave(ticket)

    def step_check(self, ticket: Ticket, stopped: Callable[[], bool]) -> Callable[[], bool]:
        """The per-step check to install with :func:`~amp.parser.search.cancel.cancel_scope`:
        a step boundary at this gate, then whether the request should stop (looked at again
        once its turn came back: it may have been stopped while it waited)."""

        def check() -> bool:
            return stopped() or not self.between_steps(ticket, stopped) or stopped()

        return check


def model_lock(lock: Any) -> Any:
    """The context to hold while using a model guarded by ``lock``: the lock itself, or nothing
    inside a turn of an interleaving :class:`StepGate` (which serialises the model's use)."""
    return contextlib.nullcontext() if _IN_TURN.get() else lock
