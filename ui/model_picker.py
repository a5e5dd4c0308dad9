"""The one language model of the app: picker, loading, sharing between sessions, result cache.

* **Which model.**  ``st.session_state["model_spec"]`` holds the spec the sidebar picked:
  ``"default"`` (the embedded Gemma 3 270M), a Hugging Face id, a local folder or a ``.gguf``
  file, or ``openai:<name>`` — a model behind an API, asked as the sidebar's "Model behind an API"
  says (:mod:`ui.api_model`).  Its initial value is :func:`default_spec`: the environment variable ``AMP_MODEL`` if
  set, else ``"default"``.  That variable is the test hook: the AppTest suite points it at a tiny
  local GPT-2 (``tests/app/conftest.py``) so that pages run the real code path without the 270M
  model; the browser tests run the default model (or ``$AMP_E2E_MODEL``).
* **Loaded once per process.**  :func:`_load_local` is an ``st.cache_resource``: every session and
  browser tab shares one :class:`amp.parser.Parser` per spec.  Streamlit computes a resource
  once even when two sessions ask at the same moment (it holds a per-key lock while loading).
* **No races, no hangs.**  Two tabs must not interleave inside one model action.  The library
  already holds ``LoadedModel.lock`` around every model call; on top of that every page action (a
  parse with its scores and steps, one sweep item) runs inside :func:`using`, which claims the
  shared parser's :class:`ui.model_hold.ModelHold`: a second session waits until the first action
  ends (sweeps give it back between items, and waiting claims are served in turn).  The hold is
  given back on every path, a holder whose script run has ended holds nothing, and a waiting run
  says so in plain sight with a Cancel (:mod:`ui.model_use`; issue #32).
* **Precision.**  ``st.session_state["model_dtype"]`` is ``""`` (the device's default: float32 on
  the CPU, the exact path), ``"int8"`` (the opt-in CPU path with an int8 output layer,
  :mod:`amp.parser.models.quantize`) or ``"bfloat16"`` (fast on CPUs with bf16 instructions); the last
  two are faster, their results differ slightly and are cached apart; or ``"llama.cpp"``, the
  llama.cpp engine running the GGUF as shipped (a GGUF model only; cached apart too).  Its initial
  value is ``$AMP_MODEL_DTYPE``, else ``$AMP_ENGINE``, else the default rule
  (:func:`amp.parser.models.spec.default_engine`: llama.cpp for a GGUF, the default model
  included, on a machine without a GPU; the exact path otherwise).  Until the user picks one
  (or the environment names one) it follows the model: a switch of model applies the rule to the
  new one.  A picked precision stays, except llama.cpp for a model that is not a GGUF: that one
  moves to the exact path and the sidebar says why (:data:`PRECISION_NOTE_KEY`).
* **Failures.**  A model (spec and precision, a :class:`ModelChoice`) that fails to load is
  remembered for the session with its message (:data:`ERROR_KEY`); pages show it with
  ``st.error`` and offer to go back to the default; the picker stays usable.  A page may use a
  model other than the sidebar's (Compare's model B): its failure is shown and remembered as its
  own, never as the sidebar model's.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import streamlit as st

from amp.cache import ResultCache
from amp.errors import AmpError
from amp.parser import Parser
from amp.parser.backends.api_protocol import is_api_spec
from amp.parser.core.errors import BackendError, ModelLoadError, ModelNameError, SearchCancelled
from amp.parser.models.names import check_model_name
from amp.parser.models.spec import ENGINE_ENV, Engine, default_engine, is_gguf_model
from amp.settings import results_dir
from ui import api_model, server_state
from ui.common import describe_error, plain
from ui.model_use import hold_of, using

if TYPE_CHECKING:
    from amp.cache import ResultCache
    from amp.parser import Parser

T = TypeVar("T")

#: session_state key: the model spec the user picked.
SPEC_KEY = "model_spec"
#: session_state key: {(spec, precision): error message} of models that failed to load in this session.
ERROR_KEY = "model_errors"
#: session_state key: {spec: close model names} of misspelt names checked at Load.
SUGGEST_KEY = "model_suggestions"
#: session_state key of the sidebar radio (default vs other) and its "other" value.
CHOICE_KEY = "model_choice"
OTHER = "other"
#: The embedded default model's spec.
DEFAULT = "default"
#: The environment variable that sets the initial spec (the test hook; also handy on a GPU box).
ENV_VAR = "AMP_MODEL"
#: session_state key of the precision ("" = the device's default, else a dtype of PRECISIONS) and its env var.
DTYPE_KEY = "model_dtype"
#: session_state key of the sidebar's precision selectbox.
PRECISION_CHOICE_KEY = "precision_choice"
#: session_state key: True once the precision was chosen (by the user, or by the environment); until
#: then a switch of model applies the default rule to the new model.
PRECISION_PICKED_KEY = "precision_picked"
#: session_state key: why a switch of model moved the precision (shown under the select), if it did.
PRECISION_NOTE_KEY = "precision_note"
#: The note of :data:`PRECISION_NOTE_KEY` when the new model cannot run on the llama.cpp engine.
GGUF_ONLY_NOTE = "llama.cpp runs GGUF models only: this model runs in the exact precision."
DTYPE_ENV_VAR = "AMP_MODEL_DTYPE"
#: The precisions the sidebar offers, and how it names them.
#: The llama.cpp engine (:class:`amp.parser.models.spec.Engine`) is offered as one more of them: it runs
#: the GGUF as shipped, so its results differ slightly from the exact path's and are cached apart.
PRECISIONS = {"": "Exact (float32 on a CPU)", "int8": "Faster: int8 output layer (CPU, approximate)",
              "bfloat16": "Faster on CPUs with bf16 instructions: bfloat16 (approximate)",
              Engine.LLAMA_CPP.value: "llama.cpp engine: the GGUF as shipped, on the CPU (approximate)"}
#: session_state keys of the parser service this session uses ("" = a model in this process) and its token.
SERVER_KEY = "parser_server"
TOKEN_KEY = "parser_token"


def current_server() -> str:
    """The parser service URL this session uses: the sidebar's, initially ``$AMP_PARSER_URL``; "" for none."""
    if SERVER_KEY not in st.session_state:
        st.session_state[SERVER_KEY] = os.environ.get("AMP_PARSER_URL", "").strip()
    return st.session_state[SERVER_KEY]


