"""A teacher's own templates: slots, word lists, expansion and validation (issue #11 point 1)."""

from __future__ import annotations

import json
import re

import pytest

from amp.errors import AmpError
from amp.logic.ast import free_variables
from amp.logic.own_words import OwnWords
from amp.logic.reader import parse_lf
from amp.teaching.errors import OwnTemplateError
from amp.teaching.own_templates import (
    MAX_SENTENCES,
    ExpandedSentence,
    OwnTemplate,
    expand,
    lf_word,
    parse_word_lists,
    template_from_dict,
    template_from_form,
    word_lists_text,
    words,
)

LF0 = "exists a . exists e . saw(a) AND agent(a, Me) AND {animal}(e) AND agent(e, Her) AND patient(a, e)"
LF1 = "exists x . exists a . {animal}(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
# A name slot: "{name} saw her {animal}".
NAME0 = LF0.replace("agent(a, Me)", "agent(a, {name})")
NAME1 = LF1.replace("agent(a, Me)", "agent(a, {name})")


def duck(**changes: object) -> OwnTemplate:
    """The duck template with two animals, with some fields changed."""
    fields: dict[str, object] = dict(
        name="her duck", sentence="I saw her {animal}", slots={"animal": ("duck", "goose")},
        lf0=LF0, lf1=LF1, paraphrase0="I saw her {animal} down", paraphrase1="I saw the {animal} she has",
    )
    fields.update(changes)
    return OwnTemplate(**fields)  # type: ignore[arg-type]


def fails(message: str, **changes: object) -> None:
    """Building the changed duck template raises exactly ``message`` (after the template's name)."""
    with pytest.raises(OwnTemplateError) as info:
        duck(**changes)
    assert str(info.value) == f"template 'her duck': {message}"


# --- expansion ---------------------------------------------------------------------------------


def test_the_duck_template_expands_to_sentences_whose_readings_read() -> None:
    sentences = expand(duck())
    assert sentences == (
        ExpandedSentence("I saw her duck", DUCK0, DUCK1, "I saw her duck down", "I saw the duck she has"),
        ExpandedSentence("I saw her goose", DUCK0.replace("duck", "goose"), DUCK1.replace("duck", "goose"),
                         "I saw her goose down", "I saw the goose she has"),
    )
    for s in sentences:
        for lf in (s.lf0, s.lf1):
            assert free_variables(parse_lf(lf)) == frozenset()
    assert words(duck()) == OwnWords(unary=("duck", "goose"), constants=("Her", "Me"))
    assert duck().size() == 2


def test_expansion_follows_the_sentence_order_first_slot_slowest() -> None:
    template = OwnTemplate("names", "{name} saw her {animal}",
                           {"animal": ("duck", "goose", "swan"), "name": ("Anna", "Bo")}, NAME0, NAME1,
                           "{name} saw her {animal} down", "{name} saw the {animal} she has")
    assert template.slot_order == ("name", "animal")
    surfaces = [s.surface for s in expand(template)]
    assert surfaces == ["Anna saw her duck", "Anna saw her goose", "Anna saw her swan",
                        "Bo saw her duck", "Bo saw her goose", "Bo saw her swan"]
    assert expand(template)[3].lf0 == DUCK0.replace("Me", "Bo")
    assert words(template) == OwnWords(unary=("duck", "goose", "swan"), constants=("Anna", "Bo", "Her"))
    assert expand(template)[4].paraphrase1 == "Bo saw the goose she has"


def test_a_slot_word_becomes_its_lf_word() -> None:
    template = duck(slots={"animal": ("geese", "sea bird", "black-swan")}, slot_lf={"animal": {"geese": "goose"}})
    assert [lf_word(template, "animal", w) for w in template.slots["animal"]] == ["goose", "sea_bird", "black_swan"]
    assert [s.surface for s in expand(template)] == ["I saw her geese", "I saw her sea bird", "I saw her black-swan"]
    assert words(template).unary == ("black_swan", "goose", "sea_bird")


