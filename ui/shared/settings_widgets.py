"""The settings widgets the pages share: LF format, canonical match, beams, the model's engine and precision.

Their options and defaults are the library's (:mod:`amp.logic.vocabulary`,
:data:`amp.parser.search.settings.DEFAULT_SEARCH`, the engine registry :mod:`amp.parser.engines`) and
the app's (:data:`ui.model.choice.PRECISIONS`), so no page declares its own list or default.  ``where`` is ``st`` or a column/container; other
keywords go to the Streamlit widget as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from amp.logic.vocabulary import FORMATS, MODES
from amp.parser import engines
from amp.parser.search.settings import DEFAULT_SEARCH
from ui.model.choice import PRECISIONS

#: The most beams a page offers (a CPU-friendly cap, below :data:`amp.parser.core.limits.MAX_BEAMS`).
MAX_PAGE_BEAMS = 10
#: What the two canonicalisers mean, for a widget's help.
MODE_HELP = "logical: true logical equivalence; paper: the original (faithful) canonicaliser."
#: What the built-in engines cost, for the Engine widget's help (measured in README.md, "The llama.cpp engine").
ENGINE_MEASURED = ("llama.cpp runs the GGUF as shipped (the default model's too); it is the starting choice for a "
                   "GGUF on a machine without a GPU. Measured on the default model, 50 sweep items: 0.4× of "
                   "float32's time, the same LF0/LF1 match on 48/50, P(LF0) within 0.06 of float32's. Offered "
                   "only for the models an engine runs; results of each engine are cached apart.")
#: What the precisions mean and cost, for a widget's help (measured in README.md, "Speed on a laptop CPU").
PRECISION_HELP = ("int8 quantises the model's output layer (the 262,144-row matrix every decode step multiplies "
                  "by) on the CPU; bfloat16 halves every weight, and is fast only on CPUs with bf16 instructions "
                  "(AVX512-BF16, AMX): 0.75× (int8) and 0.55× (bfloat16) of float32's time, P(LF0) within 0.09 "
                  "of float32's. Exact is the float32 model. Results of each are cached apart.")


def format_radio(where: Any, key: str, **options: Any) -> str:
    """``LF format``: FOL or LISP, horizontal."""
    return str(where.radio("LF format", list(FORMATS), format_func=str.upper, horizontal=True, key=key, **options))


def mode_radio(where: Any, key: str, **options: Any) -> str:
    """``Canonical match``: logical or paper, horizontal."""
    return str(where.radio("Canonical match", list(MODES), horizontal=True, key=key, **options))


def beams_input(where: Any, key: str, label: str = "Beams") -> int:
    """A beam count from 1 to :data:`MAX_PAGE_BEAMS`, the library's default first, kept for the session."""
    return int(where.number_input(label, 1, MAX_PAGE_BEAMS, DEFAULT_SEARCH.beams, key=key,
                                  persist_state="session"))


def _kept(key: str, choices: Sequence[str], default: str) -> None:
    """Keep the widget ``key`` on one of ``choices``: its value, else ``default``, else the first."""
    if st.session_state.get(key) not in choices:
        st.session_state[key] = default if default in choices else choices[0]


def engine_help(choices: Sequence[str]) -> str:
    """The Engine widget's help: each offered engine in its registry words, then what they cost."""
    return " ".join(f"{name}: {engines.engine_entry(name).summary}." for name in choices) + " " + ENGINE_MEASURED


def engine_select(where: Any, key: str, *, choices: Sequence[str], default: str, label: str = "Engine",
                  **options: Any) -> str:
    """What runs a model: one of ``choices`` (:mod:`amp.parser.engines` names; the engines that run it).

    ``default`` is the first value of the session, and the value whenever the kept one is not among
    ``choices`` (the model changed to one that engine does not run)."""
    _kept(key, choices, default)
    options.setdefault("help", engine_help(choices))
    return str(where.selectbox(label, list(choices), key=key, **options))


def precision_select(where: Any, key: str, *, choices: Sequence[str] = tuple(PRECISIONS), default: str = "",
                     label: str = "Precision", **options: Any) -> str:
    """A model's precision among ``choices`` (the engine's, :func:`ui.model.choice.precisions_of`):
    ``""`` (exact: the device's default), ``"int8"`` or ``"bfloat16"``.

    ``default`` is the first value of the session (kept under ``key`` afterwards, while it is one of
    ``choices``).  A page shows it only where the engine has precisions."""
    _kept(key, choices, default)
    options.setdefault("help", PRECISION_HELP)
    return str(where.selectbox(label, list(choices), key=key, format_func=PRECISIONS.__getitem__, **options))
