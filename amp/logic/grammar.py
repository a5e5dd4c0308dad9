"""Lark grammars of AmP logical forms, built from the lexicon (docs/paper-notes.md §7, §9).

One grammar per format, FOL and Lisp, each in three spacings built from the *same rules*:

* ``strict`` — exactly the whitespace of the AmP data (single spaces, ``" . "`` after a
  quantifier, ``", "`` inside atoms, spaced grouping parentheses ``( … )``).
* ``decoding`` — ``strict`` framed as the model must produce it after ``Computer:``: a leading
  space and a final newline (``start: " " sent "\\n"``).  Every terminal is a literal string, so
  the constrained decoder (:mod:`amp.parser`) can run a character-level automaton on lark's
  LALR table.
* ``lenient`` — the same rules with whitespace ignored, for text people type
  (``agent(a,x)``, ``(exists x (man x))``).

AND/OR follow the AmP convention (docs/paper-notes.md §8.1): **equal precedence, right-associative**, so
``A AND B OR C`` means ``A AND (B OR C)``.  The grammar itself only lists the items and
connectives of a flat sequence (``sent: item (conn item)*``); the right-associative grouping is
applied when the parse tree becomes an AST (:mod:`amp.logic.reader`).  A quantifier prefix on an
item scopes over everything to its right in the same sequence, so
``exists x . man(x) AND exists a . saw(a) AND agent(a, x)`` nests as written.

Vocabulary.  The ``decoding`` grammar is closed: predicates, constants and variables come
from :mod:`amp.logic.lexicon` (a new word there extends it), as in the original CFG (§9), so a
constrained model can only write lexicon LFs.  The ``strict`` and ``lenient`` grammars read
*any* LF a model writes (an unconstrained model, the paper's GPT-3.5 runs, Table 1's
``swam``): words are typed by shape and position — a predicate is a lowercase word
(``[a-z][A-Za-z0-9_]*``) heading an atom of one or two arguments, a variable is a lowercase word
in a quantifier or argument position (``w``, ``x1``, ``v12``), a constant a capitalised word
(``[A-Z][A-Za-z0-9_]*``).  The words ``exists``, ``forall``, ``AND`` and ``OR`` are keywords.
Constants appear only as the second argument of a two-place atom, as in the original CFG.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from lark import Lark

from amp.logic import lexicon
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT, Format, check_format

Spacing = Literal["strict", "decoding", "lenient"]

#: Canonical variable names (``v0``, ``v1``, …); the open *parse* grammars read them like any
#: other lowercase variable.
CANONICAL_VARIABLES: tuple[str, ...] = tuple(f"v{i}" for i in range(16))

#: Word shapes of the open parse grammars (``strict``/``lenient``).  Keywords (``exists``,
#: ``forall``, ``AND``, ``OR``) are excluded from them.
_LOWER = r"(?!(?:exists|forall)(?![A-Za-z0-9_]))[a-z][A-Za-z0-9_]*"
WORD_PATTERNS: dict[str, str] = {
    "PRED": _LOWER,
    "VAR": _LOWER,
    "CONST": r"(?!(?:AND|OR)(?![A-Za-z0-9_]))[A-Z][A-Za-z0-9_]*",
}


def _alts(words: tuple[str, ...]) -> str:
    return " | ".join(f'"{w}"' for w in words)


def _lit(text: str) -> str:
    """A lark string literal, or nothing for the empty string (lenient spacing)."""
    return f'"{text}"' if text else ""


def _fol_rules(sp: bool, own: OwnWords = NO_WORDS) -> str:
    s = " " if sp else ""
    extra = (' | upred "(" var ")"' if own.unary else "") + (f' | bpred "(" var ",{s}" arg ")"' if own.binary else "")
    return f"""
