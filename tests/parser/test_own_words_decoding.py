"""Constrained decoding and forced scoring with a teacher's own words (issue #11 point 1).

The decoding grammar is extended with the words of :class:`amp.logic.own_words.OwnWords`; the
same LFs are refused by the lexicon grammar with a message that names the missing words.  Keys
of results computed with own words differ from the lexicon's (the grammar text is in the key)."""

from __future__ import annotations

from pathlib import Path

import pytest
from parser_lm_helpers import simple_prompt

from amp.cache import ResultCache
from amp.evaluation.inspection import inspect
from amp.logic.grammar import lark_parser
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.unknown_words import own_words_of
from amp.parser.core.errors import DecodingError
from amp.parser.parser import Parser
from amp.parser.search.automaton import get_automaton
from amp.parser.search.decode import beam_search
from amp.parser.search.scoring import forced_score, forced_score_ids, score_pair

DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
WORDS = own_words_of([DUCK0, DUCK1])
PROMPT = simple_prompt("I saw her duck")


def test_the_automaton_accepts_own_words_only_with_them() -> None:
    own, lexicon = get_automaton("fol", words=WORDS), get_automaton("fol")
    for lf in (DUCK0, DUCK1):
        assert own.is_final(own.advance_token(own.initial, f" {lf}\n"))
        assert not lexicon.advance_token(lexicon.initial, f" {lf}\n")
    wrong_arity = " exists x . exists y . duck(x, y)\n"
    assert not own.advance_token(own.initial, wrong_arity)
    assert get_automaton("fol", words=NO_WORDS) is lexicon
    assert own.own_words == WORDS and lexicon.own_words == NO_WORDS


def test_forced_scores_of_own_word_lfs(tiny_lm) -> None:
    model, tok = tiny_lm.model, tiny_lm.tokenizer
    f0, f1 = forced_score(model, tok, PROMPT, [DUCK0, DUCK1], words=WORDS)
    for scored in (f0, f1):  # every token is inside the extended grammar: finite grammar probabilities
        assert all(step.logprob_grammar > float("-inf") for step in scored.steps)
        assert all(step.logprob_grammar >= step.logprob - 1e-5 for step in scored.steps)
    unchecked = forced_score_ids(model, tok, PROMPT, [f0.token_ids], words=WORDS)[0]
    assert [s.logprob for s in unchecked.steps] == pytest.approx([s.logprob for s in f0.steps], abs=1e-5)
    pair = score_pair(model, tok, PROMPT, DUCK0, DUCK1, words=WORDS)
    assert 0.0 <= pair.p_lf0 <= 1.0


def test_without_the_words_the_message_says_which_are_missing(tiny_lm) -> None:
    with pytest.raises(DecodingError, match="'Me', 'duck', 'Her' are not in the lexicon — add them as your own words"):
        forced_score(tiny_lm.model, tiny_lm.tokenizer, PROMPT, [DUCK0])
    with pytest.raises(DecodingError, match="'Her' is not in the lexicon — add it as your own word"):
        forced_score(tiny_lm.model, tiny_lm.tokenizer, PROMPT, [DUCK1], words=OwnWords(unary=("duck",), constants=("Me",)))


def test_beams_searched_with_own_words_are_flagged_by_the_extended_grammar(tiny_lm) -> None:
    examples = "".join(f"Human: I saw the {w}\nComputer: exists x . {w}(x)\n\n" for w in ("duck", "duck", "man"))
    prompt = examples + "Human: I saw the duck\nComputer:"
    words = OwnWords(unary=("duck",))
    result = beam_search(tiny_lm.model, tiny_lm.tokenizer, prompt, beams=3, max_new_tokens=12, words=words)
    extended = lark_parser("fol", "decoding", words)
    for beam in result.beams:
        if beam.finished:
            assert beam.parses
            assert extended.parse(f" {beam.text}\n")


@pytest.fixture
def parser(saved_tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Parser:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "amp-cache"))
    return Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "results"))


def test_the_facade_keys_and_caches_own_word_results(parser: Parser) -> None:
    plain = parser.cache_key("pair", prompt=PROMPT, fmt="fol", lf0="a", lf1="b")
    assert parser.cache_key("pair", prompt=PROMPT, fmt="fol", lf0="a", lf1="b", words=NO_WORDS) == plain
    assert parser.cache_key("pair", prompt=PROMPT, fmt="fol", lf0="a", lf1="b", words=WORDS) != plain
    ins = inspect(parser, PROMPT, DUCK0, DUCK1, beams=2, max_new_tokens=12, words=WORDS)
    assert ins.pair.lf0.lf == DUCK0 and ins.alternative_steps
    assert parser.cached_pair(PROMPT, DUCK0, DUCK1, words=WORDS) == ins.pair
    assert parser.cached_pair(PROMPT, DUCK0, DUCK1) is None
    keys = parser.result_keys(PROMPT, DUCK0, DUCK1, beams=2, max_new_tokens=12, words=WORDS)
    assert len(keys) >= 2 and not parser.result_keys(PROMPT, DUCK0, DUCK1, beams=2, max_new_tokens=12)
    with pytest.raises(DecodingError, match="not in the lexicon"):
        parser.score_pair(PROMPT, DUCK0, DUCK1)
