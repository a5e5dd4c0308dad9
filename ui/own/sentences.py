"""Widgets of the "Your own sentences" page: the add form, a library entry, poll and exchange.

The library is :class:`amp.teaching.own_library.OwnLibrary` (``$AMP_OWN_SENTENCES`` or the cache
root); every sentence is checked by :class:`amp.teaching.own_sentences.OwnSentence`.  Everything a
teacher typed is shown as plain text (:func:`ui.shared.common.plain`, ``st.code``/``st.text``).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import streamlit as st

from amp.data import generate as gen
from amp.errors import AmpError
from amp.logic.errors import LFParseError
from amp.logic.prompt_convention import REORDERED_NOTE, conjuncts_reordered
from amp.logic.vocabulary import Format
from amp.prompts import DEFAULT_MIXED_RATIO, DEFAULT_MIXED_SEED, EXAMPLES_PER_PROMPT
from amp.teaching import lesson
from amp.teaching.own_library import MAX_LIBRARY_BYTES, OwnLibrary
from amp.teaching.own_sentences import (
    MAX_EXAMPLES,
    MAX_LF_CHARS,
    MAX_NAME_CHARS,
    MAX_PARAPHRASE_CHARS,
    MAX_SURFACE_CHARS,
    OwnSentence,
    examples_from_text,
)
from amp.teaching.paraphrase import paraphrases
from ui.classroom import class_poll, poll_creation, present
from ui.classroom.model_reveal import sentence_prompt
from ui.own import examples as own_examples
from ui.shared import readings
from ui.shared.common import describe_error, lf_error_text, plain, type_label
from ui.shared.prompt_state import PROMPT_KEY, RECIPE_KEY

#: The type choice meaning "the closest type of the readings" (:func:`amp.teaching.own_types.closest_type`).
AUTO = "(closest type)"
#: session_state key of the last save/delete/import message: ``(kind, markdown)``.
MESSAGE_KEY = "own_message"
#: The add form's widget keys, by OwnSentence field.
FIELDS = {"surface": "own_surface", "name0": "own_name0", "name1": "own_name1", "paraphrase0": "own_para0",
          "paraphrase1": "own_para1", "lf0": "own_lf0", "lf1": "own_lf1"}
TYPE_KEY = "own_type"
EXAMPLES_KEY = "own_examples"


def library() -> OwnLibrary:
    """The teacher's library (default path; tests set ``AMP_OWN_SENTENCES``)."""
    return OwnLibrary()


def sentence_id(surface: str) -> str:
    """A short stable widget-key suffix for a sentence."""
    return hashlib.sha1(surface.encode("utf-8")).hexdigest()[:10]


def error_text(exc: BaseException) -> str:
    """Markdown of an error; an LF that does not read gets the caret display of its parse error."""
    cause = exc.__cause__
    if isinstance(cause, LFParseError):
        return f"{plain(str(exc).split(':', 1)[0])}: {lf_error_text(cause)}"
    return describe_error(exc)


def _say(kind: str, text: str) -> None:
    st.session_state[MESSAGE_KEY] = (kind, text)


def show_message() -> None:
    """The last save/delete/import outcome (an error box keeps the page and its inputs usable)."""
    found = st.session_state.get(MESSAGE_KEY)
    if found:
        kind, text = found
        box = st.error if kind == "error" else st.success
        box(text, icon=":material/error:" if kind == "error" else ":material/check_circle:")


# --- the add form ------------------------------------------------------------------------------


def _prefill(type_: str, surface: str | None) -> None:
    """Callback: both readings (and their paraphrases) of a pool sentence, to edit into one's own."""
    pair = gen.find_pair(surface) if surface else None
    if pair is None:
        return
    state = st.session_state
    state[FIELDS["lf0"]], state[FIELDS["lf1"]] = pair.lf0.lf, pair.lf1.lf
    state[FIELDS["paraphrase0"]], state[FIELDS["paraphrase1"]] = paraphrases(pair)
    state[TYPE_KEY] = type_
    _say("success", f"Filled in the readings of “{plain(surface)}” ({plain(type_label(type_))}): edit them "
                    "into your sentence's.")


def pattern_picker(types: list[str], surfaces: list[str], type_: str) -> None:
    """Pick a pool sentence of a type and copy its readings into the form."""
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    surface = c1.selectbox(f"Pool sentence ({len(surfaces):,}; type to search)", surfaces,
                           key=f"own_pattern_{type_}")
    c2.button("Use its readings", key="own_prefill", icon=":material/content_copy:",
              on_click=_prefill, args=(type_, surface))


