"""The Class poll page's demo-pack section: export cached results to a zip (all, one model, or the
results behind chosen sentences, with the own sentences they are for) and import one.

Streamlit glue over :mod:`amp.teaching.demo_pack` (the pack format and its checks) and
:func:`amp.teaching.lesson.sentence_keys`; the cache is the session's (:mod:`ui.model.parsers`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from amp.errors import AmpError
from amp.teaching import demo_pack, lesson
from amp.teaching.own_library import OwnLibrary
from amp.teaching.own_sentences import OwnSentence
from ui.model import parsers
from ui.shared.common import describe_error, plain
from ui.shared.prompt_state import current_prompt

#: The "Entries" choices besides one model: every model, and the results behind chosen sentences.
ALL_MODELS = "(all models)"
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
        which = st.selectbox("Entries", [ALL_MODELS, *models, SENTENCES], key="teach_pack_model")
        lines = ""
        own: tuple[OwnSentence, ...] = ()
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
                                                 models=None if which in (ALL_MODELS, SENTENCES) else [which],
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
