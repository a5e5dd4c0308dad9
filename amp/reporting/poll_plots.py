"""The class poll's vote bars (the Class poll and Presentation pages).

Reading names are the teacher's own words: they go through :func:`plain_label`, so markup in a
name is shown as typed, never as a link or bold text.  On a projector (issue #40 point 7) the
names stand horizontal, wrapped at word boundaries into lines of at most
:data:`LABEL_LINE_CHARS` characters (each line escaped, the breaks the figure's own ``<br>``), and
the vote axis has a few integer ticks from 0 to the largest count (:func:`vote_ticks`), so 30 or
150 votes read as clearly as 3.

A label's size is bounded whatever a teacher types (issue #44 point 5: a name of 40 characters
without a break shrank the projector's plot area to 64 px and cut its label): a word longer than a
line is split over lines, and a name longer than :data:`LABEL_MAX_LINES` lines
(:data:`PROJECTOR_MAX_LINES` on the projector) ends in :data:`ELLIPSIS` at a word boundary; the
hover shows every name whole.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go

from amp.reporting.style import LF0_COLOR, LF1_COLOR, plain_label

__all__ = ["ELLIPSIS", "LABEL_LINE_CHARS", "LABEL_MAX_LINES", "MAX_VOTE_TICKS", "PROJECTOR_FONT_PX",
           "PROJECTOR_LINE_CHARS", "PROJECTOR_MAX_LINES", "PROJECTOR_TICK_PX", "PROJECTOR_VOTE_TICKS",
           "poll_bars", "reading_label", "vote_ticks"]

#: Type size of the vote chart on the projector (``height=None``, the Presentation): plotly sizes
#: text in pixels, not with the window, so the projector's chart gets type a class can read from
#: the back of the room (the page's own text scales with the viewport, :mod:`ui.classroom.present`).
PROJECTOR_FONT_PX = 24
#: Longest line of a reading's label under its bar: half of the narrowest chart holds it, so the
#: two names never overlap (the Class poll's column at 1280 px with the sidebar open; the
#: Presentation's chart beside the tally, about 410 px wide at 1280×720 with the sidebar open, at
#: :data:`PROJECTOR_TICK_PX` type: :data:`PROJECTOR_LINE_CHARS`, measured in Chromium, issue #44
#: point 5).
LABEL_LINE_CHARS = 22
PROJECTOR_LINE_CHARS = 18
#: Most lines of a reading's label: on the page (240 px high, type of 12 px), and on the projector,
#: where three lines of :data:`PROJECTOR_TICK_PX` type leave the bars over half of a 200 px chart
#: box.  A name of up to about 45 characters (``LF0 · `` included) is whole on the projector, and
#: every name the app allows (60 characters after ``LF0 · ``) on the page.
LABEL_MAX_LINES = 3
PROJECTOR_MAX_LINES = 3
#: Ends a label cut short (at a word boundary; the hover holds the whole name).
ELLIPSIS = "…"
#: Most intervals on the vote axis (so at most this many ticks above 0): on the page, and on the
#: projector, whose chart may be as low as 150 px at 1280×720 (three tick labels fit there).
MAX_VOTE_TICKS = 4
PROJECTOR_VOTE_TICKS = 2
#: Type size of the projector chart's tick labels (the reading names and the vote ticks): smaller
#: than :data:`PROJECTOR_FONT_PX`, so two lines of a name leave the bars room in a 150 px chart.
PROJECTOR_TICK_PX = 18
#: Room above the top tick (a fraction of the axis), so its label is drawn whole.
HEADROOM = 0.06
#: Tick steps of one decade (times 1, 10, 100, …; 1.5, 2.5 and 7.5 only from 10 on: steps are
#: whole votes).
_DECADE = (1.0, 1.5, 2.0, 2.5, 5.0, 7.5)


def vote_ticks(most: int, intervals: int = MAX_VOTE_TICKS) -> tuple[int, int]:
    """The vote axis for a largest count ``most``: ``(dtick, top)``, the smallest integer step of
    1, 2, 5, 10, 15, 20, 25, 50, 75, 100, 150, … that gives at most ``intervals`` intervals, and
    the top tick, the first at or above ``most`` (at least 1); the axis ends :data:`HEADROOM`
    above it."""
    if most < 0:
        raise ValueError(f"a vote count cannot be negative, got {most}")
    for power in itertools.count():
        for m in _DECADE:
            step = m * 10**power
            if step.is_integer() and math.ceil(most / step) <= intervals:
                dtick = int(step)
                return dtick, max(dtick, math.ceil(most / dtick) * dtick)
    raise AssertionError("unreachable")  # pragma: no cover


def reading_label(name: str, width: int = LABEL_LINE_CHARS, lines: int = LABEL_MAX_LINES) -> str:
    """``name`` as a bar's label: wrapped at spaces into at most ``lines`` lines of at most
    ``width`` characters (a longer word split over lines; a longer name cut at a word boundary
    and ended with :data:`ELLIPSIS`), each line escaped (:func:`plain_label`) and the lines joined
    by ``<br>``."""
    wrapped = textwrap.wrap(" ".join(str(name).split()), width, break_long_words=True, break_on_hyphens=False,
                            max_lines=lines, placeholder=f" {ELLIPSIS}")
    return "<br>".join(plain_label(line) for line in wrapped)


def poll_bars(names: Sequence[str], counts: Sequence[int], hovers: Sequence[str], *,
              height: int | None = 240) -> go.Figure:
    """One bar per reading (LF0 blue, LF1 orange): its votes, labelled ``names[i]``
    (horizontal, in at most :data:`LABEL_MAX_LINES` lines, :func:`reading_label`), with the whole
    name and ``hovers[i]`` (the votes by confidence) on hover; integer vote ticks
    (:func:`vote_ticks`); ``height=None``: as high as its box, with projector-sized type
    (:data:`PROJECTOR_FONT_PX`, ticks :data:`PROJECTOR_TICK_PX`), at most
    :data:`PROJECTOR_MAX_LINES` lines a name and :data:`PROJECTOR_VOTE_TICKS` intervals."""
    if not len(names) == len(counts) == len(hovers) == 2:
        raise ValueError(f"poll_bars needs two readings, got {len(names)} names, {len(counts)} counts, "
                         f"{len(hovers)} hovers")
    projector = height is None
    line_chars, max_lines, intervals = (PROJECTOR_LINE_CHARS, PROJECTOR_MAX_LINES, PROJECTOR_VOTE_TICKS) \
        if projector else (LABEL_LINE_CHARS, LABEL_MAX_LINES, MAX_VOTE_TICKS)
    fig = go.Figure()
    for choice, color in enumerate((LF0_COLOR, LF1_COLOR)):
        hover = [plain_label(part) for part in (names[choice], hovers[choice]) if part]
        fig.add_bar(x=[reading_label(names[choice], line_chars, max_lines)], y=[counts[choice]], marker_color=color,
                    name=plain_label(names[choice]), text=[counts[choice]], textposition="auto",
                    hovertext=["<br>".join(hover)])
    if projector:
        fig.update_layout(font={"size": PROJECTOR_FONT_PX})
        fig.update_xaxes(tickfont={"size": PROJECTOR_TICK_PX})
        fig.update_yaxes(tickfont={"size": PROJECTOR_TICK_PX})
    else:
        fig.update_layout(height=height)
    dtick, top = vote_ticks(max(counts), intervals)
    fig.update_layout(margin={"l": 10, "r": 10, "t": 10, "b": 10}, showlegend=False,
                      yaxis_title="votes", plot_bgcolor="white",
                      yaxis={"rangemode": "tozero", "tick0": 0, "dtick": dtick, "range": [0, top * (1 + HEADROOM)],
                             "tickformat": "d", "automargin": True},
                      xaxis={"tickangle": 0, "automargin": True})
    return fig