def current_token() -> str | None:
    """The token sent to the parser service: the sidebar's, initially ``$AMP_TOKEN``."""
    if TOKEN_KEY not in st.session_state:
        st.session_state[TOKEN_KEY] = os.environ.get("AMP_TOKEN", "")
    return st.session_state[TOKEN_KEY] or None


def set_server(url: str) -> None:
    """Use the parser service at ``url`` ("" = back to a model in this process); its state is checked again."""
    st.session_state[SERVER_KEY] = (url or "").strip()
    server_state.forget()


@st.cache_resource(show_spinner=False, max_entries=3, ttl=600)
def _load_remote(url: str, token: str | None) -> Parser:
    """A parser whose model is the service's at ``url`` (raises BackendError if it is not usable)."""

    return Parser.remote(url, token=token, cache=result_cache())


def _remote_or_none() -> Parser | None:
    try:
        return _load_remote(current_server(), current_token())
    except Exception:  # noqa: BLE001 - a peek never fails a page
        return None


def default_spec() -> str:
    """``$AMP_MODEL`` if set and non-empty, else ``"default"`` (the embedded Gemma 3 270M)."""
    return os.environ.get(ENV_VAR, "").strip() or DEFAULT


def current_spec() -> str:
    """The spec this session uses now."""
    if SPEC_KEY not in st.session_state:
        st.session_state[SPEC_KEY] = default_spec()
    return st.session_state[SPEC_KEY]


