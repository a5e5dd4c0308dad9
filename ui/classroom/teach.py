"""Widget helpers of the teaching mode: verbalised readings, the hide-the-logic toggle, poll
results, the model's P(LF0) for one sentence, and demo-pack export/import.

Streamlit glue only (session state, spinners, error boxes): what is said about a sentence comes
from :mod:`amp.teaching.lesson`, polls from :mod:`amp.teaching.poll`, packs from
:mod:`amp.teaching.demo_pack`, the model from :mod:`ui.model.parsers`.
"""

from __future__ import annotations

import html
import tempfile
import uuid
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from amp.classroom.join import JoinLink, join_url, lan_address, qr_png
from amp.data import generate as gen
from amp.errors import AmpError
from amp.evaluation.verdict import CLASS_P_LF0_HOW, MODEL_P_LF0_HOW, Verdict
from amp.reporting.plots import LF0_COLOR, LF1_COLOR
from amp.reporting.poll_plots import poll_bars
from amp.teaching import demo_pack, lesson
from amp.teaching.own_examples import choice_prompt
from amp.teaching.own_library import OwnLibrary
from amp.teaching.own_sentences import OwnSentence
from amp.teaching.poll import CONFIDENCE_LABELS, ItemResult, PollItem, PollStore
from ui.classroom import present
from ui.model import choice as model_choice
from ui.model import parsers
from ui.model import use as model_use
from ui.own import examples as own_examples
from ui.shared import browser_store
from ui.shared.common import chart, describe_error, fmt_prob, plain
from ui.shared.prompt_state import current_prompt

#: session_state key of the "Hide the logic" toggle (shared by every page that shows LFs).
HIDE_LOGIC_KEY = "teach_hide_logic"
TOGGLE_KEY = "teach_hide_logic_toggle"
#: session_state key: the poll the teacher is looking at.
POLL_CODE_KEY = "teach_poll_code"
#: session_state key prefix: this browser session's anonymous voter id for a poll (``_<CODE>``).
STUDENT_ID_KEY = "teach_student_id"
#: session_state key: {(spec, surface): P(LF0) or None} of model scores computed in this session.
MODEL_P_KEY = "teach_model_p"
#: session_state key: {(spec, surface): ModelReveal or None} of the model's parse and scores.
MODEL_REVEAL_KEY = "teach_model_reveal"

COLORS = (LF0_COLOR, LF1_COLOR)
BADGES = (":blue-badge[LF0]", ":orange-badge[LF1]")


# --- verbalised readings -------------------------------------------------------------------


def logic_toggle(where: DeltaGenerator | None = None) -> bool:
    """The "Hide the logic" toggle (same state on every page); True when the logic is hidden.

    The state lives in :data:`HIDE_LOGIC_KEY`, a plain session_state key (widget keys are
    dropped on pages that do not draw the widget); the toggle is re-seeded from it on each page.
    """
    box = where if where is not None else st
    st.session_state[TOGGLE_KEY] = logic_hidden()
    box.toggle("Hide the logic", key=TOGGLE_KEY, on_change=_store_toggle,
               help="Show only the English readings, not the logical forms (for audiences who do not read logic).")
    return logic_hidden()


def _store_toggle() -> None:
    st.session_state[HIDE_LOGIC_KEY] = bool(st.session_state.get(TOGGLE_KEY, False))


def logic_hidden() -> bool:
    return bool(st.session_state.get(HIDE_LOGIC_KEY, False))


def reading_line(type_: str | None, idx: int, paraphrase: str | None, name: str | None = None) -> str:
    """Markdown: ``LF0`` badge, short label (``name``, else the type's) and the paraphrase in quotes,
    both as plain text (a teacher's own sentence brings its own words)."""
    name = name or (lesson.reading_name(type_, idx) if type_ else None)
    label = f" **{plain(name)}**" if name else ""
    text = f" — “{plain(paraphrase)}”" if paraphrase else ""
    return f"{BADGES[idx]}{label}{text}"


def show_readings(surface: str, type_: str | None, lfs: tuple[str, str] | None = None, *,
                  columns: bool = True) -> None:
    """Both readings of ``surface`` in words (label + paraphrase) and, unless hidden, their LFs."""
    texts = lesson.readings_in_words(surface)
    hide = logic_hidden()
    cols = st.columns(2) if columns else (st.container(), st.container())
    for idx, col in enumerate(cols):
        col.markdown(reading_line(type_, idx, texts[idx] if texts else None))
        if lfs is not None and not hide:
            col.code(lfs[idx], language=None, wrap_lines=True)


