"""AmP Explorer — the frame: page setup, navigation and the shared sidebar.

Run with ``streamlit run app.py`` (or ``bash run.sh app``).  Each page is a short script in
``views/``; the model, its lock and the result cache live in :mod:`ui.model_picker`.

Why ``views/`` and not ``pages/``: with a ``pages/`` folder next to the entrypoint, Streamlit
1.67 runs the app in its legacy multipage mode (``PagesManager.uses_pages_directory``) and wraps
our ``st.navigation`` inside an automatic one built from that folder; ``AppTest`` then reruns
page scripts *without* this frame (the sidebar disappears, its widget state is dropped).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import streamlit as st

from amp.errors import AmpError
from ui import api_model as ui_api
from ui import auth as ui_auth
from ui import job_runs, server_state, settings_widgets
from ui import layout as ui_layout
from ui import model_picker as ui_model
from ui.common import PageHalt

# A local favicon: a ":material/…:" page icon would be fetched from fonts.gstatic.com.
ICON = str(Path(__file__).parent / "ui" / "static" / "icon.png")
st.set_page_config(page_title="AmP Explorer", page_icon=ICON, layout="wide", initial_sidebar_state="expanded")

PAGES = [
    st.Page("views/templates.py", title="Templates & examples", icon=":material/category:", default=True),
    st.Page("views/own_sentences.py", title="Your own sentences", icon=":material/edit:"),
    st.Page("views/prompt_builder.py", title="Prompt builder", icon=":material/edit_note:"),
    st.Page("views/parse_inspect.py", title="Parse & inspect", icon=":material/troubleshoot:"),
    st.Page("views/ratio_sweep.py", title="Ratio sweep (few-shot)", icon=":material/show_chart:"),
    st.Page("views/zero_shot.py", title="Zero-shot", icon=":material/bar_chart:"),
    st.Page("views/teach_poll.py", title="Class poll", icon=":material/how_to_vote:"),
    st.Page("views/teach_present.py", title="Presentation", icon=":material/slideshow:"),
    st.Page("views/research.py", title="Research (reproduce)", icon=":material/science:"),
    st.Page("views/compare.py", title="Compare models", icon=":material/compare_arrows:"),
    st.Page("views/about.py", title="About & cache", icon=":material/info:"),
]
if "poll" in st.query_params:  # a student's link ?poll=<CODE>: the student page only, no teacher frame
    student = st.navigation([st.Page("views/teach_student.py", title="Class poll", default=True)],
                            position="hidden")
    with contextlib.suppress(PageHalt):
        student.run()
    st.stop()
if not ui_auth.teacher_signed_in():  # reachable from a classroom network: the teacher signs in first
    st.stop()
page = st.navigation(PAGES)
job_runs.save_finished()  # sweeps finished on the parser service while no tab watched: saved as runs
ui_layout.label_css()  # labels wrap instead of being cut (a projector at 1280 px, the sidebar open)

OTHER = ui_model.OTHER


def _pick_model() -> None:
    if st.session_state.get(ui_model.CHOICE_KEY) == ui_model.DEFAULT:
        ui_model.set_spec(ui_model.default_spec())


def _pick_precision() -> None:
    ui_model.set_dtype(str(st.session_state.get(ui_model.PRECISION_CHOICE_KEY, "")))


TYPED_WARNING = "model_typed_warning"


def _load_typed() -> None:
    """Switch to the typed model and check it now (its identity; no weights load), so a wrong id
    or path is reported in the sidebar at once, in full."""
    spec = str(st.session_state.get("model_typed", "")).strip()
    if not spec:
        st.session_state[TYPED_WARNING] = "Type a Hugging Face id, a local folder or a .gguf file first."
        return
    st.session_state.pop(TYPED_WARNING, None)
    ui_model.set_spec(spec)
    ui_model.check_spec(spec)


def _clear_cache() -> None:
    try:
        st.toast(f"Cleared {ui_model.result_cache().clear()} cached results.", icon=":material/delete:")
    except AmpError as exc:
        st.toast(f"Could not clear the cache: {exc}", icon=":material/error:")


def _connect() -> None:
    ui_model.set_server(st.session_state.get("server_typed", ""))
    st.session_state[ui_model.TOKEN_KEY] = st.session_state.get("token_typed", "")


def _model_status() -> None:
    server = ui_model.current_server()
    if server:
        health = server_state.current(server, ui_model.current_token())  # a page's failure shows here at once
        parser = ui_model.loaded_parser() if health.ok else None
        if parser is None:
            ui_model.server_failure(st, f"Parser server {server}: {health.summary()}.",
                                    health.reason or "It answered, but its model cannot be used (see the page).",
                                    "sidebar_server_fallback")
        else:
            st.success(f"Server model **{parser.spec}** · {ui_model.describe(parser)} · {health.summary()}",
                       icon=":material/cloud_done:")
        return
    spec = ui_model.current_spec()
    st.caption(f"Using **{spec}**")
    parser = ui_model.loaded_parser(spec)
    failure = ui_model.load_error(spec)
    if failure:
        st.error(f"This model failed to load: {failure}", icon=":material/error:")
        ui_model.suggestion_buttons(st, spec)
    elif parser is not None and parser.loaded:
        st.success(f"Loaded · {ui_model.describe(parser)}", icon=":material/memory:")
    elif parser is not None:
        st.info(f"Ready · {ui_model.describe(parser)} · weights load on the first uncached parse",
                icon=":material/hourglass_empty:")
    else:
        st.info("Loads when a page first needs it.", icon=":material/hourglass_empty:")


def _cache_status() -> None:
    try:
        cache = ui_model.result_cache()
        stats = cache.stats()
        st.caption(f"**{stats['entries']:,}** cached results, {stats['bytes'] / 1e6:.1f} MB on disk")
        if cache.read_only:
            st.warning(cache.hint()[:1].upper() + cache.hint()[1:] + ".", icon=":material/lock:")
    except AmpError as exc:
        st.error(f"Result cache unavailable: {exc}")


with st.sidebar:
    st.logo(ICON, size="large")
    spec = ui_model.current_spec()
    env_default = ui_model.default_spec()
    default_label = ("Embedded default: Gemma 3 270M" if env_default == ui_model.DEFAULT
                     else f"AMP_MODEL: {env_default}")
    st.session_state.setdefault(ui_model.CHOICE_KEY, ui_model.DEFAULT if spec == env_default else OTHER)
    st.markdown("**:material/memory: Model**")
    server = ui_model.current_server()
    ui_model.current_token()
    if server:
        st.caption("The model is the parser server's; clear the server URL below to run one in this app.")
    else:
        st.radio("Model", [ui_model.DEFAULT, OTHER], key=ui_model.CHOICE_KEY, label_visibility="collapsed",
                 format_func=lambda o: default_label if o == ui_model.DEFAULT
                 else "Other: Hugging Face id, local folder, .gguf or openai:<name>", on_change=_pick_model)
    if not server and st.session_state.get(ui_model.CHOICE_KEY) == OTHER:
        with st.form("model_form", border=False):
            st.text_input("Model id or path", value="" if spec == env_default else spec, key="model_typed",
                          placeholder="Qwen/Qwen2.5-0.5B, /models/my-model, ~/m.gguf")
            st.form_submit_button("Load this model", icon=":material/download:", on_click=_load_typed)
        if st.session_state.get(TYPED_WARNING):
            st.warning(st.session_state[TYPED_WARNING], icon=":material/warning:")
    if not server:
        settings_widgets.precision_select(st, ui_model.PRECISION_CHOICE_KEY, default=ui_model.current_dtype(),
                                          on_change=_pick_precision)
        if note := st.session_state.get(ui_model.PRECISION_NOTE_KEY):
            st.caption(note)  # a constant of ui.model_picker (no user text)
    health = server_state.current(server, ui_model.current_token()) if server else None
    with st.expander("Parser server" + (f" · {health.summary()}" if health else ""), expanded=False,
                     icon=":material/cloud:"), st.form("server_form", border=False):
        st.text_input("Parser server URL", value=server, key="server_typed",
                      placeholder="http://gpu-box:8600 (empty: the model runs in this app)",
                      help="A parser service started with `python -m amp serve` (or `bash run.sh serve`). "
                           "Its model, device and cache serve every page; sweeps run there as jobs.")
        st.text_input("Token", value=st.session_state.get(ui_model.TOKEN_KEY, ""), key="token_typed",
                      type="password", help="The server's AMP_TOKEN, if it has one.")
        st.form_submit_button("Use this server" if not server else "Update", icon=":material/link:",
                              on_click=_connect)
    if not server:
        ui_api.sidebar(on_change=ui_model.forget_api_failures)
    status_slot = st.empty()
    st.divider()
    st.markdown("**:material/database: Result cache**")
    cache_slot = st.empty()
    st.button("Clear result cache", icon=":material/delete:", key="sidebar_clear_cache", on_click=_clear_cache)
    ui_auth.sign_out_button()

with contextlib.suppress(PageHalt):  # a page that ends early (ui.common.halt) still gets its sidebar
    page.run()

# After the page: it may have loaded (or failed to load) the model, or filled the cache.
with status_slot.container():
    _model_status()
with cache_slot.container():
    _cache_status()
