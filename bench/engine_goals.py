"""The goals of issue #42 for the CPU engine, one declaration each, and the goals' table of
``bench/engine_bench.py`` (pure): each goal with its bound, the value measured, met or not.

Measured on the 2-core machine, both engines in the same run (ratios only mean something there).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["GOALS", "INSPECT_RATIO", "INSPECT_SECONDS", "PEAK_RSS", "REPRODUCTION_SECONDS", "Goal", "goals_lines"]

#: 1.5 GB of resident memory, in the MiB that ``ru_maxrss / 1024`` gives.
RSS_BOUND_MB = 1.5 * 1024


@dataclass(frozen=True)
class Goal:
    """A goal: what is measured, its ``bound`` and ``unit``, and whether the value must be at most
    (``at_most``) or at least the bound."""

    what: str
    bound: float
    unit: str
    at_most: bool = True

    def met(self, value: float | None) -> bool | None:
        """Whether ``value`` meets the goal; None when it was not measured (None or NaN)."""
        if value is None or math.isnan(value):
            return None
        return value <= self.bound if self.at_most else value >= self.bound

    def text(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.bound:g} {self.unit}"


INSPECT_SECONDS = Goal("Parse & inspect, llama.cpp (10-example prompt, cold cache, warm model)", 3.0, "s")
INSPECT_RATIO = Goal("Parse & inspect, transformers float32 / llama.cpp", 3.0, "x", at_most=False)
REPRODUCTION_SECONDS = Goal("reduced reproduction (amp reproduce --n-zero 10 --n-few 5), llama.cpp", 600.0, "s")
PEAK_RSS = Goal("peak RSS of the llama.cpp engine", RSS_BOUND_MB, "MB")
#: The goals in the order the table lists them.
GOALS: tuple[Goal, ...] = (INSPECT_SECONDS, INSPECT_RATIO, REPRODUCTION_SECONDS, PEAK_RSS)


def goals_lines(values: Mapping[Goal, float | None]) -> list[str]:
    """The goals' table: one line per goal of :data:`GOALS`: the goal, the value, met / not met / not measured."""
    out = ["the goals' table (issue #42):"]
    for goal in GOALS:
        value = values.get(goal)
        met = goal.met(value)
        shown = "-" if met is None else f"{value:.2f} {goal.unit}"
        state = "not measured" if met is None else "met" if met else "NOT met"
        out.append(f"  {goal.what}: goal {goal.text()}, measured {shown}: {state}")
    return out
