"""Two sessions sharing one parser never run a page action at the same time (ui.model.use.using)."""

from __future__ import annotations

import threading
import time

from app_helpers import start_run

from ui.model import use as model_use


class _SharedParser:
    """Stands in for the one cached Parser that every session gets from st.cache_resource."""


def test_two_sessions_are_serialised() -> None:
    parser = _SharedParser()
    spans: list[tuple[float, float]] = []
    start = threading.Barrier(2)

    def session() -> None:
        start.wait()
        with model_use.using(parser):
            t0 = time.perf_counter()
            time.sleep(0.2)
            spans.append((t0, time.perf_counter()))

    threads = [threading.Thread(target=session) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    (_, a1), (b0, _) = sorted(spans)
    assert a1 <= b0, "the second session entered while the first was still inside"


def test_the_lock_is_reentrant_and_per_parser() -> None:
    p1, p2 = _SharedParser(), _SharedParser()
    with model_use.using(p1), model_use.using(p1):  # nested use by the same session does not deadlock
        done = threading.Event()

        def other() -> None:
            with model_use.using(p2):  # another model is not blocked by this one
                done.set()

        t = threading.Thread(target=other)
        t.start()
        t.join(2)
        assert done.is_set()


def test_using_waits_for_a_busy_model_and_installs_the_cancel_check() -> None:
    """A page action waits for another session's action (saying so), and inside it the decoder
    polls Streamlit's pending-rerun flag (issue #16: cancel stops the model within a step)."""
    import threading
    import time

    from amp.parser.search.cancel import current_check
    from ui.model import use as model_use

    parser = object()
    held, release = threading.Event(), threading.Event()

    def other() -> None:
        with model_use.using(parser):
            held.set()
            release.wait(5)

    worker = threading.Thread(target=other)
    worker.start()
    held.wait(5)
    threading.Timer(0.3, release.set).start()
    t0 = time.perf_counter()
    with model_use.using(parser):
        waited = time.perf_counter() - t0
        assert current_check() is model_use.rerun_requested
    worker.join(5)
    assert waited >= 0.2
    assert current_check() is None
    assert model_use.rerun_requested() is False  # no script run context: nothing pending


def _compare_failure_script() -> None:
    import streamlit as st

    from amp.parser.core.errors import ModelLoadError
    from ui.model import actions
    from ui.model import choice as model_choice

    class ModelB:  # a second model, as the Compare page holds it next to the sidebar's
        spec = "model-b-that-fails"
        loaded = True

    def boom(parser: object) -> None:
        raise ModelLoadError("its weights are broken")

    actions.compute(ModelB(), "Model B: parsing", boom, who="Model B")  # type: ignore[arg-type]
    st.text(f"B={model_choice.load_error('model-b-that-fails')!r}")
    st.text(f"current={model_choice.load_error()!r}")


def test_a_failed_second_model_does_not_mark_the_sidebar_model_failed(app_env) -> None:
    """Issue #11 point 6: a Model B that fails to load on Compare is marked failed, not the default."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_compare_failure_script, default_timeout=60)
    app.run()
    shown = [t.value for t in app.text]
    assert "B='its weights are broken'" in shown
    assert "current=None" in shown


# -- issue #32 and #34 item 4: the model is given back on every path, and a stopped run keeps nothing --

BOUND_S = 30.0  # the longest any wait below may take before the test fails (a run takes about a second)


def _until(condition, what: str, bound: float = BOUND_S) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {bound:.0f} s: {what}")
        time.sleep(0.01)


def _hold_in_thread(parser: object, what: str) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """Another tab holding the model until ``release`` is set; ``held`` once it has it."""
    held, release = threading.Event(), threading.Event()

    def body() -> None:
        with model_use.using(parser, what=what):
            held.set()
            release.wait(BOUND_S)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    assert held.wait(BOUND_S)
    return thread, held, release


def test_an_exception_inside_using_gives_the_model_back_while_its_thread_lives() -> None:
    """Issue #34 item 4: the thread that raised inside using() stays alive (a dead one could be taken
    for a stale holder, and a new thread may reuse its id), and another thread gets the model within
    a second."""
    parser = _SharedParser()
    raised, finish = threading.Event(), threading.Event()
    caught: list[str] = []

    def failing() -> None:
        try:
            with model_use.using(parser, what="a parse that fails"):
                raise RuntimeError("boom inside using()")
        except RuntimeError as exc:
            caught.append(str(exc))
        raised.set()
        finish.wait(BOUND_S)  # alive on purpose until the other thread has had its turn

    thread = threading.Thread(target=failing, daemon=True)
    thread.start()
    assert raised.wait(BOUND_S)
    got = threading.Event()

    def other() -> None:
        with model_use.using(parser, what="the next parse"):
            got.set()

    threading.Thread(target=other, daemon=True).start()
    try:
        assert got.wait(1.0), "the thread that raised inside using() kept the model"
        assert thread.is_alive() and caught == ["boom inside using()"]
    finally:
        finish.set()
    thread.join(BOUND_S)


def _waiting_script(parser: object, seen: dict) -> None:
    import threading

    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.model import use as model_use

    ctx = get_script_run_ctx()
    seen["requests"], seen["thread"] = ctx.script_requests, threading.current_thread()
    st.text("before")
    with model_use.using(parser, what="the page action"):
        st.text("inside")
    st.text("after")


def test_a_run_stopped_inside_using_keeps_nothing_and_the_next_run_proceeds(app_env) -> None:
    """Issue #32: a run waits in using() for a model another tab's sweep holds; Streamlit stops it
    (a click elsewhere) just as the sweep gives the model back between items.  The stopped run must
    not keep the model: it holds nothing once it has ended, the sweep's next item gets the model
    within seconds, and so does the next run.  (Before the fix the stop raised at the note's ``st``
    call after ``lock.acquire()``, outside the ``try``: the lock stayed with a finished run and the
    sweep waited for ever; only a new thread that happened to reuse the dead one's id got in.)"""
    from streamlit.testing.v1 import AppTest

    parser = _SharedParser()
    between_items, next_item = threading.Event(), threading.Event()

    def sweep() -> None:  # another tab's sweep: item 1, then item 2 once the test says so
        with model_use.using(parser, what="another tab's sweep"):
            held.set()
            between_items.wait(BOUND_S)
        go_on.wait(BOUND_S)
        with model_use.using(parser, what="another tab's sweep"):
            next_item.set()

    held, go_on = threading.Event(), threading.Event()
    other = threading.Thread(target=sweep, daemon=True)  # daemon: a sweep stuck for good cannot stall pytest
    other.start()
    assert held.wait(BOUND_S)
    seen: dict = {}
    first = AppTest.from_function(_waiting_script, args=(parser, seen), default_timeout=BOUND_S)
    runner, outcome = start_run(first)
    _until(lambda: model_use.hold_of(parser).waiting == 1, "the run waits for the model")
    seen["requests"].request_stop()  # what a click in the tab does to the running script (fastReruns)
    between_items.set()  # ... while the sweep gives the model back after its item
    runner.join(BOUND_S)
    assert outcome == {"ran": True} and not seen["thread"].is_alive()
    assert [t.value for t in first.text] == ["before"]
    left_behind = model_use.hold_of(parser).recorded, model_use.hold_of(parser).waiting  # before anyone claims again
    go_on.set()
    assert next_item.wait(5.0), "the sweep's next item did not get the model: the stopped run kept it"
    other.join(BOUND_S)
    assert left_behind == (None, 0), "the stopped run ended holding the model (or still queued for it)"

    second = AppTest.from_function(_waiting_script, args=(parser, {}), default_timeout=BOUND_S)
    runner, outcome = start_run(second)
    runner.join(BOUND_S)
    assert outcome == {"ran": True}, "the next run did not get the model"
    assert [t.value for t in second.text] == ["before", "inside", "after"]


def _compute_script(parser: object, seen: dict) -> None:
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.model import actions


    seen["requests"] = get_script_run_ctx().script_requests
    actions.compute(parser, "Model A: parsing and scoring…", lambda p: "parsed", who="Model A")  # type: ignore[arg-type]
    st.text("after")


def test_a_wait_for_the_model_is_in_plain_sight_with_a_cancel(app_env) -> None:
    """Issue #32: the wait is not inside the (collapsed) status box: a note above it says what the
    model is busy with, and offers Cancel; stopping the run (what Cancel does) ends the wait."""
    from streamlit.testing.v1 import AppTest

    class Parser:
        spec = "tiny-model"
        loaded = True

    parser = Parser()
    other, _, release = _hold_in_thread(parser, "a sweep on the Zero-shot page")
    seen: dict = {}
    app = AppTest.from_function(_compute_script, args=(parser, seen), default_timeout=BOUND_S)
    runner, outcome = start_run(app)
    _until(lambda: model_use.hold_of(parser).waiting == 1, "the run waits for the model")
    time.sleep(0.3)  # the note is drawn at the first look (well within this)
    seen["requests"].request_stop()
    runner.join(BOUND_S)
    release.set()
    other.join(BOUND_S)
    assert outcome == {"ran": True}
    (status,) = [node for node in app.main.children.values() if node.type == "status"]
    assert status.label == "Model A: parsing and scoring…" and not status.proto.expanded
    assert not list(status.children.values()), "the wait note is inside the collapsed status box"
    (note,) = app.warning
    assert note.value.startswith("**Waiting for the model** \\(tiny\\-model\\): it is busy with "
                                 "*a sweep on the Zero\\-shot page*, for ")
    assert "**Cancel** stops waiting." in note.value
    (cancel,) = app.button
    assert cancel.label == "Cancel" and cancel.key.startswith("model_wait_cancel_")
    assert model_use.hold_of(parser).recorded is None and model_use.hold_of(parser).waiting == 0


def _rerun_script(parser: object, leaked: list, seen: dict) -> None:
    import threading

    import streamlit as st

    from ui.model import use as model_use
    from ui.model.use import claimant

    seen.setdefault("threads", []).append(threading.current_thread())
    if not leaked:
        claim = model_use.hold_of(parser).claim(claimant("a run that never gave it back"))
        claim.__enter__()  # taken and never given back (kept referenced: nothing closes it)
        leaked.append(claim)
        st.rerun()  # the next run, on the same thread
    got = threading.Event()

    def other_tab() -> None:
        with model_use.using(parser, what="another tab"):
            got.set()

    threading.Thread(target=other_tab, daemon=True).start()
    st.text(f"other tab got the model: {got.wait(1.0)}")
    with model_use.using(parser, what="this run"):
        st.text("this run got the model")


def test_a_run_that_ended_holding_the_model_on_a_living_thread_holds_nothing(app_env) -> None:
    """Issue #32: ownership is tied to the live run.  A run that ended holding the model (simulated:
    a claim entered and never exited, then ``st.rerun()``) is over, though its thread serves the
    next run: another tab gets the model within a second, and so does the next run."""
    from streamlit.testing.v1 import AppTest

    parser, leaked, seen = _SharedParser(), [], {}
    app = AppTest.from_function(_rerun_script, args=(parser, leaked, seen), default_timeout=BOUND_S)
    runner, outcome = start_run(app)
    runner.join(BOUND_S)
    assert outcome == {"ran": True} and len(leaked) == 1
    assert len(seen["threads"]) == 2 and seen["threads"][0] is seen["threads"][1]  # one thread, two runs
    assert [t.value for t in app.text] == ["other tab got the model: True", "this run got the model"]
