"""Character-level automaton on lark's LALR table (constrained decoding, docs/decoding-notes.md §4a).

Every terminal of the ``decoding`` grammar (:func:`amp.logic.grammar.grammar_text`, docs/paper-notes.md §9)
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
chain does not fail (docs/decoding-notes.md §5 item 9).  A state is *final* when some configuration's
partial text completes a terminal after which ``$END`` is accepted; the grammar ends with
``"\\n"``, so that happens exactly after the LF's final newline.

**Trailing layout.**  The prompt layout of docs/paper-notes.md §10 puts a blank line after every example
LF, so models like Gemma end an LF with the single token ``"\n\n"`` far more often than with
``"\n"`` (p ≈ 0.94 vs 0.01 on the appendix prompt).  A *token* may therefore carry, after the
sentence's final character, more ``trailing`` characters (default: newlines):
:meth:`advance_token` returns the final state for such a token, and :meth:`end_content` says
where the sentence ended inside it.  Plain text (:meth:`advance`, :meth:`accepts_text`) is
still exactly the grammar.

**Bound variables** (``bound_variables=True``, the default; docs/decoding-notes.md §5 item 11).  A CFG
lets through free variables (``telescope(z)`` with no ``exists z``) and double quantification
(``exists x . exists x .``), and small models produce both.  Each configuration therefore also
carries ``bound`` — the frozenset of variable names quantified so far — and is
``(stack, partial, bound)``.  The rule is **"quantified earlier in the text, in any scope"**: a
variable may be used as an atom argument only if it was quantified somewhere before (AmP LFs
quantify in a prefix; the Lisp format nests quantifiers around their body, so for both this is
a sound, simple approximation of scoping — it never rejects a closed LF, but it accepts a Lisp
LF that uses a variable after its quantifier's scope has closed), and a variable may not be
quantified twice.  The binding position comes from the grammar, not from the text: the variable
terminals are those of the ``var`` rule, and a ``var`` is *binding* when it directly follows a
``quantifier`` in some rule (``quantifier " " var``, with only literals in between).  At run
time an LALR stack is in binding position when the accessing symbols of its top states spell
such a ``quantifier " "`` context.  Forbidden variable literals are removed from the acceptable
terminals of ``(stack, bound)``, so the text dies on the variable's own character and masks,
:meth:`next_chars` and :meth:`is_final` all respect it.  (Requiring every quantified variable to
be *used* before the LF may end is not enforced: in the Lisp format it creates dead ends — a
closed scope with an unused variable can only be closed further — so it would need look-ahead.)
Grammars without a ``var`` rule have nothing to track.

**No dead ends.**  Filtering variables can strand a text the bare grammar would continue: an atom
begun before any quantifier (``smiled(`` needs a variable next and none is quantified) or a
quantifier once all six variables are taken.  A terminal is therefore also removed when a
bounded look-ahead (``lookahead`` terminals, default 3; the AmP grammars' dead ends are at most
that deep) proves that nothing can follow it, so every alive state has a non-empty mask.
:meth:`binding_violation` explains refusals on the unpruned language (``man(x)`` is refused
for its free ``x``, not at its ``m``).

Everything is memoised by value (stacks are tuples, states frozensets), so the automaton is
safe to share between beams, prompts and threads that only read it.  Regex terminals, flags and
``%ignore`` are rejected at construction.
"""

from __future__ import annotations

# long: ~480 lines on purpose — one class (the automaton) whose design notes are this 70-line
# docstring; what it reads from lark's tables lives in amp.parser.search.lalr_tables.
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from lark.parsers.lalr_analysis import Shift

from amp.logic.grammar import grammar_text, lark_parser
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.memo import Memo
from amp.parser.core.errors import DecodingError
from amp.parser.search.lalr_tables import END as _END
from amp.parser.search.lalr_tables import binding_contexts, check_table_terminals, literal_terminals

if TYPE_CHECKING:
    from lark import Lark

Stack = tuple[int, ...]
Bound = frozenset  # frozenset[str]: variable names quantified so far
Config = tuple[Stack, str, Bound]
State = frozenset  # frozenset[Config]

#: The dead state: no configuration survives.
DEAD: State = frozenset()

#: Memo tables are cleared when they grow past this many entries (bounded memory in a
#: long-running app; everything is recomputable).
_MEMO_CAP = 500_000
_NO_VARS: frozenset[str] = frozenset()


