"""Character-level automaton on lark's LALR table (constrained decoding, design study §4a).

Every terminal of the ``decoding`` grammar (:func:`amp.logic.grammar.grammar_text`, reference §9)
is a literal string, so "is this text a prefix of some LF?" is decided character by character
without a lexer.  A *state* is a frozenset of configurations ``(stack, partial)``:

* ``stack`` — the LALR state stack (a tuple of lark parse-table state ids) after the terminals
  completed so far;
* ``partial`` — the text of the terminal being read (a non-empty prefix of an acceptable
  literal), or ``""`` only in the initial configuration.

It is a *set* because a complete literal may also be the prefix of a longer one (``car`` /
``carried``; here ``a`` the variable / ``agent`` the predicate): both readings are kept until
the text disambiguates them.  The empty frozenset is the dead state.

On a character ``c`` each configuration (i) extends ``partial`` if some acceptable terminal
still starts with ``partial + c`` and/or (ii) if ``partial`` is itself a complete acceptable
terminal, feeds it to the LALR driver and starts a new terminal with ``c``.  "Acceptable"
terminals of a stack are exactly lark's ``InteractiveParser.accepts()``: those whose reduce
chain does not fail (design study §5 item 9).  A state is *final* when some configuration's
partial text completes a terminal after which ``$END`` is accepted; the grammar ends with
``"\\n"``, so that happens exactly after the LF's final newline.

**Trailing layout.**  The prompt layout of reference §10 puts a blank line after every example
LF, so models like Gemma end an LF with the single token ``"\n\n"`` far more often than with
``"\n"`` (p ≈ 0.94 vs 0.01 on the appendix prompt).  A *token* may therefore carry, after the
sentence's final character, more ``trailing`` characters (default: newlines):
:meth:`advance_token` returns the final state for such a token, and :meth:`end_content` says
where the sentence ended inside it.  Plain text (:meth:`advance`, :meth:`accepts_text`) is
still exactly the grammar.

Everything is memoised by value (stacks are tuples, states frozensets), so the automaton is
safe to share between beams, prompts and threads that only read it.  Regex terminals, flags and
``%ignore`` are rejected at construction.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from lark.parsers.lalr_analysis import Shift

from amp.errors import DecodingError

if TYPE_CHECKING:
    from lark import Lark

Stack = tuple[int, ...]
Config = tuple[Stack, str]
State = frozenset  # frozenset[Config]

#: The dead state: no configuration survives.
DEAD: State = frozenset()

_END = "$END"
#: Memo tables are cleared when they grow past this many entries (bounded memory in a
#: long-running app; everything is recomputable).
_MEMO_CAP = 500_000


class GrammarAutomaton:
    """Prefix automaton of a literal-terminal LALR grammar (design study §4a).

    Build it from ``lark_parser(fmt, "decoding")``; use :func:`get_automaton` for the cached
    per-format instance.
    """

    def __init__(self, parser: Lark, *, start: str = "start", trailing: str = "\n") -> None:
        if parser.options.parser != "lalr":
            raise DecodingError("the grammar automaton needs a lark parser built with parser='lalr'")
        if parser.ignore_tokens:
            raise DecodingError(
                f"the decoding grammar must not %ignore terminals (found {parser.ignore_tokens}); "
                "whitespace is fixed by the 'decoding' spacing"
            )
        literals: dict[str, str] = {}
        for term in parser.terminals:
            pattern = term.pattern
            if pattern.type != "str" or pattern.flags:
                raise DecodingError(
                    f"terminal {term.name} ({pattern!r}) is not a plain literal string; the "
                    "constrained decoder supports literal terminals only (design study §5 item 9)"
                )
            if not pattern.value:
                raise DecodingError(f"terminal {term.name} is the empty string")
            literals[term.name] = pattern.value
        table = parser.parser.parser.parser.parse_table
        self._table: dict[int, dict[str, tuple]] = table.states
        self._end_state: int = table.end_states[start]
        for actions in self._table.values():
            for sym in actions:
                if sym.isupper() and sym != _END and sym not in literals:
                    raise DecodingError(f"terminal {sym} has no literal definition")
        self.literals: dict[str, str] = literals
        #: Characters a token may carry after the sentence is complete (layout, not LF text).
        self.trailing: str = trailing
        #: Every character that occurs in some terminal: text outside it is never grammatical.
        self.alphabet: frozenset[str] = frozenset("".join(literals.values()))
        self.initial: State = frozenset({((table.start_states[start],), "")})
        self._feed_memo: dict[tuple[Stack, str], Stack | None] = {}
        self._accepts_memo: dict[Stack, tuple[dict[str, str], frozenset[str], bool]] = {}
        self._step_memo: dict[tuple[State, str], State] = {}
        self._next_memo: dict[State, str] = {}
        self._final_memo: dict[State, bool] = {}

    # --- LALR driver ---------------------------------------------------------------------
    def _feed(self, stack: Stack, term: str) -> Stack | None:
        """The stack after shifting ``term`` (with its reductions), or None if it fails."""
        key = (stack, term)
        try:
            return self._feed_memo[key]
        except KeyError:
            pass
        table = self._table
        st = list(stack)
        result: Stack | None = None
        while True:
            action = table[st[-1]].get(term)
            if action is None:
                break
            kind, arg = action
            if kind is Shift:
                st.append(arg)
                result = tuple(st)
                break
            size = len(arg.expansion)
            if size:
                del st[-size:]
            _kind, goto = table[st[-1]][arg.origin.name]
            st.append(goto)
            if term == _END and goto == self._end_state:
                result = tuple(st)
                break
        self._remember(self._feed_memo, key, result)
        return result

    def _accepts(self, stack: Stack) -> tuple[dict[str, str], frozenset[str], bool]:
        """(literal → terminal name, all non-empty literal prefixes, accepts $END) of a stack."""
        try:
            return self._accepts_memo[stack]
        except KeyError:
            pass
        by_literal: dict[str, str] = {}
        end = False
        for sym in self._table[stack[-1]]:
            if not sym.isupper():
                continue
            if self._feed(stack, sym) is None:
                continue
            if sym == _END:
                end = True
            else:
                by_literal[self.literals[sym]] = sym
        prefixes = frozenset(lit[:i] for lit in by_literal for i in range(1, len(lit) + 1))
        result = (by_literal, prefixes, end)
        self._remember(self._accepts_memo, stack, result)
        return result

    # --- character level -----------------------------------------------------------------
    def _config_step(self, config: Config, ch: str) -> list[Config]:
        stack, partial = config
        by_literal, prefixes, _end = self._accepts(stack)
        out: list[Config] = []
        extended = partial + ch
        if extended in prefixes:
            out.append((stack, extended))
        term = by_literal.get(partial)
        if term is not None:
            new_stack = self._feed(stack, term)
            if new_stack is not None and ch in self._accepts(new_stack)[1]:
                out.append((new_stack, ch))
        return out

    def step(self, state: State, ch: str) -> State:
        """The state after reading one character (``DEAD`` if the text leaves the grammar)."""
        key = (state, ch)
        try:
            return self._step_memo[key]
        except KeyError:
            pass
        if ch not in self.alphabet or not state:
            result = DEAD
        else:
            result = frozenset(c for config in state for c in self._config_step(config, ch))
        self._remember(self._step_memo, key, result)
        return result

    def advance(self, state: State, text: str) -> State:
        """The state after reading ``text`` (stops early at ``DEAD``)."""
        for ch in text:
            state = self.step(state, ch)
            if not state:
                return DEAD
        return state

    def advance_token(self, state: State, text: str) -> State:
        """Like :meth:`advance` for one token's text, but a token that completes the sentence
        and then carries only ``trailing`` characters (e.g. ``"\n\n"``) gives the final state."""
        for i, ch in enumerate(text):
            if self.is_final(state) and i and all(c in self.trailing for c in text[i:]):
                return state
            state = self.step(state, ch)
            if not state:
                return DEAD
        return state

    def end_content(self, state: State, text: str) -> str | None:
        """The part of a token's text up to the sentence's end (None if it does not end it)."""
        for i, ch in enumerate(text):
            state = self.step(state, ch)
            if not state:
                return None
            if self.is_final(state) and all(c in self.trailing for c in text[i + 1 :]):
                return text[: i + 1]
        return None

    def next_chars(self, state: State) -> str:
        """The characters that keep ``state`` alive, as a sorted string."""
        try:
            return self._next_memo[state]
        except KeyError:
            pass
        chars: set[str] = set()
        for stack, partial in state:
            by_literal, prefixes, _end = self._accepts(stack)
            n = len(partial)
            chars.update(p[n] for p in prefixes if len(p) == n + 1 and p.startswith(partial))
            term = by_literal.get(partial)
            if term is not None:
                new_stack = self._feed(stack, term)
                if new_stack is not None:
                    chars.update(p for p in self._accepts(new_stack)[1] if len(p) == 1)
        result = "".join(sorted(chars))
        self._remember(self._next_memo, state, result)
        return result

    def is_final(self, state: State) -> bool:
        """True when the text read so far is a complete sentence of the grammar."""
        try:
            return self._final_memo[state]
        except KeyError:
            pass
        result = False
        for stack, partial in state:
            term = self._accepts(stack)[0].get(partial)
            if term is None:
                continue
            new_stack = self._feed(stack, term)
            if new_stack is not None and self._accepts(new_stack)[2]:
                result = True
                break
        self._remember(self._final_memo, state, result)
        return result

    def is_dead(self, state: State) -> bool:
        return not state

    def accepts_text(self, text: str) -> bool:
        """True when ``text`` is a whole sentence of the grammar (e.g. ``" man(x)\\n"``)."""
        return self.is_final(self.advance(self.initial, text))

    def accepts_prefix(self, text: str) -> bool:
        """True when ``text`` can still be extended to a sentence of the grammar."""
        return bool(self.advance(self.initial, text))

    def states_along(self, pieces: Iterable[str]) -> list[State]:
        """The state *before* each token text, plus the state after all (:meth:`advance_token`)."""
        state = self.initial
        out = [state]
        for piece in pieces:
            state = self.advance_token(state, piece) if state else DEAD
            out.append(state)
        return out

    @staticmethod
    def _remember(memo: dict, key: object, value: object) -> None:
        if len(memo) >= _MEMO_CAP:
            memo.clear()
        memo[key] = value


def get_automaton(fmt: str = "fol") -> GrammarAutomaton:
    """The shared automaton of the lexicon's ``decoding`` grammar for ``fmt`` (reference §9).

    Cached by grammar text, so a lexicon change yields a fresh automaton.
    """
    from amp.logic.grammar import grammar_text

    return _automaton_for(fmt, grammar_text(fmt, "decoding"))  # type: ignore[arg-type]


@lru_cache(maxsize=8)
def _automaton_for(fmt: str, text: str) -> GrammarAutomaton:
    from amp.logic.grammar import lark_parser

    return GrammarAutomaton(lark_parser(fmt, "decoding"))  # type: ignore[arg-type]