def set_spec(spec: str) -> None:
    """Switch this session to ``spec`` (and forget earlier failures of it, to allow a retry)."""
    spec = spec.strip() or DEFAULT
    st.session_state[SPEC_KEY] = spec
    errors = st.session_state.setdefault(ERROR_KEY, {})
    for key in [k for k in errors if k[0] == spec]:
        del errors[key]
    # keep the sidebar radio in step (set_spec runs in widget callbacks, before the widgets)
    st.session_state[CHOICE_KEY] = DEFAULT if spec == default_spec() else OTHER
    _precision_follows(spec)


def _rule_dtype(spec: str) -> tuple[str, bool]:
    """The precision ``spec`` starts in, and whether it counts as chosen: ``$AMP_MODEL_DTYPE``, else
    ``$AMP_ENGINE`` (both chosen), else the default rule (llama.cpp for a GGUF on the CPU; not chosen)."""
    env = os.environ.get(DTYPE_ENV_VAR, "").strip().lower() or os.environ.get(ENGINE_ENV, "").strip().lower()
    if env:
        return (env if env in PRECISIONS else ""), True
    if not is_api_spec(spec) and default_engine(spec) is Engine.LLAMA_CPP:
        return Engine.LLAMA_CPP.value, False
    return "", False


def _precision_follows(spec: str) -> None:
    """After a switch to ``spec``: the precision the rule gives it while none was chosen; the exact
    path, with :data:`GGUF_ONLY_NOTE`, when the chosen one is llama.cpp and ``spec`` is no GGUF."""
    st.session_state.pop(PRECISION_NOTE_KEY, None)
    if is_api_spec(spec):
        return  # a model behind an API has no precision: the local choice waits for the next local model
    current = current_dtype()
    if not st.session_state.get(PRECISION_PICKED_KEY):
        new = _rule_dtype(spec)[0]
    elif current == Engine.LLAMA_CPP and not is_gguf_model(spec):
        new = ""
        st.session_state[PRECISION_NOTE_KEY] = GGUF_ONLY_NOTE
    else:
        return
    st.session_state[DTYPE_KEY] = st.session_state[PRECISION_CHOICE_KEY] = new


def forget_api_failures() -> None:
    """Forget this session's failures of models behind an API (their settings changed: retry them)."""
    errors = st.session_state.setdefault(ERROR_KEY, {})
    for key in [k for k in errors if is_api_spec(k[0])]:
        del errors[key]
        _READY.discard(key)


def current_dtype() -> str:
    """The precision this session uses: ``""`` (the device's default), ``"int8"`` or ``"bfloat16"``."""
    if DTYPE_KEY not in st.session_state:
        st.session_state[DTYPE_KEY], picked = _rule_dtype(current_spec())
        st.session_state.setdefault(PRECISION_PICKED_KEY, picked)
    value = st.session_state[DTYPE_KEY]
    return value if value in PRECISIONS else ""


def set_dtype(dtype: str) -> None:
    """Switch this session's precision (and forget the current spec's failure in it, to allow a retry)."""
    st.session_state[DTYPE_KEY] = dtype if dtype in PRECISIONS else ""
    st.session_state.setdefault(ERROR_KEY, {}).pop((current_spec(), st.session_state[DTYPE_KEY]), None)
    st.session_state[PRECISION_CHOICE_KEY] = st.session_state[DTYPE_KEY]  # (set_dtype runs in callbacks)
    st.session_state[PRECISION_PICKED_KEY] = True
    st.session_state.pop(PRECISION_NOTE_KEY, None)


@dataclass(frozen=True)
class ModelChoice:
    """A model as the app loads it: its spec and its precision (``""``: the device's default).

    The sidebar's is :func:`current_choice`; a page with a model of its own (Compare's model B)
    builds one from its widgets.  A further loading option (an engine) is one more field here and
    one more widget beside the precision (:func:`ui.settings_widgets.precision_select`).
    """

    spec: str = DEFAULT
    dtype: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """Its key in :data:`ERROR_KEY` and in the set of created parsers."""
        return self.spec, self.dtype

    def label(self) -> str:
        """``"spec"``, with the precision when it is not the exact one (``"spec · int8"``)."""
        return f"{self.spec} · {self.dtype}" if self.dtype else self.spec


