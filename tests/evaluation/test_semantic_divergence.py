"""Semantic divergence (issue #11 point 4): the first item where two readings differ in meaning.

Expectations are read off the pool LFs themselves (every template of every type, FOL and Lisp):
PP attachment differs at ``have`` versus ``instrument``, scope at the outermost quantifier, the
bound pronoun at the agent of the second event, conjunction at the grouping.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from amp.data import generate
from amp.evaluation.semantic_divergence import (
    SAME_MEANING,
    SemanticDivergence,
    inspection_semantic,
    meaning_difference,
    semantic_divergence,
    token_indices,
)
from amp.logic.errors import LFParseError


def _one_per_template(type_: str) -> list[generate.AmbiguousPair]:
    """The first pair of every template of a type, plus every 211th pair of the pool."""
    pairs = generate.pairs(type_)
    firsts = {p.template: p for p in reversed(pairs)}
    return list(firsts.values()) + pairs[::211]


def _lisp(pair: generate.AmbiguousPair) -> tuple[str, str]:
    a, b = generate.to_lisp([pair.lf0, pair.lf1])
    return a.lf, b.lf


def _check_spans(d: SemanticDivergence) -> None:
    for lf, item in ((d.lf_a, d.a), (d.lf_b, d.b)):
        assert item is not None
        assert lf[item.start:item.end] == item.text


def test_the_classic_pp_pair_differs_at_have_versus_instrument() -> None:
    pair = generate.find_pair("the boy saw the man with the telescope")
    assert pair is not None
    d = semantic_divergence(pair.lf0.lf, pair.lf1.lf)
    assert d is not None and d.a is not None and d.b is not None
    assert (d.a.text, d.b.text) == ("have(e)", "instrument(a, z)")
    assert d.description == "have versus instrument"
    assert d.a.start == pair.lf0.lf.index("have(e)") and d.b.start == pair.lf1.lf.index("instrument(a, z)")
    assert (d.a.kind, d.b.kind) == ("conjunct", "conjunct")


@pytest.mark.parametrize("lisp", [False, True])
def test_pp_pairs(lisp: bool) -> None:
    for pair in _one_per_template("pp"):
        a, b = _lisp(pair) if lisp else (pair.lf0.lf, pair.lf1.lf)
        d = semantic_divergence(a, b, "lisp" if lisp else "fol")
        assert d is not None
        _check_spans(d)
        have = r"\( have \w+ \)" if lisp else r"have\(\w+\)"
        instrument = r"\( instrument \w+ \w+ \)" if lisp else r"instrument\(\w+, \w+\)"
        assert d.a is not None and d.a.text == re.search(have, a).group(0)  # type: ignore[union-attr]
        assert d.b is not None and d.b.text == re.search(instrument, b).group(0)  # type: ignore[union-attr]
        assert d.description == "have versus instrument"


@pytest.mark.parametrize("type_", ["scope", "revscope"])
def test_scope_pairs_differ_at_the_outermost_quantifier(type_: str) -> None:
    for pair in _one_per_template(type_):
        d = semantic_divergence(pair.lf0.lf, pair.lf1.lf)
        assert d is not None and d.a is not None and d.b is not None
        _check_spans(d)
        first_a = re.match(r"(exists|forall) \w+", pair.lf0.lf).group(0)  # type: ignore[union-attr]
        first_b = re.match(r"(exists|forall) \w+", pair.lf1.lf).group(0)  # type: ignore[union-attr]
        assert (d.a.text, d.a.start, d.a.kind) == (first_a, 0, "quantifier")
        assert (d.b.text, d.b.start, d.b.kind) == (first_b, 0, "quantifier")
        assert first_a.split()[0] != first_b.split()[0]
        assert re.fullmatch(r"exists \w+ versus forall \w+", d.description)
    scope = semantic_divergence("exists x . forall y . exists a . bird(y) AND boy(x) AND saw(a) AND agent(a, y) AND patient(a, x)",
                                "forall x . exists y . exists a . bird(x) AND boy(y) AND saw(a) AND agent(a, x) AND patient(a, y)")
    assert scope is not None and scope.description == "exists boy versus forall bird"


def test_bound_pairs_differ_at_the_agent_of_the_second_event() -> None:
    for pair in _one_per_template("bound"):
        d = semantic_divergence(pair.lf0.lf, pair.lf1.lf)
        assert d is not None and d.a is not None and d.b is not None
        _check_spans(d)
        last = r"agent\(\w+, \w+\)$"
        assert d.a.text == re.search(last, pair.lf0.lf).group(0)  # type: ignore[union-attr]
        assert d.b.text == re.search(last, pair.lf1.lf).group(0)  # type: ignore[union-attr]
        assert d.a.start == len(pair.lf0.lf) - len(d.a.text)
        assert d.description.startswith("agent(waved, ") or d.description.startswith("agent(")


def test_conj_pairs_differ_at_the_grouping() -> None:
    for pair in _one_per_template("conj"):
        d = semantic_divergence(pair.lf0.lf, pair.lf1.lf)
        assert d is not None and d.a is not None and d.b is not None
        _check_spans(d)
        for lf, item in ((pair.lf0.lf, d.a), (pair.lf1.lf, d.b)):
            group = lf[lf.index(" AND ( ") + len(" AND ( "):-len(" )")]  # the group after the subject
            assert item.text == group
    and_first = generate.pairs("conj", template="conj/and_first")[0]
    d = semantic_divergence(and_first.lf0.lf, and_first.lf1.lf)
    assert d is not None
    verbs = re.findall(r"(\w+)\(a\)|(\w+)\(e\)|(\w+)\(i\)", and_first.lf0.lf)
    v1, v2, v3 = ("".join(v) for v in verbs)
    assert d.description == f"{v1} and ({v2} or {v3}) versus ({v1} and {v2}) or {v3}"


def test_same_meaning_gives_none() -> None:
    lf = "exists x . exists a . man(x) AND saw(a) AND agent(a, x)"
    assert semantic_divergence(lf, lf) is None
    renamed = "exists y . exists e . saw(e) AND man(y) AND agent(e, y)"  # renamed, reordered
    assert semantic_divergence(lf, renamed) is None
    swapped = "exists a . exists x . man(x) AND saw(a) AND agent(a, x)"  # ∃∃ commute
    assert semantic_divergence(lf, swapped) is None
    grouped = "exists x . exists a . man(x) AND ( saw(a) AND agent(a, x) )"  # one connective
    assert semantic_divergence(lf, grouped) is None


# The README's own sentence, as the prompts spell it and as a teacher might type it (issue #26).
DUCK0 = "exists a . exists e . saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)"
DUCK1 = "exists x . exists a . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)"
TYPED0 = "exists q . exists b . saw(b) AND agent(b, Me) AND duck(q) AND agent(q, Her) AND patient(b, q)"
TYPED1 = "exists e . exists bird . duck(bird) AND have(bird, Her) AND saw(e) AND agent(e, Me) AND patient(e, bird)"


def test_a_teachers_spelling_diverges_where_the_prompt_spelling_does() -> None:
    """Issue #26 point 3: odd letters and quantifier order change neither the items nor the spans."""
    expected = semantic_divergence(DUCK0, DUCK1)
    assert expected is not None and expected.description == "agent versus have"
    assert (expected.lf_a, expected.lf_b) == (DUCK0, DUCK1)  # already in the convention
    assert semantic_divergence(TYPED0, TYPED1) == expected
    assert semantic_divergence(TYPED0, DUCK1) == expected
    pair = generate.find_pair("the boy saw the man with the telescope")
    assert pair is not None
    renamed = {"x": "p", "y": "q", "z": "r", "a": "b", "e": "c"}
    spelled0 = re.sub(r"\b([xyzae])\b", lambda m: renamed[m.group(1)], pair.lf0.lf)
    assert spelled0 != pair.lf0.lf
    assert semantic_divergence(spelled0, pair.lf1.lf) == semantic_divergence(pair.lf0.lf, pair.lf1.lf)


