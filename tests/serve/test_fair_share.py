"""The step gate of :mod:`amp.parser.search.fair_share`: who computes, step by step (issue #44).

Deterministic: the gate's clock is a counter that only the thread holding the turn advances (each
"step" costs a known number of ticks), and a request arrives only once the test has seen it wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from amp.parser.core.errors import SearchCancelled
from amp.parser.search.cancel import cancel_scope, current_check
from amp.parser.search.fair_share import StepGate, model_lock


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


class Harness:
    """Requests as threads: each holds the turn, does ``steps`` steps of ``cost`` ticks (recorded
    as ``name + step``), passing the gate's step check before each step but the first."""

    def __init__(self, interleave: bool = True) -> None:
        self.clock = Clock()
        self.gate = StepGate(interleave=interleave, clock=self.clock, poll_s=0.01)
        self.order: list[str] = []
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def request(self, name: str, steps: int, cost: float, *, at_step: dict[int, Callable[[], None]] | None = None,
                stop: threading.Event | None = None) -> threading.Thread:
        def run() -> None:
            ticket = self.gate.ticket(name)
            stopped = stop.is_set if stop is not None else (lambda: False)
            try:
                with self.gate.turn(ticket, stopped), cancel_scope(self.gate.step_check(ticket, stopped)):
                    check = current_check()
                    assert check is not None
                    for k in range(steps):
                        if k and check():
                            raise SearchCancelled("stopped")
                        self.order.append(f"{name}{k}")
                        self.clock.now += cost
                        if at_step and k in at_step:
                            at_step[k]()
            except BaseException as exc:  # noqa: BLE001 - reported by finish()
                self.errors.append(exc)

        thread = threading.Thread(target=run, name=name)
        self.threads.append(thread)
        thread.start()
        return thread

    def arrive(self, name: str, steps: int, cost: float, **kw) -> Callable[[], None]:
        """A hook that starts request ``name`` and returns once it waits at the gate."""
        def hook() -> None:
            waiting = self.gate.waiting
            self.request(name, steps, cost, **kw)
            wait_until(lambda: self.gate.waiting > waiting)
        return hook

    def finish(self) -> list[str]:
        for t in self.threads:
            t.join(10)
        assert not any(t.is_alive() for t in self.threads)
        return self.order


def test_a_small_request_behind_a_long_one_runs_at_its_next_step_then_the_long_one_goes_on():
    h = Harness()
    h.request("B", 6, 1.0, at_step={2: h.arrive("s", 3, 0.1)})
    assert h.finish() == ["B0", "B1", "B2", "s0", "s1", "s2", "B3", "B4", "B5"]
    assert not h.errors


def test_long_requests_take_turns_and_a_newcomer_goes_first():
    h = Harness()
    # B holds the turn; C arrives at B's first step and D later: the least attained goes next.
    h.request("B", 4, 1.0, at_step={0: h.arrive("C", 4, 1.0), 2: h.arrive("s", 2, 0.1)})
    order = h.finish()
    # B0 (C waits, attained 0 < 1) → C0; then B (1 ≤ C's 1, arrived first) … each one step a turn;
    # the small one arrives during B2 and runs right after it, whole.
    assert order == ["B0", "C0", "B1", "C1", "B2", "s0", "s1", "C2", "B3", "C3"]
    assert not h.errors


def test_without_interleaving_the_turn_passes_only_between_requests():
    h = Harness(interleave=False)
    h.request("B", 4, 1.0, at_step={1: h.arrive("s", 2, 0.1)})
    assert h.finish() == ["B0", "B1", "B2", "B3", "s0", "s1"]


def test_a_request_stopped_while_it_waits_leaves_the_queue_and_the_others_go_on():
    h = Harness()
    stop = threading.Event()
    gone: list[str] = []

    def cancel_w() -> None:
        stop.set()
        wait_until(lambda: h.gate.waiting == 0)  # it left without ever computing
        gone.append("w")

    arrive = h.arrive("w", 3, 0.1, stop=stop)

    def arrive_then_cancel() -> None:
        arrive()
        cancel_w()  # (before B's next step: B would hand its turn to w there)

    h.request("B", 4, 1.0, at_step={1: arrive_then_cancel})
    order = h.finish()
    assert gone == ["w"] and order == ["B0", "B1", "B2", "B3"]
    assert len(h.errors) == 1 and isinstance(h.errors[0], SearchCancelled)


def test_a_request_stopped_while_it_waits_for_its_next_turn_stops_there():
    h = Harness()
    stop = threading.Event()

    def stop_b() -> None:
        stop.set()

    # B is handed over to s at its step 1 and is stopped while s computes: it never computes again.
    h.request("B", 5, 1.0, stop=stop, at_step={0: h.arrive("s", 3, 0.1, at_step={1: stop_b})})
    assert h.finish() == ["B0", "s0", "s1", "s2"]
    assert [type(e) for e in h.errors] == [SearchCancelled]


def test_inside_an_interleaving_turn_the_model_lock_is_left_to_the_gate():
    lock = threading.RLock()
    gate = StepGate()
    assert model_lock(lock) is lock  # outside any turn: the model's own lock
    with gate.turn(gate.ticket()):
        with model_lock(lock):
            pass
        assert model_lock(lock) is not lock
    serial = StepGate(interleave=False)
    with serial.turn(serial.ticket()):
        assert model_lock(lock) is lock


def test_a_request_stopped_before_its_first_turn_raises_search_cancelled():
    gate = StepGate(poll_s=0.01)
    first = gate.ticket("first")
    assert gate.enter(first)
    with pytest.raises(SearchCancelled), gate.turn(gate.ticket("late"), lambda: True):
        pass
    gate.leave(first)
    assert gate.waiting == 0
