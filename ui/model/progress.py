"""The live line of a long model action and its one Cancel (issue #27 item 5, issue #40 point 6).

A parse (:mod:`ui.inspection.parse_progress`) and a poll created with the model
(:mod:`ui.classroom.poll_creation`) can run for minutes on a busy laptop.  While they run, one
line says what is running, how long it has run and, where there is a pace to go by, about how
long it has left (:mod:`amp.reporting.durations`); below it, one **Cancel**.

* :class:`LiveLine` is the line, redrawn in place at most every :data:`REDRAW_S` s.  Its
  :meth:`~LiveLine.check` is the decoder's cancel check (installed with
  :func:`amp.parser.search.cancel.cancel_scope`): the search calls it before every decode step, so
  the line moves with the search and a click (a pending rerun, :func:`ui.model.use.rerun_requested`)
  stops the model within a step.  Its :meth:`~LiveLine.heard_wait` is a
  :func:`ui.model.use.wait_scope` listener: while the action waits for the model (another tab
  holds it) the line says so and its clock moves, and the wait's note has no Cancel of its own.
  Its :meth:`~LiveLine.heard_requests` is a
  :func:`amp.parser.backends.api_progress.request_progress_scope` listener: a model behind an API
  has no decode steps here, so the line says its requests instead (done of planned, retries, in
  flight) with the time left at their pace (issue #46).
* :func:`cancel_button` draws the one Cancel; its click marks the action cancelled for the next
  run, which :func:`was_cancelled` reads once (the page then says so).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from amp.parser.backends.api_progress import RequestProgress
from amp.reporting.durations import duration_text, left_text
from amp.reporting.request_progress import requests_text
from ui.model.hold import WaitInfo
from ui.model.use import rerun_requested

#: Seconds between two redraws of a live line (the decoder calls its check far more often).
REDRAW_S = 0.5
#: The stage a live line shows while its action waits for the model.
WAITING = "Waiting for the model (another computation holds it; see the note below)"


def _now() -> float:
    return time.monotonic()


def _flag(key: str) -> str:
    return f"{key}_cancelled"


def _mark_cancelled(key: str) -> None:
    st.session_state[_flag(key)] = True


def cancel_button(where: Any, key: str, *, help: str) -> None:
    """The action's one Cancel, drawn into ``where`` (key ``<key>_cancel``).  A click requests a
    rerun (which the running action sees at its next check) and marks ``key`` cancelled."""
    where.button("Cancel", key=f"{key}_cancel", icon=":material/stop:", on_click=_mark_cancelled, args=(key,),
                 help=help)


def was_cancelled(key: str) -> bool:
    """Whether the action ``key`` was cancelled in the run before (read once: the flag is cleared)."""
    return bool(st.session_state.pop(_flag(key), False))


@dataclass
class LiveLine:
    """One line of progress drawn into ``slot`` (an ``st.empty()``): stage · elapsed · time left.

    Subclasses say the :meth:`stage` and, when they have a pace to go by, the :meth:`left` part.
    """

    slot: Any
    start: float = field(default_factory=_now)
    waiting: WaitInfo | None = None
    requests: RequestProgress | None = None
    _drawn: float = 0.0

    @property
    def elapsed(self) -> float:
        """Seconds since the action started (a wait for the model included)."""
        return _now() - self.start

    def stage(self) -> str:
        """What is running now."""
        return "Working"

    def left(self) -> str | None:
        """About how long is left (``None``: no estimate to show)."""
        return None

    def line(self) -> str:
        """``"<stage> · 12 s elapsed · about 40 s left"`` (the stage is :data:`WAITING` during a wait)."""
        if self.waiting is None and self.requests is not None:
            r = self.requests
            return " · ".join([f"Asking the model endpoint: {requests_text(r)}", f"{duration_text(self.elapsed)} elapsed",
                               *([left_text(r.left_s)] if r.done < r.total else [])])
        parts = [WAITING if self.waiting is not None else self.stage(), f"{duration_text(self.elapsed)} elapsed"]
        left = None if self.waiting is not None else self.left()
        return " · ".join(parts + ([left] if left else []))

    def draw(self, *, force: bool = False) -> None:
        """Redraw the line (at most every :data:`REDRAW_S` s unless ``force``)."""
        now = _now()
        if force or now - self._drawn >= REDRAW_S:
            self._drawn = now
            self.slot.caption(self.line())

    def check(self) -> bool:
        """The decoder's cancel check: note the step (:meth:`stepped`), redraw, and stop on a pending rerun.
        (An API model's requests call it between replies: no decode step then.)"""
        if self.requests is None:
            self.stepped()
        self.draw()
        return rerun_requested()

    def stepped(self) -> None:
        """One decode step is about to run (subclasses count it)."""

    def heard_requests(self, progress: RequestProgress) -> None:
        """A :func:`~amp.parser.backends.api_progress.request_progress_scope` listener: the API
        model's requests so far (the line shows them from now on)."""
        self.requests = progress
        self.draw()

    def heard_wait(self, info: WaitInfo | None) -> None:
        """A :func:`ui.model.use.wait_scope` listener: ``info`` at each look of a wait, ``None`` once held."""
        self.waiting = info
        self.draw(force=info is None)


__all__ = ["REDRAW_S", "WAITING", "LiveLine", "cancel_button", "was_cancelled"]
