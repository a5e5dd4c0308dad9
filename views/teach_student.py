"""Class poll (student): opened with ``?poll=<CODE>``; one sentence at a time.

A phone that has voted sees its vote, read from the store under its voter id (a cookie), so also
after a reload, in a new tab or after sleep; it starts at the first sentence it has not answered.
It may change its vote until the teacher reveals the sentence (the Presentation's Reveal), which
locks the sentence's answers (issue #41 point 3).  One message at a time.  The vote form and its
confirmation run in a fragment, so a vote reruns only that part; the page imports nothing heavy and
touches no model.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from amp.errors import AmpError
from amp.teaching import student_messages as say
from amp.teaching.poll import ItemRevealedError, PollClosedError, PollNotFoundError, Vote
from ui.classroom import class_poll
from ui.shared.common import describe_error, plain
from ui.shared.halt import halt

raw = st.query_params.get("poll", "")
st.title("Class poll")
try:
    poll = class_poll.store().get_poll(raw)
except PollNotFoundError:
    st.error(say.no_poll(f"**{plain(raw)}**" if raw else ""), icon=":material/error:")
    halt()
except AmpError as exc:
    st.error(f"The poll cannot be opened: {describe_error(exc)}", icon=":material/error:")
    halt()

if poll.closed:
    st.error(say.CLOSED, icon=":material/lock:")
    halt()

voter = class_poll.voter_id(poll.code)  # this browser's id for this poll (a cookie: reloads and new tabs keep it)
code = poll.code
n = len(poll.items)
#: session_state keys: the sentence shown, the sentence whose vote is being changed, and the one
#: message an answer left for its sentence (kind, text), shown once.
POS = f"stu_pos_{code}"
EDIT = f"stu_edit_{code}"
SAID = f"stu_said_{code}"
if poll.title:
    st.caption(plain(poll.title))

LOCKED = say.LOCKED


def _choice_key(pos: int) -> str:
    return f"stu_choice_{code}_{pos}"


def _confidence_key(pos: int) -> str:
    return f"stu_conf_{code}_{pos}"


def _words(pos: int, choice: int, confidence: int) -> str:
    """An answer in words (plain text): the reading as the student read it, and how sure."""
    return plain(say.answer_words(poll.items[pos], choice, confidence))


def _go(pos: int) -> None:
    st.session_state[POS] = pos
    st.session_state.pop(EDIT, None)


def _change(pos: int, vote: Vote) -> None:
    """Open the form again, filled with the vote as it stands."""
    st.session_state[EDIT] = pos
    st.session_state[_choice_key(pos)] = vote.choice
    st.session_state[_confidence_key(pos)] = vote.confidence


def _submit(pos: int) -> None:
    """Record the form's answer (the first, or a change); leave one message for the sentence."""
    choice = st.session_state.get(_choice_key(pos))
    confidence = st.session_state.get(_confidence_key(pos), 2)
    if choice is None:
        st.session_state[SAID] = (pos, "warning", say.PICK_FIRST)
        return
    try:
        done = class_poll.store().answer(code, pos, voter, int(choice), int(confidence))
    except ItemRevealedError:
        st.session_state[SAID] = (pos, "error", f"Not recorded: {LOCKED}")
    except PollClosedError:
        st.session_state[SAID] = (pos, "error", say.CLOSED_NOT_RECORDED)
    except AmpError as exc:
        st.session_state[SAID] = (pos, "error", say.not_recorded(describe_error(exc)))
    else:
        words = _words(pos, done.vote.choice, done.vote.confidence)
        st.session_state[SAID] = (pos, "success", say.answered(done.outcome, words, line_break="  \n"))
        st.session_state.pop(EDIT, None)


ICONS = {"success": ":material/check_circle:", "info": ":material/info:", "warning": ":material/warning:",
         "error": ":material/lock:"}


def _say(kind: str, text: str) -> None:
    getattr(st, kind)(text, icon=ICONS[kind])


def _nav(pos: int) -> None:
    if pos > 0:
        st.button("Previous sentence", key=f"stu_prev_{code}_{pos}", on_click=_go, args=(pos - 1,),
                  icon=":material/arrow_back:")
    st.button("Next sentence" if pos + 1 < n else "Finish", key=f"stu_next_{code}_{pos}",
              on_click=_go, args=(pos + 1,), icon=":material/arrow_forward:")


