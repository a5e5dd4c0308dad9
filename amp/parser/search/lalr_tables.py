"""What the constrained decoder reads from a lark LALR parser (for :mod:`amp.parser.search.automaton`).

The automaton needs three facts of the ``decoding`` grammar besides its parse table: every
terminal is a plain literal string (:func:`literal_terminals`, :func:`check_table_terminals`),
and, for bound-variable tracking, which terminals are variables and after which symbols a
variable is *binding* (:func:`binding_contexts`; docs/decoding-notes.md §5 item 11).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lark.parsers.lalr_analysis import Shift

from amp.parser.core.errors import DecodingError

if TYPE_CHECKING:
    from lark import Lark

#: lark's end-of-input symbol in parse tables.
END = "$END"

#: (variable terminal → literal, binder symbol sequences, accessing symbol of every LALR state).
Binding = tuple[dict[str, str], tuple[tuple[str, ...], ...], dict[int, str]]


def literal_terminals(parser: Lark) -> dict[str, str]:
    """Terminal name → its literal; a regex, flagged or empty terminal is a :class:`DecodingError`."""
    literals: dict[str, str] = {}
    for term in parser.terminals:
        pattern = term.pattern
        if pattern.type != "str" or pattern.flags:
            raise DecodingError(
                f"terminal {term.name} ({pattern!r}) is not a plain literal string; the "
                "constrained decoder supports literal terminals only (docs/decoding-notes.md §5 item 9)"
            )
        if not pattern.value:
            raise DecodingError(f"terminal {term.name} is the empty string")
        literals[term.name] = pattern.value
    return literals


def check_table_terminals(table: dict[int, dict[str, tuple]], literals: dict[str, str]) -> None:
    """Every terminal the parse table acts on has a literal definition."""
    for actions in table.values():
        for sym in actions:
            if sym.isupper() and sym != END and sym not in literals:
                raise DecodingError(f"terminal {sym} has no literal definition")


def binding_contexts(parser: Lark, literals: dict[str, str], table: dict[int, dict[str, tuple]],
                     var_rule: str, binder_rule: str) -> Binding | None:
    """The variable terminals (the ``var_rule``'s literal alternatives), the symbol sequences
    (``binder_rule`` + literals) after which a ``var`` is binding, and the accessing symbol of
    every LALR state; ``None`` when the grammar has no variables."""
    var_terms = {}
    binders: set[tuple[str, ...]] = set()
    for rule in parser.rules:
        names = [sym.name for sym in rule.expansion]
        if rule.origin.name == var_rule:
            for sym in rule.expansion:
                if sym.is_term and sym.name in literals:
                    var_terms[sym.name] = literals[sym.name]
        for j, name in enumerate(names):
            if name != var_rule:
                continue
            i = j - 1
            while i >= 0 and rule.expansion[i].is_term:
                i -= 1
            if i >= 0 and names[i] == binder_rule:
                binders.add(tuple(names[i:j]))
    if not var_terms:
        return None
    if not binders:
        raise DecodingError(
            f"bound_variables: no rule puts {var_rule!r} right after {binder_rule!r} "
            f"(e.g. '{binder_rule} \" \" {var_rule}'), so binding positions are unknown"
        )
    access: dict[int, str] = {}
    for actions in table.values():
        for term, (kind, arg) in actions.items():
            if kind is Shift:
                access[arg] = term
    return var_terms, tuple(sorted(binders)), access