def current_choice() -> ModelChoice:
    """The sidebar's model: :func:`current_spec` in :func:`current_dtype`."""
    return ModelChoice(current_spec(), current_dtype())


def load_error(spec: str | None = None, dtype: str | None = None) -> str | None:
    """The message of a failed load of ``spec`` in ``dtype`` (default: the sidebar's) in this session."""
    key = (spec or current_spec(), current_dtype() if dtype is None else dtype)
    return st.session_state.get(ERROR_KEY, {}).get(key)


def _load(spec: str, dtype: str = "") -> Parser:
    """The parser of ``spec``: a model behind an API (``openai:<name>``, :mod:`ui.api_model`) or
    :func:`_load_local`."""
    if is_api_spec(spec):
        return api_model.load(spec, result_cache())
    return _load_local(spec, dtype)


@st.cache_resource(show_spinner=False, max_entries=3)
def _load_local(spec: str, dtype: str = "") -> Parser:
    """The parser of ``spec`` in ``dtype`` ("" = the device's default), shared by all sessions of this process.

    :class:`amp.parser.Parser` loads its weights lazily, on the first result-cache *miss*, so a
    page whose results are all cached never loads the model.  Here only the spec is checked
    (its identity is computed: a missing path or a folder that is not a model fails now).
    """

    check_model_name(spec)  # a misspelt or (offline) uncached name: ModelNameError with close names
    if dtype == Engine.LLAMA_CPP:
        parser = Parser(spec, engine=Engine.LLAMA_CPP, cache=result_cache())
    else:
        parser = Parser(spec, dtype=dtype or None, engine=Engine.TRANSFORMERS, cache=result_cache())
    parser.identity  # noqa: B018 - validates the spec (raises ModelLoadError)
    return parser


def check_spec(spec: str) -> str | None:
    """Check now that ``spec`` names a usable model (its identity is computed: a missing path, a
    folder that is not a model or an unreachable Hub id fails; no weights load).  A failure is
    recorded for this session, as a failed load is, and its message returned."""
    try:
        _load(spec, current_dtype())
    except Exception as exc:  # noqa: BLE001 - ModelLoadError, or any loader crash: a message
        if isinstance(exc, ModelNameError):
            st.session_state.setdefault(SUGGEST_KEY, {})[spec] = exc.suggestions
        return _record_failure(ModelChoice(spec, current_dtype()), exc)
    _READY.add((spec, current_dtype()))
    return None


def suggestion_buttons(box: Any, spec: str) -> None:
    """A button for each close name of a misspelt ``spec`` (``Use 'default'``), as checked at Load."""
    for i, name in enumerate(st.session_state.get(SUGGEST_KEY, {}).get(spec, ())):
        box.button(f"Use {name!r}", key=f"model_suggestion_{i}", on_click=set_spec, args=(name,),
                   icon=":material/spellcheck:")


def parser_for(choice: ModelChoice) -> Parser:
    """The shared parser of ``choice`` (raises what loading raises: a bad spec is a ModelLoadError).

    For a page's own model (Compare's model B); the sidebar's model is :func:`get_parser`'s.
    """
    parser = _load(choice.spec, choice.dtype)
    _READY.add(choice.key)
    return parser


def loaded_parser(spec: str | None = None) -> Parser | None:
    """The parser of ``spec`` if this process already created it (creating nothing)."""
    if current_server():
        return _remote_or_none()
    spec = spec or current_spec()
    if (spec, current_dtype()) in _READY and load_error(spec) is None:
        with contextlib.suppress(Exception):
            return _load(spec, current_dtype())
    return None


_READY: set[tuple[str, str]] = set()


