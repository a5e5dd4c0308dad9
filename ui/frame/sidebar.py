"""The app's sidebar: which model (spec, engine, precision, parser server, API), the result cache, sign-out.

:func:`draw` draws it before the page runs and returns the slots that :func:`fill` writes after
it (the page may have loaded, or failed to load, the model, or filled the cache).  The Engine and
Precision choice is one of them: its default asks :func:`amp.parser.engines.default_engine`, which
imports torch on a machine that could run llama.cpp (a second or more on a just-started app), so it
is drawn in its place after the page, and a page that needs no model shows without waiting for
torch (issue #41 point 6, measured by ``bench/first_paint.py``).  The
widgets' callbacks are here too: they run before the next script run, so they change the
session's choice (:mod:`ui.model.choice`) before any widget reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from amp.errors import AmpError
from amp.parser.backends.api_protocol import is_api_spec
from ui.frame import auth as ui_auth
from ui.model import actions, notices, parsers
from ui.model import api as ui_api
from ui.model import choice as model_choice
from ui.model import server as server_state
from ui.shared import settings_widgets
from ui.shared.common import plain

OTHER = model_choice.OTHER


def _pick_model() -> None:
    if st.session_state.get(model_choice.CHOICE_KEY) == model_choice.DEFAULT:
        model_choice.set_spec(model_choice.default_spec())


def _pick_engine() -> None:
    model_choice.set_engine(str(st.session_state.get(model_choice.ENGINE_CHOICE_KEY, "")))


def _pick_precision() -> None:
    model_choice.set_dtype(str(st.session_state.get(model_choice.PRECISION_CHOICE_KEY, "")))


def _engine_and_precision(spec: str) -> None:
    """**Engine** (the engines that run ``spec``) and, where that engine has precisions, **Precision**;
    the note under them when a switch of model moved the engine (a model behind an API has neither)."""
    if is_api_spec(spec):
        return
    engine = model_choice.current_engine()
    choices = model_choice.engines_of(spec)
    if engine not in choices:  # (the choice moves off an engine that cannot run the model; the widget shows it all the same)
        choices = (*choices, engine)
    settings_widgets.engine_select(st, model_choice.ENGINE_CHOICE_KEY, choices=choices, default=engine,
                                   on_change=_pick_engine)
    precisions = model_choice.precisions_of(engine)
    if precisions:
        settings_widgets.precision_select(st, model_choice.PRECISION_CHOICE_KEY, choices=precisions,
                                          default=model_choice.current_dtype(), on_change=_pick_precision)
    if note := st.session_state.get(model_choice.ENGINE_NOTE_KEY):
        st.caption(plain(note))  # the registry's words and an engine name, shown as plain text


TYPED_WARNING = "model_typed_warning"


def _load_typed() -> None:
    """Switch to the typed model and check it now (its identity; no weights load), so a wrong id
    or path is reported in the sidebar at once, in full."""
    spec = str(st.session_state.get("model_typed", "")).strip()
    if not spec:
        st.session_state[TYPED_WARNING] = "Type a Hugging Face id, a local folder or a .gguf file first."
        return
    st.session_state.pop(TYPED_WARNING, None)
    model_choice.set_spec(spec)
    parsers.check_spec(spec)


def _clear_cache() -> None:
    try:
        st.toast(f"Cleared {parsers.result_cache().clear()} cached results.", icon=":material/delete:")
    except AmpError as exc:
        st.toast(f"Could not clear the cache: {exc}", icon=":material/error:")


def _connect() -> None:
    model_choice.set_server(st.session_state.get("server_typed", ""))
    st.session_state[model_choice.TOKEN_KEY] = st.session_state.get("token_typed", "")


def _model_status() -> None:
    server = model_choice.current_server()
    if server:
        health = server_state.current(server, model_choice.current_token())  # a page's failure shows here at once
        parser = parsers.loaded_parser() if health.ok else None
        if parser is None:
            notices.server_failure(st, f"Parser server {server}: {health.summary()}.",
                                    health.reason or "It answered, but its model cannot be used (see the page).",
                                    "sidebar_server_fallback")
        else:
            st.success(f"Server model **{parser.spec}** · {actions.describe(parser)} · {health.summary()}",
                       icon=":material/cloud_done:")
        return
    spec = model_choice.current_spec()
    st.caption(f"Using **{spec}**")
    parser = parsers.loaded_parser(spec)
    failure = model_choice.load_error(spec)
    if failure:
        st.error(f"This model failed to load: {failure}", icon=":material/error:")
        notices.suggestion_buttons(st, spec)
    elif parser is not None and parser.loaded:
        st.success(f"Loaded · {actions.describe(parser)}", icon=":material/memory:")
    elif parser is not None:
        st.info(f"Ready · {actions.describe(parser)} · weights load on the first uncached parse",
                icon=":material/hourglass_empty:")
    else:
        st.info("Loads when a page first needs it.", icon=":material/hourglass_empty:")


def _cache_status() -> None:
    try:
        cache = parsers.result_cache()
        stats = cache.stats()
        st.caption(f"**{stats['entries']:,}** cached results, {stats['bytes'] / 1e6:.1f} MB on disk")
        if cache.read_only:
            st.warning(cache.hint()[:1].upper() + cache.hint()[1:] + ".", icon=":material/lock:")
    except AmpError as exc:
        st.error(f"Result cache unavailable: {exc}")



@dataclass(frozen=True)
class Slots:
    """Where :func:`fill` writes, after the page has run: the Engine and Precision choice (``None``
    with a parser server: it has none), the model's status and the cache's."""

    engine: Any
    status: Any
    cache: Any


def draw(icon: str) -> Slots:
    """The sidebar, drawn before the page; the slots its status lines go into after it."""
    with st.sidebar:
        st.logo(icon, size="large")
        spec = model_choice.current_spec()
        env_default = model_choice.default_spec()
        default_label = ("Embedded default: Gemma 3 270M" if env_default == model_choice.DEFAULT
                         else f"AMP_MODEL: {env_default}")
        st.session_state.setdefault(model_choice.CHOICE_KEY, model_choice.DEFAULT if spec == env_default else OTHER)
        st.markdown("**:material/memory: Model**")
        server = model_choice.current_server()
        model_choice.current_token()
        if server:
            st.caption("The model is the parser server's; clear the server URL below to run one in this app.")
        else:
            st.radio("Model", [model_choice.DEFAULT, OTHER], key=model_choice.CHOICE_KEY, label_visibility="collapsed",
                     format_func=lambda o: default_label if o == model_choice.DEFAULT
                     else "Other: Hugging Face id, local folder, .gguf or openai:<name>", on_change=_pick_model)
        if not server and st.session_state.get(model_choice.CHOICE_KEY) == OTHER:
            with st.form("model_form", border=False):
                st.text_input("Model id or path", value="" if spec == env_default else spec, key="model_typed",
                              placeholder="Qwen/Qwen2.5-0.5B, /models/my-model, ~/m.gguf")
                st.form_submit_button("Load this model", icon=":material/download:", on_click=_load_typed)
            if st.session_state.get(TYPED_WARNING):
                st.warning(st.session_state[TYPED_WARNING], icon=":material/warning:")
        engine_box = None if server else st.container()  # filled after the page (torch may load)
        health = server_state.current(server, model_choice.current_token()) if server else None
        with st.expander("Parser server" + (f" · {health.summary()}" if health else ""), expanded=False,
                         icon=":material/cloud:"), st.form("server_form", border=False):
            st.text_input("Parser server URL", value=server, key="server_typed",
                          placeholder="http://gpu-box:8600 (empty: the model runs in this app)",
                          help="A parser service started with `python -m amp serve` (or `bash run.sh serve`). "
                               "Its model, device and cache serve every page; sweeps run there as jobs.")
            st.text_input("Token", value=st.session_state.get(model_choice.TOKEN_KEY, ""), key="token_typed",
                          type="password", help="The server's AMP_TOKEN, if it has one.")
            st.form_submit_button("Use this server" if not server else "Update", icon=":material/link:",
                                  on_click=_connect)
        if not server:
            ui_api.sidebar(on_change=parsers.forget_api_failures)
        status_slot = st.empty()
        st.divider()
        st.markdown("**:material/database: Result cache**")
        cache_slot = st.empty()
        st.button("Clear result cache", icon=":material/delete:", key="sidebar_clear_cache", on_click=_clear_cache)
        ui_auth.sign_out_button()
    return Slots(engine=engine_box, status=status_slot, cache=cache_slot)


def fill(slots: Slots) -> None:
    """The Engine and Precision choice, the model's and the result cache's status, once the page has run."""
    if slots.engine is not None:
        with slots.engine:
            _engine_and_precision(model_choice.current_spec())
    with slots.status.container():
        _model_status()
    with slots.cache.container():
        _cache_status()
