"""The live line of a long model action and its one Cancel (ui.model.progress, issue #40 point 6).

A parse says its stage, elapsed time and — when the search's token budget is known — about how
long is left, and at the end which parts came from the cache; a poll created with the model says
which sentence of how many, elapsed time and the time left at the pace of the sentences done; a
wait for the model moves the line and shows exactly one Cancel; a Cancel during poll creation
creates no poll; a live chart's refresh does not stop the model.
"""

from __future__ import annotations

import threading
import time

import pytest
from app_helpers import start_run, texts

from amp.reporting.durations import ESTIMATING
from ui.classroom.poll_creation import PollProgress
from ui.inspection.parse_progress import ParsePart, ParseProgress, cache_note
from ui.model import progress as live
from ui.model import use as model_use
from ui.model.hold import WaitInfo

BOUND_S = 30.0


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


class _Slot:
    """Stands in for an ``st.empty()``: remembers the last caption."""

    def __init__(self) -> None:
        self.text = ""

    def caption(self, text: str) -> None:
        self.text = text


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(live, "time", fake)
    monkeypatch.setattr(live, "rerun_requested", lambda: False)
    return fake


def _at(clock: _Clock, line: live.LiveLine, t: float) -> str:
    clock.now = 100.0 + t
    return line.line()


def test_a_parse_with_a_token_budget_says_the_step_of_how_many_and_the_time_left(clock: _Clock) -> None:
    p = ParseProgress(_Slot(), max_steps=64)
    assert _at(clock, p, 0) == "Starting (the model loads on its first uncached parse) · 0 s elapsed"
    clock.now = 102.0
    p.check()  # before decode step 1 (the prompt's pass may come with it)
    assert p.line() == f"Beam search: decode step 1 of at most 64 · 2 s elapsed · {ESTIMATING}"
    for t in range(3, 13):  # steps 2 … 11, one a second
        clock.now = 100.0 + t
        p.check()
    # 10 steps in 10 s after the first: 1 s a step, 54 of the 64 still to come at most
    assert p.line() == "Beam search: decode step 11 of at most 64 · 12 s elapsed · about 54 s left"
    assert _at(clock, p, 16) == "Beam search: decode step 11 of at most 64 · 16 s elapsed · about 50 s left"
    p.done_searching(1)
    assert p.line() == "Scoring the readings and their token probabilities · 16 s elapsed"


def test_without_a_budget_there_is_no_made_up_total(clock: _Clock) -> None:
    p = ParseProgress(_Slot())
    for t in (1, 2, 3):
        clock.now = 100.0 + t
        p.check()
    assert p.line() == "Beam search: decode step 3 · 3 s elapsed"


def test_a_cached_search_starts_at_the_scoring_stage_and_the_summary_says_what_came_from_the_cache(
        clock: _Clock) -> None:
    p = ParseProgress(_Slot(), cached=frozenset({ParsePart.SEARCH}))
    assert p.line() == "Scoring the readings and their token probabilities · 0 s elapsed"
    clock.now = 136.7
    assert p.summary() == "Parsed in 36.7 s (search from the cache; scores computed)."  # was "(from the cache)"
    done = ParseProgress(_Slot(), cached=frozenset(ParsePart))
    assert done.summary() == "Parsed in 0.0 s (search and scores from the cache)."
    fresh = ParseProgress(_Slot(), cached=frozenset())
    fresh.steps = 12
    assert fresh.summary() == "Parsed in 0.0 s (12 decode steps; nothing from the cache)."
    unknown = ParseProgress(_Slot())  # not looked up: no claim about the cache
    assert unknown.summary() == "Parsed in 0.0 s."


