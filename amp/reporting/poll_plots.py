"""The class poll's vote bars (the Class poll and Presentation pages).

Reading names are the teacher's own words: they go through :func:`plain_label`, so markup in a
name is shown as typed, never as a link or bold text.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from amp.reporting.style import LF0_COLOR, LF1_COLOR, plain_label

__all__ = ["PROJECTOR_FONT_PX", "poll_bars"]

#: Type size of the vote chart on the projector (``height=None``, the Presentation): plotly sizes
#: text in pixels, not with the window, so the projector's chart gets type a class can read from
#: the back of the room (the page's own text scales with the viewport, :mod:`ui.classroom.present`).
PROJECTOR_FONT_PX = 24


def poll_bars(names: Sequence[str], counts: Sequence[int], hovers: Sequence[str], *,
              height: int | None = 240) -> go.Figure:
    """One bar per reading (LF0 blue, LF1 vermillion): its votes, labelled ``names[i]``, with
    ``hovers[i]`` (the votes by confidence) on hover; ``height=None``: as high as its box, with
    projector-sized type (:data:`PROJECTOR_FONT_PX`)."""
    if not len(names) == len(counts) == len(hovers) == 2:
        raise ValueError(f"poll_bars needs two readings, got {len(names)} names, {len(counts)} counts, "
                         f"{len(hovers)} hovers")
    fig = go.Figure()
    for choice, color in enumerate((LF0_COLOR, LF1_COLOR)):
        name = plain_label(names[choice])
        fig.add_bar(x=[name], y=[counts[choice]], marker_color=color, name=name, text=[counts[choice]],
                    textposition="auto", hovertext=[plain_label(hovers[choice])])
    if height is not None:
        fig.update_layout(height=height)
    else:
        fig.update_layout(font={"size": PROJECTOR_FONT_PX})
    fig.update_layout(margin={"l": 10, "r": 10, "t": 10, "b": 10}, showlegend=False,
                      yaxis_title="votes", plot_bgcolor="white", yaxis={"rangemode": "tozero", "dtick": 1})
    return fig
