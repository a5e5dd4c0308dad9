"""The sign-in limiter's table and reset (issue #45; :class:`amp.classroom.teacher_auth.SignInLimiter`).

Every test runs on an injected clock (the limiter's ``clock`` parameter), so nothing sleeps and
no elapsed time decides a result.  The property at the end checks the table against a model
computed here, independently: the clients kept are the ``max_clients`` that failed most recently,
and a client with ``max_failures`` failures in the window since it was last kept waits exactly
until the oldest of them is ``window_s`` old.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from amp.classroom.teacher_auth import SignInLimiter
from amp.errors import SettingError


class Clock:
    """A clock the test moves by hand (monotonic seconds)."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def kept(limiter: SignInLimiter) -> set[str]:
    """The clients the limiter holds failures for."""
    return set(limiter._failures)


# --- the full table evicts the stalest client, never the one being recorded ---------------------

def test_a_full_table_keeps_the_latest_clients_and_a_new_client_is_still_limited() -> None:
    clock = Clock()
    limiter = SignInLimiter(max_failures=5, window_s=60, max_clients=3, clock=clock)
    for i in range(10):
        clock.now += 1
        limiter.failed(f"c{i}")
    assert kept(limiter) == {"c7", "c8", "c9"}
    for n in range(5):
        assert limiter.wait_s("new") == 0, n  # four failures: it may still try
        clock.now += 1
        limiter.failed("new")
    assert kept(limiter) == {"c8", "c9", "new"}  # c7 was the stalest
    assert limiter.wait_s("new") == 56  # its first failure (t=11) leaves the window at t=71; now t=15


def test_at_equal_clock_readings_the_client_that_failed_last_is_kept() -> None:
    """A coarse clock gives equal readings: recency is then the order of the failures."""
    clock = Clock(5.0)
    limiter = SignInLimiter(max_failures=5, window_s=60, max_clients=2, clock=clock)
    limiter.failed("c0")
    limiter.failed("c1")
    limiter.failed("c0")  # c0 failed again: c1 is now the stalest
    limiter.failed("c2")
    assert kept(limiter) == {"c0", "c2"}
    for _ in range(5):
        limiter.failed("c3")  # five failures at one reading, in a full table
    assert "c3" in kept(limiter) and limiter.wait_s("c3") == 60


def test_a_table_of_one_client_keeps_the_one_failing_now() -> None:
    clock = Clock()
    limiter = SignInLimiter(max_failures=2, window_s=60, max_clients=1, clock=clock)
    limiter.failed("a")
    clock.now += 1
    limiter.failed("b")
    limiter.failed("b")
    assert kept(limiter) == {"b"} and limiter.wait_s("b") == 60


@pytest.mark.parametrize("kwargs", [
    {"max_failures": 0}, {"max_failures": -1}, {"max_clients": 0}, {"window_s": 0}, {"window_s": -5.0},
    {"window_s": float("nan")}, {"window_s": float("inf")},
])
def test_settings_that_would_disable_the_limit_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(SettingError, match=next(iter(kwargs))):
        SignInLimiter(**kwargs)  # type: ignore[arg-type]


# --- the right passphrase resets the client's count --------------------------------------------

def test_the_right_passphrase_clears_the_clients_failures() -> None:
    clock = Clock()
    limiter = SignInLimiter(max_failures=5, window_s=60, clock=clock)
    for _ in range(4):
        clock.now += 1
        limiter.failed("teacher")
    limiter.succeeded("teacher")
    for n in range(4):  # four more wrong guesses: without the reset the 5th would start a wait
        clock.now += 1
        assert limiter.failed("teacher") == 4 - n
        assert limiter.wait_s("teacher") == 0
    clock.now += 1
    limiter.failed("teacher")
    assert limiter.wait_s("teacher") == 56  # five since the success: t=5..9, until t=65


def test_a_success_clears_only_that_client() -> None:
    clock = Clock()
    limiter = SignInLimiter(max_failures=2, window_s=60, clock=clock)
    for client in ("a", "b"):
        limiter.failed(client)
        limiter.failed(client)
    limiter.succeeded("a")
    assert limiter.wait_s("a") == 0 and limiter.wait_s("b") == 60


# --- the property: eviction and waiting on random failure sequences -----------------------------

WINDOW = 60
LIMIT = 3
#: Clock steps between failures: often none (a coarse clock), sometimes past the window.
TICKS = st.one_of(st.just(0), st.integers(0, 25), st.just(WINDOW))


def _model(events: list[tuple[str, int]], max_clients: int) -> tuple[set[str], dict[str, float]]:
    """The clients kept and each one's wait after ``events`` (client, clock reading), computed
    from the rule, not from the limiter: the kept clients after each event are the
    ``max_clients`` most recently failing ones; a client's failures count from the event after
    the last one that left it out, and only those less than the window old."""
    def top(k: int) -> set[str]:
        recent: list[str] = []
        for client, _ in reversed(events[:k + 1]):
            if client not in recent:
                recent.append(client)
        return set(recent[:max_clients])

    tops = [top(k) for k in range(len(events))]
    now = events[-1][1]
    waits: dict[str, float] = {}
    for client in tops[-1]:
        since = max((k for k in range(len(events)) if client not in tops[k]), default=-1) + 1
        times = [t for k, (c, t) in enumerate(events) if k >= since and c == client and now - t < WINDOW]
        waits[client] = 0.0 if len(times) < LIMIT else times[-LIMIT] + WINDOW - now
    return tops[-1], waits


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.lists(st.tuples(st.sampled_from("abcde"), TICKS), min_size=1, max_size=40))
@example(2, [("a", 0), ("b", 0), ("a", 0), ("c", 0)])  # equal readings: a failed after b, so b goes
def test_kept_clients_are_the_latest_and_a_client_over_the_limit_waits(
        max_clients: int, steps: list[tuple[str, int]]) -> None:
    clock = Clock()
    limiter = SignInLimiter(max_failures=LIMIT, window_s=WINDOW, max_clients=max_clients, clock=clock)
    events: list[tuple[str, int]] = []
    for client, dt in steps:
        clock.now += dt
        limiter.failed(client)
        events.append((client, int(clock.now)))
    expected_kept, expected_waits = _model(events, max_clients)
    assert kept(limiter) == expected_kept, events
    assert events[-1][0] in kept(limiter)  # the client failing now is never the one evicted
    for client, wait in expected_waits.items():
        assert limiter.wait_s(client) == wait, (client, events)
