"""What the teaching pages say about a sentence (amp.teaching.lesson): readings in words, the
model's P(LF0) under the lesson's prompt with a tiny model, its choice, demo-pack keys and the student URL."""

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
from amp.teaching.lesson_prompt import LessonPrompt, LessonPromptKind
from amp.teaching.paraphrase import paraphrases
from amp.teaching.poll_records import PollItem

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


ZERO = LessonPrompt(LessonPromptKind.ZERO_SHOT)
#: A mixed lesson small enough for the tiny test model's 1,024-token context.
SMALL = LessonPrompt(ratio=0.5, k=2, seed=0)


def test_model_p_lf0_scores_the_lessons_prompt_where_the_readings_part(parser: Parser, pair: gen.AmbiguousPair) -> None:
    """A mixed lesson (2 examples, 1 with LF0) and a zero-shot one: the number is P(LF0) where the
    readings part, taken from the very pair score the parser cached for that prompt."""
    p = lesson.model_p_lf0(parser, pair.surface, SMALL)
    assert isinstance(p, float) and 0.0 <= p <= 1.0
    mixed = mixed_prompt(pair, 0.5, seed=0, k=2)
    cached = parser.cached_pair(mixed.render(), pair.lf0.lf, pair.lf1.lf)
    assert cached is not None and cached.p_lf0_parted == p
    assert lesson.model_p_lf0(parser, pair.surface, SMALL) == p
    p_zero = lesson.model_p_lf0(parser, pair.surface, ZERO)
    cached = parser.cached_pair(zero_shot_prompt(pair).render(), pair.lf0.lf, pair.lf1.lf)
    assert cached is not None and cached.p_lf0_parted == p_zero


def test_the_item_prompt_is_the_items_then_the_legacy_one_then_the_lessons(pair: gen.AmbiguousPair) -> None:
    mixed = mixed_prompt(pair, 0.5, seed=3, k=4)
    assert lesson.item_prompt(pair.surface, LessonPrompt(ratio=0.5, k=4, seed=3)) == mixed
    assert lesson.item_prompt(pair.surface, ZERO) == zero_shot_prompt(pair)
    carried = PollItem.from_pair(pair, 0.7, prompt=mixed)
    assert lesson.item_prompt(carried, ZERO) == mixed  # the item's own, whatever the lesson now says
    legacy = PollItem.from_pair(pair, 0.7)  # stored before items carried a prompt: scored zero-shot then
    assert lesson.item_prompt(legacy, LessonPrompt()) == zero_shot_prompt(pair)
    fresh = PollItem.from_pair(pair)  # no model numbers yet: the lesson's
    assert lesson.item_prompt(fresh, LessonPrompt()) == mixed_prompt(pair, 0.3, seed=0, k=10)
    assert lesson.item_prompt(NOT_IN_POOL) is None


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


def test_model_reveal_is_the_parse_and_the_score_under_the_lessons_prompt(
    parser: Parser, pair: gen.AmbiguousPair
) -> None:
    """The reveal's two halves come from one prompt: the top beam's match and the same P(LF0)
    that :func:`lesson.model_p_lf0` reports (issue #26 point 5), under the lesson's prompt, which it
    names (issue #40 point 3)."""
    for choice, prompt in ((SMALL, mixed_prompt(pair, 0.5, seed=0, k=2)), (ZERO, zero_shot_prompt(pair))):
        reveal = lesson.model_reveal(parser, pair.surface, lesson=choice)
        assert reveal is not None and reveal.prompt == prompt
        assert reveal.p_lf0 == lesson.model_p_lf0(parser, pair.surface, choice)
        score = parser.score_pair(prompt.render(), pair.lf0.lf, pair.lf1.lf)
        assert reveal.paper_p_lf0 == score.p_lf0
        top = parser.parse(prompt.render()).beams[0].text
        assert reveal.parse == top
        assert reveal.match == match_lf(top, pair.lf0.lf, pair.lf1.lf)
    assert lesson.model_reveal(parser, NOT_IN_POOL) is None
    assert reveal.prompt_name == f"under the zero-shot prompt ({len(prompt.examples)} examples, none ambiguous)"


def test_a_sentence_the_model_was_not_run_on_says_so_in_one_sentence(pair: gen.AmbiguousPair) -> None:
    v = lesson.reveal_verdict(PollItem.from_pair(pair), None, None)
    assert v.text.strip() == "The model was not run on this sentence."


# --- demo-pack keys of chosen sentences --------------------------------------------------------------


def test_sentence_keys_are_the_cached_results_of_pool_sentences(parser: Parser, pair: gen.AmbiguousPair) -> None:
    text = f"  {pair.surface}  \n\n{NOT_IN_POOL}\n{pair.surface}\n"
    before = lesson.sentence_keys(parser, text, lesson=SMALL)
    assert before == lesson.SentenceKeys((), (NOT_IN_POOL,))
    with pytest.raises(lesson.PackSelectionEmpty, match="nothing is cached"):
        before.require_keys()
    lesson.model_p_lf0(parser, pair.surface, SMALL)
    after = lesson.sentence_keys(parser, text, lesson=SMALL)
    mixed = parser.result_keys(mixed_prompt(pair, 0.5, seed=0, k=2).render(), pair.lf0.lf, pair.lf1.lf)
    assert after.keys == tuple(mixed) and len(after.keys) == 1  # the pair score under the lesson's prompt, once
    lesson.model_p_lf0(parser, pair.surface, ZERO)  # what polls scored before they named their prompt
    zero_shot = parser.result_keys(zero_shot_prompt(pair).render(), pair.lf0.lf, pair.lf1.lf)
    assert lesson.sentence_keys(parser, text, lesson=SMALL).keys == (*mixed, *zero_shot)
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