def _save(types: list[str]) -> None:
    """Callback: check the form as an OwnSentence and add it to the library (or say what is wrong)."""
    state = st.session_state
    values = {field: str(state.get(key, "")) for field, key in FIELDS.items()}
    chosen = state.get(TYPE_KEY, AUTO)
    try:
        examples = examples_from_text(str(state.get(EXAMPLES_KEY, "")))
        sentence = OwnSentence(**values, type="" if chosen in (AUTO, None) else str(chosen), examples=examples)
        replaced = library().add(sentence)
    except AmpError as exc:
        _say("error", f"Not saved. {error_text(exc)}")
        return
    words = sentence.words.describe()
    _say("success", f"{'Replaced' if replaced else 'Saved'} “{plain(sentence.surface)}”. New words: "
                    f"{plain(words)}. Few-shot examples from: **{plain(type_label(sentence.type))}**"
                    + (" (the closest type; choose another above and save again to change it)."
                       if chosen in (AUTO, None) else "."))


def sentence_form(types: list[str]) -> None:
    """The sentence, its readings in words and as LFs, the type, and Save."""
    st.text_input("Your ambiguous sentence", key=FIELDS["surface"], max_chars=MAX_SURFACE_CHARS,
                  placeholder="I saw her duck")
    for i in (0, 1):
        n1, n2 = st.columns([1, 2])
        n1.text_input(f"Reading {i} name (optional)", key=FIELDS[f"name{i}"], max_chars=MAX_NAME_CHARS,
                      placeholder="she ducked" if i == 0 else "her bird")
        n2.text_input(f"Reading {i} in words", key=FIELDS[f"paraphrase{i}"], max_chars=MAX_PARAPHRASE_CHARS,
                      placeholder="I saw her lower her head" if i == 0 else "I saw the duck that she owns")
        st.text_area(f"LF{i} (FOL)", key=FIELDS[f"lf{i}"], max_chars=MAX_LF_CHARS, height=90,
                     placeholder="exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND …")
    st.caption("Variables: x, y, z for things and people, a, e, i for events; a name (capitalised) only as "
               "the second argument, e.g. agent(e, Her). New words are added to the model's grammar.")
    st.text_area("Your own few-shot examples (optional): one per line, `sentence | LF`", key=EXAMPLES_KEY,
                 height=90, max_chars=MAX_EXAMPLES * (MAX_SURFACE_CHARS + MAX_LF_CHARS + 4),
                 placeholder="I saw her swim | exists a . exists e . saw(a) AND agent(a, Me) AND swim(e) AND …",
                 help=f"At most {MAX_EXAMPLES}. Used by the prompt choice 'own examples'; the 'mixed' prompt "
                      "draws examples from the type's pool instead.")
    t1, t2 = st.columns([2, 1], vertical_alignment="bottom")
    t1.selectbox("Few-shot examples from the type", [AUTO, *types], key=TYPE_KEY,
                 format_func=lambda t: t if t == AUTO else type_label(t))
    t2.button("Save to my library", key="own_save", type="primary", icon=":material/save:",
              on_click=_save, args=(types,))


# --- a library entry ---------------------------------------------------------------------------


def _delete(surface: str) -> None:
    try:
        library().remove(surface)
    except AmpError as exc:
        _say("error", f"Not deleted. {error_text(exc)}")
        return
    _say("success", f"Deleted “{plain(surface)}”.")


def use_own(sentence: OwnSentence, sentences: tuple[OwnSentence, ...] = ()) -> bool:
    """Make an own sentence the Parse page's prompt (with its words and the few-shot examples
    chosen for it, :mod:`ui.own.examples`), and set the Prompt builder's widgets to match (typed
    test, its two readings as golds, the default mixed settings), so that the builder shows that
    prompt and keeps it.  ``False`` (with an error box) if it cannot be built."""
    try:
        built = own_examples.prompt_for(sentence, sentences or _all_sentences())
    except AmpError as exc:
        st.error(f"Cannot build a prompt for this sentence: {error_text(exc)}", icon=":material/error:")
        return False
    kind = built.type or sentence.type
    ratio, k, seed = DEFAULT_MIXED_RATIO, EXAMPLES_PER_PROMPT, DEFAULT_MIXED_SEED
    state = st.session_state
    state.update({"pb_mode": "mixed", "pb_type": kind, "pb_test_source": "typed",
                  "pb_test_typed": sentence.surface, "pb_gold0": sentence.readings[0], "pb_gold1": sentence.readings[1],
                  "pb_ratio": ratio, "pb_k": k, "pb_seed": seed, "pb_fmt": Format.FOL.value})
    state[PROMPT_KEY] = built
    state[RECIPE_KEY] = ("mixed", kind, ratio, k, seed, Format.FOL.value, "typed", sentence.surface,
                         sentence.readings)
    return True


def _all_sentences() -> tuple[OwnSentence, ...]:
    try:
        return library().list()
    except AmpError:
        return ()


