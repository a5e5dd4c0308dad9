"""The prompt convention (docs/paper-notes.md §16, §10; amp.logic.prompt_convention).

Its conjunct order has its own tests (tests/logic/test_conjunct_order.py); here every pool LF,
ordered without its sentence (ties keep their written order), is itself again.

The property the issue states (issue #26 point 1): for every LF of every ambiguous pool, in both
formats, renaming its variables by a bijection (multi-letter names and the convention's own
letters included) and reordering adjacent same-kind quantifiers, then rendering, gives back the
original text exactly.  Every pool LF is covered; the bijections and orders are sampled with a
fixed seed.  Two paths: the AST path gives every LF its own bijection and order; the text path
(through the reader) draws them from a small fixed set, so the reader's shape memo keeps it fast.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

import pytest

from amp.data.generate import AMBIGUOUS_TYPES, UNAMBIGUOUS_SETS, pool, to_lisp
from amp.logic.ast import Atom, Formula, Junction, Quantified, quantifier_prefix, with_prefix
from amp.logic.canonical import equivalent
from amp.logic.errors import LFParseError
from amp.logic.prompt_convention import names_follow, prompt_form, prompt_text, same_spelling
from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.vocabulary import Format

CONVENTION = ("x", "y", "z", "a", "e", "i")
#: Names a bijection may use: the convention's own letters, other letters, multi-letter names.
NAMES = (*CONVENTION, "b", "w", "v3", "foo", "ev", "x1", "a1", "zz", "entity", "q")


def rename(f: Formula, mapping: dict[str, str]) -> Formula:
    if isinstance(f, Atom):
        return Atom(f.pred, tuple(mapping.get(a, a) for a in f.args))
    if isinstance(f, Junction):
        return Junction(f.op, tuple(rename(c, mapping) for c in f.children))
    return Quantified(f.quantifier, mapping.get(f.var, f.var), rename(f.body, mapping))


def shuffle_runs(f: Formula, rng: random.Random) -> Formula:
    """Reorder the quantifiers within each run of the same kind in the leading prefix."""
    prefix, body = quantifier_prefix(f)
    out: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    for q in prefix:
        if run and q[0] != run[0][0]:
            rng.shuffle(run)
            out.extend(run)
            run = []
        run.append(q)
    rng.shuffle(run)
    out.extend(run)
    return with_prefix(tuple(out), body)


def bijection(variables: list[str], rng: random.Random) -> dict[str, str]:
    return dict(zip(variables, rng.sample(NAMES, len(variables)), strict=True))


def variables_of(f: Formula) -> list[str]:
    return [v for _, v in quantifier_prefix(f)[0]]


@lru_cache(maxsize=1)
def ambiguous_lfs() -> tuple[str, ...]:
    """Every LF of every ambiguous pool (46,592 records; bound with both genders), FOL."""
    return tuple(r.lf for t in AMBIGUOUS_TYPES for r in pool(t))


def test_the_ambiguous_pools_are_the_issues_46592_lfs_and_lisp_is_their_rendering():
    """The Lisp pools are ``generate.to_lisp`` = :func:`amp.logic.convert.convert`, i.e. the Lisp
    rendering of the FOL tree; the AST path below renders it directly (checked on a sample)."""
    lfs = ambiguous_lfs()
    assert len(lfs) == 46_592
    sample = [r for t in AMBIGUOUS_TYPES for r in pool(t)[::97]]
    assert [r.lf for r in to_lisp(sample)] == [render(parse_lf(r.lf), Format.LISP) for r in sample]


def test_every_pool_lf_renders_as_itself_and_back_from_any_spelling_ast_path():
    """Every pool LF, FOL and Lisp: in the convention already, and renaming its variables by its
    own seeded bijection and reordering its same-kind runs, then rendering, gives it back."""
    rng = random.Random(26)
    failures = []
    for lf in ambiguous_lfs():
        f = parse_lf(lf)
        spelled = shuffle_runs(rename(f, bijection(variables_of(f), rng)), rng)
        same, back = prompt_form(f), prompt_form(spelled)
        for fmt in Format:
            original = render(f, fmt)
            if (fmt == Format.FOL and original != lf) or render(same, fmt) != original or render(back, fmt) != original:
                failures.append((fmt, lf, render(spelled, fmt)))
    assert failures == []


@pytest.mark.parametrize("fmt", list(Format))
def test_spelled_texts_read_back_to_the_pool_lf_text_path(fmt):
    """Through the reader (a seeded tenth of each pool, every template shape among them): the
    spelled text is parsed, normalised and rendered.  Bijections come from 12 seeded ones (a cyclic
    shift of the convention's letters among them)."""
    rng = random.Random(2026)
    cyclic = dict(zip(CONVENTION, CONVENTION[1:] + CONVENTION[:1], strict=True))
    maps = [cyclic] + [dict(zip(CONVENTION, rng.sample(NAMES, 6), strict=True)) for _ in range(11)]
    lfs = ambiguous_lfs()
    picked = sorted(set(rng.sample(range(len(lfs)), len(lfs) // 10)) | set(_first_of_each_shape(lfs)))
    failures = []
    for n in picked:
        f = parse_lf(lfs[n])
        original = render(f, fmt)
        spelled = render(shuffle_runs(rename(f, maps[n % len(maps)]), random.Random(n % 5)), fmt)
        if prompt_text(spelled, fmt) != original or prompt_text(original, fmt) != original:
            failures.append((original, spelled))
    assert failures == []


def _first_of_each_shape(lfs: tuple[str, ...]) -> list[int]:
    """The index of the first LF of every template shape (predicates and names blanked)."""
    first: dict[str, int] = {}
    for n, lf in enumerate(lfs):
        shape = re.sub(r"[A-Za-z_]+\(", "P(", re.sub(r"\b[A-Z][a-z]+\b", "C", lf))
        first.setdefault(shape, n)
    return list(first.values())


def test_the_unambiguous_sets_follow_it_but_for_the_documented_exceptions():
    """§10: the 180 intransitive scope_unambig LFs name their entity y; the §4.6 disjunctions
    rely on right-associativity, which the render normal form brackets."""
    odd = {}
    for name in UNAMBIGUOUS_SETS:
        for r in pool(name):
            if prompt_text(r.lf) != r.lf:
                odd.setdefault(name, []).append(r.lf)
    assert sorted(odd) == ["double_conj", "scope_unambig", "single_conj"]
    assert len(odd["scope_unambig"]) == 180
    assert all(lf.startswith("forall y . exists a .") for lf in odd["scope_unambig"])
    for name in ("single_conj", "double_conj"):
        assert all(prompt_text(lf) == render(parse_lf(lf), Format.FOL) for lf in odd[name])


# --- hand-written cases ------------------------------------------------------------------

def test_a_teachers_spelling_is_renamed_and_reordered():
    typed = ("exists e . exists b . exists duckling . saw(b) AND agent(b, Me) AND patient(b, duckling) "
             "AND duck(duckling) AND have(duckling, Her) AND lowered(e) AND agent(e, Her)")
    expected = ("exists x . exists a . exists e . duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) "
                "AND patient(a, x) AND lowered(e) AND agent(e, Her)")  # nouns first (§16, "Conjunct order")
    assert prompt_text(typed) == prompt_text(typed, "fol", "I saw her duck") == expected
    assert equivalent(typed, prompt_text(typed))


def test_lisp_is_rendered_as_lisp():
    typed = "( exists e ( exists q ( AND ( man q ) ( walked e ) ( agent e q ) ) ) )"
    assert prompt_text(typed, "lisp") == "( exists x ( exists a ( AND ( man x ) ( walked a ) ( agent a x ) ) ) )"


def test_runs_of_different_quantifiers_never_swap():
    typed = "forall e . exists b . exists q . dog(q) AND cow(e) AND saw(b) AND agent(b, e) AND patient(b, q)"
    out = prompt_text(typed)
    assert out == "forall x . exists y . exists a . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
    assert equivalent(typed, out)


def test_more_than_three_of_a_kind_get_numbered_names_and_free_variables_are_not_captured():
    typed = "exists p . exists q . exists r . exists s . man(p) AND boy(q) AND cat(r) AND dog(s) AND saw(x)"
    assert prompt_text(typed) == ("exists y . exists z . exists x1 . exists y1 . man(y) AND boy(z) AND cat(x1) "
                                  "AND dog(y1) AND saw(x)")


def test_shadowing_unused_and_nested_quantifiers_keep_the_meaning():
    for typed in (
        "exists q . exists q . man(q)",
        "exists u . exists b . man(b)",
        "exists b . man(b) AND ( exists c . walked(c) AND agent(c, b) )",
        "exists b . man(b) OR ( forall b . boy(b) )",
    ):
        out = prompt_text(typed)
        assert equivalent(typed, out), (typed, out)
        assert prompt_text(out) == out
    assert prompt_text("exists u . exists b . man(b)") == "exists x . exists y . man(x)"


def test_same_spelling_and_errors():
    assert same_spelling(ambiguous_lfs()[0])
    assert not same_spelling("exists b . man(b)")
    assert same_spelling("exists  x .  man(x)")  # spacing aside
    with pytest.raises(LFParseError):
        prompt_text("exists x . man(x")


def test_names_follow_holds_for_the_sorted_lisp_prompts_and_not_for_other_letters():
    """The project's Lisp prompts show the original's sorted form (§10): the names follow the
    convention in prefix order although first use in the displayed body does not."""
    from amp.prompts import mixed_prompt

    sorted_lisp = "( exists x ( exists y ( exists z ( exists a ( exists e ( AND ( agent a x ) ( binoculars z ) ( boy x ) ( girl y ) ( have e ) ( agent e y ) ( patient e z ) ( saw a ) ( patient a y ) ) ) ) ) ) )"
    assert names_follow(sorted_lisp, "lisp") and prompt_text(sorted_lisp, "lisp") != sorted_lisp
    for seed in range(3):
        prompt = mixed_prompt("the boy saw the girl with the binoculars", 0.5, seed=seed, k=10, fmt="lisp")
        assert all(names_follow(ex.lf, "lisp") for ex in prompt.examples)
    assert not names_follow("exists b . man(b)")
    assert not names_follow("exists a . exists x . man(x) AND walked(a)")  # a is no event here: an entity
    assert names_follow("exists x . exists a . man(x) AND walked(a) AND agent(a, x)")