def test_naming_or_order_only_is_said_to_mean_the_same() -> None:
    assert meaning_difference(TYPED0, DUCK0) == SAME_MEANING == "the two LFs mean the same"
    assert semantic_divergence(TYPED1, DUCK1) is None
    assert meaning_difference(DUCK0, DUCK1) == "agent versus have"


def test_identical_atoms_are_never_named_as_the_difference() -> None:
    """``agent(a, x)`` reads the same in both, but x is the chicken in one and the ready one in the
    other: the marker names an item that reads differently."""
    a = "exists x . exists a . chicken(x) AND eat(a) AND agent(a, x)"
    b = "exists x . exists y . exists a . ready(x) AND chicken(y) AND eat(a) AND agent(a, x) AND patient(a, y)"
    d = semantic_divergence(a, b)
    assert d is not None
    texts = (d.a.text if d.a else None, d.b.text if d.b else None)
    assert texts[0] != texts[1] and "agent(a, x)" not in texts
    assert d.b is not None and d.b.text == "ready(x)"


def test_one_sided_difference_and_errors() -> None:
    d = semantic_divergence("exists x . man(x)", "exists x . man(x) AND tall(x)")
    assert d is not None and d.a is None and d.b is not None
    assert d.b.text == "tall(x)" and d.description == "tall (only in the second reading)"
    with pytest.raises(LFParseError):
        semantic_divergence("exists x . man(x) AND", "exists x . man(x)")


def test_record_round_trips() -> None:
    pair = generate.find_pair("the boy saw the man with the telescope")
    assert pair is not None
    d = semantic_divergence(pair.lf0.lf, pair.lf1.lf)
    assert d is not None and SemanticDivergence.from_dict(d.to_dict()) == d


def test_token_indices_skip_the_leading_space() -> None:
    lf = "exists x . man(x) AND have(x)"
    tokens = [" exists", " x", " .", " man", "(x", ")", " AND", " have", "(x", ")", "\n"]
    start = lf.index("have(x)")
    assert token_indices(tokens, lf, start, start + len("have(x)")) == (7, 8, 9)
    assert token_indices(tokens, lf, 0, len("exists x")) == (0, 1)
    assert token_indices([" foo", " bar"], lf, 0, 6) == ()  # the tokens do not spell the LF


def test_inspection_semantic_uses_the_two_heatmap_rows() -> None:
    pair = generate.find_pair("the boy saw the man with the telescope")
    assert pair is not None
    golds = {"lf0": pair.lf0.lf, "lf1": pair.lf1.lf}
    ins = SimpleNamespace(predicted=SimpleNamespace(text=" " + pair.lf1.lf), alternative="lf0",
                          alternative_lf=pair.lf0.lf, fmt="fol", **golds)
    d = inspection_semantic(ins)
    assert d is not None and d.a is not None and d.a.text.startswith("instrument(")
    # no beam, or a beam that is no LF: the two gold readings (the other one first)
    for predicted in (None, SimpleNamespace(text="exists x . ((")):
        gold = inspection_semantic(SimpleNamespace(predicted=predicted, alternative="lf1",
                                                   alternative_lf=pair.lf1.lf, fmt="fol", **golds))
        assert gold == semantic_divergence(pair.lf0.lf, pair.lf1.lf)
