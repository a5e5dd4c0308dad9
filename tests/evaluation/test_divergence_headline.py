"""The Parse & inspect headline by meaning (issue #40 point 4): where the readings part in meaning
first, then the model's token there, never a variable name."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from amp.data import generate
from amp.evaluation.divergence_headline import divergence_headline
from amp.evaluation.semantic_divergence import SAME_MEANING
from amp.parser.search.divergence import divergence
from tests.reporting.test_token_heatmap_semantic import Step  # a token step as the heatmaps read it


def steps(lf: str, seed: int = 0) -> tuple[Step, ...]:
    """Word-level tokens as the decoder frames an LF (leading space), each with its own raw and
    grammar probability (so a test can tell which token's probability was taken)."""
    tokens = re.findall(r"\s*\w+|\s*\S", " " + lf)
    assert "".join(tokens) == " " + lf
    return tuple(Step(t, sum(map(ord, t)), round(0.01 * ((7 * i + seed) % 97) + 0.005, 3),
                      round(0.01 * ((11 * i + seed) % 89) + 0.002, 3)) for i, t in enumerate(tokens))


PAIR = generate.find_pair("the boy saw the man with the telescope")
assert PAIR is not None
LF0, LF1 = PAIR.lf0.lf, PAIR.lf1.lf


def inspection(parse: str | None, alternative: str, *, lf0: str = LF0, lf1: str = LF1) -> SimpleNamespace:
    """The fields of an Inspection the headline reads."""
    alt_lf = lf1 if alternative == "lf1" else lf0
    top = steps(parse, seed=3) if parse is not None else ()
    alt = steps(alt_lf, seed=5)
    return SimpleNamespace(predicted=None if parse is None else SimpleNamespace(text=" " + parse), predicted_steps=top,
                           alternative=alternative, alternative_lf=alt_lf, alternative_steps=alt, lf0=lf0, lf1=lf1,
                           fmt="fol", divergence=divergence(top, alt) if parse is not None else None)


def code(sentence) -> list[str]:
    return [p.text for p in sentence if p.code]


def test_the_readings_part_at_their_own_items_first() -> None:
    head = divergence_headline(inspection(LF0, "lf1"))
    assert code(head.meaning) == ["have(e)", "instrument(a, z)"]
    assert "".join(p.text for p in head.meaning) == "The readings part in meaning at have(e) (LF0) versus instrument(a, z) (LF1)."
    assert head.text.startswith("The readings part in meaning at have(e)")


@pytest.mark.parametrize(("parse", "alternative", "word", "other"), [(LF0, "lf1", "have", "instrument"),
                                                                    (LF1, "lf0", "instrument", "have")])
def test_the_token_is_the_first_of_the_parse_item_that_differs_in_meaning(parse, alternative, word, other) -> None:
    ins = inspection(parse, alternative)
    head = divergence_headline(ins)
    index = [s.token.strip() for s in ins.predicted_steps].index(word)
    assert (head.basis, head.index, head.prob) == ("meaning", index, ins.predicted_steps[index].prob)
    j = [s.token.strip() for s in ins.alternative_steps].index(other)
    assert code(head.tokens) == [word, other]
    assert f"at its token {index}: it wrote " in head.text and f"(p = {ins.predicted_steps[index].prob:.3f})" in head.text
    assert f"(p = {ins.alternative_steps[j].prob:.3f}, its token {j})" in head.text
    assert ins.divergence.index != index  # the token divergence is elsewhere (the quantifier prefix)


def test_a_parse_that_parts_on_a_variable_name_is_headlined_on_its_meaning() -> None:
    """The issue's case: the tokens part at `a` versus `x` (a variable); the headline's token is
    where the parse's meaning differs, in the parse's own spelling."""
    parse = ("exists a . exists x . exists y . exists z . boy(x) AND man(y) AND telescope(z) AND saw(a) "
             "AND agent(a, x) AND patient(a, y) AND instrument(a, z)")
    ins = inspection(parse, "lf0")
    assert ins.divergence.token_a.strip() == "a" and ins.divergence.token_b.strip() == "x"
    head = divergence_headline(ins)
    index = [s.token.strip() for s in ins.predicted_steps].index("instrument")
    assert (head.basis, head.index, head.prob) == ("meaning", index, ins.predicted_steps[index].prob)
    assert code(head.tokens)[0] == "instrument"


def test_grammar_probabilities_on_request() -> None:
    ins = inspection(LF0, "lf1")
    head = divergence_headline(ins, grammar=True)
    assert head.prob == ins.predicted_steps[head.index].prob_grammar != ins.predicted_steps[head.index].prob


def test_a_parse_that_is_no_lf_falls_back_to_the_first_differing_token_and_says_why() -> None:
    ins = inspection("exists x . boy(x) AND", "lf0")
    head = divergence_headline(ins)
    assert (head.basis, head.index, head.prob) == ("tokens", ins.divergence.index, ins.divergence.prob_a)
    assert "not a well-formed LF" in head.text and f"at token {ins.divergence.index}" in head.text
    assert code(head.meaning) == ["have(e)", "instrument(a, z)"]  # the readings' difference still comes first


def test_a_parse_meaning_the_other_reading_says_so_and_falls_back() -> None:
    renamed = LF1.replace("(a,", "(i,").replace("(a)", "(i)").replace("exists a", "exists i")
    ins = inspection(renamed, "lf1")
    head = divergence_headline(ins)
    assert f"The model's parse and the LF1 reading: {SAME_MEANING}" in head.text
    assert (head.basis, head.index) == ("tokens", ins.divergence.index)


def test_readings_that_mean_the_same_say_so_in_words() -> None:
    lf = "exists x . exists y . boy(x) AND cat(y) AND saw(x, y)"
    odd = "exists y . exists x . boy(y) AND cat(x) AND saw(y, x)"
    head = divergence_headline(inspection(lf, "lf1", lf0=lf, lf1=odd))
    assert not code(head.meaning) and SAME_MEANING in head.text


def test_no_beam() -> None:
    head = divergence_headline(inspection(None, "lf0"))
    assert (head.basis, head.index, head.prob) == ("none", None, None)
    assert "The model produced no beam." in head.text


def test_a_parse_saying_less_names_what_it_lacks_and_has_no_token() -> None:
    ins = inspection(LF1.replace(" AND instrument(a, z)", ""), "lf1")
    head = divergence_headline(ins)
    assert (head.basis, head.index, head.prob) == ("meaning", None, None)
    assert code(head.tokens) == ["instrument(a, z)", "instrument"] and "lacks" in head.text
