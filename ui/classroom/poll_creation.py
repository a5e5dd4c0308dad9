"""The model's parse and P(LF0) of every sentence of a new poll, in plain sight (issue #40 point 6).

"Create poll" with the model's numbers used to grey the page for a minute or more (one uncached
sentence on a busy laptop) with a spinner and no way out.  :func:`reveal_all` runs
:func:`ui.classroom.model_reveal.model_reveal` sentence after sentence under one
:class:`PollProgress` line — "Parsing sentence 2 of 5 with the model (decode step 14) · 34 s
elapsed · about 50 s left" (the time left at the pace of the sentences done so far; "estimating…"
before the first) — and one **Cancel** (:mod:`ui.model.progress`).  A Cancel stops the model
within a decode step and reruns the page before the poll is created: no half poll.  The
sentences parsed before it are in the result cache, so creating the poll again goes faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from amp.reporting.durations import left_text, time_left_s
from amp.teaching import lesson
from ui.classroom.model_reveal import model_reveal
from ui.model.progress import LiveLine, cancel_button, was_cancelled
from ui.model.use import wait_scope

#: What the Cancel says it does.
CANCEL_HELP = "Stop the model now: no poll is created (the sentences parsed so far stay cached)."


@dataclass
class PollProgress(LiveLine):
    """The live line of a poll's sentences going through the model: which one, its decode step,
    elapsed time and the time left at the pace of the sentences done."""

    total: int = 1
    done: int = 0
    done_at: float = 0.0
    steps: int = 0

    def stage(self) -> str:
        step = f" (decode step {self.steps})" if self.steps else ""
        return f"Parsing sentence {min(self.done + 1, self.total)} of {self.total} with the model{step}"

    def left(self) -> str:
        return left_text(time_left_s(self.done_at, self.done, self.total, self.elapsed))

    def stepped(self) -> None:
        self.steps += 1

    def finished_one(self) -> None:
        """One more sentence is done: the pace for the estimate."""
        self.done += 1
        self.done_at = self.elapsed
        self.steps = 0
        self.draw(force=True)


def reveal_all(surfaces: Sequence[str], *, key: str) -> list[lesson.ModelReveal | None]:
    """The model's reveal of each sentence (``None`` where the model or the sentence is
    unavailable), with a live line and one Cancel drawn here; a Cancel's click ends the run
    before this returns (Streamlit reruns the page, :func:`cancelled_note` then says so)."""
    live = st.container()
    line, button = live.empty(), live.empty()
    cancel_button(button, key, help=CANCEL_HELP)
    progress = PollProgress(line, total=len(surfaces))
    progress.draw(force=True)
    out: list[lesson.ModelReveal | None] = []
    try:
        with wait_scope(progress.heard_wait):
            for surface in surfaces:
                out.append(model_reveal(surface, progress=progress))
                progress.finished_one()  # (a Cancel's pending rerun stops the run at this redraw)
    finally:
        button.empty()
        line.empty()
    return out


def cancelled_note(key: str) -> None:
    """Say once, after a Cancel's rerun, that no poll was created."""
    if was_cancelled(key):
        st.info("Poll creation cancelled: the model stopped and **no poll was created**. The sentences parsed "
                "so far are cached: **Create poll** again goes faster.", icon=":material/stop:")


__all__ = ["CANCEL_HELP", "PollProgress", "cancelled_note", "reveal_all"]
