"""Which words of a teacher's LFs the lexicon lacks, read with the LF reader.

:func:`own_words_of` reads the words of given LFs (the two readings, a prompt's examples) that the
lexicon does not have, typed as :class:`~amp.logic.own_words.OwnWords`; :func:`unknown_words` is
what an error message uses to say which word a refused LF lacks.  Pure functions, no model.
"""

from __future__ import annotations

from collections.abc import Iterable

from amp.logic import lexicon
from amp.logic.ast import atoms, is_constant
from amp.logic.errors import LFParseError, OwnWordsError
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.reader import parse_lf
from amp.logic.vocabulary import DEFAULT_FORMAT

#: The one-line hint every "unknown word" message ends with.
ADD_HINT = "add it as your own word (Own sentences page), or use a lexicon word"


def own_words_of(lfs: Iterable[str], fmt: str = DEFAULT_FORMAT) -> OwnWords:
    """The words of ``lfs`` that the lexicon lacks, typed by how the LFs use them.

    Raises :class:`~amp.logic.errors.LFParseError` for an LF that does not read, and
    :class:`OwnWordsError` for a word used with two arities or too many words.
    """
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


def unknown_words(lf: str, fmt: str = DEFAULT_FORMAT, words: OwnWords = NO_WORDS) -> tuple[str, ...]:
    """Predicates and names of ``lf`` that neither the lexicon nor ``words`` has, in text order
    (empty if the LF does not read: its own parse error says more)."""
    try:
        found = own_words_of([lf], fmt)
    except (LFParseError, OwnWordsError):
        return ()
    known = set(words.unary) | set(words.binary) | set(words.constants)
    new = [w for w in found.unary + found.binary + found.constants if w not in known]
    return tuple(sorted(new, key=lambda w: lf.find(w)))


def unknown_word_message(lf: str, fmt: str = DEFAULT_FORMAT, words: OwnWords = NO_WORDS) -> str | None:
    """``'duck' is not in the lexicon — add it as your own word …``, or ``None`` if every word is known."""
    missing = unknown_words(lf, fmt, words)
    if not missing:
        return None
    listed = ", ".join(repr(w) for w in missing)
    verb = "is" if len(missing) == 1 else "are"
    hint = ADD_HINT if len(missing) == 1 else ADD_HINT.replace("add it as your own word", "add them as your own words")
    return f"{listed} {verb} not in the lexicon — {hint}"
