"""Durations in words and the time a run has left (amp.reporting.durations, issue #40 point 6)."""

from __future__ import annotations

import pytest

from amp.reporting.durations import ESTIMATING, duration_text, left_text, time_left_s


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0 s"), (0.4, "0 s"), (8.6, "9 s"), (89.4, "89 s"), (90, "2 min"), (149, "2 min"), (151, "3 min"),
    (-3, "0 s"),
])
def test_duration_text(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_no_estimate_before_the_first_part_is_done() -> None:
    assert time_left_s(0.0, 0, 5, 12.0) is None
    assert time_left_s(3.0, 1, 0, 3.0) is None  # an empty run has nothing left to estimate
    assert left_text(None) == ESTIMATING == "estimating…"


def test_the_pace_of_the_parts_done_times_the_parts_left() -> None:
    # 2 of 5 sentences took 20 s: 10 s each, 3 left = 30 s, less the 4 s the third has run
    assert time_left_s(20.0, 2, 5, 24.0) == pytest.approx(26.0)
    assert time_left_s(20.0, 2, 5, 20.0) == pytest.approx(30.0)
    assert left_text(time_left_s(20.0, 2, 5, 24.0)) == "about 26 s left"
    assert left_text(time_left_s(60.0, 1, 4, 60.0)) == "about 3 min left"


def test_never_below_zero_and_nothing_left_when_all_are_done() -> None:
    assert time_left_s(10.0, 1, 2, 50.0) == 0.0  # the part under way runs longer than the pace says
    assert time_left_s(30.0, 3, 3, 31.0) == 0.0
    assert time_left_s(30.0, 4, 3, 31.0) == 0.0  # more reported done than there are: all done
    assert left_text(0.0) == "about 0 s left"
