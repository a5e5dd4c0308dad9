"""An oracle for constrained decoding that shares no code with the decoder: lark on every prefix.

The constrained decoder (:mod:`amp.parser.search.automaton`, :mod:`amp.parser.search.vocab`,
:mod:`amp.parser.search.processors`) masks every token that cannot continue a logical form.  If the
mask leaks a token, a beam may still end up ranked, cut or flagged in ways the decoding tests do
not look at.  This module checks each produced beam **token by token**:

* the text of every token prefix comes from the tokenizer itself (``tokenizer.decode``), not
  from :class:`amp.parser.search.vocab.Vocabulary`;
* that text must be a viable prefix of the decoding grammar (``grammar_text(fmt, "decoding")``,
  the grammar *definition*), decided by lark's own LALR interactive parser, fed character by
  character with the grammar's literal terminals (every terminal of the decoding grammar is a
  literal string);
* variables must be bound: a variable right after ``exists``/``forall`` binds it and must not
  be bound already (no double quantification), any other variable must be bound earlier in the
  text (the decoder's rule, "quantified earlier in the text, in any scope");
* a finished beam's text must be a complete sentence of the grammar.

:func:`check_parse_result` returns the violations; :func:`assert_follows_grammar` raises.  The
root ``conftest.py`` runs it on every beam that :func:`amp.parser.search.decode.parse_and_score_batch`
returns during a test.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from amp.logic import lexicon
from amp.logic.grammar import grammar_text

QUANTIFIERS = frozenset({"exists", "forall"})


@dataclass(frozen=True)
class _Grammar:
    lark: Lark
    literal_of: dict[str, str]  # terminal name -> literal text
    variables: frozenset[str]


@lru_cache(maxsize=16)
def _grammar(fmt: str, words: Any = None) -> _Grammar:
    """The decoding grammar of ``fmt``, extended with a teacher's own ``words`` (an
    :class:`~amp.logic.own_words.OwnWords`) when the decoder was given them."""
    extra = {"words": words} if words is not None else {}
    lark = Lark(grammar_text(fmt, "decoding", **extra), parser="lalr", start="start")  # type: ignore[arg-type]
    literal_of = {}
    for term in lark.terminals:
        if term.pattern.type != "str":  # the decoding grammar is all literals; anything else is a new design
            raise AssertionError(f"terminal {term.name} of the {fmt} decoding grammar is not a literal")
        literal_of[term.name] = term.pattern.value
    return _Grammar(lark, literal_of, frozenset(lexicon.VARIABLES))


@dataclass(frozen=True)
class _Config:
    """One reading of the text so far: parser state, the unfinished terminal, bound variables."""

    parser: Any  # lark InteractiveParser (completed terminals fed)
    partial: str
    bound: frozenset[str]
    after: tuple[str, ...]  # literals of the last two completed terminals (binder detection)


class PrefixChecker:
    """Feeds text character by character; :meth:`viable` says if it can still become an LF."""

    def __init__(self, fmt: str, words: Any = None) -> None:
        self.g = _grammar(fmt, words)
        self.fmt = fmt
        self.text = ""
        self.configs: list[_Config] = [_Config(self.g.lark.parse_interactive(""), "", frozenset(), ())]
        self.reason = ""

    def _literals(self, parser: Any) -> Iterable[tuple[str, str]]:
        for name in parser.choices():
            lit = self.g.literal_of.get(name)
            if lit is not None:
                yield name, lit

    def _complete(self, c: _Config) -> _Config | None:
        """``c`` with its partial terminal fed to the parser, or None if lark or binding refuses."""
        for name, lit in self._literals(c.parser):
            if lit != c.partial:
                continue
            bound = c.bound
            if lit in self.g.variables:
                binder = len(c.after) == 2 and c.after[0] in QUANTIFIERS and c.after[1] == " "
                if binder and lit in bound:
                    self.reason = f"variable {lit!r} quantified twice"
                    return None
                if not binder and lit not in bound:
                    self.reason = f"variable {lit!r} used before it is quantified"
                    return None
                bound = bound | {lit} if binder else bound
            parser = c.parser.copy()
            try:
                parser.feed_token(Token(name, lit))
            except UnexpectedInput:
                self.reason = f"lark refuses {lit!r} here"
                continue
            return _Config(parser, "", bound, (*c.after, lit)[-2:])
        return None

    def feed(self, chars: str) -> None:
        for ch in chars:
            self.text += ch
            self.reason = ""
            out: list[_Config] = []
            for c in self.configs:
                grown = c.partial + ch
                if any(lit.startswith(grown) for _, lit in self._literals(c.parser)):
                    out.append(_Config(c.parser, grown, c.bound, c.after))
                if c.partial:
                    done = self._complete(c)
                    if done is not None and any(lit.startswith(ch) for _, lit in self._literals(done.parser)):
                        out.append(_Config(done.parser, ch, done.bound, done.after))
            self.configs = out
            if not out:
                self.reason = self.reason or f"no terminal of the {self.fmt} grammar continues with {ch!r}"
                return

    def viable(self) -> bool:
        """Some reading's unfinished terminal can be completed and fed (exactly, not by table)."""
        for c in self.configs:
            if not c.partial:
                return True
            for _name, lit in self._literals(c.parser):
                if lit.startswith(c.partial) and self._complete(_Config(c.parser, lit, c.bound, c.after)):
                    return True
        return False

    def complete(self) -> bool:
        """The text so far is a whole sentence of the decoding grammar (with bound variables)."""
        for c in self.configs:
            done = self._complete(c) if c.partial else c
            if done is None:
                continue
            try:
                done.parser.copy().feed_eof()
            except UnexpectedInput:
                continue
            return True
        return False


