"""The vote chart on a projector (issue #40 point 7): integer ticks from 0 to 150 votes that do not
pile up, reading names whole and horizontal, user text never markup."""

from __future__ import annotations

import pytest

from amp.reporting.poll_plots import (
    LABEL_LINE_CHARS,
    MAX_VOTE_TICKS,
    PROJECTOR_LINE_CHARS,
    PROJECTOR_VOTE_TICKS,
    poll_bars,
    reading_label,
    vote_ticks,
)
from amp.reporting.style import plain_label

LONG = "LF1 · the boy used the telescope as an instrument"


@pytest.mark.parametrize(("most", "dtick", "top"), [(0, 1, 1), (1, 1, 1), (3, 1, 3), (4, 1, 4), (5, 2, 6), (7, 2, 8),
                                                   (12, 5, 15), (30, 10, 30), (31, 10, 40), (97, 25, 100),
                                                   (150, 50, 150), (1000, 250, 1000), (1001, 500, 1500)])
def test_vote_ticks_are_few_round_integers_up_to_the_largest_count(most: int, dtick: int, top: int) -> None:
    assert vote_ticks(most) == (dtick, top)


@pytest.mark.parametrize(("most", "dtick", "top"), [(0, 1, 1), (2, 1, 2), (3, 2, 4), (30, 15, 30), (110, 75, 150),
                                                   (150, 75, 150), (151, 100, 200)])
def test_the_projector_takes_at_most_two_intervals(most: int, dtick: int, top: int) -> None:
    assert vote_ticks(most, PROJECTOR_VOTE_TICKS) == (dtick, top)


def test_every_count_up_to_a_big_class_gets_few_intervals_and_a_tick_at_or_above_it() -> None:
    for intervals in (MAX_VOTE_TICKS, PROJECTOR_VOTE_TICKS):
        for most in range(0, 2001):
            dtick, top = vote_ticks(most, intervals)
            assert top % dtick == 0 and top >= most and top - dtick < max(most, 1)
            assert top // dtick <= intervals
    with pytest.raises(ValueError, match="negative"):
        vote_ticks(-1)


@pytest.mark.parametrize(("counts", "page", "projector"), [((3, 1), 1, 2), ((30, 12), 10, 15), ((97, 150), 50, 75),
                                                          ((0, 0), 1, 1)])
def test_the_chart_takes_those_ticks_on_the_page_and_fewer_on_the_projector(counts, page: int, projector: int) -> None:
    for height, dtick, intervals in ((240, page, MAX_VOTE_TICKS), (None, projector, PROJECTOR_VOTE_TICKS)):
        fig = poll_bars(["LF0 · a", "LF1 · b"], list(counts), ["", ""], height=height)
        y = fig.layout.yaxis
        assert (y.dtick, y.tick0, y.tickformat) == (dtick, 0, "d")
        top = vote_ticks(max(counts), intervals)[1]
        assert top // dtick <= intervals
        assert y.range[0] == 0 and top <= y.range[1] < top + dtick  # the top tick is drawn, no empty tick above
        assert fig.layout.xaxis.tickangle == 0  # names horizontal, never rotated


def test_reading_names_are_whole_wrapped_at_spaces() -> None:
    label = reading_label(LONG)
    lines = label.split("<br>")
    assert len(lines) > 1 and all(len(line) <= LABEL_LINE_CHARS for line in lines)
    assert " ".join(lines) == LONG  # nothing cut
    assert reading_label("LF0 · " + "x" * 40).split("<br>") == ["LF0 ·", "x" * 40]  # a long word keeps its line
    fig = poll_bars(["LF0 · the man had the telescope", LONG], [1, 2], ["", ""])
    assert [bar.x[0] for bar in fig.data] == [reading_label("LF0 · the man had the telescope"), label]
    projector = poll_bars(["LF0 · the man had the telescope", LONG], [1, 2], ["", ""], height=None)
    assert projector.data[1].x[0] == reading_label(LONG, PROJECTOR_LINE_CHARS)
    assert projector.data[1].x[0].split("<br>") == ["LF1 · the boy used the", "telescope as an instrument"]


def test_a_name_with_markup_is_shown_as_typed_and_only_the_wrap_is_a_break() -> None:
    name = "LF0 · <b>bold</b> & a <br> in the name typed by a teacher"
    label = reading_label(name)
    assert "<b>" not in label and "&lt;br&gt;" in label
    assert label.replace("<br>", " ") == plain_label(name)
