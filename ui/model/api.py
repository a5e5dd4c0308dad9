"""A model behind an OpenAI-compatible API in the app: the sidebar's settings and its shared parser.

The model is chosen like any other, by typing ``openai:<name>`` as the sidebar's model (or as
Compare's model B); where it is asked (base URL, chat or completions, log-probs, grammar) is set
in the sidebar's "Model behind an API" expander (initially ``$AMP_API_BASE``).  The key is read
from ``$AMP_API_KEY`` / ``$OPENAI_API_KEY`` on the server running the app, never typed into a page.
"""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from amp.parser import Parser
from amp.parser.backends import api_protocol as proto
from amp.parser.backends.api import ApiBackend
from amp.parser.backends.api_protocol import ApiMode, ApiSettings
from amp.parser.core.errors import ModelLoadError

#: session_state keys of the sidebar's API settings.
BASE_KEY, MODE_KEY, LOGPROBS_KEY, GRAMMAR_KEY = "api_base", "api_mode", "api_logprobs", "api_grammar"


def current() -> tuple[str, str, bool, bool]:
    """The sidebar's (base URL, mode, log-probs, grammar); initially ``$AMP_API_BASE``, chat, on, off."""
    st.session_state.setdefault(BASE_KEY, os.environ.get(proto.BASE_ENV, "").strip())
    st.session_state.setdefault(MODE_KEY, ApiMode.CHAT.value)
    st.session_state.setdefault(LOGPROBS_KEY, True)
    st.session_state.setdefault(GRAMMAR_KEY, False)
    return (str(st.session_state[BASE_KEY]).strip(), str(st.session_state[MODE_KEY]),
            bool(st.session_state[LOGPROBS_KEY]), bool(st.session_state[GRAMMAR_KEY]))


def sidebar(on_change: Any = None) -> None:
    """The "Model behind an API" expander (only the settings; the model is ``openai:<name>``);
    ``on_change`` runs when a setting changes (the app forgets earlier failures of API models)."""
    base = current()[0]
    with st.expander("Model behind an API" + (" · set" if base else ""), icon=":material/api:"):
        st.caption("Type **openai:&lt;name&gt;** as the model above. The key comes from AMP_API_KEY or "
                   "OPENAI_API_KEY where the app runs. Results are cached by endpoint, name and settings: "
                   "the model behind a name may change without notice.")
        st.text_input("API base URL", key=BASE_KEY, placeholder="http://127.0.0.1:8000/v1", on_change=on_change)
        st.radio("Asked as", [m.value for m in ApiMode], key=MODE_KEY, horizontal=True, on_change=on_change,
                 help="chat: the paper's GPT-3.5 messages; completions: the prompt as is (base models)")
        st.checkbox("Ask for log-probs (P(LF0), token confidences)", key=LOGPROBS_KEY, on_change=on_change)
        st.checkbox("Send the grammar (GBNF, llama.cpp's server)", key=GRAMMAR_KEY, on_change=on_change)


@st.cache_resource(show_spinner=False, max_entries=4)
def _parser(spec: str, base: str, mode: str, logprobs: bool, grammar: bool, _cache: Any) -> Parser:
    settings = ApiSettings(base_url=base, model=proto.api_model_name(spec), mode=ApiMode(mode), logprobs=logprobs,
                           grammar=grammar)
    return Parser(backend=ApiBackend(settings), cache=_cache)


def load(spec: str, cache: Any) -> Parser:
    """The shared parser of ``openai:<name>`` with the sidebar's settings, on the app's result
    ``cache`` (ModelLoadError if no base URL is set)."""
    base, mode, logprobs, grammar = current()
    if not base:
        raise ModelLoadError(f"{spec} is a model behind an API: set its base URL in the sidebar's "
                             "'Model behind an API' (or AMP_API_BASE)")
    try:
        return _parser(spec, base, mode, logprobs, grammar, cache)
    except ValueError as exc:  # SettingError: a malformed URL or name
        raise ModelLoadError(str(exc)) from None


def clear() -> None:
    _parser.clear()


def why_no_scores(parser: Parser | None) -> str | None:
    """Why ``parser`` has no P(LF0) ("needs log-probs: …", its backend's declared reason), or None
    when it has them (or there is no parser)."""
    if parser is None:
        return None
    caps = parser.backend.capabilities()
    if caps.scores:
        return None
    return f"P(LF0) needs log-probs: {caps.no_scores_reason or 'this model gives none'}."