# --- the model's P(LF0) for one sentence ----------------------------------------------------


def model_p_lf0(surface: str) -> float | None:
    """The current model's P(LF0) for a pool or own sentence (:func:`amp.teaching.lesson.model_p_lf0`),
    memoised per model in this session; ``None`` if the sentence or the model is unavailable."""
    spec = model_choice.current_spec()
    memo = st.session_state.setdefault(MODEL_P_KEY, {})
    if (spec, surface) in memo:
        return memo[(spec, surface)]
    parser = parsers.peek_parser()
    if parser is None or lesson.sentence_item(surface) is None:
        return None
    try:
        with st.spinner("Scoring both readings with the model…"), model_use.using(parser, what="scoring a class sentence"):
            p = lesson.model_p_lf0(parser, surface)
    except Exception:  # noqa: BLE001 - a missing model never breaks a class
        return None
    memo[(spec, surface)] = p
    return p


def model_reveal(surface: str) -> lesson.ModelReveal | None:
    """The current model's parse and P(LF0) of a pool or own sentence (:func:`amp.teaching.lesson.model_reveal`),
    memoised per model in this session; ``None`` if the sentence or the model is unavailable."""
    spec = model_choice.current_spec()
    own = lesson.own_sentence(surface) if lesson.pool_pair(surface) is None else None
    choice = own_examples.chosen(surface) if own is not None else None  # the examples the teacher chose
    memo = st.session_state.setdefault(MODEL_REVEAL_KEY, {})
    if (spec, surface, choice) in memo:
        return memo[(spec, surface, choice)]
    parser = parsers.peek_parser()
    if parser is None or lesson.sentence_item(surface) is None:
        return None
    try:
        prompt = choice_prompt(own, choice, OwnLibrary().list()) if own is not None and choice is not None else None
        with st.spinner("Parsing the sentence and scoring both readings with the model…"), \
                model_use.using(parser, what="parsing a class sentence"):
            reveal = lesson.model_reveal(parser, surface, prompt)
    except Exception:  # noqa: BLE001 - a missing model never breaks a class
        return None
    memo[(spec, surface, choice)] = reveal
    return reveal


def show_verdict(v: Verdict, *, large: bool = False) -> None:
    """The verdict as plain text: what the model wrote (in the reading's colour; large on the
    Presentation), then which reading it scores higher."""
    color = COLORS[v.wrote_index] if v.wrote_index is not None else "#444444"
    size = "font-size:2.2rem;font-weight:700;" if large else "font-weight:600;"
    st.markdown(f"<div class='amp-wrote{' present-r' if large else ''}' style='{size}color:{html.escape(color)}'>"
                f"{html.escape(v.wrote_text)}</div>", unsafe_allow_html=True)
    st.markdown(f"<div class='amp-scores{' present-r' if large else ''}'>{html.escape(v.scores_text)}</div>",
                unsafe_allow_html=True)


def guard_pairs(type_: str, word: str | None) -> list[gen.AmbiguousPair]:
    """The pool's pairs of a type whose surface or slots contain ``word`` (``[]`` + error if bad)."""
    try:
        return gen.pairs(type_, word=word)
    except AmpError as exc:
        st.error(describe_error(exc), icon=":material/error:")
        return []


def guard_sample(type_: str, n: int, seed: int) -> list[gen.AmbiguousPair]:
    """``n`` seeded pairs of a type (``[]`` + error if impossible)."""
    try:
        return gen.sample_pairs(type_, n, seed)
    except AmpError as exc:
        st.error(describe_error(exc), icon=":material/error:")
        return []


# --- polls ------------------------------------------------------------------------------------


def store() -> PollStore:
    """The poll store under ``$AMP_CACHE_DIR`` (``cache/`` by default)."""
    return PollStore()


#: session_state key: the one sentence the Presentation page shows (set by "Present this sentence").
PRESENT_SENTENCE_KEY = "present_sentence"