def test_readings_are_written_in_the_data_spacing() -> None:
    template = duck(lf0=LF0.replace(" . ", ".").replace(", ", ","))
    assert expand(template)[0].lf0 == DUCK0


def test_a_template_round_trips_through_json() -> None:
    template = duck(slot_lf={"animal": {"goose": "goose"}})
    data = json.loads(template.to_json())
    assert data["slots"] == {"animal": ["duck", "goose"]}
    again = template_from_dict(data)
    assert again == template and expand(again) == expand(template)
    assert hash(again) == hash(template)
    assert OwnTemplate("t", "I saw her {animal}", {"animal": ["duck"]}, LF0, LF1, "p {animal}", "q").slots == {"animal": ("duck",)}  # type: ignore[dict-item]


def test_template_from_dict_says_why_it_refuses() -> None:
    data = duck().to_dict()
    data["lf1"] = LF1.replace("{animal}", "{bird}")
    with pytest.raises(OwnTemplateError, match=re.escape("template 'her duck': LF1 uses slot {bird}")):
        template_from_dict(data)
    with pytest.raises(OwnTemplateError, match="not an own template: lf0: Field required"):
        template_from_dict({"name": "x", "sentence": "I saw her {animal}", "slots": {}, "lf1": LF1})


# --- validation ---------------------------------------------------------------------------------


def test_the_error_is_a_typed_value_error() -> None:
    assert issubclass(OwnTemplateError, AmpError) and issubclass(OwnTemplateError, ValueError)


@pytest.mark.parametrize(("changes", "message"), [
    (dict(lf1=LF1.replace("{animal}", "{bird}")), "LF1 uses slot {bird}, which has no word list (word lists: animal)"),
    (dict(paraphrase0="I saw her {bird} down"),
     "paraphrase 0 uses slot {bird}, which has no word list (word lists: animal)"),
    (dict(slots={"animal": ("duck",), "colour": ("red",)}),
     "the word list 'colour' is used in no pattern (slots in the sentence: {animal})"),
    (dict(slots={"animal": ("duck",), "colour": ("red",)}, paraphrase0="I saw her {colour} {animal} down"),
     "slot {colour} is not in the sentence pattern: every slot must show in the sentence"),
    (dict(sentence="I saw her duck"),
     "the sentence pattern has no {slot}: put one where the words vary, e.g. 'I saw her {animal}'"),
])
def test_unknown_slots_and_unused_word_lists(changes: dict[str, object], message: str) -> None:
    fails(message, **changes)


@pytest.mark.parametrize(("changes", "message"), [
    (dict(sentence="I saw her {animal"), "the sentence pattern: unmatched '{' at character 11 (write a slot as {name})"),
    (dict(lf0=LF0 + " }"), f"LF0: unmatched '}}' at character {len(LF0) + 2} (write a slot as {{name}})"),
    (dict(sentence="I saw her {Animal}"), "the sentence pattern: {Animal} is not a slot: a slot name is lowercase "
                                          "letters, digits and _, starting with a letter, e.g. {animal}"),
    (dict(paraphrase1="I saw {} she has"), "paraphrase 1: {} is not a slot: a slot name is lowercase "
                                           "letters, digits and _, starting with a letter, e.g. {animal}"),
])
def test_bad_slot_syntax_names_the_pattern_and_the_place(changes: dict[str, object], message: str) -> None:
    fails(message, **changes)


def test_a_reading_with_an_unbound_variable_names_the_variable_and_the_reading() -> None:
    unbound = LF1.replace("exists x . ", "")
    fails("LF1 has an unbound variable 'x': no 'exists x .' or 'forall x .' binds it (in the reading of "
          f"'I saw her duck': {DUCK1.replace('exists x . ', '')})", lf1=unbound)


def test_a_reading_with_a_variable_the_model_cannot_write_is_refused() -> None:
    """Any variable names do (the reading is scored in the prompt convention, issue #26), but the
    model writes at most three entity variables."""
    duck(lf1=LF1.replace("x .", "w .").replace("(x", "(w").replace(", x)", ", w)"))  # other letters: fine
    many = LF1.replace("exists x . ", "exists x . exists p . exists q . exists r . ") + " AND cat(p) AND dog(q) AND cow(r)"
    with pytest.raises(OwnTemplateError) as info:
        duck(lf1=many)
    assert "LF1: more than three entity variables: the model can write only x, y, z for things and people" in str(info.value)
    assert "(in the reading of 'I saw her duck'" in str(info.value)


