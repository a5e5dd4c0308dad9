"""The shared model's hold (ui.model.hold, issue #32): given back on every path, never kept by a run
that has ended, served in turn.  Plain threads stand in for script runs; every wait is bounded."""

from __future__ import annotations

import threading

from ui.model.hold import Claimant, ModelHold

BOUND_S = 5.0  # the longest any step here may take before the test fails (they take milliseconds)


def _claim_in_thread(hold: ModelHold, name: str, order: list[str], **claimant: object) -> threading.Thread:
    def body() -> None:
        with hold.claim(Claimant(threading.current_thread(), name, **claimant)):  # type: ignore[arg-type]
            order.append(name)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def _until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    done = threading.Event()
    for _ in range(int(BOUND_S / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError(f"not within {BOUND_S} s: {what}")


def test_a_holder_whose_thread_ended_holds_nothing() -> None:
    """A hold taken and never given back (its thread ended inside the claim) is taken over at once."""
    hold = ModelHold()
    leaked = []

    def leak() -> None:
        claim = hold.claim(Claimant(threading.current_thread(), "a run that ended inside the claim"))
        claim.__enter__()  # never exited: as if the run vanished while holding the model
        leaked.append(claim)

    thread = threading.Thread(target=leak)
    thread.start()
    thread.join(BOUND_S)
    assert not thread.is_alive() and hold.recorded is not None and hold.recorded.thread is thread
    order: list[str] = []
    _claim_in_thread(hold, "next run", order).join(BOUND_S)
    assert order == ["next run"]
    assert hold.recorded is None and hold.holder is None


def test_a_holder_whose_thread_moved_on_to_another_run_holds_nothing() -> None:
    """Same thread, new script run (Streamlit reuses a session's thread): the old run's hold is void."""
    hold = ModelHold()
    run = {"now": "run 1"}
    me = threading.current_thread()

    def claimant(what: str) -> Claimant:
        return Claimant(me, what, session="tab", run=run["now"], run_now=lambda: run["now"])

    first = hold.claim(claimant("run 1"))
    first.__enter__()  # run 1 ends without giving it back
    with hold.claim(claimant("run 1, nested")):  # while run 1 lives, its own nested claim is re-entrant
        assert hold.recorded is not None and hold.recorded.what == "run 1"
    order: list[str] = []
    other = _claim_in_thread(hold, "other tab", order)
    other.join(0.5)
    assert order == [] and other.is_alive(), "run 1 is still going: the other tab must wait"
    run["now"] = "run 2"  # the thread starts its next run
    other.join(BOUND_S)
    assert order == ["other tab"] and hold.recorded is None
    with hold.claim(claimant("run 2")):  # run 2 takes it fresh, once (not on top of run 1's count)
        assert hold.recorded is not None and hold.recorded.what == "run 2"
    assert hold.recorded is None


def test_a_new_thread_is_not_taken_for_a_dead_holder() -> None:
    """Ownership is the thread object, never its id (a new thread may reuse a dead thread's id)."""
    hold = ModelHold()
    dead = threading.Thread(target=lambda: None)
    dead.start()
    dead.join(BOUND_S)
    stale = hold.claim(Claimant(dead, "a dead thread"))
    stale.__enter__()
    order: list[str] = []
    for name in ("new thread 1", "new thread 2"):
        _claim_in_thread(hold, name, order).join(BOUND_S)
    assert order == ["new thread 1", "new thread 2"] and hold.recorded is None


def test_waiting_claims_are_served_in_turn() -> None:
    """A sweep that gives the model back between items lets a waiting tab in before its next item."""
    hold = ModelHold()
    order: list[str] = []
    me = threading.current_thread()
    with hold.claim(Claimant(me, "sweep item 1")):
        order.append("sweep item 1")
        tab = _claim_in_thread(hold, "other tab", order)
        _until(lambda: hold.waiting == 1, "the other tab waits")
    with hold.claim(Claimant(me, "sweep item 2")):  # straight back: the waiting tab goes first
        order.append("sweep item 2")
    tab.join(BOUND_S)
    assert order == ["sweep item 1", "other tab", "sweep item 2"]


def test_on_wait_reports_the_holder_and_may_end_the_wait() -> None:
    """A waiting claim is told who holds the model and for what; raising from on_wait ends the wait
    with nothing held and the queue left."""
    hold = ModelHold()
    seen: list[tuple[str | None, int]] = []

    class Cancelled(Exception):
        pass

    def on_wait(info) -> None:  # type: ignore[no-untyped-def]
        seen.append((info.holder.what if info.holder else None, info.ahead))
        if len(seen) == 3:
            raise Cancelled

    outcome: list[str] = []

    def waiter() -> None:
        try:
            with hold.claim(Claimant(threading.current_thread(), "waiter"), on_wait=on_wait):
                outcome.append("held")
        except Cancelled:
            outcome.append("cancelled")

    with hold.claim(Claimant(threading.current_thread(), "a sweep on the Zero-shot page")):
        thread = threading.Thread(target=waiter, daemon=True)
        thread.start()
        thread.join(BOUND_S)
        assert outcome == ["cancelled"] and hold.waiting == 0
        assert seen == [("a sweep on the Zero-shot page", 0)] * 3
    assert hold.recorded is None
