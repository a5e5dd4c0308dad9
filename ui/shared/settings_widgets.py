"""The settings widgets the pages share: LF format, canonical match, beams, the model's precision.

Their options and defaults are the library's (:mod:`amp.logic.vocabulary`,
:data:`amp.parser.search.settings.DEFAULT_SEARCH`) and the app's (:data:`ui.model.choice.PRECISIONS`), so
no page declares its own list or default.  ``where`` is ``st`` or a column/container; other
keywords go to the Streamlit widget as is.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from amp.logic.vocabulary import FORMATS, MODES
from amp.parser.search.settings import DEFAULT_SEARCH
from ui.model.choice import PRECISIONS

#: The most beams a page offers (a CPU-friendly cap, below :data:`amp.parser.core.limits.MAX_BEAMS`).
MAX_PAGE_BEAMS = 10
#: What the two canonicalisers mean, for a widget's help.
MODE_HELP = "logical: true logical equivalence; paper: the original (faithful) canonicaliser."
#: What the precisions mean and cost, for a widget's help (measured in README.md, "Speed on a laptop CPU").
PRECISION_HELP = ("The llama.cpp engine runs the default model's GGUF as shipped; it is the starting choice "
                  "for a GGUF on a machine without a GPU. Measured on the default model, 50 sweep items: "
                  "0.4× of float32's time, the same LF0/LF1 match on 48/50, P(LF0) within 0.06 of float32's. "
                  "int8 quantises the model's output layer (the 262,144-row matrix every decode step multiplies "
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


def precision_select(where: Any, key: str, *, default: str = "", label: str = "Precision", **options: Any) -> str:
    """A model's precision: ``""`` (exact: the device's default), ``"int8"`` or ``"bfloat16"``.

    ``default`` is the first value of the session (kept under ``key`` afterwards).  A further
    loading option of a model (an engine) gets its own widget beside this one.
    """
    st.session_state.setdefault(key, default if default in PRECISIONS else "")
    options.setdefault("help", PRECISION_HELP)
    return str(where.selectbox(label, list(PRECISIONS), key=key, format_func=PRECISIONS.__getitem__, **options))
