"""Presentation: one ambiguous sentence at a time in large type, its two readings, the model's choice."""

from __future__ import annotations

import html

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from amp.data.types import type_ids
from amp.errors import AmpError
from amp.evaluation.verdict import CLASS_P_LF0_HOW, MODEL_P_LF0_HOW
from amp.teaching import lesson
from amp.teaching.poll import PollItem, tidy_code
from ui.classroom import class_poll, detection_slide, lesson_choice, lesson_url, present
from ui.classroom.model_reveal import model_reveal, sentence_prompt
from ui.classroom.pool_sentences import guard_sample
from ui.shared import readings
from ui.shared.common import describe_error, fmt_prob, plain, type_label
from ui.shared.halt import halt

full = present.full_screen()  # issue #11 point 3: no Streamlit chrome, the browser's full screen
present.page_css(full)
nav = present.nav_row(full)  # filled below, once the sentence is known
# issue #40 point 6: a reload (F5, a new tab, a laptop waking up) shows the same poll and slide
url_error = lesson_url.restore_code(present.CODE_KEY)
if url_error is None:
    lesson_url.restore_slide(present.POS_KEY)  # the slide of that poll
else:
    present.no_poll_box(f"The address names no poll: {describe_error(url_error)}.", key="present_no_poll_url")

with st.sidebar:
    st.markdown("**:material/slideshow: Presentation**")
    st.session_state.setdefault(present.CODE_KEY, st.session_state.get(class_poll.POLL_CODE_KEY, ""))
    code = tidy_code(st.text_input("Poll code (optional)", key=present.CODE_KEY, placeholder="K7QX2M"))
    type_ = st.selectbox("Ambiguity type (without a poll)", type_ids(), format_func=type_label,
                         key="present_type")
    n = st.number_input("Sentences", 1, 30, 5, key="present_n")
    seed = st.number_input("Seed", 0, 2**31 - 1, 0, key="present_seed")
    lesson_choice.picker("present_lesson")  # the prompt of slides without a poll (a poll's items carry theirs)
    readings.logic_toggle()
    detection = detection_slide.sidebar_choice()  # issue #43 point 4: the deck's last slide, once measured

poll = None
if code:
    try:
        poll = class_poll.store().get_poll(code)
        items = list(poll.items)
    except AmpError as exc:
        present.no_poll_box(f"Poll {plain(code)}: {describe_error(exc)}.")
        halt()
elif st.session_state.get(present.SENTENCE_KEY):
    one = lesson.sentence_item(st.session_state[present.SENTENCE_KEY])  # a pool or own sentence
    items = [one] if one is not None else []
    st.sidebar.button("Present a sample instead", key="present_sample", icon=":material/shuffle:",
                      on_click=st.session_state.pop, args=(present.SENTENCE_KEY, None))
else:
    items = [PollItem.from_pair(p) for p in guard_sample(type_, int(n), int(seed))]
if not items:
    halt()

count = len(items) + (detection is not None)  # the sentences, then the detection slide
pos = max(0, min(st.session_state.get(present.POS_KEY, 0), count - 1))  # a slide out of range: clamped
lesson_url.keep(poll.code if poll else None, pos if poll else None)


def _move(step: int) -> None:
    st.session_state[present.POS_KEY] = max(0, min(count - 1, pos + step))


nav.button("Previous", key="present_prev", icon=":material/arrow_back:", disabled=pos == 0,
           on_click=_move, args=(-1,))
nav.button("Next", key="present_next", icon=":material/arrow_forward:", disabled=pos >= count - 1,
           on_click=_move, args=(1,))
if detection is not None and pos == len(items):
    nav.caption(f"{pos + 1} / {count} · {detection_slide.NAV_LABEL}" + (f" · poll **{poll.code}**" if poll else ""),
                width="stretch")
    detection_slide.show(detection)
    halt()
item = items[pos]
prompt = sentence_prompt(item)  # the one prompt of this sentence: the poll item's, else the lesson's
nav.caption(f"{pos + 1} / {count} · {lesson.slide_label(item)}"
            + (f" · {lesson_choice.prompt_caption(prompt)}" if prompt is not None else "")
            + (f" · poll **{poll.code}**" if poll else ""), width="stretch")
reveal = nav.button("Reveal the model's choice", key=f"present_reveal_{pos}", type="primary",
                    icon=":material/smart_toy:")

st.markdown(f"<div class='present-s'>“{html.escape(item.surface)}”</div>", unsafe_allow_html=True)
for idx in (0, 1):
    label = item.reading_name(idx)
    color = readings.COLORS[idx]
    st.markdown(f"<div class='present-r'><b style='color:{html.escape(color)}'>LF{idx} · {html.escape(label)}</b>: "
                f"{html.escape(item.paraphrase(idx))}</div>", unsafe_allow_html=True)
if not readings.logic_hidden():
    with st.expander("The logic behind the two readings"):
        st.code(f"LF0: {item.lf0}\nLF1: {item.lf1}", language=None, wrap_lines=True)

shown = st.session_state.setdefault("present_revealed", set())
if reveal:
    shown.add(item.surface)
if poll is not None:  # issue #41 point 3: a poll's reveal is the store's (it locks the item's answers; a reload keeps it)
    try:
        if reveal:
            class_poll.store().reveal_item(poll.code, pos)
        if pos in class_poll.store().revealed_items(poll.code):
            shown.add(item.surface)
    except AmpError as exc:
        st.error(f"The reveal could not be recorded, so the class can still change its answers: "
                 f"{describe_error(exc)}", icon=":material/error:")
if item.surface in shown:  # issue #26 point 5: what the model wrote, then what it scores
    did = model_reveal(item, prompt) if not item.model_match or item.model_p_lf0 is None else None
    p = item.model_p_lf0 if item.model_p_lf0 is not None else (did.p_lf0 if did else None)
    match = item.model_match or (did.match if did else None)
    told = lesson.reveal_verdict(item, match, p, did)
    readings.show_verdict(told, large=True)
def model_number(where: DeltaGenerator) -> None:
    """The model's P(LF0), once revealed, with how its measure is computed."""
    if item.surface in shown:
        where.metric("Model P(LF0)", fmt_prob(p, 2), help=told.measure.how if told.measure else MODEL_P_LF0_HOW)


def class_votes() -> None:
    """The model's number and the class's tally on the left, the votes' chart on the right
    (refreshed every second while the poll is open); the tally sits beside the chart, not under it,
    so that at 1280×720 in full screen it never falls below the window."""
    assert poll is not None
    left, right = st.columns(2)
    model_number(left)
    try:
        res = class_poll.store().results(poll.code).items[pos]
    except AmpError as exc:
        right.error(f"Cannot read the poll results: {describe_error(exc)}", icon=":material/error:")
        return
    with right:
        class_poll.item_chart(item, res, key=f"present_chart_{pos}", height=None)  # as high as the window allows
    left.caption(f"Class: {res.n_voters} vote(s) · P(LF0) = {fmt_prob(res.human_p_lf0, 2)}")
    left.caption(plain(class_poll.votes_summary(item, res)))  # the chart's text alternative, beside it
    left.caption(CLASS_P_LF0_HOW)


if poll is not None:
    st.fragment(class_votes, run_every=None if poll.closed else class_poll.LIVE_REFRESH_S)()
else:
    model_number(st.columns(2)[0])
