"""The goals' table of ``bench/engine_bench.py`` (bench/engine_goals.py): each goal met, not met or not measured."""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from engine_goals import (  # noqa: E402
    GOALS,
    INSPECT_RATIO,
    INSPECT_SECONDS,
    PEAK_RSS,
    REPRODUCTION_SECONDS,
    goals_lines,
)


def test_each_goal_reads_its_direction_and_includes_its_bound() -> None:
    assert INSPECT_SECONDS.met(3.0) and not INSPECT_SECONDS.met(3.01)  # at most 3.0 s
    assert INSPECT_RATIO.met(3.0) and not INSPECT_RATIO.met(2.99)  # at least 3x
    assert REPRODUCTION_SECONDS.met(600) and not REPRODUCTION_SECONDS.met(24 * 60 + 57)
    assert PEAK_RSS.met(1481) and not PEAK_RSS.met(1537)  # 1.5 GB = 1536 MiB
    assert INSPECT_SECONDS.met(None) is None and INSPECT_SECONDS.met(math.nan) is None


def test_the_table_lists_every_goal_with_its_state() -> None:
    lines = goals_lines({INSPECT_SECONDS: 4.65, INSPECT_RATIO: 9.20 / 4.65, PEAK_RSS: 1481.0})
    assert len(lines) == 1 + len(GOALS)
    assert lines[1].endswith("goal <= 3 s, measured 4.65 s: NOT met")
    assert lines[2].endswith("goal >= 3 x, measured 1.98 x: NOT met")
    assert lines[3].endswith("goal <= 600 s, measured -: not measured")
    assert lines[4].endswith("goal <= 1536 MB, measured 1481.00 MB: met")