def present_sentence(surface: str) -> None:
    """Make the Presentation page show ``surface`` alone (no poll needed)."""
    st.session_state[PRESENT_SENTENCE_KEY] = surface
    st.session_state["present_code"] = ""
    st.session_state["present_pos"] = 0


def present_poll_item(code: str, index: int) -> None:
    """Make the Presentation page show item ``index`` of poll ``code``, with the class's votes on
    it (Previous/Next go on through the poll)."""
    st.session_state.pop(PRESENT_SENTENCE_KEY, None)
    st.session_state["present_code"] = code
    st.session_state["present_pos"] = index


#: Name prefix of the cookie holding a browser's voter id for one poll (``amp_voter_<CODE>``).
VOTER_COOKIE = "amp_voter_"
#: How long a browser keeps its voter id for a poll (a class term; polls are short-lived).
VOTER_COOKIE_AGE_S = 120 * 24 * 3600


def student_id(code: str) -> str:
    """An anonymous id for this browser's student page of poll ``code`` (one vote per item per id).

    The id is per browser and per poll: a first-party cookie (``amp_voter_<CODE>``,
    :mod:`ui.shared.browser_store`) the student page sets once; a reload, a new tab or a link opened
    again sees the cookie, so it is the same voter and cannot vote twice.  Nothing goes into the
    URL, so a link shared from one phone to another does not share the identity.  A fresh id is
    made only when the browser has none (or a malformed one) for this poll."""
    key = f"{STUDENT_ID_KEY}_{code}"
    if key not in st.session_state:
        given = browser_store.read_cookie(VOTER_COOKIE + code) or ""
        st.session_state[key] = given if is_voter_id(given) else uuid.uuid4().hex
    voter = st.session_state[key]
    browser_store.write_cookie(VOTER_COOKIE + code, voter, VOTER_COOKIE_AGE_S)
    return voter


def is_voter_id(value: str) -> bool:
    """A voter id as :func:`student_id` makes them: 32 lowercase hex digits."""
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)


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
    st.image(qr_png(link.url), caption="Scan to join", width=360)


def big(text: str, size: str = "3.2rem") -> None:
    """Text in large type (projector-friendly); ``text`` is shown as plain text (escaped)."""
    st.markdown(f"<div style='font-size:{html.escape(size)};font-weight:700;line-height:1.15'>"
                f"{html.escape(text)}</div>",
                unsafe_allow_html=True)


def item_chart(item: PollItem, result: ItemResult, *, key: str, height: int | None = 240) -> None:
    """Bars of the votes for LF0 and LF1, stacked by confidence.

    ``height=None``: the chart fills a box whose height follows the window (the Presentation's
    projector layout, :data:`ui.classroom.present.CHART_BOX`)."""
    names = [f"LF{i} · {item.reading_name(i)}" for i in (0, 1)]
    hovers = [" · ".join(f"{CONFIDENCE_LABELS[c + 1]}: {n}" for c, n in enumerate(result.confidence_by_choice[choice]))
              for choice in (0, 1)]
    fig = poll_bars(names, list(result.counts[:2]), hovers, height=height)
    if height is None:
        with st.container(key=f"{present.CHART_BOX}{key}", height=300, border=False):  # CSS sets the height
            chart(fig, key=key, filename=f"poll_item_{result.index}", height="stretch")
    else:
        chart(fig, key=key, filename=f"poll_item_{result.index}")


def item_results(item: PollItem, result: ItemResult, model_p: float | None, *, key: str) -> None:
    """One item: its sentence, the vote bars, the class's and the model's P(LF0)."""
    st.markdown(f"**{result.index + 1}. *{plain(item.surface)}*** · {result.n_voters} vote(s)")
    left, right = st.columns([2, 1])
    with left:
        item_chart(item, result, key=key)
    right.metric("Class P(LF0)", fmt_prob(result.human_p_lf0, 2), help=CLASS_P_LF0_HOW)
    right.metric("Model P(LF0)", fmt_prob(model_p, 2) if model_p is not None else "–", help=MODEL_P_LF0_HOW)
    with right:
        verdict = lesson.reveal_verdict(item, item.model_match or None, model_p)
        st.caption(plain(verdict.text))


# --- demo packs -------------------------------------------------------------------------------


SENTENCES = "(the results behind chosen sentences)"