def peek_parser() -> Parser | None:
    """The current model's parser if it can be created, drawing nothing (for estimates, cache checks).

    Creating a parser is cheap (weights load lazily); a spec that fails gives ``None`` here and
    its error is shown when a page really needs the model (:func:`get_parser`).
    """
    if current_server():
        return _remote_or_none()
    spec = current_spec()
    if load_error(spec) is not None:
        return None
    try:
        return _load(spec, current_dtype())
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
        _show_failure(box, choice, failed)
        return None
    try:
        parser = _load(choice.spec, choice.dtype)
    except Exception as exc:  # noqa: BLE001 - ModelLoadError, or any loader crash: never kill the page
        _fail(box, choice, exc)
        return None
    _READY.add(choice.key)
    return parser


def _record_failure(choice: ModelChoice, exc: BaseException) -> str:
    """Mark ``choice`` failed for this session; its message."""
    message = str(exc) if isinstance(exc, AmpError) else f"{type(exc).__name__}: {exc}"
    st.session_state.setdefault(ERROR_KEY, {})[choice.key] = message
    _READY.discard(choice.key)
    return message


def _fail(box: Any, choice: ModelChoice, exc: BaseException) -> str:
    message = _record_failure(choice, exc)
    _show_failure(box, choice, message)
    return message


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """How one page action on the model ended: its ``value``, or what went wrong (in words), or cancelled."""

    value: T | None = None
    error: str | None = None
    cancelled: bool = False


def compute(parser: Parser, label: str, fn: Callable[[Parser], T], *, who: str | None = None) -> T | None:
    """Run ``fn(parser)`` holding the model, inside a status box; errors become ``st.error``.

    The value, or ``None`` when it failed or was cancelled (:func:`attempt` says which).
    """
    return attempt(parser, label, fn, who=who).value


