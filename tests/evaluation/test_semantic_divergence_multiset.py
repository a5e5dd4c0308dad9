"""Unmatched items are counted as a multiset (issue #45; :mod:`amp.evaluation.semantic_divergence`).

A conjunct written twice in one reading and once in the other is a difference: ``man(x) AND
man(x) AND tall(x)`` is not ``man(x) AND tall(x)``.  Hand-written cases first, then properties on
random conjunct lists whose expected difference is computed here from the lists themselves: an
occurrence of a conjunct is unmatched when the other reading holds fewer of it than come before
and at it (so the difference is that of the two lists' counts).
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from amp.evaluation.semantic_divergence import SAME_MEANING, meaning_difference, semantic_divergence


def test_a_conjunct_written_twice_is_a_difference() -> None:
    assert meaning_difference("man(x) AND man(x) AND tall(x)", "man(x) AND tall(x)") == "man (only in the first reading)"
    assert meaning_difference("man(x) AND tall(x)", "man(x) AND man(x) AND tall(x)") == "man (only in the second reading)"
    d = semantic_divergence("exists x . man(x) AND tall(x) AND man(x)", "exists x . tall(x) AND man(x)",
                            normalise=False)
    assert d is not None and d.b is None and d.a is not None
    assert (d.a.text, d.a.start, d.a.end) == ("man(x)", 34, 40)  # the second man(x): the first has its match


def test_extra_copies_on_both_sides_name_one_of_each() -> None:
    a = "man(x) AND man(x) AND tall(x)"
    b = "man(x) AND tall(x) AND tall(x)"
    assert meaning_difference(a, b) == "man versus tall"
    assert meaning_difference(a, a) == SAME_MEANING


# --- properties ---------------------------------------------------------------------------------

PREDICATES = ("man", "tall", "duck", "walked")
SEP = " AND "


def _expected(mine: list[str], theirs: list[str]) -> list[int]:
    """Positions of ``mine`` without a counterpart in ``theirs``: the k-th copy of an atom is
    matched when ``theirs`` holds at least k copies."""
    return [p for p, atom in enumerate(mine) if mine[:p].count(atom) >= theirs.count(atom)]


def _start(atoms: list[str], p: int) -> int:
    return sum(len(a) + len(SEP) for a in atoms[:p])


@st.composite
def same_predicates(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Two conjunct lists over one variable x with the same set of predicates (each reading's x
    is then described alike) but any counts and order."""
    preds = draw(st.lists(st.sampled_from(PREDICATES), min_size=1, max_size=3, unique=True))

    def side() -> list[str]:
        extra = draw(st.lists(st.sampled_from(preds), min_size=max(0, 2 - len(preds)), max_size=4))
        return [f"{p}(x)" for p in draw(st.permutations(preds + extra))]

    return side(), side()



@st.composite
def roles_of_one_man(draw: st.DrawFn) -> list[str]:
    """``man(x)`` once, among any list of two-place atoms from x to a constant (x is the man in
    both readings, whatever else differs)."""
    roles = draw(st.lists(st.builds(lambda p, c: f"{p}(x, {c})", st.sampled_from(("agent", "patient", "have")),
                                    st.sampled_from(("Mary", "John"))), min_size=1, max_size=5))
    return draw(st.permutations(["man(x)", *roles]))



def _check(a: list[str], b: list[str]) -> None:
    lf_a, lf_b = SEP.join(a), SEP.join(b)
    only_a, only_b = _expected(a, b), _expected(b, a)
    assert (not only_a and not only_b) == (Counter(a) == Counter(b))  # the oracle is the counts' difference
    assert Counter(a[p] for p in only_a) == Counter(a) - Counter(b)
    d = semantic_divergence(lf_a, lf_b, normalise=False)
    if not only_a and not only_b:
        assert d is None
        assert meaning_difference(lf_a, lf_b) == SAME_MEANING
        return
    assert d is not None
    for found, atoms, only in ((d.a, a, only_a), (d.b, b, only_b)):
        if not only:
            assert found is None
            continue
        assert found is not None
        start = _start(atoms, only[0])
        assert (found.text, found.start, found.end) == (atoms[only[0]], start, start + len(atoms[only[0]]))
    differs = meaning_difference(lf_a, lf_b)  # normalised: the conjuncts' order may change, not the counts
    gists_a = {atom.split("(")[0] for atom in (Counter(a) - Counter(b))}  # a gist is the predicate
    gists_b = {atom.split("(")[0] for atom in (Counter(b) - Counter(a))}
    if not gists_b:
        assert differs in {f"{g} (only in the first reading)" for g in gists_a}
    elif not gists_a:
        assert differs in {f"{g} (only in the second reading)" for g in gists_b}
    else:
        assert differs != SAME_MEANING and " versus " in differs


@settings(max_examples=100, deadline=None)
@given(same_predicates())
def test_counts_decide_over_one_variable_described_alike(pair: tuple[list[str], list[str]]) -> None:
    _check(*pair)


@settings(max_examples=100, deadline=None)
@given(roles_of_one_man(), roles_of_one_man())
def test_counts_decide_over_two_place_atoms(a: list[str], b: list[str]) -> None:
    _check(a, b)
