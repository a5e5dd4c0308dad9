"""A teacher's own words extend the decoding grammar, typed by arity (issue #11 point 1)."""

from __future__ import annotations

import pytest
from lark.exceptions import UnexpectedInput

from amp.logic.errors import OwnWordsError
from amp.logic.grammar import grammar_text, lark_parser
from amp.logic.own_words import MAX_OWN_WORDS, NO_WORDS, OwnWords
from amp.logic.unknown_words import own_words_of, unknown_word_message, unknown_words
from amp.prompts import Prompt, mixed_prompt

DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
DUCK_WORDS = OwnWords(unary=("duck",), constants=("Her", "Me"))


def test_words_of_the_duck_readings_are_typed_by_arity() -> None:
    assert own_words_of([DUCK0, DUCK1]) == DUCK_WORDS
    assert own_words_of(["exists x . exists y . owns(x, y) AND cat(y)"]) == OwnWords(binary=("owns",))
    assert own_words_of(["( exists x ( duck x ) )"], "lisp") == OwnWords(unary=("duck",))
    assert own_words_of(["exists x . man(x) AND have(x, Mary)"]) == NO_WORDS
    assert DUCK_WORDS.describe() == "duck (one place), Her (name), Me (name)"


@pytest.mark.parametrize(("words", "message"), [
    (dict(unary=("Duck",)), "not a word of the logical forms"),
    (dict(constants=("her",)), "not a word of the logical forms"),
    (dict(unary=("exists",)), "keyword or variable"),
    (dict(unary=("x",)), "keyword or variable"),
    (dict(unary=("man",)), "already in the lexicon"),
    (dict(constants=("Mary",)), "already in the lexicon"),
    (dict(unary=("d" * 30,)), "longer than"),
    (dict(unary=("duck",), binary=("duck",)), "one argument and with two"),
    (dict(unary=tuple(f"w{i}" for i in range(MAX_OWN_WORDS + 1))), f"at most {MAX_OWN_WORDS}"),
])
def test_bad_own_words_say_what_is_wrong(words: dict, message: str) -> None:
    with pytest.raises(OwnWordsError, match=message):
        OwnWords(**words)


def test_a_word_used_with_both_arities_is_refused() -> None:
    with pytest.raises(OwnWordsError, match="'duck' is used with one argument and with two"):
        own_words_of(["exists x . duck(x)", "exists x . exists y . duck(x, y)"])


def test_without_own_words_the_decoding_grammar_is_the_lexicon_one() -> None:
    for fmt in ("fol", "lisp"):
        assert grammar_text(fmt, "decoding", words=NO_WORDS) == grammar_text(fmt, "decoding")
        assert "upred" not in grammar_text(fmt, "decoding")
        assert grammar_text(fmt, "decoding", words=DUCK_WORDS) != grammar_text(fmt, "decoding")


def test_the_extended_decoding_grammar_admits_own_words_only_with_their_arity() -> None:
    lexicon_only = lark_parser("fol", "decoding")
    extended = lark_parser("fol", "decoding", DUCK_WORDS)
    for lf in (DUCK0, DUCK1):
        with pytest.raises(UnexpectedInput):
            lexicon_only.parse(f" {lf}\n")
        assert extended.parse(f" {lf}\n").data == "start"
    for wrong in ("exists x . exists y . duck(x, y)", "exists x . man(x) AND have(x, Duck)",
                  "exists x . Her(x)", "exists x . agent(x, Her) AND sheep(x)"):
        with pytest.raises(UnexpectedInput):
            extended.parse(f" {wrong}\n")
    binary = lark_parser("fol", "decoding", OwnWords(binary=("owns",)))
    assert binary.parse(" exists x . exists y . owns(x, y)\n")
    with pytest.raises(UnexpectedInput):
        binary.parse(" exists x . owns(x)\n")
    lisp = lark_parser("lisp", "decoding", DUCK_WORDS)
    assert lisp.parse(" ( exists x ( AND ( duck x ) ( have x Her ) ) )\n")


def test_unknown_words_are_named_in_text_order() -> None:
    assert unknown_words(DUCK0) == ("Me", "duck", "Her")
    assert unknown_words(DUCK0, words=DUCK_WORDS) == ()
    assert unknown_word_message("exists x . duck(x)") == (
        "'duck' is not in the lexicon — add it as your own word (Own sentences page), or use a lexicon word")
    assert "are not in the lexicon — add them as your own words" in unknown_word_message(DUCK1)
    assert unknown_word_message("exists x . man(x)") is None
    assert unknown_word_message("not an LF (") is None


def test_a_prompt_carries_its_own_words_and_keeps_its_old_json_without_them() -> None:
    plain = mixed_prompt("the man saw the boy with the telescope", 0.3, seed=0)
    assert "words" not in plain.to_dict()
    from dataclasses import replace

    own = replace(plain, words=DUCK_WORDS)
    assert own.to_dict()["words"] == {"unary": ["duck"], "binary": [], "constants": ["Her", "Me"]}
    assert Prompt.from_json(own.to_json()) == own
