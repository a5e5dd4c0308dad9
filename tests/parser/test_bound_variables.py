"""Bound-variable tracking in the grammar automaton (docs/decoding-notes.md §5 item 11)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from parser_lm_helpers import amp_examples

from amp.data import generate
from amp.logic import lexicon
from amp.logic.ast import free_variables
from amp.logic.convert import convert
from amp.logic.reader import parse_lf
from amp.parser.core.errors import DecodingError
from amp.parser.search.automaton import DEAD, get_automaton
from amp.parser.search.scoring import check_lf
from amp.parser.search.vocab import VocabMasker, frame_lf

POOLS = ["pp", "scope", "revscope", "bound", "conj", "pp_unambig", "scope_unambig", "bound_unambig"]


def _sample(name: str, k: int = 25, seed: int = 0) -> list[str]:
    records = generate.pool(name)
    rng = random.Random(seed)
    return [r.lf for r in rng.sample(records, min(k, len(records)))]


@pytest.mark.parametrize("name", POOLS)
def test_every_generated_lf_is_accepted(name: str) -> None:
    fol, lisp = get_automaton("fol"), get_automaton("lisp")
    assert fol.bound_variables and lisp.bound_variables
    for lf in _sample(name):
        assert not free_variables(parse_lf(lf)), lf
        assert fol.accepts_text(frame_lf(lf)), lf
        lisp_lf = convert(lf, "fol", "lisp")
        assert lisp.accepts_text(frame_lf(lisp_lf)), lisp_lf


def test_free_variable_is_never_allowed() -> None:
    a = get_automaton("fol")
    unbound = a.advance(a.initial, " exists x . exists y . telescope(")
    assert set(a.next_chars(unbound)) == {"x", "y"}
    assert a.step(unbound, "z") == DEAD
    bound = a.advance(a.initial, " exists x . exists z . telescope(")
    assert a.step(bound, "z") != DEAD
    assert not a.accepts_text(" man(x)\n")
    assert not a.accepts_text(" exists x . man(x) AND agent(a, x)\n")  # second argument
    assert a.accepts_text(" exists x . exists a . man(x) AND agent(a, x)\n")
    # the unrestricted automaton still has the plain CFG language
    plain = get_automaton("fol", bound_variables=False)
    assert not plain.bound_variables
    assert plain.accepts_text(" man(x)\n")
    assert plain.step(plain.advance(plain.initial, " exists x . telescope("), "z") != DEAD


def test_double_quantification_excluded() -> None:
    for fmt, prefix in (("fol", " exists x . forall "), ("lisp", " ( exists x ( forall ")):
        a = get_automaton(fmt)
        state = a.advance(a.initial, prefix)
        assert state
        chars = set(a.next_chars(state))
        assert "x" not in chars and "y" in chars
        assert a.step(state, "x") == DEAD
    assert not get_automaton("fol").accepts_text(" exists x . exists x . man(x)\n")


@pytest.mark.parametrize("var", lexicon.VARIABLES)
@pytest.mark.parametrize("fmt", ["fol", "lisp"])
def test_double_quantification_excluded_for_every_variable(fmt: str, var: str) -> None:
    """No variable may be quantified twice, whether the second binder follows at once or later."""
    others = [v for v in lexicon.VARIABLES if v != var]
    a = get_automaton(fmt)
    for between in ([], others[:1], others[:3]):
        if fmt == "fol":
            prefix = "".join(f" exists {v} ." for v in [var, *between]) + " forall "
        else:
            prefix = "".join(f" ( exists {v}" for v in [var, *between]) + " ( forall "
        state = a.advance(a.initial, prefix)
        assert state, prefix
        chars = set(a.next_chars(state))
        assert var not in chars, (prefix, sorted(chars))
        assert a.step(state, var) == DEAD
        assert set(others) - set(between) <= chars  # the variables not yet bound stay available
    twice = frame_lf(f"exists {var} . exists {others[0]} . exists {var} . man({var}) AND boy({others[0]})")
    assert not get_automaton("fol").accepts_text(twice)
    assert get_automaton("fol").binding_violation(twice) == (twice.rindex(f"exists {var}") + 7, var, "rebound")


def test_lisp_binding_and_predicate_prefix() -> None:
    a = get_automaton("lisp")
    assert a.accepts_text(" ( exists x ( exists a ( AND ( man x ) ( agent a x ) ) ) )\n")
    assert not a.accepts_text(" ( exists x ( AND ( man x ) ( agent a x ) ) )\n")
    # 'a' the unbound variable vs 'agent' the predicate: the predicate reading survives
    state = a.advance(a.initial, " ( exists x ( AND ( ")
    assert a.step(state, "a")


@pytest.mark.parametrize(
    ("fmt", "stranded", "fine"),
    [
        ("fol", " smiled(", " exists x . smiled("),
        ("lisp", " ( man", " ( exists x ( man"),
    ],
)
def test_no_alive_state_is_a_dead_end(fmt: str, stranded: str, fine: str) -> None:
    """An atom cannot start before a quantifier: it would need a variable and none is bound."""
    a = get_automaton(fmt)
    assert a.advance(a.initial, stranded) == DEAD
    assert a.advance(a.initial, fine)
    # every alive state met on the way through real LFs has a next character or is final
    for lf in _sample("pp", k=10) + _sample("scope", k=10):
        text = frame_lf(lf if fmt == "fol" else convert(lf, "fol", "lisp"))
        state = a.initial
        for ch in text:
            assert a.next_chars(state) or a.is_final(state)
            state = a.step(state, ch)
        assert a.is_final(state)


def test_quantifiers_stop_when_every_variable_is_taken() -> None:
    a = get_automaton("fol")
    all_bound = a.advance(a.initial, "".join(f" exists {v} ." for v in "xyzaei"))
    assert all_bound and "e" not in a.next_chars(all_bound) and "f" not in a.next_chars(all_bound)
    assert a.step(a.advance(all_bound, " "), "m")  # an atom may start; no seventh quantifier


def test_binding_violation_positions() -> None:
    a = get_automaton("fol")
    text = frame_lf("exists x . exists y . man(x) AND telescope(z)")
    assert a.binding_violation(text) == (text.index("(z") + 1, "z", "free")
    text = frame_lf("exists x . exists x . man(x)")
    assert a.binding_violation(text) == (19, "x", "rebound")
    assert a.binding_violation(frame_lf("exists x . man(x)")) is None
    assert a.binding_violation(frame_lf("exists x . man(x) AND")) is None  # dies for another reason


def test_forced_scoring_names_the_free_variable(tiny_lm: Any) -> None:
    from amp.parser.search.vocab import get_masker

    masker = get_masker(tiny_lm.tokenizer, "fol")
    lf = "exists x . man(x) AND telescope(z)"
    with pytest.raises(DecodingError, match=r"variable 'z' at character 32.*free variable"):
        check_lf(masker, lf)
    assert lf[32] == "z"
    with pytest.raises(DecodingError, match=r"quantifies variable 'x' a second time at character 18"):
        check_lf(masker, "exists x . exists x . man(x)")
    assert check_lf(masker, "exists x . man(x)") == frame_lf("exists x . man(x)")


@pytest.mark.parametrize("fmt", ["fol", "lisp"])
def test_masks_equal_brute_force_with_binding(bpe_noregex: Any, fmt: str) -> None:
    automaton = get_automaton(fmt, bound_variables=True)
    masker = VocabMasker(automaton, bpe_noregex)
    lfs = [lf for _s, lf in amp_examples(6, seed=11)]
    if fmt == "lisp":
        lfs = [convert(lf, "fol", "lisp") for lf in lfs]
    seen = {automaton.initial: None}
    for lf in lfs:
        state = automaton.initial
        for ch in frame_lf(lf):
            state = automaton.step(state, ch)
            seen.setdefault(state, None)
    # states just before an argument variable, with different bound sets
    for prefix in (" exists x . man(", " exists x . exists y . man(", " exists y . man(", " exists x . "):
        if fmt == "fol":
            seen.setdefault(automaton.advance(automaton.initial, prefix), None)
    states = list(seen)
    rng = random.Random(0)
    for state in states[:5] + rng.sample(states[5:], min(40, len(states) - 5)):
        assert masker.allowed_ids(state).tolist() == masker.brute_force_ids(state)
    # masks differ by bound set: 'y' is allowed after " exists x . exists y . man(" only
    y_ids = [i for i, t in enumerate(masker.vocab.texts) if t == "y"]
    if fmt == "fol" and y_ids:
        s1 = automaton.advance(automaton.initial, " exists x . man(")
        s2 = automaton.advance(automaton.initial, " exists x . exists y . man(")
        assert y_ids[0] not in masker.allowed_ids(s1).tolist()
        assert y_ids[0] in masker.allowed_ids(s2).tolist()


def test_context_length_check(tiny_lm: Any) -> None:
    from amp.parser.search.decode import beam_search
    from amp.parser.search.scoring import forced_score

    limit = tiny_lm.model.config.max_position_embeddings
    prompt = "Human: the man saw\nComputer:" + " man" * (limit + 10)
    with pytest.raises(DecodingError, match=r"prompt is \d+ tokens.*model context is \d+: use fewer examples"):
        beam_search(tiny_lm.model, tiny_lm.tokenizer, prompt, beams=2, max_new_tokens=8)
    with pytest.raises(DecodingError, match=r"model context is"):
        forced_score(tiny_lm.model, tiny_lm.tokenizer, prompt, ["exists x . man(x)"])
