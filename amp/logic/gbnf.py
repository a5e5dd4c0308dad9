"""The decoding grammar as GBNF, for endpoints that constrain their output with one (llama.cpp's server).

One declaration: :func:`amp.logic.grammar.grammar_text` (``decoding`` spacing, the closed
lexicon vocabulary and any own words, docs/paper-notes.md §9) is compiled by lark, and its rules
— after lark has expanded ``*``, ``+``, ``?`` and groups into plain alternatives — are written
out rule for rule in GBNF, every terminal as the string literal it is.  So the grammar an endpoint
enforces is the one the in-process automaton runs on, not a second copy to keep in step: a word
added to the lexicon reaches both.

What the GBNF cannot carry is the automaton's extra **binding** rule (a variable used before it
is quantified; docs/paper-notes.md §9): a grammar-constrained endpoint may write an LF with a free
variable, which the reader then rejects (it counts as unparseable, like any choice that is not
an LF).
"""

from __future__ import annotations

import re
from functools import lru_cache

from lark import Lark
from lark.grammar import NonTerminal, Terminal

from amp.logic.grammar import grammar_text
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT, Format, check_format

#: GBNF's name of the start rule.
ROOT = "root"


def _name(origin: str) -> str:
    """A GBNF rule name (``[a-z0-9-]``) for a lark rule name; ``start`` becomes ``root``."""
    if origin == "start":
        return ROOT
    return "r-" + (re.sub(r"[^a-z0-9]+", "-", origin.lower()).strip("-") or "anon")


def _literal(text: str) -> str:
    """A GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


@lru_cache(maxsize=16)
def _gbnf(text: str) -> str:
    lark = Lark(text, parser="lalr", start="start", maybe_placeholders=False)
    literals: dict[str, str] = {}
    for term in lark.terminals:
        if term.pattern.type != "str":  # the decoding grammar has only literal terminals
            raise ValueError(f"terminal {term.name} is a pattern, not a literal: no GBNF for it")
        literals[term.name] = _literal(term.pattern.value)
    alternatives: dict[str, list[list[str]]] = {}
    for rule in lark.rules:
        parts = []
        for sym in rule.expansion:
            if isinstance(sym, Terminal):
                parts.append(literals[sym.name])
            elif isinstance(sym, NonTerminal):
                parts.append(_name(sym.name))
        alternatives.setdefault(_name(rule.origin.name), []).append(parts)
    names = [ROOT, *sorted(n for n in alternatives if n != ROOT)]
    return "".join(f"{n} ::= {_body(n, alternatives[n])}\n" for n in names)


def _body(name: str, alternatives: list[list[str]]) -> str:
    """The right-hand side of rule ``name``; lark's left recursion (``A: b | A c``, how it expands
    ``*`` and ``+``) becomes repetition (``(b) (c)*``): llama.cpp rejects left-recursive rules."""
    def alt(parts: list[str]) -> str:
        return " ".join(parts) or '""'

    tails = list(dict.fromkeys(alt(p[1:]) for p in alternatives if p and p[0] == name))
    heads = list(dict.fromkeys(alt(p) for p in alternatives if not p or p[0] != name))
    if not tails:
        return " | ".join(heads)
    return f"({' | '.join(heads)}) ({' | '.join(tails)})*"


def gbnf_text(fmt: Format = DEFAULT_FORMAT, words: OwnWords = NO_WORDS) -> str:
    """The decoding grammar of ``fmt`` (with ``words``) in GBNF: ``" " + LF + "\\n"``, root rule ``root``."""
    check_format(fmt)
    return _gbnf(grammar_text(fmt, "decoding", words=words))
