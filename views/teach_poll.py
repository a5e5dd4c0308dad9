"""Class poll (teacher): create a poll, share its code, watch the class vote live beside the model."""

from __future__ import annotations

import streamlit as st

from amp.data.types import type_ids
from amp.errors import AmpError
from amp.teaching.poll import Poll, PollItem, PollStore, tidy_code
from ui.classroom import class_poll, demo_pack, lesson_choice, lesson_url, poll_creation, present
from ui.classroom.model_reveal import sentence_prompt
from ui.classroom.pool_sentences import guard_pairs, guard_sample
from ui.shared.calibration_view import poll_agreement_section
from ui.shared.common import describe_error, plain, type_label
from ui.shared.halt import halt
from ui.shared.prompt_state import use_prompt

st.title("Class poll")
st.caption("Students open the link (or type the code after `?poll=`), pick the reading they prefer and say how "
           "sure they are — the paper's human annotation (Appendix A.5), with your class.")


def _open(code: str) -> None:
    st.session_state[class_poll.POLL_CODE_KEY] = tidy_code(code)


def _open_typed() -> None:
    """Open the code in the box *now* (a callback's bound arguments would be the run before's)."""
    _open(st.session_state.get("tp_open_code", ""))


def _create(store: PollStore, pairs: list, title: str, with_model: bool) -> None:
    """Create the poll; with the model's numbers, each sentence goes through the model first under a live
    line (stage, elapsed, time left) and one Cancel (issue #40 point 6): a Cancel reruns the page before
    the poll is created, so there is never a half poll."""
    reveals = (poll_creation.reveal_all([p.surface for p in pairs], key="tp_create") if with_model
               else [None] * len(pairs))
    items = [PollItem.from_pair(p, r.p_lf0 if r else None, (r.match or "") if r else "",
                                prompt=sentence_prompt(p.surface))  # the lesson's prompt, kept with the item
             for p, r in zip(pairs, reveals)]
    _open(store.create_poll(items, title).code)
    st.rerun()  # the new poll, its code in the URL


def _close(code: str) -> None:
    try:
        class_poll.store().close_poll(code)
    except AmpError as exc:
        st.session_state["teach_close_error"] = describe_error(exc)


try:
    store = class_poll.store()
except AmpError as exc:
    st.error(f"The poll database is unavailable: {describe_error(exc)}", icon=":material/error:")
    halt()

# issue #40 point 6: the open poll's code lives in the URL (?code=), so a reload or a new tab keeps it
problem: AmpError | None = lesson_url.restore_code(class_poll.POLL_CODE_KEY)
poll: Poll | None = None
if code := st.session_state.get(class_poll.POLL_CODE_KEY):
    try:
        poll = store.get_poll(code)
    except AmpError as exc:
        problem = exc
        st.session_state.pop(class_poll.POLL_CODE_KEY, None)  # forgotten: the page goes on without it
lesson_url.keep(poll.code if poll else None)
if problem is not None:
    st.error(f"Cannot open poll: {describe_error(problem)}. Start a new poll or open another one below.",
             icon=":material/error:")

with st.expander("New poll", icon=":material/add:", expanded=poll is None):
    c1, c2 = st.columns([1, 2])
    type_ = c1.selectbox("Ambiguity type", type_ids(), format_func=type_label, key="tp_type")
    how = c2.radio("Items", ["one sentence", "sampled sequence"], horizontal=True, key="tp_how")
    if how == "one sentence":
        word = c1.text_input("Filter sentences", key="tp_word", placeholder="e.g. telescope")
        pool = guard_pairs(type_, word.strip() or None)
        surface = c2.selectbox("Sentence", [p.surface for p in pool[:300]], key="tp_surface")
        chosen = [p for p in pool if p.surface == surface][:1]
    else:
        n = c1.number_input("Number of sentences N", 1, 20, 3, key="tp_n")
        seed = c2.number_input("Seed", 0, 2**31 - 1, 0, key="tp_seed")
        chosen = guard_sample(type_, int(n), int(seed))
    lesson_choice.picker("tp_lesson")  # the one prompt every page scores these sentences under (issue #40)
    title = st.text_input("Title (optional)", key="tp_title", max_chars=200)
    with_model = st.checkbox("Include the model's parse and P(LF0) (runs each sentence once; cached)", value=True,
                             key="tp_with_model")
    poll_creation.cancelled_note("tp_create")
    if st.button("Create poll", type="primary", key="tp_create", icon=":material/how_to_vote:", disabled=not chosen):
        _create(store, chosen, title or "", with_model)