def test_a_reading_that_does_not_read_is_the_readings_fault() -> None:
    with pytest.raises(OwnTemplateError) as info:
        duck(lf1=LF1.replace("exists x .", "exists x"))
    assert str(info.value).startswith("template 'her duck': LF1 does not read: cannot parse FOL at column 10: "
                                      "found 'exists'")
    assert "(in the reading of 'I saw her duck'" in str(info.value)


def test_a_word_list_that_makes_no_sentence_says_which_words_fail_and_why() -> None:
    fails("the word list of {animal} is empty: it makes no sentence", slots={"animal": ()})
    with pytest.raises(OwnTemplateError) as info:
        duck(slots={"animal": ("Big dog", "exists")})
    message = str(info.value)
    assert message.startswith("template 'her duck': the word list of {animal} makes no sentence, every word fails — "
                              "'Big dog' (LF word 'Big_dog'): LF0 does not read: cannot parse FOL at column 51: "
                              "found 'Big_dog'")
    assert "; 'exists': LF0 does not read: cannot parse FOL at column 57: found '('" in message


def test_some_failing_words_are_listed_with_their_reason() -> None:
    fails("in the word list of {animal}, 1 of 3 words fail — 'x': LF0: 'x' is a keyword or variable name of "
          "the logical forms, not a new predicate", slots={"animal": ("duck", "x", "goose")})
    fails("in the word list of {name}, 1 of 2 words fail — 'anna': LF0 leaves 'anna' unbound (a name is "
          "written with a capital letter)", sentence="{name} saw her {animal}",
          slots={"animal": ("duck",), "name": ("Anna", "anna")}, lf0=NAME0, lf1=NAME1)


def test_readings_equal_in_meaning_are_refused() -> None:
    same = "exists x . exists a . have(x, Her) AND {animal}(x) AND saw(a) AND agent(a, Me) AND patient(a, x)"
    fails(f"LF0 and LF1 mean the same for 'I saw her duck' ({DUCK1}): an ambiguous sentence needs two "
          "different readings", lf0=LF1, lf1=same)


def test_the_own_words_of_all_sentences_together_must_fit_the_grammar() -> None:
    many = tuple(f"bird{i}" for i in range(31))
    fails("the own words of its sentences cannot extend the grammar: 33 own words: at most 32 may extend "
          "the grammar", slots={"animal": many})
    # 'owns' is one-place in LF0 and two-place in LF1: each reading alone is fine
    fails("the own words of its sentences cannot extend the grammar: own word 'owns' is used with one argument "
          "and with two; an own predicate has one arity (use two words, e.g. 'owns' and 'owns_of')",
          sentence="I saw her {animal} {rel}", slots={"animal": ("duck", "owns"), "rel": ("keeps", "owns")},
          lf1=LF1.replace("have(x, Her)", "{rel}(x, Her)").replace("{animal}(x)", "bird(x)"))
    # in one reading, a clash is the word's fault
    fails("in the word list of {rel}, 1 of 2 words fail — 'owns': LF1: own word 'owns' is used with one argument "
          "and with two; an own predicate has one arity (use two words, e.g. 'owns' and 'owns_of')",
          sentence="I saw her {animal} {rel}", slots={"animal": ("owns",), "rel": ("keeps", "owns")},
          lf1=LF1.replace("have(x, Her)", "{rel}(x, Her)"))


