"""Canonical forms of logical forms: two LFs are judged equal iff their canonical strings are.

Two modes, both returning a FOL string (render normal form, parseable by
:func:`amp.logic.reader.parse_lf`, variables named ``v0``, ``v1``, …).

``logical`` (default) — a sound canonical form under these equivalences, and complete for them:

* reordering conjuncts/disjuncts at any depth, operator siblings included (fixes §8.6 item 3);
* flattening nested same-operator junctions, i.e. any re-bracketing within one connective;
* renaming bound variables (alpha-equivalence; fixes §8.6 item 1);
* reordering adjacent quantifiers of the same kind (∃x∃y ≡ ∃y∃x, ∀x∀y ≡ ∀y∀x);
* dropping quantifiers whose variable is unused, without leaving naming gaps (fixes §8.3 item 3).

It still tells scope readings apart (∃x∀y ≠ ∀x∃y) and the two conjunction bracketings
(A∧(B∨C) ≠ (A∧B)∨C), and equates nothing else: no quantifier is moved across a connective,
duplicate conjuncts are kept, no distribution.  Free variables are kept by name (canonical
bound names skip them).  Algorithm: normalise the tree (resolve scoping, drop unused
quantifiers, flatten, group maximal runs of same-kind adjacent quantifiers into *blocks*); a
block at nesting level ``L`` names its variables ``vL, vL+1, …`` in the order of an
isomorphism-invariant signature (the sorted predicate/argument-position pairs of their uses —
distinct for every variable of every AmP LF); ties are resolved by an individualisation–
refinement search that keeps the smallest rendering and prunes branches related by an
automorphism (interchangeable variables).  Conjuncts and disjuncts are sorted by their
canonical strings, recursively.  See ``docs/canonical-forms.md``.

``paper`` — the judgement of the original metric (§8, §13.1), reproduced by following the
original canonicaliser's string algorithm step by step (:mod:`amp.logic.original`): positional
``v0, v1, …`` names by prefix position *before* unused quantifiers are dropped (a naming gap, so
an extra unused quantifier makes a prediction differ), flattening, the §8.1 step 7 sort-key
amendment and positional operator keys, Lisp input neither flattened nor amended.  What the
original could not read (nested quantifiers, ``( man(x) )``, a lone two-place atom, …) raises
:class:`~amp.logic.errors.LFParseError`, i.e. never matches.  The remaining deliberate differences
are listed in ``docs/canonical-forms.md``.  :func:`ordered_form` gives the original's *ordered*
rendering (x/y/z/a/e/i names, §8.3), the one its pipeline applied to beam outputs first.
"""

from __future__ import annotations

from functools import lru_cache

from amp.logic.ast import Atom, Formula, Junction, Quantified
from amp.logic.errors import LFParseError, OriginalError
from amp.logic.logical_form import logical_form
from amp.logic.ordered_form import ordered_form, unbound_error
from amp.logic.original import original_canonical
from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, Mode, check_format, check_mode

__all__ = ["canonical", "canonical_or_none", "clear_cache", "equivalent", "ordered_form"]

# ======================================================================================
# public API


def canonical(lf: str | Formula, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> str:
    """The canonical FOL string of ``lf`` (text in ``fmt``, or an AST) under ``mode``.

    ``mode`` is ``"logical"`` or ``"paper"`` (module docstring).  ``fmt`` is the format of the
    text; in ``paper`` mode ``"lisp"`` also switches to the original's Lisp path (no flattening,
    no sort-key amendment, §8.2 step 5), for ASTs too.  Raises
    :class:`~amp.logic.errors.LFParseError` when the text does not parse (and, in ``paper`` mode,
    when a variable is unbound).  Results for strings are memoised.
    """
    _check(mode, fmt)
    if isinstance(lf, str):
        return _canonical_text(lf, mode, fmt)
    if not isinstance(lf, (Atom, Junction, Quantified)):
        raise TypeError(f"canonical expects an LF string or AST, got {type(lf).__name__}")
    return _canonical_formula(lf, mode, fmt, None)


def canonical_or_none(lf: str | Formula, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> str | None:
    """:func:`canonical`, or ``None`` when ``lf`` does not parse (the metrics' "never matches")."""
    try:
        return canonical(lf, mode, fmt)
    except LFParseError:
        return None


def equivalent(a: str | Formula, b: str | Formula, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> bool:
    """Whether ``a`` and ``b`` have the same canonical form; raises LFParseError if one fails."""
    return canonical(a, mode, fmt) == canonical(b, mode, fmt)


def clear_cache() -> None:
    """Forget memoised canonical forms and parses (for benchmarks)."""
    _canonical_text.cache_clear()
    _parsed.cache_clear()
    original_canonical.cache_clear()


def _check(mode: str, fmt: str) -> None:
    check_mode(mode)
    check_format(fmt)


@lru_cache(maxsize=1 << 16)
def _canonical_text(text: str, mode: str, fmt: str) -> str:
    if mode == Mode.PAPER:
        return _paper_text(text, fmt)
    return _canonical_formula(_parsed(text, fmt), mode, fmt, text)


def _paper_text(text: str, fmt: str) -> str:
    """``paper`` mode: the original canonicaliser's string, step for step (:mod:`amp.logic.original`).

    Where the original could not read the LF (its metric kept the raw string, which never
    matches) this raises :class:`~amp.logic.errors.LFParseError`: our parser's error when the text is
    outside our grammar too, else one that says why the original failed.
    """
    try:
        return original_canonical(text, fmt)
    except OriginalError as exc:
        failure = exc
    except (ValueError, IndexError, KeyError, AttributeError, AssertionError, RecursionError) as exc:
        failure = OriginalError(f"{type(exc).__name__}: {exc}")
    if failure.reason == "unbound":
        raise unbound_error(failure.found, text, fmt)
    _parsed(text, fmt)  # raises our (more precise) syntax error if the text is not an LF at all
    raise LFParseError(
        f"cannot canonicalise {fmt.upper()} in paper mode: the original canonicaliser cannot read it "
        f"({failure}), so its metric never matches it (docs/paper-notes.md §8.6 item 5, §13.1); "
        "logical mode reads it",
        text=text, position=0, found=failure.found, fmt=fmt,
    )


@lru_cache(maxsize=1024)
def _parsed(text: str, fmt: str) -> Formula:
    """A small parse memo, so canonicalising one LF in both modes parses it once."""
    return parse_lf(text, fmt)


def _canonical_formula(f: Formula, mode: str, fmt: str, text: str | None) -> str:
    if mode == Mode.PAPER:  # an AST: judged as its FOL/Lisp rendering in the data spacing
        return _paper_text(render(f, fmt), fmt)
    return logical_form(f)
