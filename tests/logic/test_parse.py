"""Parsing FOL and Lisp into the AST (docs/paper-notes.md §7, §8.1–8.2; amp.logic.reader)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings

from amp.logic.ast import (
    Atom,
    Junction,
    Quantified,
    bound_variables,
    free_variables,
    has_nested_quantifier,
    is_constant,
    is_variable,
    quantifier_prefix,
    with_prefix,
)
from amp.logic.errors import LFParseError
from amp.logic.reader import parse_lf, parse_lf_uncached
from amp.logic.render import render_fol, render_lisp

from .strategies import formulas

A, B, C, D = (Atom("man", ("x",)), Atom("boy", ("y",)), Atom("dog", ("z",)), Atom("cow", ("x",)))
PP1 = (
    "exists x . exists y . exists z . exists a . man(x) AND boy(y) AND telescope(z) AND saw(a) "
    "AND agent(a, x) AND patient(a, y) AND instrument(a, z)"
)
CONJ0 = (
    "exists x . exists a . exists e . exists i . man(x) AND ( drank(a) AND agent(a, x) AND "
    "( ( ate(e) AND agent(e, x) ) OR ( slept(i) AND agent(i, x) ) ) )"
)


def test_data_lf_parses_strict_and_lenient() -> None:
    f = parse_lf(PP1, strict=True)
    assert f == parse_lf(PP1)
    prefix, body = quantifier_prefix(f)
    assert prefix == (("exists", "x"), ("exists", "y"), ("exists", "z"), ("exists", "a"))
    assert isinstance(body, Junction) and body.op == "AND" and len(body.children) == 7
    assert body.children[4] == Atom("agent", ("a", "x"))


def test_constants_are_kept() -> None:
    f = parse_lf("exists a . saw(a) AND agent(a, Galileo) AND patient(a, Mary)")
    assert f.body.children[2] == Atom("patient", ("a", "Mary"))  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # equal precedence, right-associative (§8.1 step 4)
        ("man(x) AND boy(y) OR dog(z)", Junction("AND", (A, Junction("OR", (B, C))))),
        ("man(x) OR boy(y) AND dog(z)", Junction("OR", (A, Junction("AND", (B, C))))),
        # a run of one connective is one n-ary node
        ("man(x) AND boy(y) AND dog(z)", Junction("AND", (A, B, C))),
        ("man(x) AND boy(y) AND dog(z) OR cow(x)",
         Junction("AND", (A, B, Junction("OR", (C, D))))),
        # explicit groups stay their own node
        ("( man(x) AND boy(y) ) AND dog(z)", Junction("AND", (Junction("AND", (A, B)), C))),
        ("man(x) AND ( boy(y) AND dog(z) )", Junction("AND", (A, Junction("AND", (B, C))))),
        ("( man(x) AND boy(y) ) OR dog(z)", Junction("OR", (Junction("AND", (A, B)), C))),
        # redundant parentheses vanish
        ("( ( man(x) ) )", A),
    ],
)
def test_connectives(text: str, expected) -> None:
    assert parse_lf(text) == expected


def test_conj_template_structure() -> None:
    f = parse_lf(CONJ0)
    _, body = quantifier_prefix(f)
    assert isinstance(body, Junction) and body.op == "AND" and len(body.children) == 2
    inner = body.children[1]
    assert isinstance(inner, Junction) and inner.op == "AND" and len(inner.children) == 3
    assert isinstance(inner.children[2], Junction) and inner.children[2].op == "OR"


def test_unparenthesised_or_template_is_right_associative() -> None:
    # §4.6 single "or": bird ∧ (left ∨ walked) only under the right-associative reading
    f = parse_lf("exists x . exists a . exists e . bird(x) AND ( left(a) AND agent(a, x) ) OR "
                 "( walked(e) AND agent(e, x) )")
    _, body = quantifier_prefix(f)
    assert body.op == "AND" and body.children[0] == Atom("bird", ("x",))  # type: ignore[union-attr]
    assert body.children[1].op == "OR"  # type: ignore[union-attr]


def test_nested_quantifiers_parse() -> None:
    # mid-sequence: the prefix scopes over everything to its right
    f = parse_lf("exists x . man(x) AND exists a . saw(a) AND agent(a, x)")
    assert f == Quantified("exists", "x", Junction("AND", (
        A, Quantified("exists", "a", Junction("AND", (Atom("saw", ("a",)), Atom("agent", ("a", "x")))))))
    )
    # inside parentheses
    g = parse_lf("exists x . ( forall y . boy(y) ) AND man(x)")
    assert g == Quantified("exists", "x", Junction("AND", (Quantified("forall", "y", B), A)))
    assert has_nested_quantifier(g) and not has_nested_quantifier(parse_lf(PP1))
    # a parenthesised body below a prefix is the same tree as the plain prefix
    assert parse_lf("exists x . ( exists y . man(x) AND boy(y) )") == parse_lf(
        "exists x . exists y . man(x) AND boy(y)")


def test_lenient_and_strict_spacing() -> None:
    loose = "exists x.exists a.man(x) AND agent(a,x)"
    assert parse_lf(loose) == parse_lf("exists x . exists a . man(x) AND agent(a, x)")
    with pytest.raises(LFParseError):
        parse_lf(loose, strict=True)
    assert parse_lf("  man( x )  ") == A


def test_lisp() -> None:
    f = parse_lf("( exists x ( exists a ( AND ( agent a x ) ( man x ) ) ) )", "lisp")
    assert f == Quantified("exists", "x", Quantified("exists", "a", Junction(
        "AND", (Atom("agent", ("a", "x")), A))))
    # nesting is kept as written; a one-child list is its child
    nested = parse_lf("( AND ( AND ( man x ) ( boy y ) ) ( dog z ) )", "lisp")
    assert nested == Junction("AND", (Junction("AND", (A, B)), C))
    assert parse_lf("( AND ( man x ) )", "lisp") == A
    assert parse_lf("(exists x (man x))", "lisp") == Quantified("exists", "x", A)
    with pytest.raises(LFParseError):
        parse_lf("(exists x (man x))", "lisp", strict=True)


def test_canonical_variable_names_parse() -> None:
    assert parse_lf("exists v0 . man(v0)") == Quantified("exists", "v0", Atom("man", ("v0",)))


# ---------------------------------------------------------------------------- errors


def test_error_attributes_strict() -> None:
    text = "exists x . man(x)  AND boy(x)"
    with pytest.raises(LFParseError) as info:
        parse_lf(text, strict=True)
    err = info.value
    assert str(err) == ("cannot parse FOL at column 18: found ' ', expected one of: "
                        '" AND ", " OR ", end of input')
    assert (err.position, err.line, err.column, err.found) == (17, 1, 18, " ")
    assert err.expected == (" AND ", " OR ", "end of input")
    assert err.text == text and err.fmt == "fol"
    assert isinstance(err, ValueError)


def test_error_end_of_input() -> None:
    with pytest.raises(LFParseError) as info:
        parse_lf("exists x . ( man(x)")
    err = info.value
    assert err.found == "" and err.position == len("exists x . ( man(x)")
    assert err.expected == (")",)
    assert "found end of input" in str(err)


def test_error_names_the_word_class() -> None:
    with pytest.raises(LFParseError) as info:
        parse_lf("exists x . man(W)")  # a one-place atom takes a variable, not a constant
    assert str(info.value).endswith("found 'W', expected one of: a variable")
    assert info.value.expected == ("a variable",)


def test_error_line_and_column() -> None:
    with pytest.raises(LFParseError) as info:
        parse_lf("exists x .\nman(x) AND\n  ) ")
    err = info.value
    assert (err.line, err.column, err.found) == (3, 3, ")")
    assert "line 3, column 3" in str(err)


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_input(text: str) -> None:
    with pytest.raises(LFParseError, match="empty"):
        parse_lf(text)


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        # the paper's Table 1 word and a variable outside x/y/z/a/e/i
        ("exists w . swam(w)", "fol", Quantified("exists", "w", Atom("swam", ("w",)))),
        ("exists x . dragon(x) AND unicorn(x)", "fol",
         Quantified("exists", "x", Junction("AND", (Atom("dragon", ("x",)), Atom("unicorn", ("x",)))))),
        ("exists ev1 . agent(ev1, Bob)", "fol", Quantified("exists", "ev1", Atom("agent", ("ev1", "Bob")))),
        # a predicate word used as a variable stays a variable (the shape memo types by position)
        ("exists man . man(man) AND saw(man)", "fol",
         Quantified("exists", "man", Junction("AND", (Atom("man", ("man",)), Atom("saw", ("man",)))))),
        ("( exists w ( AND ( swam w ) ( agent w Bob ) ) )", "lisp",
         Quantified("exists", "w", Junction("AND", (Atom("swam", ("w",)), Atom("agent", ("w", "Bob")))))),
        ("( exists man ( man man ) )", "lisp", Quantified("exists", "man", Atom("man", ("man",)))),
    ],
)
def test_any_word_of_the_right_shape_parses(text: str, fmt: str, expected) -> None:
    assert parse_lf(text, fmt) == expected == parse_lf_uncached(text, fmt)
    assert parse_lf(text, fmt, strict=True) == expected


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("exists x . Man(x)", "Man"),  # predicates are lowercase
        ("exists X . man(X)", "X"),  # variables are lowercase
        ("exists exists . man(exists)", "exists"),  # keywords are not words
        ("exists a . agent(a, AND)", "AND"),
        ("exists a . agent(Bob, a)", "Bob"),  # a constant only as the second argument
    ],
)
def test_words_of_the_wrong_shape_are_refused(text: str, found: str) -> None:
    with pytest.raises(LFParseError) as info:
        parse_lf(text)
    assert info.value.found == found


def test_lisp_error() -> None:
    with pytest.raises(LFParseError) as info:
        parse_lf("( exists x ( man x )", "lisp")
    assert info.value.fmt == "lisp" and str(info.value).startswith("cannot parse LISP at column")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="format"):
        parse_lf("man(x)", "json")
    with pytest.raises(TypeError):
        parse_lf(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- the shape memo


@settings(max_examples=200, deadline=None)
@given(formulas)
def test_shape_memo_agrees_with_full_parse(f) -> None:
    for text, fmt in ((render_fol(f), "fol"), (render_lisp(f), "lisp")):
        assert parse_lf(text, fmt) == parse_lf_uncached(text, fmt) == f
    loose = render_fol(f).replace(" . ", ".").replace(", ", ",")
    assert parse_lf(loose) == parse_lf_uncached(loose) == f


def test_shape_memo_reports_real_errors() -> None:
    # 'Saw' (capitalised) takes the constant placeholder in the shape, which does not parse: the
    # error comes from a full parse of the real text and names 'Saw'
    with pytest.raises(LFParseError) as info:
        parse_lf("exists a . agent(a, Bob) AND Saw(a)")
    assert info.value.found == "Saw" and info.value.column == 30


@settings(max_examples=200, deadline=None)
@given(formulas)
def test_shape_memo_agrees_with_full_parse_on_open_words(f) -> None:
    """Every predicate and constant renamed to a non-lexicon word (and each variable ``q``-prefixed,
    some of them predicate words): the memo still builds exactly the full parse."""
    text = render_fol(f)
    renamed = re.sub(r"\b([a-z][a-z_]*)\(", r"zz_\1(", text)
    renamed = re.sub(r"\b([A-Z][a-z]+)\b", r"\1Q", renamed)
    renamed = re.sub(r"\b([xyzaei]|v\d+)\b", r"man\1", renamed)
    assert parse_lf(renamed) == parse_lf_uncached(renamed)
    assert render_fol(parse_lf(renamed)) == renamed


# ---------------------------------------------------------------------------- AST helpers


def test_ast_helpers() -> None:
    f = parse_lf("exists x . man(x) AND agent(a, Mary) AND ( forall y . boy(y) )")
    assert free_variables(f) == {"a"}
    assert bound_variables(f) == {"x", "y"}
    assert is_constant("Mary") and not is_variable("Mary") and is_variable("v3")
    prefix, body = quantifier_prefix(f)
    assert with_prefix(prefix, body) == f
    with pytest.raises(ValueError):
        Junction("AND", (A,))
    with pytest.raises(ValueError):
        Junction("XOR", (A, B))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Quantified("some", "x", A)  # type: ignore[arg-type]


def test_decoding_grammar_stays_lexicon_bound() -> None:
    """Only the parse grammars are open; constrained decoding keeps the closed vocabulary (§9)."""
    from lark.exceptions import UnexpectedInput

    from amp.logic.grammar import WORD_PATTERNS, grammar_text, lark_parser

    for fmt, text in (("fol", " exists w . swam(w)\n"), ("lisp", " ( exists x ( swam x ) )\n")):
        decoding = grammar_text(fmt, "decoding")
        assert not any(p in decoding for p in WORD_PATTERNS.values()) and '"saw"' in decoding
        with pytest.raises(UnexpectedInput):
            lark_parser(fmt, "decoding").parse(text)
        assert lark_parser(fmt, "strict").parse(text.strip())
