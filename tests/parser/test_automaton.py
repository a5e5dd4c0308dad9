"""The character-level LALR automaton agrees with lark on AmP LFs and their corruptions."""

from __future__ import annotations

import pytest
from grammar_oracle import prefix_violation
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark
from lark.exceptions import LarkError
from parser_lm_helpers import amp_examples

from amp.logic.grammar import lark_parser
from amp.parser.core.errors import DecodingError
from amp.parser.search.automaton import DEAD, GrammarAutomaton, get_automaton

FOL_LFS = [lf for _s, lf in amp_examples(60, seed=1)]
LISP_LFS = [
    "( exists x ( man x ) )",
    "( exists x ( exists a ( AND ( man x ) ( saw a ) ( agent a x ) ( patient a Galileo ) ) ) )",
    "( forall x ( exists y ( exists a ( AND ( dog x ) ( cat y ) ( chased a ) ( agent a x ) ( patient a y ) ) ) ) )",
    "( exists x ( OR ( man x ) ( woman x ) ) )",
]


def lark_accepts(fmt: str, text: str) -> bool:
    try:
        lark_parser(fmt, "decoding").parse(text)
    except LarkError:
        return False
    return True


def lark_accepts_bound(fmt: str, text: str) -> bool:
    """lark accepts ``text`` and every variable is quantified once, before its use (the
    automaton's language; checked by the independent oracle of ``tests/grammar_oracle.py``)."""
    return lark_accepts(fmt, text) and prefix_violation(fmt, [text], finished=True) is None


@pytest.mark.parametrize("fmt,lfs", [("fol", FOL_LFS), ("lisp", LISP_LFS)])
def test_accepts_every_lf_and_every_prefix(fmt: str, lfs: list[str]) -> None:
    a = get_automaton(fmt)
    for lf in lfs:
        text = " " + lf + "\n"
        assert lark_accepts(fmt, text)
        assert a.accepts_text(text)
        state = a.initial
        for i, ch in enumerate(text):
            assert not a.is_final(state), text[:i]
            assert ch in a.next_chars(state)
            state = a.step(state, ch)
            assert state, text[: i + 1]
        assert a.is_final(state)
        assert a.next_chars(state) == ""
        assert a.step(state, "\n") == DEAD


def test_rejects_without_frame() -> None:
    a = get_automaton("fol")
    lf = FOL_LFS[0]
    assert not a.accepts_text(lf)  # no leading space / newline
    assert not a.accepts_text(" " + lf)  # incomplete: newline missing
    assert a.accepts_prefix(" " + lf)
    assert not a.accepts_text(" " + lf + "\n\n")


_EDIT_CHARS = st.sampled_from(list(" ()x,.\nanAND") + ["OR", "exists", "man", "Mary", "agent(a, x)"])


@settings(max_examples=150, deadline=None)
@given(
    lf=st.sampled_from(FOL_LFS),
    pos=st.floats(0, 1),
    cut=st.integers(0, 6),
    insert=_EDIT_CHARS,
)
def test_agrees_with_lark_on_corrupted_text(lf: str, pos: float, cut: int, insert: str) -> None:
    text = " " + lf + "\n"
    i = int(pos * len(text))
    corrupted = text[:i] + insert + text[i + cut :]
    assert get_automaton("fol").accepts_text(corrupted) == lark_accepts_bound("fol", corrupted)


@settings(max_examples=60, deadline=None)
@given(lf=st.sampled_from(LISP_LFS), pos=st.floats(0, 1), cut=st.integers(0, 4), insert=_EDIT_CHARS)
def test_agrees_with_lark_on_corrupted_lisp(lf: str, pos: float, cut: int, insert: str) -> None:
    text = " " + lf + "\n"
    i = int(pos * len(text))
    corrupted = text[:i] + insert + text[i + cut :]
    assert get_automaton("lisp").accepts_text(corrupted) == lark_accepts_bound("lisp", corrupted)


def test_next_chars_matches_step() -> None:
    a = get_automaton("fol")
    alphabet = sorted(a.alphabet | {"!", "7", "é"})
    for lf in FOL_LFS[:5]:
        state = a.initial
        for ch in " " + lf + "\n":
            allowed = set(a.next_chars(state))
            assert allowed == {c for c in alphabet if a.step(state, c)}
            state = a.step(state, ch)


def test_prefix_literals_keep_a_set_of_configurations() -> None:
    """'car' may be complete or the start of 'carried': both readings survive (docs/decoding-notes.md §4a)."""
    parser = Lark('start: " " w+ "\\n"\n!w: "car" | "carried" | "ried" | "cart"\n', parser="lalr")
    a = GrammarAutomaton(parser)
    state = a.advance(a.initial, " carr")
    assert len(state) == 2  # inside "carried", or "car" done and "ried" begun
    assert set(a.next_chars(state)) == {"i"}
    assert a.accepts_text(" carried\n")
    assert a.accepts_text(" carcart\n")
    assert a.accepts_text(" carriedcar\n")
    assert a.accepts_text(" car\n")
    assert not a.accepts_text(" carr\n")
    assert set(a.next_chars(a.advance(a.initial, " car"))) == {"c", "r", "t", "\n"}


def test_rejects_regex_terminals_and_ignore() -> None:
    with pytest.raises(DecodingError, match="literal"):
        GrammarAutomaton(Lark('start: " " WORD "\\n"\nWORD: /[a-z]+/\n', parser="lalr"))
    with pytest.raises(DecodingError, match="ignore"):
        GrammarAutomaton(Lark('start: "a" "b"\n%ignore " "\n', parser="lalr"))
    with pytest.raises(DecodingError, match="literal"):
        GrammarAutomaton(Lark('start: "a"i "b"\n', parser="lalr"))
    with pytest.raises(DecodingError, match="lalr"):
        GrammarAutomaton(Lark('start: "a"\n', parser="earley"))


def test_trailing_newlines_inside_the_last_token() -> None:
    a = get_automaton("fol")
    before = a.advance(a.initial, " exists x . man(x")
    assert a.is_final(a.advance_token(before, ")\n\n\n"))
    assert a.end_content(before, ")\n\n") == ")\n"
    assert a.end_content(before, ")") is None
    assert a.advance(before, ")\n\n") == DEAD  # plain text is exactly the grammar
    assert a.advance_token(before, ")\n\nHuman") == DEAD
    done = a.advance(before, ")\n")
    assert a.advance_token(done, "\n") == DEAD  # a new token after the end is not layout


def test_states_are_shared_by_value() -> None:
    a = get_automaton("fol")
    s1 = a.advance(a.initial, " exists x . man(x) AND ")
    s2 = a.advance(a.initial, " exists x . dog(x) AND ")
    assert s1 == s2 and hash(s1) == hash(s2)
    assert a.states_along([" exists", " x", " ."])[-1] == a.advance(a.initial, " exists x .")
