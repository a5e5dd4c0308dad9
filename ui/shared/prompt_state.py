"""The prompt shared by the Prompt builder and the Parse page, kept in ``st.session_state``.

Keys: :data:`PROMPT_KEY` holds an :class:`amp.prompts.Prompt` (an immutable value; edits
replace it), :data:`RECIPE_KEY` the builder settings it was built from (so a changed setting
rebuilds it and unchanged settings keep manual edits — and an imported prompt, which replaces
the built one like an edit: :func:`exchange_section`).
"""

from __future__ import annotations

import streamlit as st

from amp.data import generate as gen
from amp.data.types import type_ids
from amp.errors import AmpError
from amp.logic.ast import free_variables
from amp.logic.convert import convert
from amp.logic.prompt_convention import REORDERED_NOTE, conjuncts_reordered
from amp.logic.prompt_convention import prompt_text as lf_prompt_text
from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.unknown_words import unknown_word_message
from amp.logic.vocabulary import Format
from amp.parser.core.limits import MAX_LF_CHARS
from amp.prompts import DEFAULT_MIXED_RATIO, DEFAULT_MIXED_SEED, EXAMPLES_PER_PROMPT, Prompt, PromptExample
from amp.teaching import lesson
from amp.teaching.own_sentences import free_variable_hint
from amp.teaching.prompt_file import (
    MAX_PROMPT_FILE_BYTES,
    conjuncts_were_reordered,
    prompt_from_file,
    prompt_json,
    prompt_text,
    respelled_count,
)
from ui.shared.common import describe_error, guarded, plain

PROMPT_KEY = "prompt"
RECIPE_KEY = "prompt_recipe"

#: The Parse page's prompt when none was built: PP attachment, r = 0.3 (3 of 10 examples LF0).
DEFAULT_TEST = "the man saw the boy with the telescope"
DEFAULT_RATIO = DEFAULT_MIXED_RATIO


@st.cache_data(show_spinner=False)
def pool_surfaces(type_: str) -> list[str]:
    """All sentences of a type in pool order, with the classic example first for PP."""
    surfaces = [p.surface for p in gen.pairs(type_)]
    if DEFAULT_TEST in surfaces:
        surfaces.remove(DEFAULT_TEST)
        surfaces.insert(0, DEFAULT_TEST)
    return surfaces


@st.cache_data(show_spinner=False)
def default_prompt() -> Prompt:
    """The paper's running example: a 30/70 mixed PP prompt for "the man saw the boy with the telescope"."""
    return lesson.sentence_prompt(DEFAULT_TEST)


def current_prompt() -> tuple[Prompt, bool]:
    """(the built prompt, True) or (the default prompt, False) when none was built yet."""
    built = st.session_state.get(PROMPT_KEY)
    if isinstance(built, Prompt):
        return built, True
    return default_prompt(), False


def edit(op: str, *args: int) -> None:
    """Widget callback: apply ``Prompt.flip/remove/move`` to the stored prompt."""
    prompt: Prompt = st.session_state[PROMPT_KEY]
    try:
        st.session_state[PROMPT_KEY] = getattr(prompt, op)(*args)
    except AmpError as exc:
        st.session_state["prompt_edit_error"] = describe_error(exc)


#: Where an import's outcome waits for the next run of the page (a callback cannot draw in place).
IMPORT_MESSAGE_KEY = "pb_import_message"


def import_prompt(data: bytes, name: str) -> None:
    """Widget callback: replace the stored prompt with the uploaded one; a bad file keeps the
    current prompt and leaves an error for :func:`exchange_section` to show."""
    try:
        typed = prompt_from_file(data, f"the file {name!r}", literal=True)
        prompt = prompt_from_file(data, f"the file {name!r}")
    except AmpError as exc:
        st.session_state[IMPORT_MESSAGE_KEY] = ("error", f"Nothing was imported: {describe_error(exc)}")
        return
    st.session_state[PROMPT_KEY] = prompt
    changed = respelled_count(typed, prompt)
    spelling = (f" {changed} of its LFs were respelled in the prompt convention (x, y, z for things and people, "
                "a, e, i for events, as the templates write them): the prompt shows and scores that spelling."
                if changed else "")
    if conjuncts_were_reordered(typed, prompt):
        spelling += f" {REORDERED_NOTE}"
    show_imported_settings(prompt)
    st.session_state[IMPORT_MESSAGE_KEY] = (
        "success", f"Imported {plain(name)}: {len(prompt.examples)} examples, test sentence "
                   f"“{plain(prompt.test_utterance)}”.{spelling} Changing a setting above rebuilds the prompt and drops it.")


