"""The verdict's wording (issue #26 point 5): what the model wrote, then what it scores."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest

from amp.evaluation.matching import Match
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.evaluation.sweep_run import RECORD_COLUMNS
from amp.evaluation.verdict import (
    MODEL_P_LF0_HOW,
    PAPER_P_LF0_HOW,
    UNDECIDED_BAND,
    Preference,
    preference,
    preferred_index,
    score_verdict,
    scores_sentence,
    verdict,
    wrote_sentence,
)
from amp.parser.core.results import ForcedScore, PairScore, TokenStep, min_prob_ratio

NAMES = ("she ducked", "her bird")
TEXTS = ("I saw her lower her head", "I saw the duck that she owns")


@pytest.mark.parametrize(("p", "pref"), [
    (0.5, Preference.UNDECIDED),
    (0.5 + UNDECIDED_BAND, Preference.UNDECIDED),  # the band's edges are undecided
    (0.5 - UNDECIDED_BAND, Preference.UNDECIDED),
    (0.56, Preference.LF0),
    (0.44, Preference.LF1),
    (1.0, Preference.LF0),
    (0.0, Preference.LF1),
    (None, Preference.UNAVAILABLE),
])
def test_preference_has_an_undecided_band_around_one_half(p: float | None, pref: Preference) -> None:
    assert preference(p) is pref
    assert preferred_index(p) == {Preference.LF0: 0, Preference.LF1: 1}.get(pref)


def test_neither_reading_is_said_in_words_and_never_as_a_reading() -> None:
    v = verdict(Match.NEITHER, 0.8, names=NAMES, paraphrases=TEXTS)
    assert v.wrote_text == "The model wrote neither reading: its parse is a different formula from both LFs."
    assert v.wrote_index is None
    assert not any(t in v.wrote_text for t in TEXTS)  # the score does not speak for the parse
    assert v.scores_text == "Forced to write each reading, it scores LF0 (she ducked) higher: P(LF0) = 0.80."
    assert v.text == f"{v.wrote_text} {v.scores_text}"


def test_a_parse_that_is_a_reading_is_named_with_its_paraphrase() -> None:
    v = verdict("lf1", 0.3, names=NAMES, paraphrases=TEXTS)
    assert v.wrote is Match.LF1 and v.wrote_index == 1
    assert v.wrote_text == "The model wrote LF1 (her bird): “I saw the duck that she owns”."
    assert v.scores_text == "Forced to write each reading, it scores LF1 (her bird) higher: P(LF0) = 0.30."


def test_the_parse_and_the_score_may_disagree_and_both_are_said() -> None:
    v = verdict("lf0", 0.2)
    assert v.wrote_text == "The model wrote LF0."
    assert v.scores_text == "Forced to write each reading, it scores LF1 higher: P(LF0) = 0.20."


def test_undecided_at_one_half() -> None:
    v = verdict("lf0", 0.5, names=NAMES)
    assert v.preference is Preference.UNDECIDED
    assert v.scores_text == "Forced to write each reading, it is undecided: P(LF0) = 0.50 is within 0.05 of 0.5."
    assert "LF0 (she ducked) higher" not in v.text


@pytest.mark.parametrize(("match", "text"), [
    ("both", "The model wrote a parse that is both readings (the two LFs mean the same)."),
    ("unparseable", "The model wrote neither reading: its parse is not even a logical form (it does not read as one)."),
    (None, "The model's own parse was not run here, so only its scores are known."),
])
def test_other_parses(match: str | None, text: str) -> None:
    assert wrote_sentence(match) == text


def test_no_score() -> None:
    assert scores_sentence(None) == "Its score for the two readings (P(LF0)) is unavailable."
    assert verdict(None, None).preference is Preference.UNAVAILABLE


def test_an_unknown_match_label_is_refused() -> None:
    with pytest.raises(ValueError):
        verdict("lf2", 0.5)


# -- the verdict from a pair's forced scores (issue #40 point 2) ------------------------------------


def _forced(steps: list[tuple[str, int, float]]) -> ForcedScore:
    probs = [p for _, _, p in steps]
    total = sum(math.log(p) if p > 0 else -math.inf for p in probs)
    return ForcedScore(lf="".join(t for t, _, _ in steps), token_ids=tuple(i for _, i, _ in steps),
                       tokens=tuple(t for t, _, _ in steps),
                       steps=tuple(TokenStep(token=t, token_id=i, prob=p, prob_grammar=p) for t, i, p in steps),
                       sum_logprob=total, mean_logprob=total / len(steps), sum_logprob_grammar=total,
                       min_prob=min(probs), min_prob_grammar=min(probs))


def _pair(lf0: list[tuple[str, int, float]], lf1: list[tuple[str, int, float]]) -> PairScore:
    f0, f1 = _forced(lf0), _forced(lf1)
    return PairScore(lf0=f0, lf1=f1, p_lf0=min_prob_ratio(f0.min_prob, f1.min_prob), p_lf0_total=0.5)


#: Both readings' least likely token is the shared new word " chicken" (p 0.0018 in both).
HEAD = [(" exists", 1, 0.9), (" chicken", 2, 0.0018), ("(x)", 3, 0.9)]
CHICKEN = _pair([*HEAD, (" eat", 4, 0.2), ("\n", 9, 0.9)], [*HEAD, (" ready", 5, 0.05), ("\n", 9, 0.8)])
#: The same readings with the new word well known: the minima lie where the readings part.
KNOWN = _pair([*HEAD[:1], (" chicken", 2, 0.6), ("(x)", 3, 0.9), (" eat", 4, 0.2), ("\n", 9, 0.9)],
              [*HEAD[:1], (" chicken", 2, 0.6), ("(x)", 3, 0.9), (" ready", 5, 0.05), ("\n", 9, 0.8)])
DEGENERATE = ("The paper's P(LF0) is 0.50 only because both readings' least likely token is “chicken”, "
              "which they share.")


def test_a_shared_least_likely_token_does_not_make_the_verdict_undecided() -> None:
    assert CHICKEN.p_lf0 == 0.5 and verdict(None, CHICKEN.p_lf0).preference is Preference.UNDECIDED  # the paper's
    v = score_verdict("lf0", CHICKEN, names=NAMES)
    assert v.preference is Preference.LF0 and v.p_lf0 == pytest.approx(0.8)  # 0.2 / (0.2 + 0.05)
    assert (v.measure, v.p_lf0_paper, v.shared_minimum) == (PLf0Measure.PARTED, 0.5, "chicken")
    assert v.scores_text == ("Forced to write each reading, it scores LF0 (she ducked) higher where the readings "
                             f"part: P(LF0) = 0.80. {DEGENERATE}")
    assert v.text == f"{v.wrote_text} {v.scores_text}"


def test_the_degenerate_sentence_appears_exactly_when_the_shared_token_holds_both_minima() -> None:
    v = score_verdict(None, KNOWN, names=NAMES)
    assert KNOWN.p_lf0 == KNOWN.p_lf0_parted == pytest.approx(0.8) and KNOWN.shared_minimum is None
    assert v.scores_text == ("Forced to write each reading, it scores LF0 (she ducked) higher where the readings "
                             "part: P(LF0) = 0.80.")
    assert "paper's" not in v.text and v.shared_minimum is None and v.p_lf0_paper == pytest.approx(0.8)
    assert DEGENERATE in score_verdict(None, CHICKEN).text


def test_undecided_where_the_readings_part_names_the_measure() -> None:
    even = _pair([*HEAD, (" eat", 4, 0.2)], [*HEAD, (" ready", 5, 0.2)])
    v = score_verdict(None, even)
    assert v.preference is Preference.UNDECIDED
    assert v.scores_text == ("Forced to write each reading, it is undecided where the readings part: P(LF0) = 0.50 "
                             f"is within 0.05 of 0.5. {DEGENERATE}")


def test_no_pair_or_no_defined_measure_is_unavailable() -> None:
    assert score_verdict("lf1", None).preference is Preference.UNAVAILABLE
    zeros = _pair([(" a", 1, 0.9), (" b", 2, 0.0)], [(" a", 1, 0.9), (" c", 3, 0.0)])
    assert math.isnan(zeros.p_lf0_parted)
    v = score_verdict("lf1", zeros)
    assert v.preference is Preference.UNAVAILABLE and v.p_lf0 is None
    assert v.scores_text.startswith("Its score for the two readings (P(LF0)) is unavailable.")
    assert preference(math.nan) is Preference.UNAVAILABLE


def test_the_measures_are_declared_once() -> None:
    """Each measure names the PairScore attribute and the sweep-record column that hold it."""
    assert [m.value for m in PLf0Measure] == ["p_lf0", "p_lf0_parted", "p_lf0_total"]
    assert {m.value for m in PLf0Measure} <= set(RECORD_COLUMNS)
    assert [m.of(CHICKEN) for m in PLf0Measure] == [CHICKEN.p_lf0, CHICKEN.p_lf0_parted, CHICKEN.p_lf0_total]
    assert {"p_lf0", "p_lf0_total"} <= {f.name for f in fields(PairScore)}
    assert MODEL_P_LF0_HOW == PLf0Measure.PARTED.how and PAPER_P_LF0_HOW == PLf0Measure.PAPER.how
    assert len({m.label for m in PLf0Measure}) == len({m.how for m in PLf0Measure}) == 3
