"""The pace of an endpoint (amp.parser.backends.api_pace, issue #46 point 2): the timeout follows
the measured replies from its floor up to its ceiling, the requests in flight start at one, grow
while replies stay quick and halve when they slow down or time out; fixed, both stay as given."""

from __future__ import annotations

import pytest

from amp.parser.backends.api_pace import (
    MEASURED_BEFORE_ADAPTING,
    SLOW_FACTOR,
    TIMEOUT_FACTOR,
    Pace,
    StopWaiting,
    Ticket,
    p90,
)
from amp.parser.backends.api_protocol import MAX_TIMEOUT_S


def _reply(pace: Pace, seconds: float, kind: str = "") -> None:
    """One request through the pace: a place taken, its reply measured, the place given back."""
    ticket = pace.enter(lambda: True)
    pace.replied(seconds, ticket, kind)
    pace.leave()


def test_p90_is_the_nearest_rank() -> None:
    assert p90([1.0]) == 1.0
    assert p90([float(i) for i in range(1, 11)]) == 9.0
    assert p90([5.0, 1.0, 3.0]) == 5.0


def test_the_timeout_is_the_floor_until_replies_are_measured_then_follows_their_p90() -> None:
    pace = Pace(floor_s=10.0, ceiling=4)
    assert pace.timeout_s() == 10.0
    for _ in range(MEASURED_BEFORE_ADAPTING - 1):
        _reply(pace, 30.0)
    assert pace.timeout_s() == 10.0
    _reply(pace, 30.0)
    assert pace.timeout_s() == TIMEOUT_FACTOR * 30.0
    assert pace.timeout_s("score") == 10.0  # another kind of request: measured apart
    for _ in range(20):
        _reply(pace, 0.1)  # quick replies: never below the floor
    assert pace.timeout_s() == 10.0
    for _ in range(20):
        _reply(pace, 5000.0)
    assert pace.timeout_s() == MAX_TIMEOUT_S


def test_requests_in_flight_start_at_one_grow_when_quick_and_halve_when_slow() -> None:
    pace = Pace(floor_s=10.0, ceiling=4)
    assert pace.limit == 1
    _reply(pace, 1.0)  # alone: the baseline
    assert pace.limit == 2
    a, b = pace.enter(lambda: True), pace.enter(lambda: True)
    assert b == Ticket(in_flight=2, entered=3)
    pace.replied(1.1, b)  # sent with as many as allowed, quick: one more
    pace.leave()
    assert pace.limit == 3
    pace.replied(1.0, a)  # quick, but sent with fewer than allowed: no change
    pace.leave()
    assert pace.limit == 3
    ticket = pace.enter(lambda: True)
    pace.replied(SLOW_FACTOR * 1.0 + 0.5, ticket)  # slow: half
    pace.leave()
    assert pace.limit == 1
    pace.timed_out(10.0)
    assert pace.limit == 1  # never below one


def test_a_request_not_alone_all_along_is_no_baseline() -> None:
    """A request that had the place to itself when sent, but another joined before its reply,
    does not set the quick pace (its reply waited for the other's at a serial server)."""
    pace = Pace(floor_s=10.0, ceiling=4)
    _reply(pace, 1.0)
    first = pace.enter(lambda: True)
    assert first.in_flight == 1
    pace.enter(lambda: True)
    pace.replied(1.9, first)
    pace.leave()
    assert pace.limit == 1  # 1.9 s against the 1 s baseline of the request alone all along: slow


def test_a_full_pace_waits_and_a_stop_ends_the_wait() -> None:
    pace = Pace(floor_s=10.0, ceiling=2)
    pace.enter(lambda: True)
    with pytest.raises(StopWaiting):
        pace.enter(lambda: True)
    assert pace.in_flight == 1


def test_fixed_keeps_the_timeout_and_the_concurrency_as_given() -> None:
    pace = Pace(floor_s=10.0, ceiling=4, adaptive=False)
    assert pace.limit == 4
    for _ in range(5):
        _reply(pace, 100.0)
    pace.timed_out(10.0)
    assert (pace.timeout_s(), pace.limit) == (10.0, 4)


def test_after_a_timeout_the_next_request_of_its_kind_gets_twice_as_long_until_a_reply() -> None:
    """The retry of a request that ran past its timeout would wait behind it at a serial server."""
    pace = Pace(floor_s=120.0, ceiling=4)
    _reply(pace, 20.0, "generate")
    pace.timed_out(120.0, "score")
    assert pace.timeout_s("score") == 240.0 and pace.timeout_s("generate") == 120.0
    pace.timed_out(240.0, "score")
    assert pace.timeout_s("score") == 480.0
    pace.timed_out(MAX_TIMEOUT_S, "score")
    assert pace.timeout_s("score") == MAX_TIMEOUT_S
    _reply(pace, 50.0, "score")
    assert pace.timeout_s("score") == TIMEOUT_FACTOR * 50.0


def test_a_scorings_timeout_grows_with_the_prompt_it_echoes() -> None:
    """The echo probe (20 characters in 10 s) paces the first real scoring of 600 characters."""
    pace = Pace(floor_s=120.0, ceiling=4)
    ticket = pace.enter(lambda: True)
    pace.replied(10.0, ticket, "score", size=20)
    pace.leave()
    assert pace.reply_p90("score") == 0.5
    assert pace.timeout_s("score", size=600) == TIMEOUT_FACTOR * 0.5 * 600
    assert pace.timeout_s("score", size=20) == 120.0  # never below --api-timeout
    assert pace.timeout_s("score", size=10_000) == MAX_TIMEOUT_S