#: Set by an import: the Prompt builder takes the settings its widgets show on its next run as the
#: imported prompt's recipe (so the import is kept until a setting changes), then drops the mark.
IMPORTED_KEY = "pb_imported"
#: The Prompt builder's widgets an import sets (keys of ``views/prompt_builder.py``).
BUILDER_KEYS = {"mode": "pb_mode", "type": "pb_type", "fmt": "pb_fmt", "ratio": "pb_ratio", "k": "pb_k",
                "source": "pb_test_source", "typed": "pb_test_typed"}
#: The range of the builder's "Examples k".
BUILDER_K = (1, 20)


def show_imported_settings(prompt: Prompt) -> None:
    """Widget callback part: make every builder widget show what the imported ``prompt`` implies —
    mixed or zero-shot, its type, LF format, k and LF0 ratio (to the slider's 0.1), and its test
    sentence (the type's pool box when it is a pool sentence, else the typed box) — and mark the
    import (:data:`IMPORTED_KEY`), so the page keeps it instead of rebuilding from older settings."""
    state = st.session_state
    fraction = prompt.lf0_fraction
    mixed = fraction is not None
    state[BUILDER_KEYS["mode"]] = "mixed" if mixed else "zero-shot"
    type_ = prompt.type if prompt.type is not None and prompt.type in type_ids() else None
    if type_ is not None:
        state[BUILDER_KEYS["type"]] = type_
    state[BUILDER_KEYS["fmt"]] = str(prompt.lf_format)
    if mixed:
        state[BUILDER_KEYS["ratio"]] = round(float(fraction or 0.0), 1)
        state[BUILDER_KEYS["k"]] = min(max(len(prompt.examples), BUILDER_K[0]), BUILDER_K[1])
    if type_ is not None and prompt.test_utterance in pool_surfaces(type_):
        state[BUILDER_KEYS["source"]] = "from the pool"
        state[f"pb_test_{type_}"] = prompt.test_utterance
    else:
        state[BUILDER_KEYS["source"]] = "typed"
        state[BUILDER_KEYS["typed"]] = prompt.test_utterance
    state[IMPORTED_KEY] = True


