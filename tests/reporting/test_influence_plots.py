"""The influence and contrastive figures: what each cell and bar holds (issue #15 points 1, 2)."""

from __future__ import annotations

import pytest

from amp.evaluation.contrastive import contrast
from amp.evaluation.influence import influence_from_scores
from amp.reporting.influence_plots import contrast_alternatives, contrast_strip, influence_bars, influence_by_position
from amp.reporting.style import LF0_COLOR, LF1_COLOR, NEITHER_COLOR
from tests.evaluation.test_contrastive import PAIR
from tests.evaluation.test_influence import LF0, LF1, _pair, _prompt


def test_the_strip_wraps_rows_and_labels_every_cell() -> None:
    c = contrast(PAIR)
    shared, odds = contrast_strip(c, context=2, per_row=2).to_dict()["data"]
    assert odds["y"] == ["0–1", "2–3", "4"] and all(len(row) == 2 for row in odds["z"])
    assert odds["z"][0] == [None, None] and shared["z"][0] == [0.0, 0.0]  # the shared prefix is grey
    assert odds["z"][1] == pytest.approx([c.columns[2].log_odds, c.columns[3].log_odds])
    assert odds["text"][1][0] == "have<br>instrum…" and odds["text"][2] == ["∅<br>y", ""]  # ended; padding empty
    assert odds["zmid"] == 0 and odds["zmax"] == -odds["zmin"]
    with pytest.raises(ValueError, match="per_row"):
        contrast_strip(c, per_row=0)


def test_markup_in_tokens_is_escaped() -> None:
    from dataclasses import replace

    step = replace(PAIR.lf0.steps[2], token="<b>")
    pair = replace(PAIR, lf0=replace(PAIR.lf0, steps=PAIR.lf0.steps[:2] + (step,) + PAIR.lf0.steps[3:]))
    _shared, odds = contrast_strip(contrast(pair)).to_dict()["data"]
    assert "&lt;b&gt;" in odds["text"][0][2] and "<b>" not in odds["text"][0][2]


def test_alternatives_are_coloured_by_reading() -> None:
    bar = contrast_alternatives(contrast(PAIR)).to_dict()["data"][0]
    assert bar["marker"]["color"] == [LF0_COLOR, LF1_COLOR, NEITHER_COLOR]
    assert bar["x"][0].startswith("LF0: ") and bar["x"][1].startswith("LF1: ")


def test_bars_start_at_the_base_and_the_largest_change_is_on_top() -> None:
    scores = [_pair(0.5), _pair(0.2), _pair(0.55), _pair(0.9), _pair(0.1), _pair(0.6)]
    inf = influence_from_scores(_prompt(), LF0, LF1, "fol", scores)
    bar = influence_bars(inf).to_dict()["data"][0]
    assert bar["x"] == pytest.approx([0.05, -0.3, 0.4]) and bar["base"] == [0.5, 0.5, 0.5]
    assert bar["marker"]["color"] == [NEITHER_COLOR, LF0_COLOR, LF1_COLOR]  # b plain, a LF0, c LF1
    flipped = influence_bars(inf, "flipped").to_dict()["data"][0]
    assert len(flipped["x"]) == 2  # the plain example has no other reading
    position = influence_by_position(inf).to_dict()["data"][0]
    assert position["x"] == [1, 2, 3] and position["y"] == pytest.approx([-0.3, 0.05, 0.4])


def test_bars_put_a_change_that_turns_the_reading_on_top_and_mark_it() -> None:
    """Issue #46 point 6: the bars follow the order of every front end (Influence.ranked)."""
    # base 0.7 (LF0); a: removed 0.75, flipped 0.3 (turns to LF1); b: removed 0.9; c: removed 0.72, flipped 0.95
    scores = [_pair(0.7), _pair(0.75), _pair(0.9), _pair(0.72), _pair(0.3), _pair(0.95)]
    inf = influence_from_scores(_prompt(), LF0, LF1, "fol", scores)
    flipped = influence_bars(inf, "flipped").to_dict()["data"][0]
    assert flipped["y"] == ["3. c", "1. a ⇄"]  # plotly draws the first bar at the bottom: a on top
    assert flipped["x"] == pytest.approx([0.25, -0.4])
    assert "turns the preferred reading" in flipped["customdata"][1][4] and not flipped["customdata"][0][4]
    removed = influence_bars(inf).to_dict()["data"][0]
    assert removed["y"] == ["3. c", "1. a", "2. b"]  # no turn: by size, the largest on top
    assert [int(y.split(".")[0]) - 1 for y in reversed(flipped["y"])] == [
        e.index for e in inf.ranked("flipped") if e.delta_flipped is not None]
