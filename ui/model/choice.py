"""The session's choice of model: which spec, in which precision, through which parser server.

* **Which model.**  ``st.session_state["model_spec"]`` holds the spec the sidebar picked:
  ``"default"`` (the embedded Gemma 3 270M), a Hugging Face id, a local folder or a ``.gguf``
  file, or ``openai:<name>`` — a model behind an API, asked as the sidebar's "Model behind an API"
  says (:mod:`ui.model.api`).  Its initial value is :func:`default_spec`: the environment variable
  ``AMP_MODEL`` if set, else ``"default"``.  That variable is the test hook: the AppTest suite points
  it at a tiny local GPT-2 (``tests/app/conftest.py``) so that pages run the real code path without
  the 270M model; the browser tests run the default model (or ``$AMP_E2E_MODEL``).
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
  remembered for the session with its message (:data:`ERROR_KEY`, :func:`record_failure`); pages
  show it with ``st.error`` and offer to go back to the default (:mod:`ui.model.notices`); the
  picker stays usable.

The parsers these choices name, shared by every session of the process, are :mod:`ui.model.parsers`'.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from amp.errors import AmpError
from amp.parser.backends.api_protocol import is_api_spec
from amp.parser.models.spec import ENGINE_ENV, Engine, default_engine, is_gguf_model
from ui.model import server as server_state

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
    one more widget beside the precision (:func:`ui.shared.settings_widgets.precision_select`).
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


def record_failure(choice: ModelChoice, exc: BaseException) -> str:
    """Mark ``choice`` failed for this session; its message."""
    message = str(exc) if isinstance(exc, AmpError) else f"{type(exc).__name__}: {exc}"
    st.session_state.setdefault(ERROR_KEY, {})[choice.key] = message
    return message
