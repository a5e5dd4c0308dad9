"""``paper`` mode canonicalisation grows linearly with the LF (issue #27 item 11).

The original's flatten step merges one same-operator edge per pass over every edge, so a long
conjunction cost quadratic work (``man(x) AND`` × 2,000: 7.6 s; × 20,000 did not finish in two
minutes).  Counted, not timed: ten times the conjuncts must cost about ten times the node-name
look-ups (``_base``), and the 20,000-conjunct LF gets its canonical string.  The verdicts stay
the original's: ``test_paper_differential`` compares with an independent transcription, and the
test below compares nested and mixed trees with it too.
"""

from __future__ import annotations

import random

import pytest

from amp.logic import original
from tests.logic.test_paper_differential import Fail, oracle


def conjunction(n: int) -> str:
    return "exists x . " + " AND ".join(["man(x)"] * n)


def base_calls(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[int, str]:
    calls = [0]
    real = original._base

    def counted(name: str) -> str:
        calls[0] += 1
        return real(name)

    monkeypatch.setattr(original, "_base", counted)
    original.original_canonical.cache_clear()
    try:
        out = original.original_canonical(text, "fol")
    finally:
        monkeypatch.setattr(original, "_base", real)
    return calls[0], out


def test_ten_times_the_conjuncts_cost_about_ten_times_the_work(monkeypatch):
    small, out_small = base_calls(monkeypatch, conjunction(2_000))
    large, out_large = base_calls(monkeypatch, conjunction(20_000))
    assert out_small == "exists v0 . " + " AND ".join(["man(v0)"] * 2_000)
    assert out_large == "exists v0 . " + " AND ".join(["man(v0)"] * 20_000)
    assert large <= 12 * small, (small, large)  # quadratic work would be ×100


def _random_body(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        pred = rng.choice(["man", "girl", "saw", "tall"])
        return f"{pred}({rng.choice(['x', 'y', 'z'])})"
    op = rng.choice(["AND", "OR"])
    parts = [_random_body(rng, depth - 1) for _ in range(rng.randint(2, 4))]
    joined = f" {op} ".join(parts)
    return f"( {joined} )" if rng.random() < 0.6 else joined


def test_nested_and_mixed_trees_give_the_transcription_s_string():
    rng = random.Random(27)
    compared = 0
    for _ in range(400):
        lf = "exists x . forall y . exists z . " + _random_body(rng, 4)
        try:
            expected = oracle(lf)
        except Fail:
            expected = None
        try:
            got = original.original_canonical(lf, "fol")
        except original.OriginalError:
            got = None
        assert got == expected, lf
        compared += expected is not None
    assert compared > 200
