"""Widgets of the Class poll (teacher and student pages): its store, the poll the teacher is looking
at, this browser's voter id, the join box (link and QR code), the code in large type, and an
item's votes beside the model.

Streamlit glue over :mod:`amp.teaching.poll` (records, store, tallies) and
:mod:`amp.teaching.voter` (the one voter id); the join link is :mod:`amp.classroom.join`.  (Named
``class_poll``, not ``poll``: the pages call their poll record ``poll``.)
"""

from __future__ import annotations

import html

import streamlit as st

from amp.classroom.join import JoinLink, join_url, lan_address, qr_png
from amp.evaluation.verdict import CLASS_P_LF0_HOW, MODEL_P_LF0_HOW
from amp.reporting.poll_plots import poll_bars
from amp.teaching import lesson
from amp.teaching.lesson_prompt import describe_prompt
from amp.teaching.poll import CONFIDENCE_LABELS, ItemResult, PollItem, PollStore, shared_store
from amp.teaching.voter import VOTER_COOKIE_AGE_S, is_voter_id, new_voter_id, voter_cookie
from ui.classroom import present
from ui.shared import browser_store
from ui.shared.common import chart, fmt_prob, plain

#: session_state key: the poll the teacher is looking at.
POLL_CODE_KEY = "teach_poll_code"
#: session_state key prefix: this browser session's voter id for a poll (``_<CODE>``).
VOTER_ID_KEY = "teach_voter_id"
#: Seconds between two refreshes of the teacher's live tally (Class poll, Presentation): a vote shows
#: within about this long (issue #41: within 2 s of the last vote); each refresh is one small script
#: run of the teacher's page, the phones' votes cost none (the light vote page).
LIVE_REFRESH_S = 1


def store() -> PollStore:
    """The poll store under ``$AMP_CACHE_DIR`` (``cache/`` by default): this process's one store of
    that file, kept with its connections (:func:`amp.teaching.poll_store.shared_store`), so a rerun
    opens no connection and checks no schema."""
    return shared_store()


def voter_id(code: str) -> str:
    """This browser's voter id for poll ``code`` (one vote per item per id).

    The id is per browser and per poll: a first-party cookie (``amp_voter_<CODE>``,
    :mod:`ui.shared.browser_store`) the student page sets once; a reload, a new tab or a link opened
    again sees the cookie, so it is the same voter and cannot vote twice.  Nothing goes into the
    URL, so a link shared from one phone to another does not share the identity.  A fresh id
    (:func:`amp.teaching.voter.new_voter_id`) is made only when the browser has none, or one that
    is not a voter id (:func:`amp.teaching.voter.is_voter_id`), for this poll."""
    key = f"{VOTER_ID_KEY}_{code}"
    if key not in st.session_state:
        given = browser_store.read_cookie(voter_cookie(code))
        st.session_state[key] = given if is_voter_id(given) else new_voter_id()
    voter = st.session_state[key]
    browser_store.write_cookie(voter_cookie(code), voter, VOTER_COOKIE_AGE_S)
    return voter


def student_link(query: str) -> JoinLink:
    """The student URL a phone can open (:func:`amp.classroom.join.join_url`) for this request."""
    try:
        host = st.context.headers.get("Host")
    except Exception:  # noqa: BLE001 - no request context (tests)
        host = None
    return join_url(query, host=host, server_address=st.get_option("server.address"),
                    port=int(st.get_option("server.port")), lan=lan_address())


def join_box(query: str) -> None:
    """The student link in words and as a large QR code, or why phones cannot reach it."""
    link = student_link(query)
    st.markdown(f"**Student link:** `{link.url}`")
    if not link.reachable:
        st.warning(f"Phones cannot open this link: {link.why}.", icon=":material/wifi_off:")
        return
    st.image(qr_png(link.url), caption="Scan to join", width=360,
             alt=f"QR code of the student link {link.url}")  # WCAG 1.1.1: what the image says, in words


def big(text: str, size: str = "3.2rem") -> None:
    """Text in large type (projector-friendly); ``text`` is shown as plain text (escaped)."""
    st.markdown(f"<div style='font-size:{html.escape(size)};font-weight:700;line-height:1.15'>"
                f"{html.escape(text)}</div>",
                unsafe_allow_html=True)


def _names(item: PollItem) -> list[str]:
    """The bars' names: the words LF0/LF1 beside each reading's name (colour never says it alone)."""
    return [f"LF{i} · {item.reading_name(i)}" for i in (0, 1)]


def votes_summary(item: PollItem, result: ItemResult) -> str:
    """The vote chart in one line of words (its text alternative): each reading's votes."""
    return "Votes: " + ", ".join(f"{name}: {n}" for name, n in zip(_names(item), result.counts[:2], strict=True))


def item_chart(item: PollItem, result: ItemResult, *, key: str, height: int | None = 240) -> None:
    """Bars of the votes for LF0 and LF1, stacked by confidence, with :func:`votes_summary` under them.

    ``height=None``: the chart fills a box whose height follows the window (the Presentation's
    projector layout, :data:`ui.classroom.present.CHART_BOX`); the Presentation shows the summary
    beside it, in its tally."""
    names = _names(item)
    hovers = [" · ".join(f"{CONFIDENCE_LABELS[c + 1]}: {n}" for c, n in enumerate(result.confidence_by_choice[choice]))
              for choice in (0, 1)]
    fig = poll_bars(names, list(result.counts[:2]), hovers, height=height)
    summary = votes_summary(item, result)
    if height is None:
        with st.container(key=f"{present.CHART_BOX}{key}", height=300, border=False):  # CSS sets the height
            chart(fig, key=key, filename=f"poll_item_{result.index}", height="stretch", html_download=False,
                  summary=summary, summary_beside=True)
    else:
        chart(fig, key=key, filename=f"poll_item_{result.index}", summary=summary)


def item_results(item: PollItem, result: ItemResult, model_p: float | None, *, key: str) -> None:
    """One item: its sentence, the vote bars, the class's and the model's P(LF0)."""
    st.markdown(f"**{result.index + 1}. *{plain(item.surface)}*** · {result.n_voters} vote(s)")
    left, right = st.columns([2, 1])
    with left:
        item_chart(item, result, key=key)
    right.metric("Class P(LF0)", fmt_prob(result.human_p_lf0, 2), help=CLASS_P_LF0_HOW)
    verdict = lesson.reveal_verdict(item, item.model_match or None, model_p)
    right.metric("Model P(LF0)", fmt_prob(model_p, 2) if model_p is not None else "–",
                 help=verdict.measure.how if verdict.measure else MODEL_P_LF0_HOW)
    with right:
        st.caption(plain(verdict.text))
        if item.prompt is not None and model_p is not None:  # the one prompt of this item (issue #40 point 3)
            st.caption(f"Scored {plain(describe_prompt(item.prompt))}.")