class GrammarAutomaton:
    """Prefix automaton of a literal-terminal LALR grammar (docs/decoding-notes.md §4a).

    Build it from ``lark_parser(fmt, "decoding")``; use :func:`get_automaton` for the cached
    per-format instance.
    """

    #: The LF format and the teacher's own words of the grammar it was built from (set by
    #: :func:`get_automaton`; messages and the beams' ``parses`` flag read them).
    fmt: str = DEFAULT_FORMAT
    own_words: OwnWords = NO_WORDS

    def __init__(
        self,
        parser: Lark,
        *,
        start: str = "start",
        trailing: str = "\n",
        bound_variables: bool = True,
        var_rule: str = "var",
        binder_rule: str = "quantifier",
        lookahead: int = 3,
    ) -> None:
        if parser.options.parser != "lalr":
            raise DecodingError("the grammar automaton needs a lark parser built with parser='lalr'")
        if parser.ignore_tokens:
            raise DecodingError(
                f"the decoding grammar must not %ignore terminals (found {parser.ignore_tokens}); "
                "whitespace is fixed by the 'decoding' spacing"
            )
        literals = literal_terminals(parser)
        table = parser.parser.parser.parser.parse_table
        self._table: dict[int, dict[str, tuple]] = table.states
        self._end_state: int = table.end_states[start]
        check_table_terminals(self._table, literals)
        self.literals: dict[str, str] = literals
        #: Memo tables of the pure functions below (every value recomputable: cleared when full).
        self._binds_memo: Memo = Memo(self._compute_binds, _MEMO_CAP)
        self._feed_memo: Memo = Memo(self._compute_feed, _MEMO_CAP)
        self._accepts_memo: Memo = Memo(self._compute_accepts, _MEMO_CAP)
        self._dead_end_memo: Memo = Memo(self._compute_dead_end, _MEMO_CAP)
        self._allowed_memo: Memo = Memo(self._compute_allowed, _MEMO_CAP)
        self._step_memo: Memo = Memo(self._compute_step, _MEMO_CAP)
        self._next_chars_memo: Memo = Memo(self._compute_next_chars, _MEMO_CAP)
        self._is_final_memo: Memo = Memo(self._compute_is_final, _MEMO_CAP)
        #: Characters a token may carry after the sentence is complete (layout, not LF text).
        self.trailing: str = trailing
        #: Every character that occurs in some terminal: text outside it is never grammatical.
        self.alphabet: frozenset[str] = frozenset("".join(literals.values()))
        self.initial: State = frozenset({((table.start_states[start],), "", _NO_VARS)})
        #: Whether states carry the set of quantified variables (see the module docstring).
        self.bound_variables: bool = False
        #: Variable terminal name → its literal (the ``var`` rule's alternatives).
        self.var_terminals: dict[str, str] = {}
        #: Symbol sequences (``quantifier`` + literals) after which a ``var`` is binding.
        self._binders: tuple[tuple[str, ...], ...] = ()
        #: Accessing symbol of every LALR state (the symbol shifted or gone to to enter it).
        self._access: dict[int, str] = {}
        if bound_variables:
            self._setup_binding(parser, var_rule, binder_rule)
        #: Terminals of look-ahead for dead ends (:meth:`_dead_end`); 0 turns the pruning off.
        self.lookahead: int = lookahead
        self._build = (parser, start, trailing, var_rule, binder_rule)
        self._unpruned_automaton: GrammarAutomaton | None = None

    def _setup_binding(self, parser: Lark, var_rule: str, binder_rule: str) -> None:
        binding = binding_contexts(parser, self.literals, self._table, var_rule, binder_rule)
        if binding is None:
            return  # no variables in this grammar: nothing to bind
        self.var_terminals, self._binders, self._access = binding
        self.bound_variables = True

    def _binds(self, stack: Stack) -> bool:
        """True when a variable shifted on ``stack`` is being quantified (binding position)."""
        return self._binds_memo[stack]

    def _compute_binds(self, stack: Stack) -> bool:
        """Computes :meth:`_binds` (memoised there)."""
        access = self._access
        result = False
        for seq in self._binders:
            n = len(seq)
            if len(stack) > n and all(access.get(s) == sym for s, sym in zip(stack[-n:], seq)):
                result = True
                break
        return result

    # --- LALR driver ---------------------------------------------------------------------
    def _feed(self, stack: Stack, term: str) -> Stack | None:
        """The stack after shifting ``term`` (with its reductions), or None if it fails."""
        return self._feed_memo[stack, term]

    def _compute_feed(self, stack: Stack, term: str) -> Stack | None:
        """Computes :meth:`_feed` (memoised there)."""
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
        return result

    def _accepts(self, stack: Stack) -> tuple[dict[str, str], frozenset[str], bool]:
        """(literal → terminal name, all non-empty literal prefixes, accepts $END) of a stack."""
        return self._accepts_memo[stack]

    def _compute_accepts(self, stack: Stack) -> tuple[dict[str, str], frozenset[str], bool]:
        """Computes :meth:`_accepts` (memoised there)."""
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
        return result

    def _var_allowed(self, stack: Stack, bound: Bound) -> dict[str, str]:
        """:meth:`_accepts`'s literals less the variables ``bound`` forbids here: an unquantified
        one in a use position, an already quantified one in a binding position."""
        by_literal = self._accepts(stack)[0]
        var_terms = self.var_terminals
        if not any(term in var_terms for term in by_literal.values()):
            return by_literal
        binding = self._binds(stack)
        return {
            lit: term for lit, term in by_literal.items() if term not in var_terms or (lit in bound) != binding
        }

    def _dead_end(self, stack: Stack, term: str, bound: Bound, depth: int) -> bool:
        """True when shifting ``term`` provably leads nowhere within ``depth`` more terminals.

        Variable filtering can strand a text the bare grammar would continue: an atom started
        before any quantifier (``smiled(`` needs a variable next, and none is quantified), or a
        quantifier once every variable is taken.  Such terminals are removed so that every
        state the automaton calls alive can still be completed (a beam never walks into a
        state whose mask is empty).  The look-ahead is bounded (the grammar is recursive); the
        dead ends of the AmP grammars are at most three terminals deep.
        """
        return self._dead_end_memo[stack, term, bound, depth]

    def _compute_dead_end(self, stack: Stack, term: str, bound: Bound, depth: int) -> bool:
        """Computes :meth:`_dead_end` (memoised there)."""
        new_stack = self._feed(stack, term)
        if new_stack is None:
            result = True
        else:
            if term in self.var_terminals and self._binds(stack):
                bound = bound | {self.literals[term]}
            if depth == 0 or self._accepts(new_stack)[2]:
                result = False
            else:
                result = all(
                    self._dead_end(new_stack, t, bound, depth - 1) for t in self._var_allowed(new_stack, bound).values()
                )
        return result

    def _allowed(self, stack: Stack, bound: Bound) -> tuple[dict[str, str], frozenset[str], bool]:
        """:meth:`_accepts` less the variables ``bound`` forbids here and the terminals that
        would strand the text because of them (:meth:`_dead_end`)."""
        return self._allowed_memo[stack, bound]

    def _compute_allowed(self, stack: Stack, bound: Bound) -> tuple[dict[str, str], frozenset[str], bool]:
        """Computes :meth:`_allowed` (memoised there)."""
        base = self._accepts(stack)
        if not self.bound_variables:
            return base
        by_literal = {
            lit: term
            for lit, term in self._var_allowed(stack, bound).items()
            if not (self.lookahead and self._dead_end(stack, term, bound, self.lookahead))
        }
        if len(by_literal) == len(base[0]):
            result = base
        else:
            prefixes = frozenset(lit[:i] for lit in by_literal for i in range(1, len(lit) + 1))
            result = (by_literal, prefixes, base[2])
        return result

    def _complete(self, stack: Stack, partial: str, bound: Bound) -> tuple[Stack, Bound] | None:
        """Feed ``partial`` as a complete terminal: (new stack, new bound set), or None."""
        term = self._allowed(stack, bound)[0].get(partial)
        if term is None:
            return None
        new_stack = self._feed(stack, term)
        if new_stack is None:
            return None
        if term in self.var_terminals and self._binds(stack):
            bound = bound | {partial}
        return new_stack, bound

    # --- character level -----------------------------------------------------------------
    def _config_step(self, config: Config, ch: str) -> list[Config]:
        stack, partial, bound = config
        out: list[Config] = []
        extended = partial + ch
        if extended in self._allowed(stack, bound)[1]:
            out.append((stack, extended, bound))
        done = self._complete(stack, partial, bound) if partial else None
        if done is not None:
            new_stack, new_bound = done
            if ch in self._allowed(new_stack, new_bound)[1]:
                out.append((new_stack, ch, new_bound))
        return out

    def step(self, state: State, ch: str) -> State:
        """The state after reading one character (``DEAD`` if the text leaves the grammar)."""
        return self._step_memo[state, ch]

    def _compute_step(self, state: State, ch: str) -> State:
        """Computes :meth:`step` (memoised there)."""
        if ch not in self.alphabet or not state:
            result = DEAD
        else:
            result = frozenset(c for config in state for c in self._config_step(config, ch))
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
        return self._next_chars_memo[state]

    def _compute_next_chars(self, state: State) -> str:
        """Computes :meth:`next_chars` (memoised there)."""
        chars: set[str] = set()
        for stack, partial, bound in state:
            prefixes = self._allowed(stack, bound)[1]
            n = len(partial)
            chars.update(p[n] for p in prefixes if len(p) == n + 1 and p.startswith(partial))
            done = self._complete(stack, partial, bound) if partial else None
            if done is not None:
                chars.update(p for p in self._allowed(*done)[1] if len(p) == 1)
        result = "".join(sorted(chars))
        return result

    def is_final(self, state: State) -> bool:
        """True when the text read so far is a complete sentence of the grammar."""
        return self._is_final_memo[state]

    def _compute_is_final(self, state: State) -> bool:
        """Computes :meth:`is_final` (memoised there)."""
        result = False
        for stack, partial, bound in state:
            done = self._complete(stack, partial, bound) if partial else None
            if done is not None and self._allowed(*done)[2]:
                result = True
                break
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

    def binding_violation(self, text: str) -> tuple[int, str, str] | None:
        """Why ``text`` leaves the grammar because of variable binding, if it does.

        ``(character index in text, variable, "free" | "rebound")`` for the first variable
        that is used before being quantified or quantified a second time, or None when the text
        dies (or not) for another reason.
        """
        if not self.bound_variables:
            return None
        if self.lookahead:  # explain on the unpruned language: "man(x)" dies at "x", not at "m"
            return self._unpruned().binding_violation(text)
        state = self.initial
        for i, ch in enumerate(text):
            nxt = self.step(state, ch)
            if nxt:
                state = nxt
                continue
            for stack, partial, bound in state:
                tries = [(stack, bound, partial + ch, i - len(partial))]
                done = self._complete(stack, partial, bound) if partial else None
                if done is not None:
                    tries.append((done[0], done[1], ch, i))
                for st, _bd, ext, start in tries:
                    names = [
                        lit
                        for lit, term in self._accepts(st)[0].items()
                        if term in self.var_terminals and lit.startswith(ext)
                    ]
                    if names:
                        var = ext if ext in names else min(names, key=len)
                        return start, var, ("rebound" if self._binds(st) else "free")
            return None
        return None

    def _unpruned(self) -> GrammarAutomaton:
        if self._unpruned_automaton is None:
            parser, start, trailing, var_rule, binder_rule = self._build
            self._unpruned_automaton = GrammarAutomaton(
                parser, start=start, trailing=trailing, bound_variables=True, var_rule=var_rule,
                binder_rule=binder_rule, lookahead=0,
            )
        return self._unpruned_automaton


def get_automaton(fmt: str = DEFAULT_FORMAT, *, bound_variables: bool = True,
                  words: OwnWords = NO_WORDS) -> GrammarAutomaton:
    """The shared automaton of the ``decoding`` grammar for ``fmt`` (docs/paper-notes.md §9), extended with
    a teacher's own ``words`` (:mod:`amp.logic.own_words`) when given.

    ``bound_variables`` (default on, as decoding and scoring use it): states carry the set of
    quantified variables, so free and twice-quantified variables are outside the language.
    Cached by grammar text, so a lexicon change (or other own words) yields a fresh automaton.
    """

    return _automaton_for(fmt, grammar_text(fmt, "decoding", words=words), bound_variables, words)  # type: ignore[arg-type]


@lru_cache(maxsize=8)
def _automaton_for(fmt: str, text: str, bound_variables: bool = True, words: OwnWords = NO_WORDS) -> GrammarAutomaton:

    automaton = GrammarAutomaton(lark_parser(fmt, "decoding", words), bound_variables=bound_variables)  # type: ignore[arg-type]
    automaton.own_words, automaton.fmt = words, fmt
    return automaton