def prefix_violation(fmt: str, prefixes: Sequence[str], finished: bool, words: Any = None) -> str | None:
    """The first problem with a sequence of growing texts (one per token), or None.

    ``prefixes[i]`` is the text after ``i + 1`` tokens; each must extend the previous one.
    """
    checker = PrefixChecker(fmt, words)
    for i, text in enumerate(prefixes):
        if not text.startswith(checker.text):
            return f"token {i}: decoded text {text!r} does not extend {checker.text!r}"
        checker.feed(text[len(checker.text):])
        if not checker.configs or not checker.viable():
            return f"token {i}: {text!r} is not a prefix of a {fmt} LF ({checker.reason or 'dead end'})"
    if finished and not checker.complete():
        return f"finished beam {checker.text!r} is not a complete {fmt} LF ({checker.reason or 'incomplete'})"
    return None


def token_prefixes(tokenizer: Any, ids: Sequence[int], raw_text: str) -> list[str]:
    """The tokenizer's own text after each of ``ids`` (with the grammar's leading space).

    SentencePiece-style tokenizers drop the leading space of a decoded sequence; when the
    decoded whole lacks exactly the beam's first space, every prefix gets it back.
    """
    def decode(part: Sequence[int]) -> str:
        return tokenizer.decode(list(part), skip_special_tokens=True, clean_up_tokenization_spaces=False)

    whole = decode(ids)
    lead = " " if whole != raw_text and " " + whole == raw_text else ""
    return [lead + decode(ids[: i + 1]) for i in range(len(ids))]


def check_parse_result(result: Any, tokenizer: Any, words: Any = None) -> list[str]:
    """Violations of the grammar in the beams of one constrained :class:`ParseResult` (decoded
    under the grammar extended with ``words``, a teacher's own words, when given)."""
    if not result.constrained:
        return []
    problems = []
    for beam in result.beams:
        if not beam.token_ids:
            continue
        prefixes = token_prefixes(tokenizer, beam.token_ids, beam.raw_text)
        if prefixes[-1] != beam.raw_text:
            problems.append(f"beam {beam.rank}: tokenizer text {prefixes[-1]!r} != raw_text {beam.raw_text!r}")
            continue
        problem = prefix_violation(result.fmt, prefixes, beam.finished, words)
        if problem:
            problems.append(f"beam {beam.rank} {beam.raw_text!r}: {problem}")
    return problems


def assert_follows_grammar(result: Any, tokenizer: Any) -> None:
    """Fail if any beam of ``result`` leaves the grammar at some token (see module docstring)."""
    problems = check_parse_result(result, tokenizer)
    assert not problems, "constrained decoding left the grammar:\n" + "\n".join(problems)
