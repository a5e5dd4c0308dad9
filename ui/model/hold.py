"""One shared model, one page action at a time: a fair, re-entrant hold that no finished run keeps.

Every page action on the app's shared parser runs inside :func:`ui.model.use.using`, which
claims that parser's :class:`ModelHold` (``docs/architecture.md``: the app's model lives in
``ui/model/parsers.py``).  Three properties keep the app from ever hanging on it (issue #32):

* **Given back on every path.**  :meth:`ModelHold.claim` is a context manager that waits and
  takes *inside* its ``try``; whatever is raised — an error, or Streamlit's rerun/stop exception
  at any ``st`` call — its ``finally`` gives the hold back, or leaves the queue if it never got it.
* **Owned by a live run.**  A holder is a :class:`Claimant`: its thread *object* (a new thread may
  reuse a dead thread's id, so ids are never compared) and the script run it belongs to.  A holder
  whose thread has ended, or whose thread has moved on to another script run, holds nothing: the
  next claim takes the hold over.
* **Turns.**  Waiting claims are served first come, first served, so a sweep that gives the hold
  back between items lets a waiting tab in instead of taking it straight back.

A waiting claim wakes when the hold is given back and at least every :data:`POLL_S` seconds, and
calls its ``on_wait`` callback in between: a Streamlit run raises there when the user clicks
Cancel (or anything else), which ends the wait with nothing held.  Nothing here imports Streamlit;
:mod:`ui.model.use` is the Streamlit side (who a script run is, the visible wait note, ``using()``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

#: The longest a waiting claim sleeps before it looks again (and calls its ``on_wait``).
POLL_S = 0.1


def _no_run() -> object | None:
    return None


@dataclass(eq=False)
class Claimant:
    """Who claims the model: a thread, the script run it serves, and what for (in words).

    ``run`` is the marker of the script run at claim time and ``run_now`` reads the marker that
    run's context holds now (Streamlit gives every run a new one); outside a script run both
    are ``None``.  ``session`` names the browser tab (Streamlit session), if any.
    """

    thread: threading.Thread
    what: str = "another computation"
    session: str | None = None
    run: object | None = None
    run_now: Callable[[], object | None] = field(default=_no_run, repr=False)

    def alive(self) -> bool:
        """Whether this claimant's run is still going: its thread lives and serves the same run."""
        return self.thread.is_alive() and self.run_now() is self.run

    def same_run(self, other: Claimant) -> bool:
        """Whether ``other`` is this very run (a nested claim: re-entrant)."""
        return self.thread is other.thread and self.run is other.run


@dataclass
class _Held:
    by: Claimant
    since: float
    depth: int = 1


@dataclass(frozen=True)
class WaitInfo:
    """What a waiting claim is waiting for, passed to its ``on_wait`` callback."""

    holder: Claimant | None  #: the live holder (None: free, but an earlier claim is served first)
    held_s: float  #: how long the holder has had it
    waited_s: float  #: how long this claim has waited
    ahead: int  #: earlier claims still waiting in front of this one


@dataclass
class _Ticket:
    taken: bool = False


class ModelHold:
    """A fair, re-entrant hold on one shared model; see the module docstring."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.RLock())
        self._held: _Held | None = None
        self._queue: list[Claimant] = []

    # -- looking at it ------------------------------------------------------------------------------

    @property
    def holder(self) -> Claimant | None:
        """The live holder, if any (a holder whose run has ended is dropped here)."""
        with self._cond:
            self._drop_ended()
            return self._held.by if self._held else None

    @property
    def recorded(self) -> Claimant | None:
        """The holder as recorded, even one whose run has ended (for tests and diagnostics)."""
        with self._cond:
            return self._held.by if self._held else None

    @property
    def waiting(self) -> int:
        """How many claims are waiting now."""
        with self._cond:
            return len(self._queue)

    # -- claiming it --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def claim(self, me: Claimant, on_wait: Callable[[WaitInfo], None] | None = None) -> Iterator[None]:
        """Hold the model for the ``with`` block; wait (first come, first served) while another run has it.

        ``on_wait(info)`` is called as soon as the claim has to wait and then about every
        :data:`POLL_S` seconds; anything it raises ends the wait (nothing is held then).  A claim
        nested inside a claim of the same run takes it again at once.
        """
        ticket = _Ticket()
        try:
            self._take(me, ticket, on_wait)
            yield
        finally:
            self._give_back(me, ticket)

    def _take(self, me: Claimant, ticket: _Ticket, on_wait: Callable[[WaitInfo], None] | None) -> None:
        started = time.monotonic()
        with self._cond:
            if self._try_take(me, ticket):
                return
            self._queue.append(me)
        while True:
            if on_wait is not None:
                on_wait(self._info(me, started))
            with self._cond:
                if self._try_take(me, ticket):
                    return
                self._cond.wait(POLL_S)
                if self._try_take(me, ticket):
                    return

    def _try_take(self, me: Claimant, ticket: _Ticket) -> bool:
        """Take the hold if ``me`` may have it now (call with the condition held)."""
        self._drop_ended()
        held = self._held
        if held is not None:
            if not held.by.same_run(me):
                return False
            held.depth += 1
        else:
            if self._queue and self._queue[0] is not me:
                return False
            self._held = _Held(me, time.monotonic())
        if self._queue and self._queue[0] is me:
            self._queue.pop(0)
        ticket.taken = True
        return True

    def _give_back(self, me: Claimant, ticket: _Ticket) -> None:
        with self._cond:
            if ticket.taken:
                ticket.taken = False
                held = self._held
                if held is not None and held.by.same_run(me):  # (not if a later run took over an ended one)
                    held.depth -= 1
                    if held.depth == 0:
                        self._held = None
            self._queue[:] = [c for c in self._queue if c is not me]
            self._cond.notify_all()

    def _drop_ended(self) -> None:
        """Forget a holder and waiting claims whose runs have ended (call with the condition held)."""
        if self._held is not None and not self._held.by.alive():
            self._held = None
        self._queue[:] = [c for c in self._queue if c.alive()]

    def _info(self, me: Claimant, started: float) -> WaitInfo:
        now = time.monotonic()
        with self._cond:
            self._drop_ended()
            held = self._held
            ahead = next((i for i, c in enumerate(self._queue) if c is me), len(self._queue))
            return WaitInfo(holder=held.by if held else None, held_s=now - held.since if held else 0.0,
                            waited_s=now - started, ahead=ahead)


__all__ = ["POLL_S", "Claimant", "ModelHold", "WaitInfo"]
