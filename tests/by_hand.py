"""Expectations computed by hand, for tests that must not take them from the code they test."""

from __future__ import annotations

from pathlib import Path


def parted_p_lf0(model: Path, prompt_text: str, lf0: str, lf1: str) -> float:
    """P(LF0) where the readings part (docs/paper-notes.md §12.1), from the two forced decodes'
    token ids and probabilities on ``model`` — not from :attr:`PairScore.p_lf0_parted` nor any page:
    the minimum probability of each reading from the first token where the two differ, normalised."""
    from amp.parser import Parser

    score = Parser(str(model), device="cpu", cache=False).score_pair(prompt_text, lf0, lf1)
    a, b = score.lf0.steps, score.lf1.steps
    d = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x.token_id != y.token_id)
    m0, m1 = min(s.prob for s in a[d:]), min(s.prob for s in b[d:])
    return m0 / (m0 + m1)
