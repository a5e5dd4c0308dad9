"""A teacher's own sentence in a lesson (issue #11 point 1): readings in words, the item a class
sees (with the teacher's reading names), the model's P(LF0) through the own words, and the model's
parse explained against the teacher's readings."""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.parser.parser import Parser
from amp.teaching import lesson
from amp.teaching.own_library import OwnLibrary
from amp.teaching.own_sentences import OwnSentence
from amp.teaching.poll_records import PollItem

DUCK = OwnSentence(
    "I saw her duck",
    "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)",
    "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)",
    "she lowered her head and I saw it", "I saw the bird she owns", name0="she ducked", name1="her bird",
)


@pytest.fixture(autouse=True)
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> OwnLibrary:
    path = tmp_path / "own.json"
    monkeypatch.setenv("AMP_OWN_SENTENCES", str(path))
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))
    lib = OwnLibrary(path)
    lib.add(DUCK)
    return lib


def test_an_own_sentence_is_found_with_its_readings_and_names() -> None:
    assert lesson.pool_pair("I saw her duck") is None
    assert lesson.own_sentence("I saw her duck") == DUCK
    assert lesson.readings_in_words("I saw her duck") == ("she lowered her head and I saw it", "I saw the bird she owns")
    item = lesson.sentence_item("I saw her duck")
    assert item is not None and item.lf0 == DUCK.lf0 and item.paraphrase1 == "I saw the bird she owns"
    assert (item.reading_name(0), item.reading_name(1)) == ("she ducked", "her bird")
    assert lesson.sentence_item("a sentence nobody wrote") is None
    pool = lesson.sentence_item("the man saw the boy with the telescope")
    assert pool is not None and pool.reading_name(1) == "instrument"


def test_poll_items_stored_before_reading_names_still_read() -> None:
    old = {"surface": "s", "type": "pp", "lf0": "a", "lf1": "b", "paraphrase0": "p", "paraphrase1": "q",
           "model_p_lf0": None}
    assert PollItem(**old).reading_name(0) == lesson.reading_name("pp", 0)


def test_explain_parse_uses_the_teachers_names_and_paraphrases() -> None:
    item = lesson.sentence_item("I saw her duck")
    pair = DUCK.pair()
    assert lesson.explain_parse(pair, DUCK.lf1, item=item) == "her bird: I saw the bird she owns"
    swapped = DUCK.lf1.replace("agent(a, Me)", "agent(a, Her)").replace("have(x, Her)", "have(x, Me)")
    assert lesson.explain_parse(pair, swapped, item=item) == "neither reading: the same as her bird, but with Her and Me swapped"


def test_model_p_lf0_of_an_own_sentence_scores_its_mixed_prompt_with_its_words(saved_tiny_model: Path,
                                                                                tmp_path: Path) -> None:
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))
    p = lesson.model_p_lf0(parser, "I saw her duck")
    assert p is not None and 0.0 <= p <= 1.0
    prompt = DUCK.prompt("mixed")
    assert prompt.words == DUCK.words
    assert parser.cached_pair(prompt.render(), DUCK.lf0, DUCK.lf1, words=DUCK.words).p_lf0 == pytest.approx(p)


def test_sentence_keys_of_an_own_sentence_carry_it_and_its_results(saved_tiny_model: Path, tmp_path: Path) -> None:
    """A demo pack of chosen sentences holds an own sentence and the results the lesson pages
    read for it: its default mixed prompt scored through its own words (and a built prompt's)."""
    parser = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))
    before = lesson.sentence_keys(parser, "I saw her duck\nnobody wrote this")
    assert before.keys == () and before.own == (DUCK,) and before.unknown == ("nobody wrote this",)
    assert before.require_keys() == ()  # the sentence alone is worth a pack
    lesson.model_p_lf0(parser, "I saw her duck")
    default = DUCK.prompt("mixed")
    after = lesson.sentence_keys(parser, "I saw her duck")
    assert after.keys == tuple(parser.result_keys(default.render(), DUCK.lf0, DUCK.lf1, words=DUCK.words))
    assert len(after.keys) == 1 and after.own == (DUCK,)
    plain = parser.result_keys(default.render(), DUCK.lf0, DUCK.lf1)  # the same prompt without its words
    assert plain == []  # is another grammar: nothing cached under it
    built = DUCK.prompt("mixed", ratio=0.5, k=2)
    parser.score_pair(built.render(), DUCK.lf0, DUCK.lf1, words=built.words)
    with_built = lesson.sentence_keys(parser, "I saw her duck", built)
    assert set(with_built.keys) == set(after.keys) | set(
        parser.result_keys(built.render(), DUCK.lf0, DUCK.lf1, words=DUCK.words)) and len(with_built.keys) == 2
    assert lesson.sentence_keys(None, "I saw her duck") == lesson.SentenceKeys((), (), (DUCK,))