def sentence_keys(text: str) -> lesson.SentenceKeys:
    """:func:`amp.teaching.lesson.sentence_keys` with this session's model and built prompt."""
    built, is_built = current_prompt()
    return lesson.sentence_keys(parsers.peek_parser(), text, built if is_built else None,
                                built_fmt=built.lf_format)


def _own_library() -> tuple[OwnLibrary, tuple[OwnSentence, ...]]:
    """The own-sentence library and its sentences (none, with a warning, if it cannot be read)."""
    library = OwnLibrary()
    try:
        return library, library.list()
    except AmpError as exc:
        st.warning(f"Your own sentences cannot be read, so no pack carries them: {describe_error(exc)}",
                   icon=":material/warning:")
        return library, ()


def demo_pack_section() -> None:
    """Export the cached results to a zip (all or one model, or chosen sentences; with the own
    sentences they are for) and import a pack (its own sentences join the library)."""
    cache = parsers.result_cache()
    ex, im = st.columns(2)
    with ex:
        st.markdown("**Export cached results**")
        models = sorted(m for m in cache.stats().get("models", {}) if m)
        which = st.selectbox("Entries", ["(all models)", *models, SENTENCES], key="teach_pack_model")
        lines, own = "", ()
        if which == SENTENCES:
            lines = st.text_area("Sentences, one per line (the current model's results for their zero-shot "
                                 "prompts — for your own sentences their default mixed prompts — and for the built "
                                 "prompt if it tests one of them; your own sentences go into the pack too)",
                                 key="teach_pack_sentences")
        else:
            _library, mine = _own_library()
            if mine and st.checkbox(f"Include your own sentences ({len(mine)})", value=True, key="teach_pack_own",
                                    help="The sentences of the 'Your own sentences' library travel with their "
                                         "results; importing the pack adds them to that computer's library."):
                own = mine
        if st.button("Build demo pack", key="teach_pack_build", icon=":material/inventory_2:"):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "amp-demo-pack.zip"
                try:
                    keys = None
                    if which == SENTENCES:
                        chosen = sentence_keys(lines)
                        if chosen.unknown:
                            st.warning("Not in any pool nor in your own sentences, left out: "
                                       + "; ".join(plain(u) for u in chosen.unknown), icon=":material/warning:")
                        keys, own = list(chosen.require_keys()), chosen.own
                    info = demo_pack.export_pack(cache, keys, path, note="AmP Explorer export",
                                                 models=None if which in ("(all models)", SENTENCES) else [which],
                                                 own_sentences=own)
                    st.session_state["teach_pack_bytes"] = (path.read_bytes(), info.entry_count,
                                                            len(info.own_sentences))
                except AmpError as exc:
                    st.error(f"Cannot export: {describe_error(exc)}", icon=":material/error:")
        built = st.session_state.get("teach_pack_bytes")
        if built:
            extra = f", {built[2]} own sentence(s)" if built[2] else ""
            st.download_button(f"Download pack ({built[1]} entries{extra})", built[0], file_name="amp-demo-pack.zip",
                               mime="application/zip", key="teach_pack_download", icon=":material/download:",
                               on_click="ignore")
    with im:
        st.markdown("**Import a demo pack**")
        upload = st.file_uploader("Demo pack (.zip)", type=["zip"], key="teach_pack_upload")
        if upload is not None and st.button("Import into the result cache", key="teach_pack_import",
                                            icon=":material/upload:"):
            import_upload(upload.getvalue(), upload.name)


def import_upload(data: bytes, name: str) -> None:
    """Import an uploaded pack into the result cache (through a temporary file); success or error box."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / (Path(name).name or "pack.zip")
        path.write_bytes(data)
        try:
            info = demo_pack.import_pack(path, parsers.result_cache(), library=OwnLibrary())
        except (AmpError, OSError) as exc:
            st.error(f"This demo pack was not imported: {describe_error(exc)}", icon=":material/error:")
            return
    own = ""
    if info.own_sentences:
        kept = len(info.own_sentences) - len(info.own_added)
        own = (f" Own sentences: {len(info.own_added)} added to your library"
               + (f", {kept} already there (kept)." if kept else "."))
    st.success(f"Imported {info.entry_count - info.replaced} cached results ({info.replaced} already in the cache, "
               f"kept).{own}", icon=":material/check_circle:")
