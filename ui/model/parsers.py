"""The parsers of this process: one per model, shared by every session and browser tab, and the result cache.

* **Loaded once per process.**  :func:`_load_local` is an ``st.cache_resource``: every session and
  browser tab shares one :class:`amp.parser.Parser` per (spec, engine, precision).  Streamlit computes a resource
  once even when two sessions ask at the same moment (it holds a per-key lock while loading).
* :func:`get_parser` is the sidebar's model (:mod:`ui.model.choice`) or the parser service's;
  :func:`parser_for` a page's own model (Compare's model B); :func:`peek_parser` and
  :func:`loaded_parser` look without drawing or creating anything.
* A model that fails to load is remembered for the session (:func:`fail`) and shown with its way
  out (:mod:`ui.model.notices`).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

import streamlit as st

from amp.cache import ResultCache
from amp.errors import AmpError
from amp.parser import Parser
from amp.parser.backends.api_protocol import is_api_spec
from amp.parser.core.errors import ModelNameError
from amp.parser.models.names import check_model_name
from amp.settings import results_dir
from ui.model import api as api_model
from ui.model import server as server_state
from ui.model.choice import (
    ERROR_KEY,
    SUGGEST_KEY,
    ModelChoice,
    current_choice,
    current_server,
    current_spec,
    current_token,
    load_error,
    record_failure,
)
from ui.model.notices import server_failure, show_failure

#: The (spec, engine, precision) of every parser this process created for a session (and that did not fail since).
_READY: set[tuple[str, str, str]] = set()



@st.cache_resource(show_spinner=False, max_entries=3, ttl=600)
def _load_remote(url: str, token: str | None) -> Parser:
    """A parser whose model is the service's at ``url`` (raises BackendError if it is not usable)."""

    return Parser.remote(url, token=token, cache=result_cache())


def _remote_or_none() -> Parser | None:
    try:
        return _load_remote(current_server(), current_token())
    except Exception:  # noqa: BLE001 - a peek never fails a page
        return None


def _load(choice: ModelChoice) -> Parser:
    """The parser of ``choice``: a model behind an API (``openai:<name>``, :mod:`ui.model.api`) or
    :func:`_load_local`."""
    if is_api_spec(choice.spec):
        return api_model.load(choice.spec, result_cache())
    return _load_local(choice.spec, choice.engine, choice.dtype)



@st.cache_resource(show_spinner=False, max_entries=3)
def _load_local(spec: str, engine: str, dtype: str = "") -> Parser:
    """The parser of ``spec`` on ``engine`` (a name of :mod:`amp.parser.engines`) in ``dtype`` ("" = the
    device's default, and the only one of an engine that offers none), shared by all sessions of this process.

    :class:`amp.parser.Parser` loads its weights lazily, on the first result-cache *miss*, so a
    page whose results are all cached never loads the model.  Here only the spec is checked
    (its identity is computed: a missing path or a folder that is not a model fails now).
    """

    check_model_name(spec)  # a misspelt or (offline) uncached name: ModelNameError with close names
    parser = Parser(spec, engine=engine, dtype=dtype or None, cache=result_cache())
    parser.identity  # noqa: B018 - validates the spec (raises ModelLoadError)
    return parser


def check_spec(spec: str) -> str | None:
    """Check now that ``spec`` names a usable model (its identity is computed: a missing path, a
    folder that is not a model or an unreachable Hub id fails; no weights load).  A failure is
    recorded for this session, as a failed load is, and its message returned."""
    choice = replace(current_choice(), spec=spec)
    try:
        _load(choice)
    except Exception as exc:  # noqa: BLE001 - ModelLoadError, or any loader crash: a message
        if isinstance(exc, ModelNameError):
            st.session_state.setdefault(SUGGEST_KEY, {})[spec] = exc.suggestions
        return fail(choice, exc)
    _READY.add(choice.key)
    return None


def parser_for(choice: ModelChoice) -> Parser:
    """The shared parser of ``choice`` (raises what loading raises: a bad spec is a ModelLoadError).

    For a page's own model (Compare's model B); the sidebar's model is :func:`get_parser`'s.
    """
    parser = _load(choice)
    _READY.add(choice.key)
    return parser


def loaded_parser(spec: str | None = None) -> Parser | None:
    """The parser of ``spec`` if this process already created it (creating nothing)."""
    if current_server():
        return _remote_or_none()
    choice = replace(current_choice(), spec=spec or current_spec())
    if choice.key in _READY and load_error(choice.spec) is None:
        with contextlib.suppress(Exception):
            return _load(choice)
    return None


def peek_parser() -> Parser | None:
    """The current model's parser if it can be created, drawing nothing (for estimates, cache checks).

    Creating a parser is cheap (weights load lazily); a spec that fails gives ``None`` here and
    its error is shown when a page really needs the model (:func:`get_parser`).
    """
    if current_server():
        return _remote_or_none()
    if load_error() is not None:
        return None
    try:
        return _load(current_choice())
    except Exception:  # noqa: BLE001 - a peek never fails a page
        return None


def get_parser(*, where: Any = None) -> Parser | None:
    """The current model's parser; ``None`` (with an error and a way back) if it cannot load.

    ``where`` is the container to draw an error in (default: the page).
    """
    box = where if where is not None else st
    server = current_server()
    if server:
        try:
            return _load_remote(server, current_token())
        except Exception as exc:  # noqa: BLE001 - unreachable, token, version: an error box, the app goes on
            server_state.record_failure(server, current_token(), exc)
            message = str(exc) if isinstance(exc, AmpError) else f"{type(exc).__name__}: {exc}"
            server_failure(box, f"The parser server {server} cannot be used.", message, "server_fallback")
            return None
    choice = current_choice()
    failed = load_error()
    if failed is not None:
        show_failure(box, choice, failed)
        return None
    try:
        parser = _load(choice)
    except Exception as exc:  # noqa: BLE001 - ModelLoadError, or any loader crash: never kill the page
        _fail(box, choice, exc)
        return None
    _READY.add(choice.key)
    return parser


def fail(choice: ModelChoice, exc: BaseException) -> str:
    """Mark ``choice`` failed for this session (its parser no longer counts as ready); its message."""
    _READY.discard(choice.key)
    return record_failure(choice, exc)


def _fail(box: Any, choice: ModelChoice, exc: BaseException) -> str:
    message = fail(choice, exc)
    show_failure(box, choice, message)
    return message


def forget_api_failures() -> None:
    """Forget this session's failures of models behind an API (their settings changed: retry them)."""
    errors = st.session_state.setdefault(ERROR_KEY, {})
    for key in [k for k in errors if is_api_spec(k[0])]:
        del errors[key]
        _READY.discard(key)



@st.cache_resource(show_spinner=False)
def _result_cache(directory: str) -> ResultCache:

    return ResultCache(directory)


def result_cache() -> ResultCache:
    """The process-wide :class:`amp.cache.ResultCache` (of ``$AMP_CACHE_DIR`` or ``cache/``)."""

    return _result_cache(str(results_dir()))


def clear_loaded() -> None:
    """Forget the loaded parsers of this process (tests use it between model specs)."""
    _READY.clear()
    _load_local.clear()
    api_model.clear()
    _load_remote.clear()