def test_cache_note_in_words() -> None:
    both = (ParsePart.SEARCH, ParsePart.SCORES)
    assert cache_note(both, frozenset()) == "nothing from the cache"
    assert cache_note(both, frozenset({ParsePart.SEARCH})) == "search from the cache; scores computed"
    assert cache_note(both, frozenset({ParsePart.SCORES})) == "scores from the cache; search computed"
    assert cache_note(both, frozenset(both)) == "search and scores from the cache"
    assert cache_note((ParsePart.SEARCH,), frozenset({ParsePart.SEARCH})) == "search from the cache"


def test_a_poll_created_with_the_model_says_which_sentence_and_the_time_left(clock: _Clock) -> None:
    p = PollProgress(_Slot(), total=5)
    assert p.line() == f"Parsing sentence 1 of 5 with the model · 0 s elapsed · {ESTIMATING}"
    for t in (1, 2, 3):
        clock.now = 100.0 + t
        p.check()
    assert p.line() == f"Parsing sentence 1 of 5 with the model (decode step 3) · 3 s elapsed · {ESTIMATING}"
    clock.now = 120.0
    p.finished_one()
    assert p.slot.text == "Parsing sentence 2 of 5 with the model · 20 s elapsed · about 80 s left"
    assert _at(clock, p, 30) == "Parsing sentence 2 of 5 with the model · 30 s elapsed · about 70 s left"
    for t in (40, 60, 80):
        clock.now = 100.0 + t
        p.finished_one()
    assert p.line() == "Parsing sentence 5 of 5 with the model · 80 s elapsed · about 20 s left"
    clock.now = 185.0
    p.finished_one()
    assert p.line() == "Parsing sentence 5 of 5 with the model · 85 s elapsed · about 0 s left"


def test_a_wait_replaces_the_stage_and_its_clock_goes_on(clock: _Clock) -> None:
    p = PollProgress(_Slot(), total=2)
    clock.now = 107.0
    p.heard_wait(WaitInfo(holder=None, held_s=0.0, waited_s=7.0, ahead=0))
    assert p.slot.text == f"{live.WAITING} · 7 s elapsed"
    clock.now = 112.0
    p.heard_wait(WaitInfo(holder=None, held_s=0.0, waited_s=12.0, ahead=0))
    assert p.slot.text == f"{live.WAITING} · 12 s elapsed"  # (redrawn at most every REDRAW_S: 5 s later it is)
    p.heard_wait(None)  # the model is held now
    assert p.slot.text == f"Parsing sentence 1 of 2 with the model · 12 s elapsed · {ESTIMATING}"