def sentence_card(sentence: OwnSentence, sentences: tuple[OwnSentence, ...] = ()) -> None:
    """One library sentence: its readings, words and type, and its routes (parse, present, delete)."""
    sid = sentence_id(sentence.surface)
    with st.container(border=True):
        top = st.columns([4, 1], vertical_alignment="center")
        top[0].markdown(f"**{plain(sentence.surface)}** · your own sentence · "
                        f"new words: {plain(sentence.words.describe())}")
        top[1].checkbox("In the poll", key=f"own_pick_{sid}")
        for i in (0, 1):
            name = getattr(sentence, f"name{i}") or lesson.reading_name(sentence.type, i)
            st.markdown(f"{readings.BADGES[i]} **{plain(name)}**: {plain(getattr(sentence, f'paraphrase{i}'))}")
            if not readings.logic_hidden():
                typed, scored = sentence.typed_readings[i], sentence.readings[i]
                st.code(typed, language=None, wrap_lines=True)
                if scored != typed:  # scored in the prompt convention (docs/paper-notes.md §16)
                    reordered = conjuncts_reordered(typed, "fol", sentence.surface)
                    st.caption("Scored as the prompts spell it (x, y, z for things and people, a, e, i for events)"
                               + (f". {REORDERED_NOTE}" if reordered else ":"))
                    st.code(scored, language=None, wrap_lines=True)
        own_examples.picker(sentence, sentences or (sentence,), sid)  # issue #26 point 6
        a2, a3, a4 = st.columns([1, 1, 0.7], vertical_alignment="bottom")
        if a2.button("Parse this sentence", key=f"own_parse_{sid}", icon=":material/troubleshoot:"):
            if use_own(sentence, sentences):
                st.switch_page("views/parse_inspect.py")
        if a3.button("Present this sentence", key=f"own_present_{sid}", icon=":material/slideshow:"):
            present.present_sentence(sentence.surface)
            st.switch_page("views/teach_present.py")
        a4.button("Delete", key=f"own_delete_{sid}", icon=":material/delete:", on_click=_delete,
                  args=(sentence.surface,))


# --- poll and exchange -------------------------------------------------------------------------


def poll_section(sentences: tuple[OwnSentence, ...]) -> None:
    """A class poll of the sentences ticked "In the poll"; opens it on the Class poll page.  With
    the model's parse and P(LF0) when asked (each sentence under the examples chosen for it, from
    the cache when already parsed; live progress and one Cancel, :mod:`ui.classroom.poll_creation`);
    every item keeps the prompt it is scored under (issue #40 points 3 and 5)."""
    chosen = [s for s in sentences if st.session_state.get(f"own_pick_{sentence_id(s.surface)}")]
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    title = c1.text_input("Poll title", key="own_poll_title", max_chars=200, placeholder="Our own sentences")
    with_model = c1.checkbox("Include the model's parse and P(LF0) (runs each sentence once; cached)", value=True,
                             key="own_poll_with_model")
    poll_creation.cancelled_note("own_poll_create")
    if c2.button(f"Create a class poll ({len(chosen)} sentences)", key="own_poll_create", disabled=not chosen,
                 icon=":material/how_to_vote:"):
        prompts = [sentence_prompt(s.surface) for s in chosen]
        reveals = (poll_creation.reveal_all([s.surface for s in chosen], key="own_poll_create") if with_model
                   else [None] * len(chosen))
        try:
            items = [replace(s.poll_item(r.p_lf0 if r else None), model_match=(r.match or "") if r else "",
                             prompt=prompt) for s, r, prompt in zip(chosen, reveals, prompts, strict=True)]
            poll = class_poll.store().create_poll(items, title.strip())
        except AmpError as exc:
            st.error(f"The poll was not created: {describe_error(exc)}", icon=":material/error:")
            return
        st.session_state[class_poll.POLL_CODE_KEY] = poll.code
        st.switch_page("views/teach_poll.py")


def _import(data: bytes, name: str) -> None:
    try:
        report = library().import_json(data, name or "the upload")
    except AmpError as exc:
        _say("error", f"Nothing was imported. {error_text(exc)}")
        return
    _say("success", f"Imported {plain(name)}: {report.describe()}.")


def exchange_section(lib: OwnLibrary) -> None:
    """Download the library as JSON; import one (validated whole; bounded size)."""
    ex, im = st.columns(2, gap="large")
    try:
        data = lib.export_json()
    except AmpError as exc:
        ex.error(describe_error(exc), icon=":material/error:")
    else:
        ex.download_button("Download my sentences (JSON)", data, file_name="own_sentences.json",
                           mime="application/json", key="own_export", icon=":material/download:", on_click="ignore")
    upload = im.file_uploader(f"Import sentences (JSON, at most {MAX_LIBRARY_BYTES // 1_000_000} MB)", type=["json"],
                              key="own_upload", max_upload_size=max(1, MAX_LIBRARY_BYTES // 1_000_000))
    if upload is not None:
        im.button("Import into my library", key="own_import", icon=":material/upload:", on_click=_import,
                  args=(upload.getvalue(), upload.name))