@pytest.mark.parametrize(("changes", "message"), [
    (dict(slots={"animal": tuple(f"w{i}" for i in range(40)), "b": tuple(f"v{i}" for i in range(6))},
          sentence="I saw {b} her {animal}"),
     f"240 sentences (6 × 40): at most {MAX_SENTENCES}; shorten the word lists"),
    (dict(slots={"animal": tuple(f"w{i}" for i in range(51))}), "the word list of {animal} has 51 words: at most 50"),
    (dict(slots={f"s{i}": ("w",) for i in range(9)}, sentence=" ".join(f"{{s{i}}}" for i in range(9))),
     "9 word lists: at most 8 slots"),
    (dict(sentence="I saw her {animal} " + "very " * 40), "the sentence pattern is longer than 200 characters"),
    (dict(lf0=LF0 + " AND man(e)" * 30), "LF0 is longer than 400 characters"),
    (dict(slots={"animal": ("duck", "d" * 41)}), f"{'d' * 40!r}… in {{animal}} is longer than 40 characters"),
    (dict(slots={"animal": ("duck", "goose", "duck")}), "the word list of {animal} lists 'duck' twice"),
    (dict(slots={"animal": ("duck", " goose")}),
     "the word list of {animal} holds ' goose': a word is trimmed text without braces"),
    (dict(slot_lf={"animal": {"swan": "swan"}}),
     "slot_lf gives an LF word for 'swan', which is not in the word list of {animal}"),
    (dict(paraphrase1=""), "paraphrase 1 is empty"),
    (dict(sentence="I saw her {animal} " + "{animal}" * 20, slots={"animal": ("duck", "d" * 20)}),
     f"the sentence of {'I saw her ' + 'd' * 20 + ' ' + 'd' * 9!r}… is 431 characters long, filled in: at most 200; shorten the "
     "pattern or the words"),
    (dict(sentence="I saw her {animal}{b}", slots={"animal": ("duck", "ducks"), "b": ("s", "")}),
     "the word list of {b} holds '': a word is trimmed text without braces"),
    (dict(sentence="I saw her {animal}{b}", slots={"animal": ("duck", "ducks"), "b": ("s", "ss")}),
     "the sentence 'I saw her duckss' comes out twice: the word lists must make different sentences"),
    (dict(lf1="  "), "LF1 is empty"),
])
def test_bounds_and_malformed_lists(changes: dict[str, object], message: str) -> None:
    fails(message, **changes)


def test_a_template_needs_a_short_name() -> None:
    with pytest.raises(OwnTemplateError, match="^an own template needs a name$"):
        duck(name=" ")
    with pytest.raises(OwnTemplateError, match="is longer than 80 characters"):
        duck(name="n" * 81)


# --- the form's word-list text ----------------------------------------------------------------


def test_word_lists_are_read_from_lines() -> None:
    slots, slot_lf = parse_word_lists("animal: duck, geese=goose,\n\n name : Anna , Bo\n")
    assert slots == {"animal": ("duck", "geese"), "name": ("Anna", "Bo")}
    assert slot_lf == {"animal": {"geese": "goose"}}
    template = template_from_form(" her duck ", "I saw her {animal}", "animal: duck, geese=goose", LF0, LF1,
                                  "I saw her {animal} down", "I saw the {animal} she has")
    assert word_lists_text(template) == "animal: duck, geese=goose"
    assert [s.lf0 for s in expand(template)] == [DUCK0, DUCK0.replace("duck", "goose")]
    assert template.name == "her duck"


@pytest.mark.parametrize(("text", "message"), [
    ("animal duck, goose", "word lists, line 1: write 'slot: word, word' (found 'animal duck, goose')"),
    ("animal: duck\nanimal: goose", "word lists, line 2: slot 'animal' has a word list already"),
    ("animal: duck, goose=", "word lists, line 1: write 'word=lf_word' (found 'goose=')"),
    ("x" * 4001, "the word lists are longer than 4000 characters"),
])
def test_word_list_text_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(OwnTemplateError) as info:
        parse_word_lists(text)
    assert str(info.value) == message


def test_every_expanded_sentence_is_an_own_sentence() -> None:
    from amp.teaching.own_sentences import OwnSentence

    for s in expand(duck(slots={"animal": ("duck", "goose", "sea bird")})):
        own = OwnSentence(s.surface, s.lf0, s.lf1, s.paraphrase0, s.paraphrase1)
        assert (own.surface, own.lf0, own.lf1) == (s.surface, s.lf0, s.lf1)
