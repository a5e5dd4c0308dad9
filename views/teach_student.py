"""Class poll (student): opened with ``?poll=<CODE>``; one sentence at a time, one vote per item."""

from __future__ import annotations

import streamlit as st

from amp.errors import AmpError
from amp.teaching.poll import (
    CONFIDENCE_LABELS,
    DuplicateVoteError,
    PollClosedError,
    PollNotFoundError,
)
from ui.classroom import class_poll
from ui.shared.common import describe_error, plain
from ui.shared.halt import halt

raw = st.query_params.get("poll", "")
st.title("Class poll")
try:
    poll = class_poll.store().get_poll(raw)
except PollNotFoundError:
    st.error(f"There is no poll with the code **{plain(raw) or '(empty)'}**. Check the link or ask your teacher for "
             "the code.", icon=":material/error:")
    halt()
except AmpError as exc:
    st.error(f"The poll cannot be opened: {describe_error(exc)}", icon=":material/error:")
    halt()

if poll.closed:
    st.error("This poll is closed: it takes no more answers. Thank you!", icon=":material/lock:")
    halt()

voter = class_poll.voter_id(poll.code)  # this browser's id for this poll (a cookie: reloads and new tabs keep it)
POS = f"stu_pos_{poll.code}"
DONE = f"stu_done_{poll.code}"
pos = st.session_state.setdefault(POS, 0)
done: set = st.session_state.setdefault(DONE, set())
n = len(poll.items)
if poll.title:
    st.caption(plain(poll.title))
if pos >= n:
    st.success("All done — thank you for taking part!", icon=":material/celebration:")
    halt()


def _next() -> None:
    st.session_state[POS] = pos + 1


item = poll.items[pos]
st.progress(pos / n, text=f"Sentence {pos + 1} of {n}")
st.markdown(f"## *{plain(item.surface)}*")
choice = st.radio("Which meaning do you understand?", [0, 1], index=None, key=f"stu_choice_{poll.code}_{pos}",
                  format_func=lambda c: plain(item.paraphrase(c)))
confidence = st.select_slider("How confident are you?", options=[1, 2, 3], value=2,
                              format_func=lambda c: CONFIDENCE_LABELS[c], key=f"stu_conf_{poll.code}_{pos}")
if st.button("Submit", type="primary", key=f"stu_submit_{poll.code}_{pos}", icon=":material/send:"):
    if choice is None:
        st.warning("Pick one of the two meanings first.", icon=":material/warning:")
    else:
        try:
            class_poll.store().submit_vote(poll.code, pos, voter, int(choice), int(confidence))
            done.add(pos)
        except DuplicateVoteError:
            done.add(pos)
            st.info("You already answered this sentence — your first answer is the one that counts.",
                    icon=":material/info:")
        except PollClosedError:
            st.error("The poll was just closed: your answer was not recorded.", icon=":material/lock:")
        except AmpError as exc:
            st.error(f"Your answer was not recorded: {describe_error(exc)}", icon=":material/error:")
if pos in done:
    st.success("Thanks! Your answer is in.", icon=":material/check_circle:")
    st.button("Next sentence" if pos + 1 < n else "Finish", key=f"stu_next_{poll.code}_{pos}",
              on_click=_next, icon=":material/arrow_forward:")
