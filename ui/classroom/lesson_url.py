"""The lesson in the address bar: the poll code and slide of the Class poll and the Presentation.

F5 on the projector, a laptop waking from sleep, the same address in a new tab: each is a new
Streamlit session whose state is empty.  So the two teacher pages keep what they show in their
URL (issue #40 point 6) — ``?code=<CODE>`` (both pages) and ``&slide=<n>`` (the Presentation,
counted from 1, as its "2 / 5" says), beside the Presentation's ``?full=1`` — and a fresh session
takes them back from there.  The class's votes live in the poll store (SQLite,
:class:`amp.teaching.poll.PollStore`), so the code and the slide are all a reload needs.

Not ``?poll=``: that is the *student's* link (:attr:`amp.teaching.poll_records.Poll.query`), which
``app.py`` routes to the student page without the teacher's frame.

A fresh session reads the URL once (:func:`restore_code`, :func:`restore_slide`); from then on
the session's state is what the page shows and the URL follows it (:func:`keep`).  A code is
checked once, here, when it comes in (:func:`amp.teaching.poll_records.normalise_code`): one that
cannot be a code is dropped from the URL and handed back for the page to show; an unknown one
fails where the page opens it (:class:`~amp.teaching.poll_records.PollNotFoundError`).  A slide
out of range is clamped, never an error.
"""

from __future__ import annotations

from enum import StrEnum

import streamlit as st

from amp.teaching.poll_records import PollNotFoundError, normalise_code


class LessonParam(StrEnum):
    """The query parameters of the teacher's lesson pages (declared once)."""

    CODE = "code"  # the open poll (Class poll, Presentation)
    SLIDE = "slide"  # the Presentation's slide, from 1
    FULL = "full"  # the Presentation's full-screen layout (``1``)


def restore_code(key: str) -> PollNotFoundError | None:
    """On a fresh session (no ``key`` in its state), the URL's poll code into ``state[key]``.

    The code is normalised and checked here; one that cannot be a poll code is removed from the
    URL and returned (the page shows why, with a way out); nothing is stored then."""
    if key in st.session_state:
        return None
    raw = st.query_params.get(LessonParam.CODE)
    if raw is None:
        return None
    try:
        st.session_state[key] = normalise_code(raw)
    except PollNotFoundError as exc:
        del st.query_params[LessonParam.CODE]
        return exc
    return None


def slide_index(raw: str | None) -> int | None:
    """The slide index (from 0) of a ``?slide=`` value (from 1): ``None`` without one; a value that
    is no whole number is slide 1; below 1 is slide 1 (the page clamps the top end)."""
    if raw is None:
        return None
    try:
        number = int(raw.strip())
    except ValueError:
        number = 1
    return max(0, number - 1)


def restore_slide(key: str) -> None:
    """On a fresh session (no ``key`` in its state), the URL's slide into ``state[key]`` (an index from 0)."""
    if key in st.session_state:
        return
    index = slide_index(st.query_params.get(LessonParam.SLIDE))
    if index is not None:
        st.session_state[key] = index


def _put(param: LessonParam, value: str | None) -> None:
    if value is None:
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != value:  # each write is a message to the browser: only changes
        st.query_params[param] = value


def keep(code: str | None, slide: int | None = None) -> None:
    """Make the URL say poll ``code`` and slide index ``slide`` (from 0), or drop what is ``None``."""
    _put(LessonParam.CODE, code)
    _put(LessonParam.SLIDE, None if slide is None else str(slide + 1))


__all__ = ["LessonParam", "keep", "restore_code", "restore_slide", "slide_index"]
