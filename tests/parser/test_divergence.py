"""Divergence of two LFs' token sequences (paper Figure 4)."""

from __future__ import annotations

import json
import math
from typing import Any

from parser_lm_helpers import simple_prompt

from amp.parser.core.results import Divergence, TokenStep
from amp.parser.search.divergence import divergence
from amp.parser.search.scoring import forced_score

SCOPE_LF0 = "exists x . forall y . exists a . cat(y) AND cup(x) AND held(a) AND agent(a, y) AND patient(a, x)"
SCOPE_LF1 = "forall x . exists y . exists a . cat(x) AND cup(y) AND held(a) AND agent(a, x) AND patient(a, y)"
PP_LF0 = ("exists x . exists a . exists e . camera(x) AND saw(a) AND agent(a, Galileo) AND "
          "patient(a, Mary) AND have(e) AND agent(e, Mary) AND patient(e, x)")
PP_LF1 = ("exists x . exists a . camera(x) AND saw(a) AND agent(a, Galileo) AND patient(a, Mary) AND "
          "instrument(a, x)")


def _step(token: str, tid: int, p: float = 0.5) -> TokenStep:
    return TokenStep(token=token, token_id=tid, prob=p, prob_grammar=min(1.0, 2 * p))


def test_scope_lfs_diverge_at_the_first_quantifier(tiny_lm: Any) -> None:
    f0, f1 = forced_score(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("every cat held a cup"),
                          [SCOPE_LF0, SCOPE_LF1])
    d = divergence(f0.steps, f1.steps)
    assert d.index == 0 and d.char_offset == 0
    assert d.token_a.strip() == "exists" and d.token_b.strip() == "forall"
    assert d.prob_a == f0.steps[0].prob and d.prob_b == f1.steps[0].prob
    assert d.prob_a_grammar == f0.steps[0].prob_grammar
    assert d.window_start == 0 and d.window_a == tuple(s.prob for s in f0.steps[:4])
    assert d.prob_a + d.prob_b <= 1 + 1e-9


def test_pp_lfs_diverge_where_the_ids_first_differ(tiny_lm: Any) -> None:
    f0, f1 = forced_score(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("Galileo saw Mary with the camera"),
                          [PP_LF0, PP_LF1])
    d = divergence(f0.steps, f1.steps, window=2)
    first = next(i for i, (a, b) in enumerate(zip(f0.token_ids, f1.token_ids, strict=False)) if a != b)
    assert d.index == first > 0
    common = "".join(f0.tokens[:first])
    assert d.char_offset == len(common) - 1
    assert PP_LF0[: d.char_offset] == PP_LF1[: d.char_offset]
    assert PP_LF0[d.char_offset :].startswith(d.token_a)
    assert PP_LF1[d.char_offset :].startswith(d.token_b)
    assert d.window_start == first - 2
    assert len(d.window_a) == 5 and len(d.window_b) == 5
    assert d.window_a[2] == d.prob_a and d.window_b[2] == d.prob_b


def test_identical_and_prefix_sequences() -> None:
    a = [_step(" exists", 1), _step(" x", 2), _step("\n", 3)]
    same = divergence(a, list(a))
    assert same.index is None and same.char_offset is None and same.window_a == ()
    shorter = divergence(a, a[:2])
    assert shorter.index == 2 and shorter.token_b is None and shorter.prob_b is None
    assert shorter.token_a == "\n" and shorter.char_offset == len(" exists x") - 1


def test_divergence_json_round_trip() -> None:
    a = [_step(" exists", 1, 0.9), _step(" x", 2, math.nan)]
    b = [_step(" exists", 1, 0.9), _step(" y", 4, 0.1)]
    d = divergence(a, b)
    back = Divergence.from_dict(json.loads(json.dumps(d.to_dict(), allow_nan=False)))
    assert back.index == 1 and back.token_b == " y" and math.isnan(back.prob_a)
    assert back.window_b == d.window_b
    none = divergence(a, a)
    assert Divergence.from_dict(json.loads(json.dumps(none.to_dict()))) == none
