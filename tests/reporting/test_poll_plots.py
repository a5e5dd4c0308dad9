"""The vote chart on a projector (issue #40 point 7): integer ticks from 0 to 150 votes that do not
pile up, reading names whole and horizontal, user text never markup; a name of any length takes a
bounded box under its bar, cut at a word with "…" past it and whole in the hover (issue #44 point 5)."""

from __future__ import annotations

import html
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from amp.reporting.poll_plots import (
    ELLIPSIS,
    LABEL_LINE_CHARS,
    LABEL_MAX_LINES,
    MAX_VOTE_TICKS,
    PROJECTOR_LINE_CHARS,
    PROJECTOR_MAX_LINES,
    PROJECTOR_TICK_PX,
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
    long_word = reading_label("LF0 · " + "x" * 40).split("<br>")  # issue #44 point 5: split over lines, whole
    assert len(long_word) > 1 and all(len(line) <= LABEL_LINE_CHARS for line in long_word)
    assert "".join(long_word).replace(" ", "") == "LF0·" + "x" * 40
    fig = poll_bars(["LF0 · the man had the telescope", LONG], [1, 2], ["", ""])
    assert [bar.x[0] for bar in fig.data] == [reading_label("LF0 · the man had the telescope"), label]
    projector = poll_bars(["LF0 · the man had the telescope", LONG], [1, 2], ["", ""], height=None)
    assert projector.data[1].x[0] == reading_label(LONG, PROJECTOR_LINE_CHARS, PROJECTOR_MAX_LINES)
    assert projector.data[1].x[0].split("<br>") == ["LF1 · the boy used", "the telescope as", "an instrument"]


def test_a_name_with_markup_is_shown_as_typed_and_only_the_wrap_is_a_break() -> None:
    name = "LF0 · <b>bold</b> & a <br> in the name typed by a teacher"
    label = reading_label(name)
    assert "<b>" not in label and "&lt;br&gt;" in label
    assert label.replace("<br>", " ") == plain_label(name)


# --- issue #44 point 5: long reading names -------------------------------------------------------------

#: Reading names as long as a poll item allows (amp.teaching.poll_records.MAX_NAME) after ``LF0 · ``.
NAMES = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzÄß !?-"), min_size=0, max_size=60)
#: The 40 characters of issue #44: words, and one word no space breaks.
FORTY = ("the man who stood on the hill had a lens", "Fernrohrbenutzungsinstrumentalbedeutung!")
#: The projector's chart box at 1280×720 in full screen (``ui.classroom.present.FULL_CHART_CSS``: 28vh),
#: the lowest it is on a 720-line screen, and the margins ``poll_bars`` sets above and below the plot.
PROJECTOR_BOX_PX = 0.28 * 720
MARGINS_PX = 10 + 10
#: Plotly's line height (a multiple of the type size) and the share of the box the plot keeps.
LINE_HEIGHT = 1.3
PLOT_SHARE = 0.4


@given(NAMES, st.sampled_from([(LABEL_LINE_CHARS, LABEL_MAX_LINES), (PROJECTOR_LINE_CHARS, PROJECTOR_MAX_LINES)]))
def test_a_label_is_at_most_its_lines_of_its_width_and_whole_or_cut_at_a_word_with_an_ellipsis(
        name: str, budget: tuple[int, int]) -> None:
    width, most = budget
    full = f"LF0 · {name}"
    lines = [html.unescape(line) for line in reading_label(full, width, most).split("<br>")]
    assert 1 <= len(lines) <= most and all(0 < len(line) <= width for line in lines), lines
    squeezed = "".join(full.split())
    if lines[-1].endswith(f" {ELLIPSIS}"):  # cut: what is shown starts the name, at a word's end
        shown = "".join(lines)[: -len(ELLIPSIS)].replace(" ", "")
        assert squeezed.startswith(shown) and len(shown) < len(squeezed)
        assert len(lines) == most
    else:
        assert "".join(lines).replace(" ", "") == squeezed  # whole, only the spaces at the breaks gone


@pytest.mark.parametrize("name", FORTY)
def test_forty_characters_leave_the_plot_most_of_the_projector_box_and_the_hover_the_whole_name(name: str) -> None:
    """The label block under the bars (lines × type × line height) leaves the plot at least
    :data:`PLOT_SHARE` of the lowest projector box; the Chromium test measures the real pixels
    (tests/e2e/test_projector_layout_browser.py)."""
    names = [f"LF0 · {name}", f"LF1 · {name} <b>and more words past the third line</b>"]
    fig = poll_bars(names, [110, 40], ["Very sure: 3", ""], height=None)
    assert fig.layout.xaxis.tickfont.size == PROJECTOR_TICK_PX and fig.layout.xaxis.tickangle == 0
    lines = max(len(bar.x[0].split("<br>")) for bar in fig.data)
    assert lines <= PROJECTOR_MAX_LINES
    label_px = math.ceil(lines * PROJECTOR_TICK_PX * LINE_HEIGHT)
    assert PROJECTOR_BOX_PX - MARGINS_PX - label_px >= PLOT_SHARE * PROJECTOR_BOX_PX
    assert all(len(html.unescape(line)) <= PROJECTOR_LINE_CHARS for bar in fig.data for line in bar.x[0].split("<br>"))
    whole = "".join(fig.data[0].x[0].replace("<br>", "").split())
    assert whole == "".join(plain_label(names[0]).split())  # 46 characters: whole on the projector
    assert fig.data[1].x[0].endswith(f" {ELLIPSIS}")  # a longer one is cut at a word …
    assert [bar.hovertext[0] for bar in fig.data] == [f"{plain_label(names[0])}<br>Very sure: 3",
                                                      plain_label(names[1])]  # … and whole in the hover, as text
