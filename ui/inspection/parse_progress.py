"""A parse with its stage, elapsed time and a Cancel button while it runs (Parse & inspect).

The sweeps show a progress bar and a Cancel (:mod:`ui.sweeps.sweep`); a single parse used to show only
a spinner for up to minutes on a busy laptop (issue #27 item 5).  :func:`run_parse` runs the
page's parse through :func:`ui.model.actions.compute` and, while it runs, a line saying the stage
(loading / beam search at step n / scoring and token probabilities after the search) and the
elapsed time, updated by the decoder itself: the search calls its cancel check before every
decode step (:func:`amp.parser.search.cancel.cancel_scope`) and reports when it has finished
(:func:`amp.parser.search.cancel.progress_scope`).  Cancel is a button: its click requests a
rerun, which the same check sees (:func:`ui.model.use.rerun_requested`), so the model stops
within a step; the page then says the parse was cancelled.  When the parse ends, one caption
says how long it took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import streamlit as st

from amp.parser.search.cancel import cancel_scope, progress_scope
from ui.model import actions
from ui.model.use import rerun_requested

T = TypeVar("T")

#: Seconds between two redraws of the progress line (the decoder calls far more often).
REDRAW_S = 0.5


@dataclass
class ParseProgress:
    """The live line of one parse: stage, decode steps and elapsed seconds."""

    slot: Any
    after: str
    start: float = field(default_factory=time.monotonic)
    steps: int = 0
    searched: bool = False
    _drawn: float = 0.0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def stage(self) -> str:
        if self.searched:
            return self.after
        if self.steps:
            return f"Beam search: decode step {self.steps}"
        return "Starting (the model loads on its first uncached parse)"

    def line(self) -> str:
        return f"{self.stage()} · {self.elapsed:.0f} s elapsed"

    def draw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._drawn >= REDRAW_S:
            self._drawn = now
            self.slot.caption(self.line())

    def check(self) -> bool:
        """The decoder's cancel check: count the step, redraw, and stop on a pending rerun."""
        self.steps += 1
        self.draw()
        return rerun_requested()

    def done_searching(self, _n: int) -> None:
        self.searched = True
        self.draw(force=True)

    def summary(self) -> str:
        steps = f"{self.steps} decode step{'s' if self.steps != 1 else ''}" if self.steps else "from the cache"
        return f"Parsed in {self.elapsed:.1f} s ({steps})."


def _cancelled(flag: str) -> None:
    st.session_state[flag] = True


def run_parse(parser: Any, label: str, fn: Callable[[Any], T], *, key: str,
              after: str = "Scoring the readings and their token probabilities") -> T | None:
    """``actions.compute(parser, label, fn)`` with a live stage/elapsed line and a Cancel button.

    Returns the value, or None when it failed or was cancelled.  A Cancel shows "Parse
    cancelled" on the next run (:func:`cancelled_note`).
    """
    flag = f"{key}_cancelled"
    live = st.container()
    line, button = live.empty(), live.empty()
    button.button("Cancel", key=f"{key}_cancel", icon=":material/stop:", on_click=_cancelled, args=(flag,),
                  help="Stop the model now (within one decode step).")
    progress = ParseProgress(line, after)
    progress.draw(force=True)

    def tracked(p: Any) -> T:
        with cancel_scope(progress.check), progress_scope(progress.done_searching):
            return fn(p)

    try:
        value = actions.compute(parser, label, tracked)
    finally:
        button.empty()
    line.caption(progress.summary() if value is not None else f"Stopped after {progress.elapsed:.1f} s.")
    return value


def cancelled_note(key: str) -> None:
    """Say once that the parse was cancelled (after a Cancel click's rerun)."""
    if st.session_state.pop(f"{key}_cancelled", False):
        st.info("Parse cancelled: the model stopped. Press **Parse** to start again.", icon=":material/stop:")
