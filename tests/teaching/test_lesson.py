"""What the teaching pages say about a sentence (amp.teaching.lesson): readings in words, the
model's zero-shot P(LF0) with a tiny model, its choice, demo-pack keys and the student URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.data import generate as gen
from amp.data.types import get_type
from amp.evaluation.matching import match_lf
from amp.parser import Parser
from amp.prompts import mixed_prompt, zero_shot_prompt
from amp.teaching import lesson
from amp.teaching.paraphrase import paraphrases

NOT_IN_POOL = "not a pool sentence at all"


@pytest.fixture(scope="module")
def pair() -> gen.AmbiguousPair:
    return gen.sample_pairs("pp", 1, 0)[0]


@pytest.fixture
def parser(saved_tiny_model: Path, tmp_path: Path) -> Parser:
    return Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))


# --- readings in words ---------------------------------------------------------------------------


def test_pool_pair_finds_pool_sentences_only(pair: gen.AmbiguousPair) -> None:
    assert lesson.pool_pair(pair.surface) == pair
    assert lesson.pool_pair(NOT_IN_POOL) is None


def test_readings_in_words(pair: gen.AmbiguousPair) -> None:
    words = lesson.readings_in_words(pair.surface)
    assert words == paraphrases(pair) and words[0] != words[1]
    assert lesson.readings_in_words(pair) == words
    assert lesson.readings_in_words(NOT_IN_POOL) is None


def test_reading_name_comes_from_the_type_registry() -> None:
    assert (lesson.reading_name("pp", 0), lesson.reading_name("pp", 1)) == get_type("pp").readings
    assert lesson.reading_name("scope_reverse", 1) == get_type("revscope").readings[1]
    assert lesson.reading_name("no-such-type", 1) == "reading 1"
    assert lesson.reading_name("pp", 2) == "reading 2"  # not a reading: the neutral name, no error


# --- the model's P(LF0) ----------------------------------------------------------------------------


def test_model_p_lf0_scores_the_zero_shot_prompt(parser: Parser, pair: gen.AmbiguousPair) -> None:
    p = lesson.model_p_lf0(parser, pair.surface)
    assert isinstance(p, float) and 0.0 <= p <= 1.0
    cached = parser.cached_pair(zero_shot_prompt(pair).render(), pair.lf0.lf, pair.lf1.lf)
    assert cached is not None and cached.p_lf0 == p  # exactly the zero-shot pair score, now cached
    assert lesson.model_p_lf0(parser, pair.surface) == p


def test_model_p_lf0_of_an_unknown_sentence_never_asks_the_model(tmp_path: Path) -> None:
    broken = Parser(str(tmp_path / "no-model-here"), device="cpu", cache=False)
    assert lesson.model_p_lf0(broken, NOT_IN_POOL) is None
    assert not broken.loaded


@pytest.mark.parametrize(("p", "choice", "text"), [
    (0.5, None, "Forced to write each reading, it is undecided: P(LF0) = 0.50 is within 0.05 of 0.5."),
    (0.93, 0, "Forced to write each reading, it scores LF0 higher: P(LF0) = 0.93."),
    (0.4499, 1, "Forced to write each reading, it scores LF1 higher: P(LF0) = 0.45."),
    (0.0, 1, "Forced to write each reading, it scores LF1 higher: P(LF0) = 0.00."),
    (None, None, "Its score for the two readings (P(LF0)) is unavailable."),
])
def test_model_choice(p: float | None, choice: int | None, text: str) -> None:
    assert lesson.preferred_reading(p) == choice
    assert lesson.model_choice_text(p) == text


def test_model_reveal_is_the_parse_and_the_score_under_the_zero_shot_prompt(
    parser: Parser, pair: gen.AmbiguousPair
) -> None:
    """The reveal's two halves come from one prompt: the top beam's match and the same P(LF0)
    that :func:`lesson.model_p_lf0` reports (issue #26 point 5)."""
    reveal = lesson.model_reveal(parser, pair.surface)
    assert reveal is not None
    assert reveal.p_lf0 == lesson.model_p_lf0(parser, pair.surface)
    top = parser.parse(zero_shot_prompt(pair).render()).beams[0].text
    assert reveal.parse == top
    assert reveal.match == match_lf(top, pair.lf0.lf, pair.lf1.lf)
    assert lesson.model_reveal(parser, NOT_IN_POOL) is None


# --- demo-pack keys of chosen sentences --------------------------------------------------------------


def test_sentence_keys_are_the_cached_results_of_pool_sentences(parser: Parser, pair: gen.AmbiguousPair) -> None:
    text = f"  {pair.surface}  \n\n{NOT_IN_POOL}\n{pair.surface}\n"
    before = lesson.sentence_keys(parser, text)
    assert before == lesson.SentenceKeys((), (NOT_IN_POOL,))
    with pytest.raises(lesson.PackSelectionEmpty, match="nothing is cached"):
        before.require_keys()
    lesson.model_p_lf0(parser, pair.surface)
    after = lesson.sentence_keys(parser, text)
    zero_shot = parser.result_keys(zero_shot_prompt(pair).render(), pair.lf0.lf, pair.lf1.lf)
    assert after.keys == tuple(zero_shot) and len(after.keys) == 1  # the pair score, once
    assert after.unknown == (NOT_IN_POOL,)
    assert after.require_keys() == after.keys
    assert parser.cache is not None and all(key in parser.cache for key in after.keys)


def test_sentence_keys_add_the_built_prompt_that_tests_a_chosen_sentence(
    parser: Parser, pair: gen.AmbiguousPair
) -> None:
    built = mixed_prompt(pair, 0.5, seed=0, k=2)
    parser.score_pair(built.render(), built.gold_lf0, built.gold_lf1)
    built_keys = parser.result_keys(built.render(), built.gold_lf0, built.gold_lf1)
    assert built_keys
    assert lesson.sentence_keys(parser, pair.surface, built).keys == tuple(built_keys)
    assert lesson.sentence_keys(parser, pair.surface).keys == ()  # without it: nothing cached
    other = gen.sample_pairs("pp", 2, 1)[1]
    assert lesson.sentence_keys(parser, other.surface, built).keys == ()  # tests another sentence


def test_sentence_keys_without_a_model_only_find_unknown_sentences(pair: gen.AmbiguousPair) -> None:
    assert lesson.sentence_keys(None, f"{pair.surface}\n{NOT_IN_POOL}") == lesson.SentenceKeys((), (NOT_IN_POOL,))


def test_model_reading_says_what_the_model_wrote_before_what_it_scores() -> None:
    readings = ("the boy saw the man, who had the telescope", "the boy used the telescope to see the man")
    shown, text = lesson.model_reading(readings, 0.8, "lf1")
    assert shown == 1  # the parse, not the score, picks the reading shown
    assert text == ("The model wrote LF1: “the boy used the telescope to see the man”. "
                    "Forced to write each reading, it scores LF0 higher: P(LF0) = 0.80.")
    shown, text = lesson.model_reading(readings, 0.5, "neither")
    assert shown is None
    assert text.startswith("The model wrote neither reading")
    assert "undecided" in text
    assert lesson.model_reading(readings, 0.2) == (1, "The model's own parse was not run here, so only its scores "
                                                      "are known. Forced to write each reading, it scores LF1 "
                                                      "higher: P(LF0) = 0.20.")
    assert lesson.model_reading(readings, None)[0] is None


def test_explain_parse_in_words() -> None:
    """Issue #11 point 4: the README's sentence, parsed with who-saw-whom swapped, is explained as
    the nearest reading with two words swapped; readings by their paraphrase."""
    pair = gen.find_pair("the boy saw the man with the telescope")
    assert pair is not None
    swapped = pair.lf1.lf.replace("boy(", "TMP(").replace("man(", "boy(").replace("TMP(", "man(")
    assert lesson.explain_parse(pair, swapped) == (
        "neither reading: the same as instrument, but with boy and man swapped")
    assert lesson.explain_parse(pair, pair.lf1.lf) == "instrument: the boy used the telescope to see the man"
    assert lesson.explain_parse(pair, pair.lf0.lf).startswith("possessive: ")
    assert lesson.explain_parse(pair, "exists x . boy(x)") == "neither reading: there is some x such that x is a boy"
    assert lesson.explain_parse(pair, "exists x . boy(").startswith("not a logical form")
    assert lesson.explain_parse(pair, None).startswith("not a logical form")
    names = gen.find_pair("Marie saw Ada and she waved")
    assert names is not None
    other = names.lf0.lf.replace("Marie", "TMP").replace("Ada", "Marie").replace("TMP", "Ada")
    assert lesson.explain_parse(names, other).endswith("but with Ada and Marie swapped")