def attempt(parser: Parser, label: str, fn: Callable[[Parser], T], *, who: str | None = None,
            model: ModelChoice | None = None) -> Outcome[T]:
    """Run ``fn(parser)`` holding the model (:func:`using`) inside a status box; how it ended.

    The status label says when the call may also load the model (the Parser loads on its first
    cache miss).  A wait for the model is shown above the box, in plain sight; a failure opens
    the box, so its reason is never collapsed.  ``model`` is the model ``parser`` is (default: its
    spec in the sidebar's precision): a :class:`ModelLoadError` marks *that* model as failed for
    this session, and offers the sidebar's way back only when it is the sidebar's model.  ``who``
    (e.g. ``"Model A"``) names the box in its final label ("Model A done · …"), for pages that
    show several boxes at once.
    """
    model = model or ModelChoice(parser.spec, current_dtype())

    def final(text: str) -> str:
        return f"{who}: {text[0].lower()}{text[1:]}" if who else text

    what = label
    if not parser.loaded:
        label += (" The model loads on the first uncached call: about a minute the first time for the "
                  "embedded model, seconds later." if model.spec == DEFAULT else " (loading the model first)")
    wait_slot = st.empty()  # a wait for the model shows here, not inside the collapsed box
    # A failure is drawn after the box, in plain sight (an expanded st.error with its way out), not
    # inside it; a page with several boxes (``who``) shows its failures in its own result columns,
    # so there the reason stays inside the opened box.
    show: Callable[[Any], None] | None = None
    outcome: Outcome[T]
    with st.status(label, expanded=False) as status:
        try:
            with using(parser, what=what, where=wait_slot):
                value = fn(parser)
        except BackendError as exc:
            if is_api_spec(parser.spec):  # a model behind an API, not the parser service: no fallback button
                status.update(label=final("The model endpoint did not answer"), state="error",
                              expanded=who is not None)
                show = functools.partial(_error_box, text=plain(str(exc)))
            else:
                status.update(label=final("The parser server did not answer"), state="error",
                              expanded=who is not None)
                server = getattr(parser.backend, "url", current_server())
                server_state.record_failure(server, current_token(), exc)
                show = functools.partial(server_failure, headline=f"The parser server {server} did not answer.",
                                         reason=str(exc), key=f"server_fallback_{label[:20]}")
            outcome = Outcome(error=str(exc))
        except SearchCancelled:
            status.update(label=final("Cancelled: the model stopped"), state="error")
            return Outcome(cancelled=True)
        except ModelLoadError as exc:
            status.update(label=final("The model could not be loaded"), state="error", expanded=who is not None)
            message = _record_failure(model, exc)
            show = functools.partial(_show_failure, choice=model, message=message)
            outcome = Outcome(error=message)
        except AmpError as exc:
            status.update(label=final("That did not work"), state="error", expanded=who is not None)
            show = functools.partial(_error_box, text=describe_error(exc))
            outcome = Outcome(error=str(exc) or type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - show, do not crash the page
            message = f"Unexpected error from the model: {type(exc).__name__}: {exc}"
            status.update(label=final("That did not work"), state="error", expanded=who is not None)
            show = functools.partial(_error_box, text=plain(message))
            outcome = Outcome(error=message)
        else:
            status.update(label=f"{who + ' done' if who else 'Done'} · {describe(parser)}", state="complete")
            return Outcome(value=value)
        if who is not None and show is not None:  # inside the opened box (the page's column says it too)
            show(st)
    if who is None and show is not None:
        show(st)
    return outcome


def _error_box(box: Any, text: str) -> None:
    box.error(text, icon=":material/error:")


def server_failure(box: Any, headline: str, reason: str, key: str) -> None:
    """The parser server cannot be used: an error box with the reason, and the way out below it."""
    box.error(f"**{plain(headline)}** {plain(reason)}", icon=":material/cloud_off:")
    box.button("Use a model in this app instead", key=key, on_click=set_server, args=("",), icon=":material/undo:")


def _show_failure(box: Any, choice: ModelChoice, message: str) -> None:
    box.error(f"**Model {plain(repr(choice.label()))} could not be loaded.** {plain(message)}", icon=":material/error:")
    if choice != current_choice():  # a page's own model (Compare's B): the sidebar's buttons do not apply
        return
    spec, tag = choice.spec, abs(hash(choice.key))
    if choice.dtype:
        box.button("Use the exact precision instead", key=f"exact_{tag}", on_click=set_dtype,
                   args=("",), icon=":material/undo:")
        return
    if spec != default_spec():
        box.button("Use the default model instead", key=f"fallback_{tag}",
                   on_click=set_spec, args=(default_spec(),), icon=":material/undo:")
    else:
        box.button("Try loading again", key=f"retry_{tag}", on_click=set_spec, args=(spec,),
                   icon=":material/refresh:")


def describe(parser: Parser) -> str:
    """``"cpu · float32"``-style summary of where the model runs (``"server http://… · cuda · bfloat16"``)."""
    try:
        return parser.describe()
    except AmpError:
        return f"{parser.device} · {parser.dtype}"


def identity(parser: Parser) -> str:
    """The model's identity string (part of every cache key)."""
    return parser.identity or parser.spec


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


__all__ = [
    "DEFAULT",
    "DTYPE_ENV_VAR",
    "DTYPE_KEY",
    "ENV_VAR",
    "ERROR_KEY",
    "SERVER_KEY",
    "SPEC_KEY",
    "TOKEN_KEY",
    "PRECISIONS",
    "PRECISION_CHOICE_KEY",
    "PRECISION_NOTE_KEY",
    "PRECISION_PICKED_KEY",
    "ModelChoice",
    "ModelLoadError",
    "Outcome",
    "attempt",
    "compute",
    "current_choice",
    "current_dtype",
    "current_server",
    "current_spec",
    "current_token",
    "default_spec",
    "describe",
    "get_parser",
    "hold_of",
    "identity",
    "load_error",
    "loaded_parser",
    "parser_for",
    "result_cache",
    "set_dtype",
    "server_failure",
    "suggestion_buttons",
    "set_server",
    "set_spec",
    "using",
]
