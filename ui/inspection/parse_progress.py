"""A parse with its stage, elapsed time, time left and one Cancel button while it runs (Parse & inspect).

The sweeps show a progress bar and a Cancel (:mod:`ui.sweeps.sweep`); a single parse used to show only
a spinner for up to minutes on a busy laptop (issue #27 item 5).  :func:`run_parse` runs the
page's parse through :func:`ui.model.actions.compute` and, while it runs, a line
(:class:`ui.model.progress.LiveLine`) saying the stage — waiting for the model, loading, beam
search at decode step n (of at most N, with about how long is left, when the search has a token
budget), scoring and token probabilities after the search — and the elapsed time, updated by the
decoder itself: the search calls its cancel check before every decode step
(:func:`amp.parser.search.cancel.cancel_scope`) and reports when it has finished
(:func:`amp.parser.search.cancel.progress_scope`).  Cancel is a button: its click requests a
rerun, which the same check sees (:func:`ui.model.use.rerun_requested`), so the model stops
within a step; the page then says the parse was cancelled.

When the parse ends, one caption says how long it took and which of its parts came from the
result cache (issue #40 point 6: "from the cache" said nothing of a scoring that had just run for
half a minute).  What is cached is looked up before the parse (:meth:`ParseAsk.cached_parts`:
cache keys only, nothing decoded, no model loaded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

import streamlit as st

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.backends.api_progress import request_progress_scope
from amp.parser.search.cancel import cancel_scope, progress_scope
from amp.parser.search.settings import DEFAULT_SEARCH, SearchSettings
from amp.reporting.durations import left_text, time_left_s
from ui.model import actions
from ui.model.progress import LiveLine, cancel_button, was_cancelled
from ui.model.use import wait_scope

T = TypeVar("T")


class ParsePart(StrEnum):
    """The parts of a parse that the result cache may already hold."""

    SEARCH = "search"  # the beam search (the parse's beams)
    SCORES = "scores"  # the forced scores of the two readings and the top beam's token probabilities


@dataclass(frozen=True)
class ParseAsk:
    """What a parse computes: the prompt, its search, the two readings (``None``: a parse alone), the
    LF format and a teacher's own words.  The same values the page passes to the parse itself."""

    prompt: str
    search: SearchSettings = DEFAULT_SEARCH
    lf0: str | None = None
    lf1: str | None = None
    fmt: str = DEFAULT_FORMAT
    words: OwnWords = NO_WORDS

    def parts(self) -> tuple[ParsePart, ...]:
        """The parts this parse computes (scores only with both readings)."""
        both = self.lf0 is not None and self.lf1 is not None
        return (ParsePart.SEARCH, ParsePart.SCORES) if both else (ParsePart.SEARCH,)

    def cached_parts(self, parser: Any) -> frozenset[ParsePart]:
        """Which of :meth:`parts` the parser's result cache holds (key look-ups; nothing decoded).

        Scores count as cached when the pair's scores are and, the search being cached too, the
        token probabilities of its top beam (what :func:`amp.evaluation.inspection.inspect` reads).
        """
        found: set[ParsePart] = set()
        parse = parser.cached_parse(self.prompt, self.search, fmt=self.fmt, words=self.words)
        if parse is not None:
            found.add(ParsePart.SEARCH)
        if parse is None or ParsePart.SCORES not in self.parts():
            return frozenset(found)  # without the search, its top beam's token probabilities are still to come
        pair = parser.cached_pair(self.prompt, str(self.lf0), str(self.lf1), fmt=self.fmt, words=self.words)
        top = parse.beams[0] if parse.beams else None
        steps = top is None or bool(top.steps) or parser.cached(
            "steps", prompt=self.prompt, fmt=self.fmt, token_ids=list(top.token_ids),
            constrained=parse.constrained, words=self.words)
        if pair is not None and steps:
            found.add(ParsePart.SCORES)
        return frozenset(found)


def _joined(parts: list[ParsePart]) -> str:
    return " and ".join(str(p) for p in parts)


def cache_note(parts: tuple[ParsePart, ...], cached: frozenset[ParsePart]) -> str:
    """Which parts came from the cache, in words: ``"search from the cache; scores computed"``,
    ``"search and scores from the cache"``, ``"nothing from the cache"``."""
    hit = [p for p in parts if p in cached]
    computed = [p for p in parts if p not in cached]
    if not hit:
        return "nothing from the cache"
    if not computed:
        return f"{_joined(hit)} from the cache"
    return f"{_joined(hit)} from the cache; {_joined(computed)} computed"