def exchange_section(prompt: Prompt) -> None:
    """Download the prompt as text (what the model sees) or JSON (the record); import either."""
    d1, d2 = st.columns(2)
    d1.download_button("Prompt as text", prompt_text(prompt), file_name="prompt.txt", mime="text/plain",
                       key="pb_download_text", icon=":material/download:", on_click="ignore")
    d2.download_button("Prompt as JSON", prompt_json(prompt), file_name="prompt.json", mime="application/json",
                       key="pb_download_json", icon=":material/download:", on_click="ignore")
    megabytes = max(1, MAX_PROMPT_FILE_BYTES // 1_000_000)
    upload = st.file_uploader(f"Import a prompt (its text or JSON, as downloaded here or from `amp prompt`; at most "
                              f"{megabytes} MB)", type=["json", "txt"], key="pb_upload", max_upload_size=megabytes)
    if upload is not None:
        st.button("Use the uploaded prompt", key="pb_import", icon=":material/upload:", on_click=import_prompt,
                  args=(upload.getvalue(), upload.name))
    message = st.session_state.pop(IMPORT_MESSAGE_KEY, None)
    if message is not None:
        kind, text = message
        if kind == "error":
            st.error(text, icon=":material/error:")
        else:
            st.success(text, icon=":material/check_circle:")


def add_example(surface: str | None, label: int, fmt: str) -> None:
    """Widget callback: append the pool sentence ``surface`` shown with LF``label``."""
    if not surface:
        return
    pair = gen.find_pair(surface)
    if pair is None:
        return
    lfs = [pair.lf0.lf, pair.lf1.lf]
    if fmt == Format.LISP:

        lfs = [convert(lf, src=Format.FOL, dst=Format.LISP) for lf in lfs]
    example = PromptExample(surface, lfs[label], lfs[1 - label], label)
    st.session_state[PROMPT_KEY] = st.session_state[PROMPT_KEY].add(example)


def example_badge(ex: PromptExample) -> str:
    """A coloured badge: LF0 blue, LF1 orange, unambiguous grey (same colours as the figures)."""
    if ex.label == 0:
        return ":blue-badge[LF0]"
    if ex.label == 1:
        return ":orange-badge[LF1]"
    return ":gray-badge[plain]"


def typed_test_golds(test: str, fmt: str) -> tuple[str | None, str | None]:
    """Gold LFs of a typed test sentence: from the pool if it is there, else optionally typed.

    Typed LFs are checked with :func:`amp.logic.reader.parse_lf`; an unparseable one is shown
    with its column and what was expected, and counts as not given.
    """
    pair = gen.find_pair(test)
    own = lesson.own_sentence(test)
    if pair is None and own is not None:
        st.caption(f"A sentence of your own library ({own.type} examples, new words: "
                   f"{plain(own.words.describe())}): its two readings are the gold LFs (FOL).")
        return own.readings  # as scored: in the prompt convention
    if pair is not None:
        st.caption(f"Found in the pool ({pair.type}, template `{pair.template}`): gold LFs known.")
        lf0, lf1 = pair.lf0.lf, pair.lf1.lf
        if fmt == Format.LISP:

            lf0, lf1 = convert(lf0, src=Format.FOL, dst=Format.LISP), convert(lf1, src=Format.FOL, dst=Format.LISP)
        return lf0, lf1
    st.caption("Not a pool sentence. Optionally give its two readings so beams can be labelled.")
    out: list[str | None] = []
    for i in (0, 1):
        text = st.text_input(f"Gold LF{i} ({fmt.upper()}, optional)", key=f"pb_gold{i}",
                             persist_state="session", max_chars=MAX_LF_CHARS).strip()
        if not text:
            out.append(None)
            continue
        try:
            free = sorted(free_variables(parse_lf(text, fmt)))
        except AmpError as exc:
            st.error(describe_error(exc), icon=":material/error:")
            out.append(None)
            continue
        if free:  # issue #26 point 7: say what to do (a name is capitalised)
            st.error(f"Gold LF{i} has the free variable {plain(repr(free[0]))}: {plain(free_variable_hint(free[0]))}",
                     icon=":material/error:")
            out.append(None)
            continue
        unknown = unknown_word_message(text, fmt)
        if unknown is not None:  # the parser's grammar is the lexicon's: say which word is missing
            st.error(f"Gold LF{i}: {unknown}.", icon=":material/error:")
            out.append(None)
            continue
        scored = lf_prompt_text(text, fmt, test)  # scored as the prompts spell it (docs/paper-notes.md §16)
        if scored != render(parse_lf(text, fmt), fmt):
            reordered = f" {REORDERED_NOTE}" if conjuncts_reordered(text, fmt, test) else ""
            st.caption(f"Gold LF{i} is scored as the prompts spell it: {plain(scored)}{reordered}")
        out.append(scored)
    return out[0], out[1]


#: What "Parse this sentence" uses unless the teacher picks otherwise (shown beside the button).
SENTENCE_PROMPT_MODES = ("mixed", "zero-shot")


def use_prompt(prompt: Prompt) -> None:
    """Make exactly ``prompt`` the Parse page's prompt — a class sentence's one prompt (a poll
    item's, :mod:`amp.teaching.lesson_prompt`), so Parse & inspect scores it as the reveal and the
    poll did — and set the Prompt builder's widgets to what it implies, keeping it there as an
    import is kept (:func:`show_imported_settings`)."""
    st.session_state[PROMPT_KEY] = prompt
    show_imported_settings(prompt)


def use_sentence(surface: str, type_: str, mode: str, fmt: str) -> bool:
    """Make a pool sentence the Parse page's prompt (:func:`amp.teaching.lesson.sentence_prompt`,
    as the Prompt builder builds it from its defaults), and set the builder's widgets to match,
    so that the builder shows (and keeps) that prompt.  ``False`` (with an error box) if the
    prompt cannot be built."""
    fmt = Format.FOL if mode == "zero-shot" else fmt
    mixed = mode == "mixed"
    ratio, k, seed = (DEFAULT_MIXED_RATIO if mixed else None), (EXAMPLES_PER_PROMPT if mixed else 0), DEFAULT_MIXED_SEED
    built = guarded(lambda: lesson.sentence_prompt(surface, mode, fmt=fmt),
                    what="Cannot build a prompt for this sentence")
    if built is None:
        return False
    state = st.session_state
    state.update({"pb_mode": mode, "pb_type": type_, "pb_test_source": "from the pool",
                  f"pb_test_{type_}": surface, "pb_seed": seed, "pb_fmt": fmt})
    if mixed:
        state.update({"pb_ratio": ratio, "pb_k": k})
    state[PROMPT_KEY] = built
    state[RECIPE_KEY] = (mode, type_, ratio, k, seed, fmt, "from the pool", surface, None)
    return True
