"""The verdict's wording (issue #26 point 5): what the model wrote, then what it scores."""

from __future__ import annotations

import pytest

from amp.evaluation.matching import Match
from amp.evaluation.verdict import (
    UNDECIDED_BAND,
    Preference,
    preference,
    preferred_index,
    scores_sentence,
    verdict,
    wrote_sentence,
)

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
