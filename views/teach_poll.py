"""Class poll (teacher): create a poll, share its code, watch the class vote live beside the model."""

from __future__ import annotations

import streamlit as st

from amp.data.types import type_ids
from amp.errors import AmpError
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.teaching import lesson
from amp.teaching.poll import PollItem, PollStore, tidy_code
from ui.classroom import class_poll, demo_pack, present
from ui.classroom.model_reveal import model_reveal
from ui.classroom.pool_sentences import guard_pairs, guard_sample
from ui.own import sentences as ui_own
from ui.shared.calibration_view import poll_agreement_section
from ui.shared.common import describe_error, plain, type_label
from ui.shared.halt import halt
from ui.shared.prompt_state import use_sentence

st.title("Class poll")
st.caption("Students open the link (or type the code after `?poll=`), pick the reading they prefer and say how "
           "sure they are — the paper's human annotation (Appendix A.5), with your class.")


def _open(code: str) -> None:
    st.session_state[class_poll.POLL_CODE_KEY] = tidy_code(code)


def _open_typed() -> None:
    """Open the code in the box *now* (a callback's bound arguments would be the run before's)."""
    _open(st.session_state.get("tp_open_code", ""))


def _create(store: PollStore, pairs: list) -> None:
    """Create the poll with the title and model choice as they are at the click."""
    with_model = bool(st.session_state.get("tp_with_model", True))
    title = str(st.session_state.get("tp_title", "") or "")
    reveals = [model_reveal(p.surface) if with_model else None for p in pairs]
    items = [PollItem.from_pair(p, r.p_lf0 if r else None, (r.match or "") if r else "") for p, r in zip(pairs, reveals)]
    _open(store.create_poll(items, title).code)


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

with st.expander("New poll", icon=":material/add:", expanded=class_poll.POLL_CODE_KEY not in st.session_state):
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
    st.text_input("Title (optional)", key="tp_title", max_chars=200)
    st.checkbox("Include the model's parse and P(LF0) (runs each sentence once; cached)", value=True,
                             key="tp_with_model")
    st.button("Create poll", type="primary", key="tp_create", icon=":material/how_to_vote:", disabled=not chosen,
              on_click=_create, args=(store, chosen))

with st.expander("Open an existing poll", icon=":material/folder_open:"):
    o1, o2 = st.columns([2, 1], vertical_alignment="bottom")
    o1.text_input("Poll code", key="tp_open_code", placeholder="K7QX2M")
    o2.button("Open", key="tp_open", on_click=_open_typed)

with st.expander("Demo packs: take the cached results to a class without a model", icon=":material/inventory_2:"):
    demo_pack.demo_pack_section()

code = st.session_state.get(class_poll.POLL_CODE_KEY)
if not code:
    halt()
try:
    poll = store.get_poll(code)
except AmpError as exc:
    st.error(f"Cannot open poll: {describe_error(exc)}", icon=":material/error:")
    halt()

head, link = st.columns([1, 2], vertical_alignment="center")
with head:
    class_poll.big(poll.code, "4rem")
with link:
    class_poll.join_box(poll.query)
    st.caption(f"{plain(poll.title) or 'Untitled poll'} · {len(poll.items)} item(s) · "
               + ("**closed** — votes kept, no new ones" if poll.closed else "open"))
live = st.toggle("Live results (refresh every 2 s)", value=True, key="tp_live")


def _route(surfaces: list[str]) -> None:
    """Parse or present one of the poll's sentences (a template or own sentence), under the
    visible default prompt: mixed, 10 examples of its type, 30 % with LF0."""
    r1, r2, r3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    surface = r1.selectbox("A sentence of this poll", surfaces, key="tp_route_sentence",
                           help="Parse & inspect gets the default mixed prompt (10 examples of its type, 30 % "
                                "with LF0); change it in the Prompt builder.")
    if r2.button("Parse this sentence", key="tp_route_parse", icon=":material/troubleshoot:"):
        own = lesson.own_sentence(surface) if lesson.pool_pair(surface) is None else None
        pair = lesson.pool_pair(surface)
        done = (ui_own.use_own(own) if own is not None
                else pair is not None and use_sentence(surface, pair.type, "mixed", DEFAULT_FORMAT))
        if done:
            st.switch_page("views/parse_inspect.py")
        elif own is None and pair is None:
            st.error("This sentence is no longer in a pool or in your own sentences.", icon=":material/error:")
    if r3.button("Present this sentence", key="tp_route_present", icon=":material/slideshow:",
                 help="The Presentation shows it as an item of this poll, with the class's votes on it."):
        present.present_poll_item(poll.code, surfaces.index(surface))
        st.switch_page("views/teach_present.py")


_route([item.surface for item in poll.items])


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
    d1, d2, _ = st.columns([1, 1, 3])
    d1.download_button("Download votes (CSV)", store.export_csv(poll.code), file_name=f"poll-{poll.code}.csv",
                       mime="text/csv", key="tp_csv", icon=":material/download:", on_click="ignore")
    if current.closed:
        d2.info("Poll closed", icon=":material/lock:")
    else:
        if d2.button("Close poll", key="tp_close", icon=":material/lock:"):
            _close(poll.code)
            st.rerun()  # the whole page: header says closed, live refresh stops


st.fragment(results, run_every=2 if live and not poll.closed else None)()
poll_agreement_section(store, poll.code, live=live and not poll.closed)
if "teach_close_error" in st.session_state:
    st.error(st.session_state.pop("teach_close_error"), icon=":material/error:")
