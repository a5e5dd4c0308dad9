"""An own sentence's few-shot examples, chosen and said (issue #26 point 6)."""

from __future__ import annotations

import pytest

from amp.logic.prompt_convention import prompt_text
from amp.prompts import mixed_prompt
from amp.teaching.errors import OwnSentenceError
from amp.teaching.own_examples import ExampleChoice, ExampleSource, choice_prompt, describe_examples
from amp.teaching.own_sentences import OwnSentence

DUCK = "I saw her duck"
DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
CHICKEN = "the chicken is ready to eat"
CHICKEN0 = "exists x . exists e . chicken(x) AND ready(x) AND eat(e) AND agent(e, x)"
CHICKEN1 = "exists x . exists e . chicken(x) AND ready(x) AND eat(e) AND patient(e, x)"


@pytest.fixture
def duck() -> OwnSentence:
    return OwnSentence(DUCK, DUCK0, DUCK1, "I saw her lower her head", "I saw the duck that she owns",
                       name0="she ducked", name1="her bird")


@pytest.fixture
def chicken() -> OwnSentence:
    return OwnSentence(CHICKEN, CHICKEN0, CHICKEN1, "the chicken will eat", "someone will eat the chicken",
                       name1="eaten")


def test_the_default_is_the_saved_type_and_says_it_is_borrowed(duck: OwnSentence) -> None:
    assert duck.type == "pp"  # the closest type: the duck has nothing to do with PP attachment
    assert choice_prompt(duck) == duck.prompt("mixed")
    assert describe_examples(duck) == (
        "Few-shot examples: 10 template sentences of PP attachment (the template type closest to your readings, "
        "not your sentence's own ambiguity), 30% shown with LF0.")


def test_another_template_type(duck: OwnSentence) -> None:
    choice = ExampleChoice(ExampleSource.TYPE, "scope")
    built = choice_prompt(duck, choice)
    expected = mixed_prompt(OwnSentence(**{**duck.to_dict(), "type": "scope"}).pair(), 0.3, seed=0, k=10)
    assert [e.utterance for e in built.examples] == [e.utterance for e in expected.examples]
    assert built.words == duck.words and (built.gold_lf0, built.gold_lf1) == duck.readings
    assert "of quantifier scope (the type you chose)" in describe_examples(duck, choice)
    with pytest.raises(OwnSentenceError, match="not a registered ambiguity type"):
        choice_prompt(duck, ExampleChoice(ExampleSource.TYPE, "nope"))


def test_other_library_sentences_with_the_chosen_reading(duck: OwnSentence, chicken: OwnSentence) -> None:
    choice = ExampleChoice(ExampleSource.LIBRARY, picks=((CHICKEN, 1),))
    built = choice_prompt(duck, choice, [duck, chicken])
    shown, other = prompt_text(CHICKEN1), prompt_text(CHICKEN0)  # in the prompt convention (event a, not e)
    assert shown == "exists x . exists a . chicken(x) AND ready(x) AND eat(a) AND patient(a, x)"
    assert [(e.utterance, e.lf, e.alt_lf, e.label) for e in built.examples] == [(CHICKEN, shown, other, 1)]
    assert built.test_utterance == DUCK and (built.gold_lf0, built.gold_lf1) == duck.readings
    assert set(built.words.unary) == {"chicken", "ready", "eat", "duck"}  # the examples' words too
    assert built.render().endswith(f"Human: {CHICKEN}\nComputer: {shown}\n\nHuman: {DUCK}\nComputer:")
    assert describe_examples(duck, choice, [duck, chicken]) == (
        "Few-shot examples: 1 of your own sentences, each with the reading you chose: "
        "“the chicken is ready to eat” as LF1 (eaten).")


@pytest.mark.parametrize(("picks", "message"), [
    ((), "no sentences picked"),
    (((DUCK, 0),), "cannot be its own example"),
    ((("gone", 0),), "not in your library"),
    (((CHICKEN, 2),), "choose LF0 or LF1"),
])
def test_bad_picks_say_what_is_wrong(duck: OwnSentence, chicken: OwnSentence, picks, message: str) -> None:
    choice = ExampleChoice(ExampleSource.LIBRARY, picks=picks)
    with pytest.raises(OwnSentenceError, match=message):
        choice_prompt(duck, choice, [duck, chicken])
    assert message in describe_examples(duck, choice, [duck, chicken])


def test_own_examples(duck: OwnSentence) -> None:
    with pytest.raises(OwnSentenceError, match="no examples of its own"):
        choice_prompt(duck, ExampleChoice(ExampleSource.OWN))
    assert describe_examples(duck, ExampleChoice(ExampleSource.OWN)) == (
        "Few-shot examples: your own 0 example(s) typed with this sentence.")
