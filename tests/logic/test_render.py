"""Rendering the AST as FOL/Lisp, and converting between them (docs/paper-notes.md §7; amp.logic.render)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from amp.logic import lexicon
from amp.logic.ast import Atom, Junction, Quantified
from amp.logic.convert import convert, fol_to_lisp, lisp_to_fol
from amp.logic.reader import parse_lf
from amp.logic.render import render, render_fol, render_lisp

from .strategies import formulas

#: One filled LF per ambiguous template shape of §4.1–4.5 (LF0 and LF1).
AMBIGUOUS_LFS = [
    # PP-a
    ("exists x . exists y . exists z . exists a . exists e . man(x) AND boy(y) AND saw(a) AND agent(a, x) "
    "AND patient(a, y) AND telescope(z) AND have(e) AND agent(e, y) AND patient(e, z)"),
    ("exists x . exists y . exists z . exists a . man(x) AND boy(y) AND telescope(z) AND saw(a) AND "
    "agent(a, x) AND patient(a, y) AND instrument(a, z)"),
    # PP-b, PP-d
    ("exists x . exists y . exists a . exists e . man(x) AND camera(y) AND spied(a) AND agent(a, x) AND "
    "patient(a, Ada) AND have(e) AND agent(e, Ada) AND patient(e, y)"),
    ("exists x . exists a . gloves(x) AND picked_up(a) AND agent(a, Marie) AND patient(a, Alan) AND "
    "instrument(a, x)"),
    # scope, revscope
    "exists x . forall y . exists a . cow(y) AND dog(x) AND saw(a) AND agent(a, y) AND patient(a, x)",
    "forall x . exists y . exists a . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)",
    "forall x . exists y . exists a . bird(y) AND hat(x) AND held(a) AND agent(a, y) AND patient(a, x)",
    # bound
    "exists a . exists e . saw(a) AND agent(a, Marie) AND patient(a, Ada) AND waved(e) AND agent(e, Ada)",
    ("exists x . exists y . exists a . exists e . woman(x) AND girl(y) AND saw(a) AND agent(a, x) AND "
    "patient(a, y) AND smiled(e) AND agent(e, x)"),
    # conj: and-first LF0/LF1, or-first LF0/LF1
    ("exists x . exists a . exists e . exists i . man(x) AND ( drank(a) AND agent(a, x) AND "
    "( ( ate(e) AND agent(e, x) ) OR ( slept(i) AND agent(i, x) ) ) )"),
    ("exists x . exists a . exists e . exists i . man(x) AND ( ( drank(a) AND agent(a, x) AND ate(e) AND "
    "agent(e, x) ) OR ( slept(i) AND agent(i, x) ) )"),
    ("exists x . exists a . exists e . exists i . man(x) AND ( ( ( drank(a) AND agent(a, x) ) OR "
    "( ate(e) AND agent(e, x) ) ) AND slept(i) AND agent(i, x) )"),
    ("exists x . exists a . exists e . exists i . man(x) AND ( ( drank(a) AND agent(a, x) ) OR "
    "( ate(e) AND agent(e, x) AND slept(i) AND agent(i, x) ) )"),
    # unambiguous ones in normal form
    "forall x . cup(x)",
    ("exists x . exists a . exists e . exists i . man(x) AND ( drank(a) AND agent(a, x) AND ate(e) AND "
    "agent(e, x) ) AND slept(i) AND agent(i, x)"),
]

#: §4.6 templates that rely on right-associativity instead of a group: not in render normal form.
NOT_NORMAL = [
    "exists x . exists a . exists e . bird(x) AND ( left(a) AND agent(a, x) ) OR ( walked(e) AND agent(e, x) )",
    ("exists x . exists a . exists e . exists i . man(x) AND ( ( drank(a) AND agent(a, x) ) OR "
    "( ate(e) AND agent(e, x) ) ) OR ( slept(i) AND agent(i, x) )"),
]


def test_render_examples() -> None:
    f = Quantified("exists", "x", Quantified("exists", "a", Junction(
        "AND", (Atom("man", ("x",)), Atom("agent", ("a", "x"))))))
    assert render_fol(f) == "exists x . exists a . man(x) AND agent(a, x)"
    assert render_lisp(f) == "( exists x ( exists a ( AND ( man x ) ( agent a x ) ) ) )"
    assert render(f, "fol") == render_fol(f) and render(f, "lisp") == render_lisp(f)
    with pytest.raises(ValueError):
        render(f, "xml")


def test_groups_and_nested_quantifiers_get_parentheses() -> None:
    a, b, c = Atom("man", ("x",)), Atom("boy", ("y",)), Atom("dog", ("z",))
    assert render_fol(Junction("AND", (Junction("AND", (a, b)), c))) == "( man(x) AND boy(y) ) AND dog(z)"
    assert render_fol(Junction("AND", (a, Junction("OR", (b, c))))) == "man(x) AND ( boy(y) OR dog(z) )"
    q = Quantified("forall", "y", Junction("AND", (b, c)))
    assert render_fol(Junction("AND", (q, a))) == "( forall y . boy(y) AND dog(z) ) AND man(x)"
    assert render_fol(Junction("AND", (a, q))) == "man(x) AND ( forall y . boy(y) AND dog(z) )"


@pytest.mark.parametrize("text", AMBIGUOUS_LFS)
def test_data_lfs_are_in_render_normal_form(text: str) -> None:
    assert render_fol(parse_lf(text, strict=True)) == text


@pytest.mark.parametrize("text", NOT_NORMAL)
def test_right_associative_templates_round_trip_as_trees(text: str) -> None:
    f = parse_lf(text, strict=True)
    assert render_fol(f) != text  # rendered with an explicit group instead
    assert parse_lf(render_fol(f)) == f


@settings(max_examples=200, deadline=None)
@given(formulas)
def test_round_trips(f) -> None:
    text, lisp = render_fol(f), render_lisp(f)
    # parse(render(f)) == f, in both formats and the strict (data) spacing
    assert parse_lf(text, strict=True) == f
    assert parse_lf(lisp, "lisp", strict=True) == f
    # render(parse(s)) == s for s in render normal form
    assert render_fol(parse_lf(text)) == text
    assert render_lisp(parse_lf(lisp, "lisp")) == lisp
    # FOL -> Lisp -> FOL
    assert lisp_to_fol(fol_to_lisp(text)) == text
    assert convert(convert(text, "fol", "lisp"), "lisp", "fol") == text


def test_convert() -> None:
    lisp = "( exists x ( exists a ( AND ( man x ) ( agent a x ) ) ) )"
    assert convert("exists x . exists a . man(x) AND agent(a,x)", "fol", "lisp") == lisp
    assert convert(lisp, "lisp", "fol") == "exists x . exists a . man(x) AND agent(a, x)"
    assert convert("exists x.man(x)", "fol", "fol") == "exists x . man(x)"
    assert convert("(exists x (man x))", "lisp", "lisp") == "( exists x ( man x ) )"
    with pytest.raises(ValueError):
        convert("man(x)", "fol", "sql")


def test_generated_pools_round_trip() -> None:
    generate = pytest.importorskip("amp.data.generate")
    for name in (*generate.AMBIGUOUS_TYPES, *generate.UNAMBIGUOUS_SETS):
        records = generate.pool(name)
        for record in records[:: max(1, len(records) // 300)]:
            f = parse_lf(record.lf, strict=True)
            assert parse_lf(render_fol(f)) == f
            assert parse_lf(render_lisp(f), "lisp", strict=True) == f
            if name in generate.AMBIGUOUS_TYPES:
                assert render_fol(f) == record.lf


def test_lexicon_predicates_render() -> None:
    for pred in lexicon.predicates():
        f = Quantified("exists", "a", Atom(pred, ("a",)))
        assert parse_lf(render_fol(f)) == f