with st.expander("Open an existing poll", icon=":material/folder_open:"):
    o1, o2 = st.columns([2, 1], vertical_alignment="bottom")
    o1.text_input("Poll code", key="tp_open_code", placeholder="K7QX2M")
    o2.button("Open", key="tp_open", on_click=_open_typed)

with st.expander("Demo packs: take the cached results to a class without a model", icon=":material/inventory_2:"):
    demo_pack.demo_pack_section()

if poll is None:
    halt()

head, link = st.columns([1, 2], vertical_alignment="center")
with head:
    class_poll.big(poll.code, "4rem")
with link:
    class_poll.join_box(poll.vote_query)
    st.caption(f"{plain(poll.title) or 'Untitled poll'} · {len(poll.items)} item(s) · "
               + ("**closed** — votes kept, no new ones" if poll.closed else "open"))
live = st.toggle(f"Live results (refresh every {class_poll.LIVE_REFRESH_S} s)", value=True, key="tp_live")


def _route(items: list[PollItem]) -> None:
    """Parse or present one of the poll's sentences (a template or own sentence) under its one
    prompt: the one the poll scored it under (named), so Parse & inspect shows the same numbers."""
    surfaces = [item.surface for item in items]
    r1, r2, r3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    surface = r1.selectbox("A sentence of this poll", surfaces, key="tp_route_sentence",
                           help="Parse & inspect gets the prompt this poll scores the sentence under; change it "
                                "in the Prompt builder.")
    item = items[surfaces.index(surface)]
    prompt = sentence_prompt(item)
    if prompt is not None:
        r1.caption(f"Scored {plain(lesson_choice.prompt_caption(prompt))}.")
    if r2.button("Parse this sentence", key="tp_route_parse", icon=":material/troubleshoot:"):
        if prompt is not None:
            use_prompt(prompt)
            st.switch_page("views/parse_inspect.py")
        else:
            st.error("This sentence is no longer in a pool or in your own sentences.", icon=":material/error:")
    if r3.button("Present this sentence", key="tp_route_present", icon=":material/slideshow:",
                 help="The Presentation shows it as an item of this poll, with the class's votes on it."):
        present.present_poll_item(poll.code, surfaces.index(surface))
        st.switch_page("views/teach_present.py")


_route(list(poll.items))


def results() -> None:
    try:
        res = store.results(poll.code)
        current = store.get_poll(poll.code)
    except AmpError as exc:
        st.error(f"Cannot read the results: {describe_error(exc)}", icon=":material/error:")
        return
    st.metric("Votes", res.n_votes, help=f"{res.n_voters} student(s)")
    for item, r in zip(current.items, res.items, strict=True):
        with st.container(border=True):
            class_poll.item_results(item, r, item.model_p_lf0, key=f"tp_chart_{poll.code}_{r.index}")
    d1, v1, v2, d2, _ = st.columns([1, 1, 1, 1, 1])
    d1.download_button("Download votes (CSV)", store.export_csv(poll.code), file_name=f"poll-{poll.code}.csv",
                       mime="text/csv", key="tp_csv", icon=":material/download:", on_click="ignore")
    # issue #41 point 4: each voter's answers under a pseudonym, with its first and last answer times
    v1.download_button("Per voter (CSV)", store.export_voters_csv(poll.code), file_name=f"poll-{poll.code}-voters.csv",
                       mime="text/csv", key="tp_voters_csv", icon=":material/download:", on_click="ignore",
                       help="One row per student and sentence: an anonymous voter name, the choice, the "
                            "confidence, and the times of the first answer and of the one that counts.")
    v2.download_button("Per voter (JSON)", store.export_voters_json(poll.code),
                       file_name=f"poll-{poll.code}-voters.json", mime="application/json", key="tp_voters_json",
                       icon=":material/download:", on_click="ignore")
    if current.closed:
        d2.info("Poll closed", icon=":material/lock:")
    else:
        if d2.button("Close poll", key="tp_close", icon=":material/lock:"):
            _close(poll.code)
            st.rerun()  # the whole page: header says closed, live refresh stops


st.fragment(results, run_every=class_poll.LIVE_REFRESH_S if live and not poll.closed else None)()
poll_agreement_section(store, poll.code, live=live and not poll.closed)
if "teach_close_error" in st.session_state:
    st.error(st.session_state.pop("teach_close_error"), icon=":material/error:")
