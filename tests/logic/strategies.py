"""Hypothesis strategies and AST transformations shared by the tests of :mod:`amp.logic`."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from amp.logic import lexicon
from amp.logic.ast import Atom, Formula, Junction, Quantified, free_variables

UNARY = ("man", "boy", "dog", "saw", "ate", "telescope", "have", "picked_up")
BINARY = ("agent", "patient", "instrument")
VARIABLES = lexicon.VARIABLES  # x y z a e i
CONSTANTS = ("Mary", "Galileo")
#: Names for fresh bound variables (the grammar accepts these and v0…v15).
FRESH = lexicon.VARIABLES + tuple(f"v{i}" for i in range(16))

variables = st.sampled_from(VARIABLES)
atoms = st.one_of(
    st.builds(lambda p, v: Atom(p, (v,)), st.sampled_from(UNARY), variables),
    st.builds(lambda p, v, w: Atom(p, (v, w)), st.sampled_from(BINARY), variables,
              st.one_of(variables, st.sampled_from(CONSTANTS))),
)


def _extend(children: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
    return st.one_of(
        st.builds(lambda op, kids: Junction(op, tuple(kids)), st.sampled_from(("AND", "OR")),
                  st.lists(children, min_size=2, max_size=4)),
        st.builds(Quantified, st.sampled_from(("exists", "forall")), variables, children),
    )


#: Any formula over the test vocabulary (free variables allowed).
formulas = st.recursive(atoms, _extend, max_leaves=10)

def _junctions(children: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
    return st.builds(lambda op, kids: Junction(op, tuple(kids)),
                     st.sampled_from(("AND", "OR")), st.lists(children, min_size=2, max_size=4))


#: Quantifier-free bodies (junctions of atoms, any nesting).
bodies = st.recursive(atoms, _junctions, max_leaves=10)
small_bodies = st.recursive(atoms, _junctions, max_leaves=4)


@st.composite
def closed(draw: st.DrawFn, inner: st.SearchStrategy[Formula] = formulas) -> Formula:
    """A formula whose free variables are bound by a random prefix (random kinds and order)."""
    f = draw(inner)
    free = sorted(free_variables(f))
    free = draw(st.permutations(free))
    for var in free:
        f = Quantified(draw(st.sampled_from(("exists", "forall"))), var, f)
    return f


# ---------------------------------------------------------------------------- transformations


def shuffle_children(f: Formula, rng: random.Random) -> Formula:
    """Reorder the children of every junction."""
    if isinstance(f, Atom):
        return f
    if isinstance(f, Quantified):
        return Quantified(f.quantifier, f.var, shuffle_children(f.body, rng))
    kids = [shuffle_children(c, rng) for c in f.children]
    rng.shuffle(kids)
    return Junction(f.op, tuple(kids))


def flatten(f: Formula) -> Formula:
    """Merge nested same-operator junctions."""
    if isinstance(f, Atom):
        return f
    if isinstance(f, Quantified):
        return Quantified(f.quantifier, f.var, flatten(f.body))
    kids: list[Formula] = []
    for c in f.children:
        c = flatten(c)
        if isinstance(c, Junction) and c.op == f.op:
            kids.extend(c.children)
        else:
            kids.append(c)
    return Junction(f.op, tuple(kids))


def rebracket(f: Formula, rng: random.Random) -> Formula:
    """Flatten, then regroup random runs of children of a junction into same-op sub-junctions."""
    f = flatten(f)

    def go(node: Formula) -> Formula:
        if isinstance(node, Atom):
            return node
        if isinstance(node, Quantified):
            return Quantified(node.quantifier, node.var, go(node.body))
        kids = [go(c) for c in node.children]
        while len(kids) > 2 and rng.random() < 0.6:
            i = rng.randrange(len(kids) - 1)
            j = rng.randrange(i + 2, min(len(kids), i + 4) + 1)
            if j - i == len(kids):
                break
            kids[i:j] = [Junction(node.op, tuple(kids[i:j]))]
        return Junction(node.op, tuple(kids))

    return go(f)


def alpha_rename(f: Formula, rng: random.Random) -> Formula:
    """Rename every bound variable to a fresh name (unique per binder, so nothing is captured)."""
    pool = [n for n in FRESH if n not in free_variables(f)]
    rng.shuffle(pool)
    fresh = iter(pool)

    def go(node: Formula, env: dict[str, str]) -> Formula:
        if isinstance(node, Atom):
            return Atom(node.pred, tuple(env.get(a, a) for a in node.args))
        if isinstance(node, Junction):
            return Junction(node.op, tuple(go(c, env) for c in node.children))
        new = next(fresh)
        return Quantified(node.quantifier, new, go(node.body, {**env, node.var: new}))

    return go(f, {})


def binder_count(f: Formula) -> int:
    if isinstance(f, Atom):
        return 0
    if isinstance(f, Junction):
        return sum(binder_count(c) for c in f.children)
    return 1 + binder_count(f.body)


def permute_blocks(f: Formula, rng: random.Random) -> Formula:
    """Shuffle the variables of every run of adjacent same-kind quantifiers."""
    if isinstance(f, Atom):
        return f
    if isinstance(f, Junction):
        return Junction(f.op, tuple(permute_blocks(c, rng) for c in f.children))
    run = [f.var]
    body = f.body
    while isinstance(body, Quantified) and body.quantifier == f.quantifier:
        run.append(body.var)
        body = body.body
    rng.shuffle(run)
    out = permute_blocks(body, rng)
    for var in reversed(run):
        out = Quantified(f.quantifier, var, out)
    return out


def add_vacuous(f: Formula, rng: random.Random) -> Formula:
    """Insert a quantifier over an unused fresh variable somewhere."""
    used = {a for atom in _atoms(f) for a in atom.args} | _binders(f)
    fresh = [n for n in FRESH if n not in used]
    if not fresh:
        return f
    var = rng.choice(fresh)
    q = rng.choice(("exists", "forall"))

    def go(node: Formula) -> Formula:
        if rng.random() < 0.3 or isinstance(node, Atom):
            return Quantified(q, var, node)
        if isinstance(node, Junction):
            k = rng.randrange(len(node.children))
            kids = list(node.children)
            kids[k] = go(kids[k])
            return Junction(node.op, tuple(kids))
        return Quantified(node.quantifier, node.var, go(node.body))

    return go(f)


def _atoms(f: Formula) -> list[Atom]:
    if isinstance(f, Atom):
        return [f]
    if isinstance(f, Junction):
        return [a for c in f.children for a in _atoms(c)]
    return _atoms(f.body)


def _binders(f: Formula) -> set[str]:
    if isinstance(f, Atom):
        return set()
    if isinstance(f, Junction):
        return set().union(*(_binders(c) for c in f.children))
    return {f.var} | _binders(f.body)