sent: item (conn item)*
!conn: "{s}AND{s}" | "{s}OR{s}"
item: quant* base
quant: quantifier {_lit(s)} var "{s}.{s}"
!quantifier: "exists" | "forall"
?base: group | atom
group: "({s}" sent "{s})"
atom: pred "(" var ")" | pred "(" var ",{s}" arg ")"{extra}
?arg: var | const
"""


def _lisp_rules(sp: bool, own: OwnWords = NO_WORDS) -> str:
    s = " " if sp else ""
    extra = ((f' | "({s}" upred {_lit(s)} var "{s})"' if own.unary else "")
             + (f' | "({s}" bpred {_lit(s)} var {_lit(s)} arg "{s})"' if own.binary else ""))
    return f"""
sent: quantified | junction | atom
quantified: "({s}" quantifier {_lit(s)} var {_lit(s)} sent "{s})"
junction: "({s}" conn ({_lit(s)} sent)+ "{s})"
!conn: "AND" | "OR"
!quantifier: "exists" | "forall"
atom: "({s}" pred {_lit(s)} var "{s})" | "({s}" pred {_lit(s)} var {_lit(s)} arg "{s})"{extra}
?arg: var | const
"""


def grammar_text(
    fmt: Format = DEFAULT_FORMAT,
    spacing: Spacing = "strict",
    *,
    predicates: tuple[str, ...] | None = None,
    constants: tuple[str, ...] | None = None,
    variables: tuple[str, ...] | None = None,
    words: OwnWords = NO_WORDS,
) -> str:
    """The lark grammar text for ``fmt`` in the given ``spacing``.

    ``decoding``: ``predicates``/``constants``/``variables`` default to the lexicon's (closed
    vocabulary, §9); ``words`` (a teacher's own words, :mod:`amp.logic.own_words`) extends it:
    own one-place predicates (rule ``upred``) head only one-argument atoms, own two-place ones
    (``bpred``) only two-argument atoms, own names join ``const``.  With no own words the text is
    exactly the lexicon grammar's.  ``strict``/``lenient``: each class not given explicitly is
    open, any word of its shape (:data:`WORD_PATTERNS`), so they read own words already.
    """
    check_format(fmt)
    if spacing not in ("strict", "decoding", "lenient"):
        raise ValueError(f"unknown spacing {spacing!r}")
    spaced = spacing != "lenient"
    own = words if spacing == "decoding" else NO_WORDS
    rules = _fol_rules(spaced, own) if fmt == "fol" else _lisp_rules(spaced, own)
    start = 'start: " " sent "\\n"' if spacing == "decoding" else "start: sent"
    if spacing == "decoding":  # closed vocabulary; this text is part of result cache keys
        preds = predicates if predicates is not None else lexicon.predicates()
        consts = (constants if constants is not None else lexicon.constants()) + own.constants
        variables = variables if variables is not None else lexicon.VARIABLES
        text = f"{start}\n{rules}\n!var: {_alts(variables)}\n!pred: {_alts(preds)}\n!const: {_alts(consts)}\n"
        text += f"!upred: {_alts(own.unary)}\n" if own.unary else ""
        return text + (f"!bpred: {_alts(own.binary)}\n" if own.binary else "")
    classes = {"var": variables, "pred": predicates, "const": constants}
    text = f"{start}\n{rules}\n"
    for rule, given in classes.items():
        terminal = rule.upper()
        text += f"!{rule}: {_alts(given)}\n" if given is not None else f"{rule}: {terminal}\n"
    text += "".join(f"{t}: /{p}/\n" for t, p in WORD_PATTERNS.items() if classes[t.lower()] is None)
    if spacing == "lenient":
        text += "%import common.WS\n%ignore WS\n"
    return text


@lru_cache(maxsize=16)
def _cached_parser(text: str) -> Lark:
    return Lark(text, parser="lalr", start="start", maybe_placeholders=False)


def lark_parser(fmt: Format = DEFAULT_FORMAT, spacing: Spacing = "lenient", words: OwnWords = NO_WORDS) -> Lark:
    """A (cached) LALR lark parser for the lexicon's grammar (with ``words`` for ``decoding``)."""
    return _cached_parser(grammar_text(fmt, spacing, words=words))
