"""AmP Explorer library: ambiguity in semantic parsing with language models.

The layers, each a sub-package, depend one way (``docs/architecture.md``)::

    data → logic → prompts → parser → evaluation → reporting → teaching

The few names a user needs are imported here (``import amp`` stays cheap: it never imports
torch, transformers, pandas or plotly):

- data: ``pool``, ``pairs``, ``sample_pairs``, ``generate_examples`` (= :func:`amp.data.generate.generate`),
  ``AMBIGUOUS_TYPES``;
- logic: ``parse_lf``, ``render_fol``, ``render_lisp``, ``convert``, ``canonical``;
- prompts: ``zero_shot_prompt``, ``mixed_prompt``, ``Prompt``;
- parser: ``Parser``, ``load_model``;
- metrics: ``zm_k``, ``fdm``, ``fim``, ``p_lf0``.

No Streamlit import anywhere in this package.
"""

from __future__ import annotations

from amp.data.generate import AMBIGUOUS_TYPES, pairs, pool, sample_pairs
from amp.data.generate import generate as generate_examples
from amp.evaluation.metrics import fdm, fim, p_lf0, zm_k
from amp.logic.canonical import canonical
from amp.logic.convert import convert
from amp.logic.reader import parse_lf
from amp.logic.render import render_fol, render_lisp
from amp.parser.models.registry import load_model
from amp.parser.parser import Parser
from amp.prompts import Prompt, mixed_prompt, zero_shot_prompt

__all__ = [
    "AMBIGUOUS_TYPES",
    "Parser",
    "Prompt",
    "canonical",
    "convert",
    "fdm",
    "fim",
    "generate_examples",
    "load_model",
    "mixed_prompt",
    "p_lf0",
    "pairs",
    "parse_lf",
    "pool",
    "render_fol",
    "render_lisp",
    "sample_pairs",
    "zero_shot_prompt",
    "zm_k",
]
