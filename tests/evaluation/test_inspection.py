"""amp.evaluation.inspection.inspect with a stand-in parser: beam labels, the alternative reading, divergence."""

from __future__ import annotations

from dataclasses import replace

import pytest

from amp.evaluation.inspection import inspect
from amp.evaluation.matching import match_lf
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, TokenStep

LF0 = "exists x . forall y . boy(x) AND girl(y)"
LF1 = "forall y . exists x . boy(x) AND girl(y)"
LF0_RENAMED = "exists z . forall w . girl(w) AND boy(z)"
OTHER = "exists x . boy(x)"


def _steps(tokens: str, prob: float) -> tuple[TokenStep, ...]:
    return tuple(TokenStep(token=t, token_id=ord(t), prob=prob, prob_grammar=prob) for t in tokens)


def _forced(lf: str, tokens: str, prob: float) -> ForcedScore:
    return ForcedScore(lf=lf, token_ids=tuple(ord(t) for t in tokens), tokens=tuple(tokens),
                       steps=_steps(tokens, prob), sum_logprob=-1.0, mean_logprob=-0.5,
                       sum_logprob_grammar=-1.0, min_prob=prob, min_prob_grammar=prob)


def _beam(rank: int, text: str) -> Beam:
    return Beam(rank=rank, text=text, raw_text=text, token_ids=(), tokens=(), logprob=-1.0, score=-1.0,
                finished=True, parses=True)


class StandIn:
    """The two Parser calls inspect makes: one prompt pass for beams and pair, the top beam's steps."""

    def __init__(self, beams: list[str], p_lf0: float, golds: tuple[str, str] = (LF0, LF1)) -> None:
        self.beams = beams
        self.golds = golds
        self.words: list[OwnWords] = []  # the own words each call was given
        # every token of LF0 at p, of LF1 at 1 − p: P(LF0) = p by each measure
        self.pair = PairScore(lf0=_forced(LF0, "abcd", p_lf0), lf1=_forced(LF1, "abxy", 1 - p_lf0), p_lf0=p_lf0,
                              p_lf0_total=p_lf0)

    def parse_and_score_many(self, items, *, words=NO_WORDS, **settings):  # noqa: ANN001, ANN003 — a stand-in
        assert items == [("prompt", *self.golds)]
        self.words.append(words)
        result = ParseResult(beams=tuple(_beam(i, t) for i, t in enumerate(self.beams)), constrained=True, fmt="fol")
        return [(result, self.pair)]

    def beam_steps(self, prompt, beam, *, fmt, constrained, words=NO_WORDS):  # noqa: ANN001 — a stand-in
        self.words.append(words)
        return _steps("abcz", 0.7)


@pytest.mark.parametrize(("beams", "p_lf0", "top", "alternative"), [
    ([LF0_RENAMED, LF1], 0.3, "lf0", "lf1"),
    ([LF1, LF0], 0.9, "lf1", "lf0"),
    ([OTHER, "not an LF"], 0.9, "neither", "lf0"),  # neither: the gold the model prefers by P(LF0)
    ([OTHER], 0.2, "neither", "lf1"),
    (["exists x . boy(x) AND"], 0.2, "unparseable", "lf1"),
])
def test_labels_and_alternative(beams: list[str], p_lf0: float, top: str, alternative: str) -> None:
    parser = StandIn(beams, p_lf0)
    ins = inspect(parser, "prompt", LF0, LF1)  # type: ignore[arg-type]
    assert ins.matches == tuple(match_lf(b, LF0, LF1) for b in beams)
    assert ins.predicted_match == top and ins.alternative == alternative
    alt = parser.pair.lf0 if alternative == "lf0" else parser.pair.lf1
    assert ins.alternative_lf == alt.lf and ins.alternative_steps == alt.steps
    assert ins.predicted is not None and ins.predicted.text == beams[0]
    expected = 3 if alternative == "lf0" else 2  # "abcz" leaves "abcd" at 3 and "abxy" at 2
    assert ins.divergence is not None and ins.divergence.index == expected


def test_neither_takes_the_reading_preferred_where_the_readings_part() -> None:
    """A shared token pins the paper's P(LF0) at 0.5; the tokens after the parting favour LF1."""
    parser = StandIn([OTHER], 0.5)
    shared = (TokenStep("a", ord("a"), 0.01, 0.01), TokenStep("b", ord("b"), 0.5, 0.5))
    lf0 = replace(parser.pair.lf0, steps=(*shared, *_steps("cd", 0.2)), min_prob=0.01)
    lf1 = replace(parser.pair.lf1, steps=(*shared, *_steps("xy", 0.6)), min_prob=0.01)
    parser.pair = PairScore(lf0=lf0, lf1=lf1, p_lf0=0.5, p_lf0_total=0.5)
    assert parser.pair.p_lf0_parted == pytest.approx(0.25)  # 0.2 / (0.2 + 0.6)
    ins = inspect(parser, "prompt", LF0, LF1)  # type: ignore[arg-type]
    assert ins.predicted_match == "neither" and ins.alternative == "lf1"


def test_no_beams() -> None:
    ins = inspect(StandIn([], 0.8), "prompt", LF0, LF1)  # type: ignore[arg-type]
    assert ins.matches == () and ins.predicted is None and ins.predicted_steps == ()
    assert ins.predicted_match == "unparseable" and ins.alternative == "lf0" and ins.divergence is None


def test_golds_alike_label_both_and_the_alternative_is_lf1() -> None:
    same0 = "exists x . exists y . man(x) AND boy(y)"
    same1 = "exists y . exists x . man(x) AND boy(y)"  # the same LF in logical mode, not in paper mode
    ins = inspect(StandIn([same0], 0.9, (same0, same1)), "prompt", same0, same1)  # type: ignore[arg-type]
    assert ins.predicted_match == "both" and ins.alternative == "lf1"
    paper = inspect(StandIn([same1], 0.9, (same0, same1)), "prompt", same0, same1,  # type: ignore[arg-type]
                    canonical_mode="paper")
    assert paper.predicted_match == "lf1" and paper.alternative == "lf0"


def test_own_words_reach_both_parser_calls() -> None:
    """A teacher's own words extend the grammar of the search, the pair and the top beam's steps."""
    words = OwnWords(unary=("duck",), constants=("Her",))
    plain = StandIn([LF0], 0.8)
    inspect(plain, "prompt", LF0, LF1)  # type: ignore[arg-type]
    assert plain.words == [NO_WORDS, NO_WORDS]
    own = StandIn([LF0], 0.8)
    inspect(own, "prompt", LF0, LF1, words=words)  # type: ignore[arg-type]
    assert own.words == [words, words]