def test_a_live_charts_refresh_does_not_stop_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fragment's ``run_every`` refresh is queued behind the script (Streamlit does not stop it),
    so the decoder must not take it for a Cancel; a click (a full rerun) or a stop is one."""
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests

    class Ctx:
        script_requests = ScriptRequests()

    monkeypatch.setattr(model_use, "_context", lambda: Ctx)
    assert model_use.rerun_requested() is False
    Ctx.script_requests.request_rerun(RerunData(fragment_id_queue=["live-results"]))
    assert model_use.rerun_requested() is False
    Ctx.script_requests.request_rerun(RerunData(query_string=""))  # a click outside the fragment
    assert model_use.rerun_requested() is True
    Ctx.script_requests = ScriptRequests()
    Ctx.script_requests.request_rerun(RerunData(fragment_id_queue=["f"], is_fragment_scoped_rerun=True))
    assert model_use.rerun_requested() is True  # st.rerun(scope="fragment") does stop the run
    Ctx.script_requests = ScriptRequests()
    Ctx.script_requests.request_stop()
    assert model_use.rerun_requested() is True


# -- a real script run waiting for the model (another tab holds it) --------------------------------


def _until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + BOUND_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {BOUND_S:.0f} s: {what}")
        time.sleep(0.01)


class _Holder:
    """Another tab holding ``parser`` until :meth:`give_back`."""

    def __init__(self, parser: object) -> None:
        held, self.release = threading.Event(), threading.Event()

        def body() -> None:
            with model_use.using(parser, what="a sweep in another tab"):
                held.set()
                self.release.wait(BOUND_S)

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()
        assert held.wait(BOUND_S)

    def give_back(self) -> None:
        self.release.set()
        self.thread.join(BOUND_S)


def _parse_script(parser: object, seen: dict) -> None:
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.inspection.parse_progress import run_parse

    seen["requests"] = get_script_run_ctx().script_requests
    run_parse(parser, "Parsing…", lambda p: "parsed", key="pp")


def test_a_waiting_parse_shows_one_cancel_and_its_line_moves(app_env) -> None:
    """Issue #40 point 6: "Starting… 0 s elapsed" stood still while the tab waited, beside two
    Cancel buttons (the parse's and the wait note's)."""
    from streamlit.testing.v1 import AppTest

    class Parser:
        spec = "tiny-model"
        loaded = True

    parser = Parser()
    other = _Holder(parser)
    seen: dict = {}
    app = AppTest.from_function(_parse_script, args=(parser, seen), default_timeout=BOUND_S)
    runner, outcome = start_run(app)
    _until(lambda: model_use.hold_of(parser).waiting == 1, "the parse waits for the model")
    time.sleep(2.2)  # the line is redrawn at least every REDRAW_S while the wait looks every POLL_S
    seen["requests"].request_stop()  # what the Cancel's click does to the waiting run
    runner.join(BOUND_S)
    other.give_back()
    assert outcome == {"ran": True}
    assert [b.label for b in app.button] == ["Cancel"] and app.button[0].key == "pp_cancel"
    (note,) = app.warning
    assert "busy with *a sweep in another tab*" in note.value
    (line,) = [c for c in texts(app, "caption") if c.startswith(live.WAITING)]
    elapsed = int(line.split(" · ")[1].removesuffix(" s elapsed"))
    assert elapsed >= 1, line  # it moved while waiting
    assert model_use.hold_of(parser).recorded is None and model_use.hold_of(parser).waiting == 0


def _creation_script(seen: dict) -> None:
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.classroom import poll_creation
    from ui.model import parsers

    ctx = get_script_run_ctx()
    seen["requests"], seen["state"] = ctx.script_requests, ctx.session_state
    seen["parser"] = parsers.peek_parser()
    seen["ready"].set()
    assert seen["go"].wait(30)
    poll_creation.cancelled_note("create")
    if not seen.get("cancelled"):
        seen["reveals"] = poll_creation.reveal_all(seen["surfaces"], key="create")
    st.text("page goes on")


def test_a_cancel_while_creating_a_poll_creates_none_and_says_so(app_env) -> None:
    """The Cancel's click (a flag and a rerun) ends the run before the reveals are back, so the
    page never reaches ``create_poll``; the rerun says no poll was created and the page goes on."""
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
    from streamlit.testing.v1 import AppTest

    from amp.data import generate as gen

    seen: dict = {"ready": threading.Event(), "go": threading.Event(),
                  "surfaces": [p.surface for p in gen.pairs("pp")[:3]]}
    app = AppTest.from_function(_creation_script, args=(seen,), default_timeout=BOUND_S)
    runner, outcome = start_run(app)
    assert seen["ready"].wait(BOUND_S) and seen["parser"] is not None
    other = _Holder(seen["parser"])
    seen["go"].set()
    try:
        _until(lambda: model_use.hold_of(seen["parser"]).waiting == 1, "the creation waits for the model")
        seen["cancelled"] = True
        seen["state"]["create_cancelled"] = True  # what the Cancel's on_click does, then its rerun
        seen["requests"].request_rerun(RerunData(query_string=""))
        runner.join(BOUND_S)
    finally:
        other.give_back()
    assert outcome == {"ran": True}
    assert "reveals" not in seen  # nothing came back: no poll can be made of it
    (info,) = texts(app, "info")
    assert "Poll creation cancelled" in info and "no poll was created" in info
    assert [t.value for t in app.text] == ["page goes on"] and not app.exception
    assert model_use.hold_of(seen["parser"]).recorded is None