def _all_done(votes: dict, revealed: frozenset[int]) -> None:
    """Every sentence seen: this phone's answers, each changeable until its sentence is revealed."""
    st.success(say.ALL_DONE, icon=":material/celebration:")
    st.markdown("\n".join(
        f"{i + 1}. *{plain(it.surface)}* — "
        + (f"your answer: {_words(i, votes[i].choice, votes[i].confidence)}" if i in votes else "not answered")
        + (" (revealed: locked)" if i in revealed else "")
        for i, it in enumerate(poll.items)))
    st.button("Review my answers", key=f"stu_review_{code}", on_click=_go, args=(0,), icon=":material/undo:")


def _locked(pos: int, vote: Any, kind: str | None, text: str | None) -> None:
    """A revealed sentence: the vote (if any) and why it cannot change, in one box."""
    if kind == "error":
        _say("error", (text or "") + (f" Your answer stays {_words(pos, vote.choice, vote.confidence)}." if vote else ""))
    elif vote is not None:
        _say("info", f"Your answer: {_words(pos, vote.choice, vote.confidence)}. {LOCKED}")
    else:
        _say("info", f"{LOCKED} It takes no more answers.")
    with st.container(horizontal=True, gap="small"):
        _nav(pos)


@st.fragment
def sentence() -> None:
    """The sentence shown, with this phone's vote or the form, and one message."""
    store = class_poll.store()
    try:
        votes, revealed = store.voter_votes(code, voter), store.revealed_items(code)
    except AmpError as exc:
        st.error(f"The poll cannot be read: {describe_error(exc)}", icon=":material/error:")
        return
    if POS not in st.session_state:  # a fresh session (reload, new tab): the first sentence not answered
        st.session_state[POS] = next((i for i in range(n) if i not in votes), n)
    pos = min(max(0, int(st.session_state[POS])), n)
    if pos >= n:
        _all_done(votes, revealed)
        return
    item = poll.items[pos]
    st.progress(pos / n, text=f"Sentence {pos + 1} of {n}")
    st.markdown(f"## *{plain(item.surface)}*")
    vote = votes.get(pos)
    said = st.session_state.pop(SAID, None)
    kind, text = said[1:] if said is not None and said[0] == pos else (None, None)
    if pos in revealed:
        _locked(pos, vote, kind, text)
        return
    if vote is not None and st.session_state.get(EDIT) != pos:  # voted: the vote, not the form
        if kind is not None:
            _say(kind, text)
        else:
            _say("info", f"Your answer: {_words(pos, vote.choice, vote.confidence)}. {say.CHANGE_UNTIL_REVEAL}")
        row = st.container(horizontal=True, gap="small")
        with row:
            st.button("Change my answer", key=f"stu_change_{code}_{pos}", on_click=_change, args=(pos, vote),
                      icon=":material/edit:")
            _nav(pos)
        return
    st.session_state.setdefault(_confidence_key(pos), 2)
    st.radio(say.CHOICE_QUESTION, [0, 1], index=None, key=_choice_key(pos),
             format_func=lambda c: plain(item.paraphrase(c)))
    st.select_slider(say.CONFIDENCE_QUESTION, options=[1, 2, 3], format_func=lambda c: say.CONFIDENCE_LABELS[c],
                     key=_confidence_key(pos))
    if kind is not None:
        _say(kind, text)
    row = st.container(horizontal=True, gap="small")
    with row:
        st.button("Submit", type="primary", key=f"stu_submit_{code}_{pos}", icon=":material/send:",
                  on_click=_submit, args=(pos,))
        if vote is not None:
            st.button("Keep my answer", key=f"stu_keep_{code}_{pos}", on_click=st.session_state.pop,
                      args=(EDIT, None), icon=":material/close:")
        elif pos > 0:
            st.button("Previous sentence", key=f"stu_prev_{code}_{pos}", on_click=_go, args=(pos - 1,),
                      icon=":material/arrow_back:")


sentence()
