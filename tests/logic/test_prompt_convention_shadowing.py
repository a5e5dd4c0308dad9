"""Shadowed and nested binders in the prompt convention (issue #45; docs/paper-notes.md §16;
:mod:`amp.logic.prompt_convention`).

A binder that an inner binder of the same name shadows binds nothing the body uses: it is named
as an unused variable (an entity letter, last in its run), never with the event letters of the
variable that shadows it.  Hand-written renderings first, literal; then properties on random
formulas with shadowing and nesting, each checked by a rule written here (an alpha-equivalence
check, the scopes of the binders, the role atoms), not by the renderer.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amp.logic.ast import Atom, Formula, Junction, Quantified, free_variables, is_variable, with_prefix
from amp.logic.canonical import equivalent
from amp.logic.prompt_convention import prompt_form, prompt_text
from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.vocabulary import Format


@pytest.mark.parametrize(("typed", "expected"), [
    ("exists b . exists b . walked(b) AND agent(b, Her)",
     "exists a . exists x . walked(a) AND agent(a, Her)"),
    ("exists b . exists q . exists b . man(q) AND walked(b) AND agent(b, q)",
     "exists x . exists a . exists y . man(x) AND walked(a) AND agent(a, x)"),
    ("exists b . forall b . walked(b) AND agent(b, Her)",  # runs never swap: the shadowed one stays outside
     "exists x . forall a . walked(a) AND agent(a, Her)"),
    ("exists b . exists b . man(b) AND ( exists b . walked(b) AND agent(b, Her) )",
     "exists x . exists y . man(x) AND ( exists a . walked(a) AND agent(a, Her) )"),
    ("exists b . walked(b) AND agent(b, Her) AND ( exists b . man(b) )",  # nouns first (§16)
     "exists a . ( exists x . man(x) ) AND walked(a) AND agent(a, Her)"),
    ("exists e . exists e . walked(e)",  # no role atom: no event, shadowed or not
     "exists x . exists y . walked(x)"),
])
def test_a_shadowed_binder_never_takes_the_event_letters(typed: str, expected: str) -> None:
    assert prompt_text(typed) == expected
    assert prompt_text(expected) == expected


# --- properties on random shadowing and nesting ------------------------------------------------

#: Binder names: the convention's own letters among others, so binders often shadow each other.
NAMES = ("b", "q", "w", "x", "a", "e")
CONSTANTS = ("Her", "Mary")
UNARY = ("man", "duck", "walked", "saw")
#: The thematic roles whose first argument is an event (docs/paper-notes.md §16), written here.
ROLES = ("agent", "patient", "instrument")
EVENT_NAME = re.compile(r"[aei][0-9]*")
ENTITY_NAME = re.compile(r"[xyz][0-9]*")

names = st.sampled_from(NAMES)
atoms = st.one_of(
    st.builds(lambda p, v: Atom(p, (v,)), st.sampled_from(UNARY), names),
    st.builds(lambda p, v, w: Atom(p, (v, w)), st.sampled_from(ROLES), names,
              st.one_of(names, st.sampled_from(CONSTANTS))),
)
prefixes = st.lists(st.tuples(st.sampled_from(("exists", "forall")), names), min_size=1, max_size=4)


def _extend(children: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
    return st.one_of(
        st.builds(lambda op, kids: Junction(op, tuple(kids)), st.sampled_from(("AND", "OR")),
                  st.lists(children, min_size=2, max_size=3)),
        st.builds(lambda prefix, body: with_prefix(tuple(prefix), body), prefixes, children),
    )


#: Formulas with chains of quantifiers (repeated names: shadowing) nested under junctions.
formulas = st.recursive(atoms, _extend, max_leaves=8)

#: Well-sorted formulas: event names only as events (a verb, a role's first argument), entity
#: names only as entities, binders of either name anywhere (shadowing across sorts), and a
#: junction's children atoms or quantified formulas (no re-bracketed group directly inside one).
EVENTS, ENTITIES = ("b", "e", "w"), ("q", "x", "u")
sorted_atoms = st.one_of(
    st.builds(lambda p, v: Atom(p, (v,)), st.sampled_from(("man", "duck")), st.sampled_from(ENTITIES)),
    st.builds(lambda p, v: Atom(p, (v,)), st.sampled_from(("walked", "saw")), st.sampled_from(EVENTS)),
    st.builds(lambda p, v, w: Atom(p, (v, w)), st.sampled_from(ROLES), st.sampled_from(EVENTS),
              st.sampled_from((*ENTITIES, *CONSTANTS))),
)
sorted_prefixes = st.lists(st.tuples(st.sampled_from(("exists", "forall")), st.sampled_from((*EVENTS, *ENTITIES))),
                           min_size=1, max_size=4)


def _sorted_extend(children: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
    quantified = st.builds(lambda prefix, body: with_prefix(tuple(prefix), body), sorted_prefixes, children)
    return st.one_of(quantified, st.builds(lambda op, kids: Junction(op, tuple(kids)), st.sampled_from(("AND", "OR")),
                                           st.lists(st.one_of(sorted_atoms, quantified), min_size=2, max_size=3)))


sorted_formulas = st.recursive(sorted_atoms, _sorted_extend, max_leaves=8)


@st.composite
def closed_formulas(draw: st.DrawFn) -> Formula:
    """A formula whose free variables get binders of their own, outside a random chain."""
    f = draw(formulas)
    for var in draw(st.permutations(sorted(free_variables(f)))):
        f = Quantified(draw(st.sampled_from(("exists", "forall"))), var, f)
    return f


def alpha_equivalent(f: Formula, g: Formula, env_f: dict[str, int] | None = None,
                     env_g: dict[str, int] | None = None, depth: int = 0) -> bool:
    """Equal up to the names of bound variables: each occurrence refers to the binder at the
    same depth (the innermost binder of its name), free variables and constants are equal."""
    env_f, env_g = env_f or {}, env_g or {}
    if isinstance(f, Atom) and isinstance(g, Atom):
        if f.pred != g.pred or len(f.args) != len(g.args):
            return False
        for a, b in zip(f.args, g.args, strict=True):
            ref_a = env_f.get(a) if is_variable(a) else None
            ref_b = env_g.get(b) if is_variable(b) else None
            if ref_a != ref_b or (ref_a is None and a != b):
                return False
        return True
    if isinstance(f, Junction) and isinstance(g, Junction):
        return (f.op == g.op and len(f.children) == len(g.children)
                and all(alpha_equivalent(c, d, env_f, env_g, depth)
                        for c, d in zip(f.children, g.children, strict=True)))
    if isinstance(f, Quantified) and isinstance(g, Quantified):
        return f.quantifier == g.quantifier and alpha_equivalent(
            f.body, g.body, {**env_f, f.var: depth}, {**env_g, g.var: depth}, depth + 1)
    return False


def binders(f: Formula, outer: tuple[str, ...] = ()) -> list[tuple[Quantified, tuple[str, ...]]]:
    """Every quantifier of ``f`` with the names bound around it."""
    if isinstance(f, Atom):
        return []
    if isinstance(f, Junction):
        return [b for c in f.children for b in binders(c, outer)]
    return [(f, outer), *binders(f.body, (*outer, f.var))]


def used_as_event(var: str, f: Formula) -> bool:
    """Whether ``var``, free in ``f``, is the first argument of a role atom of ``f``."""
    if isinstance(f, Atom):
        return f.pred in ROLES and len(f.args) == 2 and f.args[0] == var
    if isinstance(f, Junction):
        return any(used_as_event(var, c) for c in f.children)
    return f.var != var and used_as_event(var, f.body)


@settings(max_examples=100, deadline=None)
@given(sorted_formulas)
def test_rendering_a_rendering_changes_nothing(f: Formula) -> None:
    out = prompt_form(f)
    assert prompt_form(out) == out
    assert prompt_text(render(out, Format.FOL)) == render(out, Format.FOL)


@settings(max_examples=100, deadline=None)
@given(formulas)
def test_the_rendering_reads_back_in_both_formats(f: Formula) -> None:
    out = prompt_form(f)
    for fmt in Format:
        assert parse_lf(render(out, fmt), fmt) == out
        assert prompt_text(render(f, fmt), fmt) == render(out, fmt)


@settings(max_examples=100, deadline=None)
@given(formulas)
def test_naming_alone_is_an_alpha_renaming_and_reordering_keeps_the_meaning(f: Formula) -> None:
    assert alpha_equivalent(prompt_form(f, reorder=False), f)
    assert equivalent(prompt_form(f), f)


@settings(max_examples=100, deadline=None)
@given(st.one_of(formulas, closed_formulas()))
def test_every_binder_gets_its_own_convention_letter(f: Formula) -> None:
    out = prompt_form(f)
    free = free_variables(f)
    assert free_variables(out) == free  # free variables keep their names; bound ones stay bound
    found = binders(out)
    names = [q.var for q, _ in found]
    assert len(set(names)) == len(names) and not set(names) & free  # no shadowing, no capture
    assert all(q.var not in outer for q, outer in found)  # no two nested binders share a letter
    for q, _ in found:
        event = used_as_event(q.var, q.body)
        assert (EVENT_NAME if event else ENTITY_NAME).fullmatch(q.var), (render(f, Format.FOL), render(out, Format.FOL))
