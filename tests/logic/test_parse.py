"""Parsing FOL and Lisp into the AST (reference §7, §8.1–8.2; amp.logic.parse)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from amp.errors import LFParseError
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
from amp.logic.parse import parse_lf, parse_lf_uncached
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


def test_error_summarises_big_classes() -> None:
    with pytest.raises(LFParseError) as info:
        parse_lf("exists x . man(w)")
    assert str(info.value).endswith("found 'w', expected one of: a variable")
    assert "x" in info.value.expected and "v15" in info.value.expected


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


def test_unknown_predicates_are_listed() -> None:
    with pytest.raises(LFParseError) as info:
        parse_lf("exists x . dragon(x) AND unicorn(x) AND man(x)")
    message = str(info.value)
    assert "unknown predicates 'dragon', 'unicorn'" in message
    assert info.value.found == "dragon" and info.value.column == 12
    with pytest.raises(LFParseError, match="unknown predicate 'dragon'"):
        parse_lf("( exists x ( dragon x ) )", "lisp")


def test_unknown_constant() -> None:
    with pytest.raises(LFParseError, match="unknown constant 'Bob'"):
        parse_lf("exists a . agent(a, Bob)")


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
    # 'Bob' is not a known constant, so the shape memo cannot build this text: the error comes
    # from a full parse of the real text and names 'Bob'
    with pytest.raises(LFParseError) as info:
        parse_lf("exists a . agent(a, Bob) AND saw(a)")
    assert info.value.found == "Bob"


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