@dataclass
class ParseProgress(LiveLine):
    """The live line of one parse: stage, decode steps (of at most ``max_steps``) and elapsed seconds.

    ``cached``: the parts the cache holds (``None``: not looked up); a cached search has no decode
    steps, so the line starts at the stage after it (``after``)."""

    after: str = "Scoring the readings and their token probabilities"
    max_steps: int | None = None
    parts: tuple[ParsePart, ...] = (ParsePart.SEARCH, ParsePart.SCORES)
    cached: frozenset[ParsePart] | None = None
    steps: int = 0
    step_at: float = 0.0
    first_at: float = 0.0
    searched: bool = False

    def stage(self) -> str:
        if self.searched or (self.cached is not None and ParsePart.SEARCH in self.cached):
            return self.after
        if self.steps:
            total = f" of at most {self.max_steps}" if self.max_steps else ""
            return f"Beam search: decode step {self.steps}{total}"
        return "Starting (the model loads on its first uncached parse)"

    def left(self) -> str | None:
        """About how long the search has left, at the pace of its decode steps so far — only when
        its token budget is known (``max_steps``) and it runs; no made-up total otherwise.  The pace
        is that of the steps after the first (which may carry the prompt's pass)."""
        if self.max_steps is None or self.searched or not self.steps:
            return None
        return left_text(time_left_s(self.step_at - self.first_at, self.steps - 1, self.max_steps,
                                     self.elapsed - self.first_at))

    def stepped(self) -> None:
        """Decode step ``steps + 1`` is about to run: the ones before it are done."""
        self.steps += 1
        self.step_at = self.elapsed
        if self.steps == 1:
            self.first_at = self.step_at

    def done_searching(self, _n: int) -> None:
        self.searched = True
        self.draw(force=True)

    def summary(self) -> str:
        """``"Parsed in 36.7 s (12 decode steps; search from the cache; scores computed)."``"""
        notes = [f"{self.steps} decode step{'s' if self.steps != 1 else ''}"] if self.steps else []
        if self.cached is not None:
            notes.append(cache_note(self.parts, self.cached))
        return f"Parsed in {self.elapsed:.1f} s" + (f" ({'; '.join(notes)})." if notes else ".")


def run_parse(parser: Any, label: str, fn: Callable[[Any], T], *, key: str,
              after: str = "Scoring the readings and their token probabilities",
              ask: ParseAsk | None = None) -> T | None:
    """``actions.compute(parser, label, fn)`` with a live stage/elapsed line and one Cancel button.

    ``ask``: what ``fn`` computes; with it the line gives the search's budget (``max_new_tokens``,
    when set) and the summary says which parts came from the cache.  Returns the value, or None
    when it failed or was cancelled.  A Cancel shows "Parse cancelled" on the next run
    (:func:`cancelled_note`).  A wait for the model (another tab holds it) moves the line and
    has no Cancel of its own.
    """
    live = st.container()
    line, button = live.empty(), live.empty()
    cancel_button(button, key, help="Stop the model now (within one decode step).")
    progress = ParseProgress(line, after=after, max_steps=ask.search.max_new_tokens if ask else None,
                             parts=ask.parts() if ask else (ParsePart.SEARCH, ParsePart.SCORES))
    if ask is not None:
        try:
            progress.cached = ask.cached_parts(parser)
        except Exception:  # noqa: BLE001 - the note is a courtesy: a cache that cannot say leaves it out
            progress.cached = None
    progress.draw(force=True)

    def tracked(p: Any) -> T:
        with cancel_scope(progress.check), progress_scope(progress.done_searching), \
                request_progress_scope(progress.heard_requests):  # an API model's requests (issue #46)
            return fn(p)

    try:
        with wait_scope(progress.heard_wait):
            value = actions.compute(parser, label, tracked)
    finally:
        button.empty()
    line.caption(progress.summary() if value is not None else f"Stopped after {progress.elapsed:.1f} s.")
    return value


def cancelled_note(key: str) -> None:
    """Say once that the parse was cancelled (after a Cancel click's rerun)."""
    if was_cancelled(key):
        st.info("Parse cancelled: the model stopped. Press **Parse** to start again.", icon=":material/stop:")
