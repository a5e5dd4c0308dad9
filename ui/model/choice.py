"""The session's choice of model: which spec, on which engine, in which precision, through which parser server.

* **Which model.**  ``st.session_state["model_spec"]`` holds the spec the sidebar picked:
  ``"default"`` (the embedded Gemma 3 270M), a Hugging Face id, a local folder or a ``.gguf``
  file, or ``openai:<name>`` — a model behind an API, asked as the sidebar's "Model behind an API"
  says (:mod:`ui.model.api`).  Its initial value is :func:`default_spec`: the environment variable
  ``AMP_MODEL`` if set, else ``"default"``.  That variable is the test hook: the AppTest suite points
  it at a tiny local GPT-2 (``tests/app/conftest.py``) so that pages run the real code path without
  the 270M model; the browser tests run the default model (or ``$AMP_E2E_MODEL``).
* **Engine and precision.**  ``st.session_state["model_engine"]`` names the engine that runs a
  local model (:mod:`amp.parser.engines`: ``transformers``, ``llama.cpp``, or any registered one);
  ``st.session_state["model_dtype"]`` its precision where the engine offers precisions
  (:func:`precisions_of`): ``""`` (the device's default: float32 on the CPU, the exact path),
  ``"int8"`` (the opt-in CPU path with an int8 output layer, :mod:`amp.parser.models.quantize`) or
  ``"bfloat16"`` (fast on CPUs with bf16 instructions); the last two are faster, their results
  differ slightly and are cached apart.  llama.cpp offers none: it runs the GGUF as shipped (cached
  apart too).  The sidebar offers only the engines that run the model (:func:`engines_of`:
  llama.cpp for a GGUF).  The initial engine is ``$AMP_ENGINE``, else the default rule
  (:func:`amp.parser.engines.default_engine`: llama.cpp for a GGUF, the default model included, on
  a machine without a GPU and no precision asked; transformers otherwise); the initial precision
  ``$AMP_MODEL_DTYPE``.  Until the user picks either (or the environment names one) the choice
  follows the model: a switch of model applies the rule to the new one.  A picked choice stays,
  except an engine that does not run the new model: that one moves to one that does (transformers,
  in the exact precision) and the sidebar says why (:data:`ENGINE_NOTE_KEY`).
* **Failures.**  A model (spec, engine and precision, a :class:`ModelChoice`) that fails to load is
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
from amp.parser import engines
from amp.parser.backends.api_protocol import is_api_spec
from amp.parser.core.errors import UnknownEngine
from ui.model import server as server_state

#: session_state key: the model spec the user picked.
SPEC_KEY = "model_spec"
#: session_state key: {(spec, engine, precision): error message} of models that failed to load in this session.
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
#: session_state key of the engine (a name of :mod:`amp.parser.engines`) and of the sidebar's select.
ENGINE_KEY = "model_engine"
ENGINE_CHOICE_KEY = "engine_choice"
#: session_state key of the precision ("" = the device's default, else a dtype of PRECISIONS) and its env var.
DTYPE_KEY = "model_dtype"
DTYPE_ENV_VAR = "AMP_MODEL_DTYPE"
#: session_state key of the sidebar's precision selectbox.
PRECISION_CHOICE_KEY = "precision_choice"
#: session_state key: True once the engine or the precision was chosen (by the user, or by the
#: environment); until then a switch of model applies the default rule to the new model.
PICKED_KEY = "model_picked"
#: session_state key: why the engine moved off the one chosen (shown under the choice), if it did.
ENGINE_NOTE_KEY = "engine_note"
#: The precisions the app offers on an engine that has precisions (:func:`precisions_of`), and their
#: names, short enough for the sidebar (what they mean and cost: :data:`ui.shared.settings_widgets.PRECISION_HELP`).
PRECISIONS = {"": "Exact (float32)", "int8": "int8 output layer", "bfloat16": "bfloat16"}
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
    _choice_follows(spec)


# -- engine and precision ---------------------------------------------------------------------------------


def precisions_of(engine: str) -> tuple[str, ...]:
    """The precisions of :data:`PRECISIONS` the app offers on ``engine`` (none where it computes in
    the model file's own precision: llama.cpp)."""
    offered = engines.capabilities(engine).precisions
    return tuple(p for p in PRECISIONS if p == "" or p in offered) if offered else ()


def engines_of(spec: str) -> tuple[str, ...]:
    """The engines the app offers for ``spec``: the installed ones that run it (llama.cpp: a GGUF)."""
    return engines.engines_for(spec) or (engines.DEFAULT_ENGINE,)


def _env_dtype() -> str:
    value = os.environ.get(DTYPE_ENV_VAR, "").strip().lower()
    return value if value in PRECISIONS else ""


def _rule(spec: str) -> tuple[str, str, bool]:
    """``(engine, precision, chosen)`` a session starts in for ``spec``: ``$AMP_ENGINE`` and
    ``$AMP_MODEL_DTYPE`` (chosen, when either is set), else the default rule for the model
    (:func:`amp.parser.engines.default_engine`: llama.cpp for a GGUF on the CPU; not chosen).
    An unknown ``$AMP_ENGINE`` is said under the choice (:data:`ENGINE_NOTE_KEY`), and the rule applies."""
    dtype = _env_dtype()
    try:
        named = engines.env_engine()
    except UnknownEngine as exc:
        named = None
        st.session_state[ENGINE_NOTE_KEY] = f"{exc} (from ${engines.ENGINE_ENV})."
    if named:
        engine = named
    elif is_api_spec(spec):
        engine = engines.DEFAULT_ENGINE  # (a model behind an API has no engine here; the next local one gets the rule)
    else:
        engine = engines.default_engine(spec, dtype=dtype or None)
    return engine, dtype if dtype in precisions_of(engine) else "", bool(named or dtype)


def _store(engine: str, dtype: str) -> None:
    """Set the session's engine and precision, and the sidebar's widgets with them (in callbacks)."""
    st.session_state[ENGINE_KEY] = st.session_state[ENGINE_CHOICE_KEY] = engine
    st.session_state[DTYPE_KEY] = st.session_state[PRECISION_CHOICE_KEY] = dtype


def _choice_follows(spec: str) -> None:
    """After a switch to ``spec``: the engine and precision the rule gives it while none was chosen;
    a chosen engine that does not run ``spec`` moves to one that does, in the exact precision, with a
    note (:data:`ENGINE_NOTE_KEY`) saying why; else the choice stays."""
    st.session_state.pop(ENGINE_NOTE_KEY, None)
    if is_api_spec(spec):
        return  # a model behind an API has no engine here: the local choice waits for the next local model
    engine = current_engine()
    if not st.session_state.get(PICKED_KEY):
        _store(*_rule(spec)[:2])
    elif engine not in engines_of(spec):
        able = engines_of(spec)
        new = engines.DEFAULT_ENGINE if engines.DEFAULT_ENGINE in able else able[0]
        _store(new, "")
        exact = " in the exact precision" if precisions_of(new) else ""
        entry = engines.engine_entry(engine)
        why = f"{engine} runs {entry.models} only" if entry.installed() else f"{engine} is not installed here"
        st.session_state[ENGINE_NOTE_KEY] = f"{why}: this model runs on {new}{exact}."


def _start() -> None:
    """The session's first engine and precision (:func:`_rule`), moved as :func:`_choice_follows` says."""
    if ENGINE_KEY in st.session_state:
        return
    spec = current_spec()
    engine, dtype, picked = _rule(spec)
    st.session_state[ENGINE_KEY], st.session_state[DTYPE_KEY] = engine, dtype
    st.session_state.setdefault(PICKED_KEY, picked)
    if not is_api_spec(spec) and engine not in engines_of(spec):
        _choice_follows(spec)


def current_engine() -> str:
    """The engine this session's local model runs on (a name of :mod:`amp.parser.engines`)."""
    _start()
    engine = str(st.session_state[ENGINE_KEY])
    return engine if engine in engines.engine_names() else engines.DEFAULT_ENGINE


def current_dtype() -> str:
    """The precision this session uses: ``""`` (the device's default), ``"int8"`` or ``"bfloat16"``;
    ``""`` on an engine that offers none."""
    _start()
    value = st.session_state[DTYPE_KEY]
    return value if value in precisions_of(current_engine()) else ""


def _forget_failure() -> None:
    st.session_state.setdefault(ERROR_KEY, {}).pop(current_choice().key, None)


def set_engine(engine: str) -> None:
    """Switch this session's engine (the user's pick; a precision it does not offer becomes ``""``),
    and forget the current spec's failure on it, to allow a retry."""
    engine = engine if engine in engines.engine_names() else engines.DEFAULT_ENGINE
    dtype = st.session_state.get(DTYPE_KEY, "")
    _store(engine, dtype if dtype in precisions_of(engine) else "")
    _picked()


def set_dtype(dtype: str) -> None:
    """Switch this session's precision (and forget the current spec's failure in it, to allow a retry)."""
    _store(current_engine(), dtype if dtype in precisions_of(current_engine()) else "")
    _picked()


def use_exact() -> None:
    """The exact path: the default engine (transformers) in float32 (a failure's way out)."""
    _store(engines.DEFAULT_ENGINE, "")
    _picked()


def _picked() -> None:
    _forget_failure()
    st.session_state[PICKED_KEY] = True
    st.session_state.pop(ENGINE_NOTE_KEY, None)


@dataclass(frozen=True)
class ModelChoice:
    """A model as the app loads it: its spec, the engine that runs it and its precision (``""``: the
    device's default, and the only one of an engine that offers none).

    The sidebar's is :func:`current_choice`; a page with a model of its own (Compare's model B)
    builds one from its widgets (:func:`ui.shared.settings_widgets.engine_select` and
    :func:`~ui.shared.settings_widgets.precision_select`).
    """

    spec: str = DEFAULT
    engine: str = engines.DEFAULT_ENGINE
    dtype: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """Its key in :data:`ERROR_KEY` and in the set of created parsers: the whole choice."""
        return self.spec, self.engine, self.dtype

    def label(self) -> str:
        """``"spec"``, with the engine when it is not the default one and the precision when it is
        not the exact one (``"spec · int8"``, ``"spec · llama.cpp"``); a model behind an API is its spec."""
        if is_api_spec(self.spec):
            return self.spec
        engine = [self.engine] if self.engine != engines.DEFAULT_ENGINE else []
        return " · ".join([self.spec, *engine, *([self.dtype] if self.dtype else [])])

    def how(self) -> str:
        """How it runs, in words: ``"transformers · int8 output layer"``, ``"llama.cpp"``."""
        return " · ".join([self.engine, *([PRECISIONS[self.dtype]] if precisions_of(self.engine) else [])])


def current_choice() -> ModelChoice:
    """The sidebar's model: :func:`current_spec` on :func:`current_engine` in :func:`current_dtype`."""
    return ModelChoice(current_spec(), current_engine(), current_dtype())


def load_error(spec: str | None = None) -> str | None:
    """The message of a failed load of ``spec`` (default: the sidebar's) on the sidebar's engine and
    precision in this session."""
    key = ModelChoice(spec or current_spec(), current_engine(), current_dtype()).key
    return st.session_state.get(ERROR_KEY, {}).get(key)


def record_failure(choice: ModelChoice, exc: BaseException) -> str:
    """Mark ``choice`` failed for this session; its message."""
    message = str(exc) if isinstance(exc, AmpError) else f"{type(exc).__name__}: {exc}"
    st.session_state.setdefault(ERROR_KEY, {})[choice.key] = message
    return message
