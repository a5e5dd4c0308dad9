"""The one tree representation of AmP logical forms (docs/paper-notes.md §7.3, §8).

FOL and Lisp are two *renderings* of the same tree (:mod:`amp.logic.render`); parsing either
format (:mod:`amp.logic.reader`) gives these frozen dataclasses:

* :class:`Atom` — ``agent(a, x)``: a predicate and 1–2 arguments (variables or constants);
* :class:`Junction` — an n-ary ``AND``/``OR`` with at least two children;
* :class:`Quantified` — ``exists x . body`` / ``forall x . body``.

Constants are capitalised names (``Mary``); every other argument is a variable (docs/paper-notes.md §0,
item 3).  The helpers below answer the questions canonicalisation needs: which variables occur
free, which are bound, and how a formula's leading quantifier prefix looks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Connective = Literal["AND", "OR"]
Quantifier = Literal["exists", "forall"]

CONNECTIVES: tuple[str, ...] = ("AND", "OR")
QUANTIFIERS: tuple[str, ...] = ("exists", "forall")


@dataclass(frozen=True, slots=True)
class Atom:
    """``pred(arg1[, arg2])``; arguments are variable names or capitalised constants."""

    pred: str
    args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Junction:
    """An n-ary conjunction or disjunction (``op`` is ``"AND"`` or ``"OR"``, ≥ 2 children).

    Children keep their written order; a child may itself be a junction of the same operator
    when the input bracketed it explicitly (``( A AND B ) AND C``) — the parser keeps such
    groups, canonical forms flatten them (:mod:`amp.logic.canonical`).
    """

    op: Connective
    children: tuple[Formula, ...]

    def __post_init__(self) -> None:
        if self.op not in CONNECTIVES:
            raise ValueError(f"unknown connective {self.op!r}; expected 'AND' or 'OR'")
        if len(self.children) < 2:
            raise ValueError("a Junction needs at least two children")


@dataclass(frozen=True, slots=True)
class Quantified:
    """``quantifier var . body``; ``var`` is bound inside ``body`` (inner binders shadow)."""

    quantifier: Quantifier
    var: str
    body: Formula

    def __post_init__(self) -> None:
        if self.quantifier not in QUANTIFIERS:
            raise ValueError(f"unknown quantifier {self.quantifier!r}; expected 'exists' or 'forall'")


Formula = Atom | Junction | Quantified


def is_constant(name: str) -> bool:
    """Constants are capitalised names (``Mary``, ``Galileo``), docs/paper-notes.md §7.1."""
    return name[:1].isupper()


def is_variable(name: str) -> bool:
    """Everything that is not a constant is a variable (``x``, ``a``, ``v3``)."""
    return bool(name) and not is_constant(name)


def free_variables(f: Formula) -> frozenset[str]:
    """Variables occurring in ``f`` outside the scope of a quantifier that binds them."""
    if isinstance(f, Atom):
        return frozenset(a for a in f.args if is_variable(a))
    if isinstance(f, Junction):
        return frozenset().union(*(free_variables(c) for c in f.children))
    return free_variables(f.body) - {f.var}


def bound_variables(f: Formula) -> frozenset[str]:
    """Variables that some quantifier in ``f`` binds (whether or not the body uses them)."""
    if isinstance(f, Atom):
        return frozenset()
    if isinstance(f, Junction):
        return frozenset().union(*(bound_variables(c) for c in f.children))
    return bound_variables(f.body) | {f.var}


def atoms(f: Formula) -> Iterator[Atom]:
    """The atoms of ``f`` in written (left-to-right) order."""
    stack: list[Formula] = [f]
    while stack:
        node = stack.pop()
        if isinstance(node, Atom):
            yield node
        elif isinstance(node, Junction):
            stack.extend(reversed(node.children))
        else:
            stack.append(node.body)


def quantifier_prefix(f: Formula) -> tuple[tuple[tuple[str, str], ...], Formula]:
    """Split ``f`` into its leading quantifier chain ``((q, var), …)`` and the body below it.

    This is the "quantifier list" the original canonicaliser peeled off the front (§8.1 step 1).
    """
    prefix: list[tuple[str, str]] = []
    while isinstance(f, Quantified):
        prefix.append((f.quantifier, f.var))
        f = f.body
    return tuple(prefix), f


def with_prefix(prefix: tuple[tuple[str, str], ...], body: Formula) -> Formula:
    """Inverse of :func:`quantifier_prefix`: wrap ``body`` in the quantifiers, outermost first."""
    for quantifier, var in reversed(prefix):
        body = Quantified(quantifier, var, body)  # type: ignore[arg-type]
    return body


def has_nested_quantifier(f: Formula) -> bool:
    """Whether a quantifier occurs below a junction (i.e. outside the leading prefix)."""
    _, body = quantifier_prefix(f)

    def inner(node: Formula) -> bool:
        if isinstance(node, Quantified):
            return True
        if isinstance(node, Junction):
            return any(inner(c) for c in node.children)
        return False

    return inner(body)
