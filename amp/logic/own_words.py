"""A teacher's own words: predicates and names outside the lexicon, typed by arity.

The decoding grammar (:func:`amp.logic.grammar.grammar_text`) is closed over the lexicon, as the
original CFG was (reference §9), so a constrained model can only write lexicon LFs.  A sentence
of the teacher's own ("I saw her duck") needs words the lexicon lacks (``duck``, ``Her``).
:class:`OwnWords` names them, each with its arity: a **one-place** predicate (``duck(x)``), a
**two-place** predicate (``owns(x, y)``) or a **constant** (a capitalised name, second argument of
a two-place atom).  The decoding grammar built with them admits each new predicate only with its
own number of arguments; the grammar's text (and so every cache key that holds it) changes with
the words, while the lexicon's grammar stays byte for byte what it was when no word is added.

:func:`own_words_of` reads the words of given LFs (the two readings, a prompt's examples) that the
lexicon does not have; :func:`unknown_words` is what an error message uses to say which word a
refused LF lacks.  Pure functions, no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from amp.data import lexicon
from amp.errors import AmpError, LFParseError
from amp.records import JsonRecord

#: At most this many own words in one grammar (each is an alternative of a grammar rule and a
#: branch of the decoding automaton; a request is bounded).
MAX_OWN_WORDS = 32
#: At most this many characters in one own word.
MAX_WORD_CHARS = 24

_PREDICATE = re.compile(r"[a-z][a-z0-9_]*")
_CONSTANT = re.compile(r"[A-Z][A-Za-z0-9_]*")
_KEYWORDS = frozenset({"exists", "forall", "AND", "OR"})
#: The one-line hint every "unknown word" message ends with.
ADD_HINT = "add it as your own word (Own sentences page), or use a lexicon word"


class OwnWordsError(AmpError, ValueError):
    """Own words that cannot extend the grammar (bad shape, a keyword, a clash, too many)."""


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


def own_words_of(lfs: Iterable[str], fmt: str = "fol") -> OwnWords:
    """The words of ``lfs`` that the lexicon lacks, typed by how the LFs use them.

    Raises :class:`~amp.errors.LFParseError` for an LF that does not read, and
    :class:`OwnWordsError` for a word used with two arities or too many words.
    """
    from amp.logic.ast import atoms, is_constant
    from amp.logic.reader import parse_lf

    predicates, names = set(lexicon.predicates()), set(lexicon.constants())
    unary: set[str] = set()
    binary: set[str] = set()
    constants: set[str] = set()
    for lf in lfs:
        for atom in atoms(parse_lf(lf, fmt)):
            if atom.pred not in predicates:
                (unary if len(atom.args) == 1 else binary).add(atom.pred)
            constants.update(a for a in atom.args[1:] if is_constant(a) and a not in names)
    return OwnWords(tuple(unary), tuple(binary), tuple(constants))


def unknown_words(lf: str, fmt: str = "fol", words: OwnWords = NO_WORDS) -> tuple[str, ...]:
    """Predicates and names of ``lf`` that neither the lexicon nor ``words`` has, in text order
    (empty if the LF does not read: its own parse error says more)."""
    try:
        found = own_words_of([lf], fmt)
    except (LFParseError, OwnWordsError):
        return ()
    known = set(words.unary) | set(words.binary) | set(words.constants)
    new = [w for w in found.unary + found.binary + found.constants if w not in known]
    return tuple(sorted(new, key=lambda w: lf.find(w)))


def unknown_word_message(lf: str, fmt: str = "fol", words: OwnWords = NO_WORDS) -> str | None:
    """``'duck' is not in the lexicon — add it as your own word …``, or ``None`` if every word is known."""
    missing = unknown_words(lf, fmt, words)
    if not missing:
        return None
    listed = ", ".join(repr(w) for w in missing)
    verb = "is" if len(missing) == 1 else "are"
    hint = ADD_HINT if len(missing) == 1 else ADD_HINT.replace("add it as your own word", "add them as your own words")
    return f"{listed} {verb} not in the lexicon — {hint}"
