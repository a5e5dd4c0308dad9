"""Counting a forced scoring's model passes (``tests/parser/test_forced_memory.py``, ``tests/serve/test_every_endpoint_stops.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from amp.parser.search import prefix


def count_scoring_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap :func:`amp.parser.search.prefix.forward` so that each scoring pass appends its rows (the
    batch size of its ``input_ids``) to the list returned; a prompt's prefill (it keeps one logit) is
    not counted."""
    passes: list[int] = []
    forward = prefix.forward

    def counted(*args: Any, **kw: Any) -> Any:
        if "logits_to_keep" not in kw:  # a scoring pass (the prompt's prefill keeps one logit)
            passes.append(kw["input_ids"].shape[0])
        return forward(*args, **kw)

    monkeypatch.setattr(prefix, "forward", counted)
    return passes
