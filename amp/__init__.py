"""AmP Explorer library: ambiguity in semantic parsing with language models.

The few names a user needs are available here (imported lazily, so ``import amp`` stays cheap
and never imports torch):

- data: ``pool``, ``pairs``, ``sample_pairs``, ``generate_examples`` (= :func:`amp.generate.generate`;
  the module :mod:`amp.generate` keeps its name), ``AMBIGUOUS_TYPES``;
- logic: ``parse_lf``, ``render_fol``, ``render_lisp``, ``convert``, ``canonical``;
- prompts: ``zero_shot_prompt``, ``mixed_prompt``, ``Prompt``;
- parser: ``Parser``, ``load_model``;
- metrics: ``zm_k``, ``fdm``, ``fim``, ``p_lf0``.

No Streamlit import anywhere in this package.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, tuple[str, str]] = {
    "AMBIGUOUS_TYPES": ("amp.generate", "AMBIGUOUS_TYPES"),
    "pool": ("amp.generate", "pool"),
    "pairs": ("amp.generate", "pairs"),
    "sample_pairs": ("amp.generate", "sample_pairs"),
    "generate_examples": ("amp.generate", "generate"),
    "parse_lf": ("amp.logic.parse", "parse_lf"),
    "render_fol": ("amp.logic.render", "render_fol"),
    "render_lisp": ("amp.logic.render", "render_lisp"),
    "convert": ("amp.logic.convert", "convert"),
    "canonical": ("amp.logic.canonical", "canonical"),
    "zero_shot_prompt": ("amp.prompts", "zero_shot_prompt"),
    "mixed_prompt": ("amp.prompts", "mixed_prompt"),
    "Prompt": ("amp.prompts", "Prompt"),
    "Parser": ("amp.parser.parser", "Parser"),
    "load_model": ("amp.parser.models", "load_model"),
    "zm_k": ("amp.metrics", "zm_k"),
    "fdm": ("amp.metrics", "fdm"),
    "fim": ("amp.metrics", "fim"),
    "p_lf0": ("amp.metrics", "p_lf0"),
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'amp' has no attribute {name!r}") from None
    return getattr(importlib.import_module(module_name), attr)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
