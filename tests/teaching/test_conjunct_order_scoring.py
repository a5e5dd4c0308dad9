"""Issue #40 point 1, done when: the order a teacher typed the conjuncts in does not change the
explorer's P(LF0) (docs/paper-notes.md §16, "Conjunct order").  An own sentence's readings are
scored in the pools' conjunct order, its sentence deciding the ties, so both orders of the
chicken's LF1 — and shuffled, renamed pool readings — are the same tokens and the same P(LF0).
A tiny model stands in for the default one (the claim is about what is scored)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.data.generate import pairs
from amp.logic.reader import parse_lf
from amp.logic.render import render_fol
from amp.parser.parser import Parser
from amp.teaching.own_sentences import OwnSentence
from tests.logic.test_conjunct_order import respelled

CHICKEN = "the chicken is ready to eat"
LF0 = ("exists v . exists w . eat(v) AND agent(v, w) AND chicken(w) AND ready(w)",
       "exists v . exists w . ready(w) AND agent(v, w) AND chicken(w) AND eat(v)")
LF1 = ("exists v . exists w . eat(v) AND patient(v, w) AND chicken(w) AND ready(w)",
       "exists v . exists w . chicken(w) AND ready(w) AND eat(v) AND patient(v, w)")


def _p_lf0(parser: Parser, own: OwnSentence) -> float:
    prompt = own.prompt("mixed", k=2)
    return parser.score_pair(prompt.render(), *own.readings, words=prompt.words).p_lf0


def test_the_chickens_p_lf0_is_the_same_for_both_conjunct_orders(saved_tiny_model: Path, tmp_path: Path) -> None:
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))
    owns = [OwnSentence(CHICKEN, lf0, lf1, "the chicken will eat", "someone will eat the chicken")
            for lf0, lf1 in ((LF0[0], LF1[0]), (LF0[1], LF1[1]), (LF0[0], LF1[1]))]
    assert {own.readings for own in owns} == {(
        "exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND agent(a, x)",
        "exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND patient(a, x)")}
    scores = [_p_lf0(parser, own) for own in owns]
    assert scores[0] == scores[1] == scores[2]
    # Scored as typed, the two orders are other tokens with another P(LF0): the reordering matters.
    prompt = owns[0].prompt("mixed", k=2)
    lf0 = "exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND agent(a, x)"
    as_typed = ("exists x . exists a . eat(a) AND patient(a, x) AND chicken(x) AND ready(x)",  # LF1's orders,
                "exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND patient(a, x)")  # the convention's letters
    literal = [parser.score_pair(prompt.render(), lf0, lf1, words=prompt.words).p_lf0 for lf1 in as_typed]
    assert literal[0] != literal[1]


def test_shuffled_renamed_pool_readings_score_as_the_pools(saved_tiny_model: Path, tmp_path: Path) -> None:
    """A seeded pool pair of each ambiguous type, its readings respelled (junction children
    shuffled, variables renamed, same-kind quantifiers reordered) and typed as an own sentence:
    its readings are the pool's LFs and its P(LF0) is the pool spelling's."""
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))
    rng = random.Random(40)
    for kind in ("pp", "scope", "revscope", "bound", "conj"):
        pair = rng.choice(pairs(kind))
        typed = [render_fol(respelled(parse_lf(r.lf), rng)) for r in (pair.lf0, pair.lf1)]
        as_pool = OwnSentence(pair.surface, pair.lf0.lf, pair.lf1.lf, "reading 0", "reading 1", type=kind)
        as_typed = OwnSentence(pair.surface, *typed, "reading 0", "reading 1", type=kind)
        assert as_typed.readings == as_pool.readings == (pair.lf0.lf, pair.lf1.lf), typed
        assert _p_lf0(parser, as_typed) == _p_lf0(parser, as_pool)


@pytest.mark.slow
def test_on_the_default_model_the_chicken_is_one_p_lf0_decided_where_the_readings_part() -> None:
    """The issue's case on the model it was seen with (the default model on llama.cpp, the app's
    engine on a CPU; the own sentence's default mixed prompt): both orders of LF1 are one rendered LF and one P(LF0), and the
    verdict decides by P(LF0) where the readings part and names it; when the paper's min-token P(LF0)
    is pinned by a token both readings share, the verdict says so instead of "undecided"."""
    from amp.evaluation.p_lf0_measures import PLf0Measure
    from amp.evaluation.verdict import Preference, score_verdict
    from amp.parser.engines import LLAMA_CPP

    parser = Parser(engine=LLAMA_CPP, cache=False)
    owns = [OwnSentence(CHICKEN, LF0[0], lf1, "the chicken will eat", "someone will eat the chicken") for lf1 in LF1]
    assert owns[0].readings == owns[1].readings
    prompt = owns[0].prompt("mixed")
    score = parser.score_pair(prompt.render(), *owns[0].readings, words=prompt.words)
    again = parser.score_pair(owns[1].prompt("mixed").render(), *owns[1].readings, words=prompt.words)
    assert again.p_lf0_parted == score.p_lf0_parted and again.p_lf0 == score.p_lf0
    told = score_verdict(None, score)
    assert told.measure is PLf0Measure.PARTED and "where the readings part" in told.scores_text
    if score.shared_minimum is not None:  # the paper's measure is pinned at 0.50 by a shared token
        assert score.p_lf0 == 0.5 and "which they share" in told.scores_text
    assert told.preference is not Preference.UNAVAILABLE
