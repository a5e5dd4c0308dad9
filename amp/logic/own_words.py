"""A teacher's own words: predicates and names outside the lexicon, typed by arity.

The decoding grammar (:func:`amp.logic.grammar.grammar_text`) is closed over the lexicon, as the
original CFG was (docs/paper-notes.md §9), so a constrained model can only write lexicon LFs.  A sentence
of the teacher's own ("I saw her duck") needs words the lexicon lacks (``duck``, ``Her``).
:class:`OwnWords` names them, each with its arity: a **one-place** predicate (``duck(x)``), a
**two-place** predicate (``owns(x, y)``) or a **constant** (a capitalised name, second argument of
a two-place atom).  The decoding grammar built with them admits each new predicate only with its
own number of arguments; the grammar's text (and so every cache key that holds it) changes with
the words, while the lexicon's grammar stays byte for byte what it was when no word is added.

Which words of given LFs the lexicon lacks is read by :mod:`amp.logic.unknown_words` (it needs the
LF reader, which needs this module's record).  Pure functions, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from amp.logic import lexicon
from amp.logic.errors import OwnWordsError
from amp.records import JsonRecord

#: At most this many own words in one grammar (each is an alternative of a grammar rule and a
#: branch of the decoding automaton; a request is bounded).
MAX_OWN_WORDS = 32
#: At most this many characters in one own word.
MAX_WORD_CHARS = 24

_PREDICATE = re.compile(r"[a-z][a-z0-9_]*")
_CONSTANT = re.compile(r"[A-Z][A-Za-z0-9_]*")
_KEYWORDS = frozenset({"exists", "forall", "AND", "OR"})


@dataclass(frozen=True)
class OwnWords(JsonRecord):
    """Words outside the lexicon, by kind; sorted and deduplicated, validated on construction."""

    unary: tuple[str, ...] = ()
    binary: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("unary", "binary", "constants"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(w, str) for w in value):
                raise OwnWordsError(f"{name} must be a list of words, not {value!r}")
            object.__setattr__(self, name, tuple(sorted(set(value))))
        for word in self.unary + self.binary:
            _check_word(word, "predicate")
        for word in self.constants:
            _check_word(word, "constant")
        both = set(self.unary) & set(self.binary)
        if both:
            word = sorted(both)[0]
            raise OwnWordsError(f"own word {word!r} is used with one argument and with two; an own predicate "
                                f"has one arity (use two words, e.g. {word!r} and '{word}_of')")
        if len(self) > MAX_OWN_WORDS:
            raise OwnWordsError(f"{len(self)} own words: at most {MAX_OWN_WORDS} may extend the grammar")

    def __len__(self) -> int:
        return len(self.unary) + len(self.binary) + len(self.constants)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __or__(self, other: OwnWords) -> OwnWords:
        return OwnWords(self.unary + other.unary, self.binary + other.binary, self.constants + other.constants)

    def describe(self) -> str:
        """``duck (one place), owns (two places), Her (name)`` or ``none``."""
        parts = ([f"{w} (one place)" for w in self.unary] + [f"{w} (two places)" for w in self.binary]
                 + [f"{w} (name)" for w in self.constants])
        return ", ".join(parts) if parts else "none"

    def key(self) -> str:
        """A short stable text of the words, for labels and logs (the grammar text is the cache key)."""
        return ";".join(("1:" + ",".join(self.unary), "2:" + ",".join(self.binary), "c:" + ",".join(self.constants)))


NO_WORDS = OwnWords()


def _check_word(word: str, kind: str) -> None:
    shape = _PREDICATE if kind == "predicate" else _CONSTANT
    if len(word) > MAX_WORD_CHARS:
        raise OwnWordsError(f"own word {word[:MAX_WORD_CHARS]!r}… is longer than {MAX_WORD_CHARS} characters")
    if not shape.fullmatch(word):
        rule = ("lowercase letters, digits and _ , starting with a letter" if kind == "predicate"
                else "a capital letter, then letters, digits and _")
        raise OwnWordsError(f"own {kind} {word!r} is not a word of the logical forms ({rule})")
    if word in _KEYWORDS or word in lexicon.VARIABLES:
        raise OwnWordsError(f"{word!r} is a keyword or variable name of the logical forms, not a new {kind}")
    known = lexicon.predicates() if kind == "predicate" else lexicon.constants()
    if word in known:
        raise OwnWordsError(f"{word!r} is already in the lexicon; it needs no own-word entry")
