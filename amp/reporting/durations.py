"""Durations in words and the time a run has left, for the progress lines of long model actions.

A progress line says what is running, how long it has run and about how long it has left
(issue #40 point 6: a poll created with the model, a parse, a wait for the model).  The estimate
is the pace of the parts already done, applied to the parts still to do; before the first part
is done there is no pace, and the line says so instead of showing a made-up number.
"""

from __future__ import annotations

__all__ = ["ESTIMATING", "duration_text", "left_text", "time_left_s"]

#: What a progress line says before the first part is done (no pace to go by yet).
ESTIMATING = "estimating…"

#: Below this many seconds a duration is said in seconds, from it on in minutes.
MINUTES_FROM_S = 90.0


def duration_text(seconds: float) -> str:
    """``"8 s"``, ``"89 s"``, then ``"2 min"`` (whole units, rounded; a negative time is 0 s)."""
    seconds = max(0.0, float(seconds))
    if seconds < MINUTES_FROM_S:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def time_left_s(done_at_s: float, done: int, total: int, now_s: float) -> float | None:
    """Seconds left of a run of ``total`` parts, at the pace of the ``done`` parts so far
    (docs/paper-notes.md §12, the app's progress lines).

    ``done_at_s``: the run's elapsed seconds when its last part finished; ``now_s``: its elapsed
    seconds now.  Each part took ``done_at_s / done`` on average, so the ``total − done`` parts
    still to do take that many times it, less what the part under way has already run
    (``now_s − done_at_s``); never below 0.  ``None`` before the first part is done (``done``
    ≤ 0: no pace yet) and for an empty run.
    """
    if done <= 0 or total <= 0:
        return None
    done = min(done, total)
    per_part = max(0.0, done_at_s) / done
    under_way = max(0.0, now_s - done_at_s)
    return max(0.0, per_part * (total - done) - under_way)


def left_text(left_s: float | None) -> str:
    """``"about 40 s left"``, or :data:`ESTIMATING` when there is no estimate yet."""
    return ESTIMATING if left_s is None else f"about {duration_text(left_s)} left"
