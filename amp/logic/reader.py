"""Parse FOL or Lisp logical forms into the AST of :mod:`amp.logic.ast` (docs/paper-notes.md §7, §8.1–8.2).

:func:`parse_lf` runs the lark LALR parser of :mod:`amp.logic.grammar` (lenient spacing by
default, the exact AmP data spacing with ``strict=True``) and turns the parse tree into the AST
with lark :class:`~lark.Transformer` subclasses.

FOL connectives follow the AmP convention (§8.1 step 4): AND and OR have **equal precedence and
associate to the right**, so ``A AND B OR C`` is ``A AND (B OR C)``.  A run of the *same*
connective in one unparenthesised chain becomes one n-ary :class:`~amp.logic.ast.Junction`
(``A AND B AND C`` → ``AND(A, B, C)``); an explicitly parenthesised group stays its own node
(``( A AND B ) AND C`` → ``AND(AND(A, B), C)``).  A quantifier prefix on an item scopes over
everything to its right in its sequence, so nested quantifiers — which crashed the original
(§8.6 item 5) — parse.  Lisp ``( AND … )`` lists keep their nesting; a one-child ``( AND x )``
is just ``x``.

Vocabulary: any LF a model writes is read — predicates, variables and constants are typed by
shape and position (:mod:`amp.logic.grammar`): ``exists w . swam(w)`` parses although neither
``w`` nor ``swam`` is in the lexicon.  Only constrained decoding is lexicon-bound.

Errors are :class:`~amp.logic.errors.LFParseError` with the position, the offending text and what the
grammar expected there.

Speed: parsing with lark costs a few hundred microseconds per LF.  Because every predicate
(and every constant) is interchangeable for the grammar, :func:`parse_lf` memoises parses on the
*shape* of the text — the text with each word in predicate position replaced by one
placeholder predicate and each capitalised word by one placeholder constant — and fills the
real names back into the cached AST.  The ~100k generated LFs share a few hundred shapes.  Any
text whose shape does not parse is re-parsed as written, so errors always describe the real
input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from lark import Token
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)
from lark.visitors import Transformer_NonRecursive

from amp.logic import lexicon
from amp.logic.ast import Atom, Formula, Junction, Quantified, is_constant
from amp.logic.errors import LFParseError
from amp.logic.grammar import CANONICAL_VARIABLES, lark_parser
from amp.logic.vocabulary import DEFAULT_FORMAT, check_format

#: Nesting depth of one LF (brackets, quantifiers, connectives): deeper LFs are refused by the
#: reader, so every recursive function over the AST has room on the stack.  One of the request
#: bounds that :mod:`amp.parser.core.limits` lists.
MAX_LF_DEPTH = 100

# --------------------------------------------------------------------------------------
# parse tree → AST


class _Common(Transformer_NonRecursive):
    """Leaf rules shared by both formats: every named token becomes a plain ``str``."""

    def pred(self, children: list[Token]) -> str:
        return str(children[0])

    def var(self, children: list[Token]) -> str:
        return str(children[0])

    def const(self, children: list[Token]) -> str:
        return str(children[0])

    def quantifier(self, children: list[Token]) -> str:
        return str(children[0])

    def conn(self, children: list[Token]) -> str:
        return str(children[0]).strip()

    def atom(self, children: list[str]) -> Atom:
        return Atom(children[0], tuple(children[1:]))

    def start(self, children: list[Formula]) -> Formula:
        return children[0]


class FolTransformer(_Common):
    """FOL parse tree → AST: right-associative, equal-precedence fold of each item sequence."""

    def quant(self, children: list[str]) -> tuple[str, str]:
        return children[0], children[1]

    def item(self, children: list) -> tuple[tuple[tuple[str, str], ...], Formula]:
        return tuple(children[:-1]), children[-1]

    def group(self, children: list[Formula]) -> Formula:
        return children[0]

    def sent(self, children: list) -> Formula:
        items = children[0::2]
        conns = children[1::2]
        quants, base = items[-1]
        node = _wrap(quants, base)
        # A run of the same connective is collected (in reverse) and becomes one n-ary Junction
        # when the run ends: linear in the chain's length (extending a tuple per item was quadratic).
        run: list[Formula] = []
        run_op: Any = conns[-1] if conns else "AND"
        for k in range(len(items) - 2, -1, -1):
            quants, base = items[k]
            op = conns[k]
            if run and op != run_op:
                node = Junction(run_op, (*reversed(run), node))
                run = []
            run.append(base)
            run_op = op
            if quants:
                node = _wrap(quants, Junction(op, (*reversed(run), node)))
                run = []
        if run:
            node = Junction(run_op, (*reversed(run), node))
        return node


class LispTransformer(_Common):
    """Lisp parse tree → AST: one node per list; nesting is kept as written."""

    def sent(self, children: list[Formula]) -> Formula:
        return children[0]

    def quantified(self, children: list) -> Formula:
        return Quantified(children[0], children[1], children[2])

    def junction(self, children: list) -> Formula:
        op, *subs = children
        if len(subs) == 1:
            return subs[0]
        return Junction(op, tuple(subs))


def _wrap(quants: tuple[tuple[str, str], ...], body: Formula) -> Formula:
    for quantifier, var in reversed(quants):
        body = Quantified(quantifier, var, body)  # type: ignore[arg-type]
    return body


_TRANSFORMERS = {"fol": FolTransformer(), "lisp": LispTransformer()}


# --------------------------------------------------------------------------------------
# public API


def parse_lf(text: str, fmt: str = DEFAULT_FORMAT, *, strict: bool = False) -> Formula:
    """Parse a logical form in ``fmt`` (``"fol"`` or ``"lisp"``) into the AST.

    ``strict=True`` demands the exact whitespace of the AmP data (§7); the default lenient
    grammar ignores whitespace (``agent(a,x)``, ``(exists x (man x))``).  Raises
    :class:`~amp.logic.errors.LFParseError` for empty input or text outside the grammar.  Any
    predicate, variable or constant word of the right shape is accepted (module docstring).
    """
    check_format(fmt)
    if not isinstance(text, str):
        raise TypeError(f"parse_lf expects a string, got {type(text).__name__}")
    if not text.strip():
        raise LFParseError(
            f"cannot parse {fmt.upper()}: empty logical form",
            text=text, position=0, found="", expected=("a logical form",), fmt=fmt,
        )
    shape, names = _shape(text, fmt)
    build = _shape_builder(shape, fmt, strict)
    if build is None:  # the shape does not parse: parse the real text for a real error
        return _parse_text(text, fmt, strict)
    return build(names)


def parse_lf_uncached(text: str, fmt: str = DEFAULT_FORMAT, *, strict: bool = False) -> Formula:
    """:func:`parse_lf` without the shape memo: always a full lark parse (for tests, debugging)."""
    check_format(fmt)
    if not text.strip():
        return parse_lf(text, fmt, strict=strict)  # the empty-input error
    return _parse_text(text, fmt, strict)


# --------------------------------------------------------------------------------------
# the shape memo

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PRED_PLACEHOLDER = "man"
_CONST_PLACEHOLDER = "Mary"


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(lexicon.predicates()), frozenset(lexicon.constants())


_KEYWORDS = frozenset({"exists", "forall", "AND", "OR"})
# Words in predicate position: FOL ``word(`` and Lisp ``( word``; and capitalised words
# (constants).  Variables stay as written: the shape's AST keeps them literally.
_SHAPE_WORDS = {
    "fol": re.compile(r"(?<![A-Za-z0-9_])(?:([a-z][A-Za-z0-9_]*)(?=\s*\()|([A-Z][A-Za-z0-9_]*))"),
    "lisp": re.compile(r"(?:(?<=\()(\s*)([a-z][A-Za-z0-9_]*)|(?<![A-Za-z0-9_])([A-Z][A-Za-z0-9_]*))"),
}


def _shape(text: str, fmt: str = DEFAULT_FORMAT) -> tuple[str, list[str]]:
    """``text`` with each predicate → ``man`` and constant → ``Mary``, and the names in order."""
    names: list[str] = []

    def fol(m: re.Match[str]) -> str:
        pred, const = m.group(1), m.group(2)
        word = pred or const
        if word in _KEYWORDS:
            return word
        names.append(word)
        return _PRED_PLACEHOLDER if pred else _CONST_PLACEHOLDER

    def lisp(m: re.Match[str]) -> str:
        space, pred, const = m.group(1), m.group(2), m.group(3)
        word = pred or const
        if word in _KEYWORDS:
            return m.group(0)
        names.append(word)
        return f"{space}{_PRED_PLACEHOLDER}" if pred else _CONST_PLACEHOLDER

    return _SHAPE_WORDS[fmt].sub(fol if fmt == "fol" else lisp, text), names


@lru_cache(maxsize=4096)
def _shape_builder(shape: str, fmt: str, strict: bool) -> Callable[[list[str]], Formula] | None:
    """A function that builds the AST of any text of this shape from its names, or ``None``."""
    try:
        template = _parse_text(shape, fmt, strict)
    except LFParseError:
        return None
    # The shape's AST with the real names put back by walking it (no code is generated or
    # evaluated: variable names come from the user's text).
    return lambda names: _fill(template, iter(names))


def _fill(f: Formula, names: Iterator[str]) -> Formula:
    """Put the real predicate and constant names (in written order) back into a shape's AST."""
    if isinstance(f, Atom):
        pred = next(names)
        args = tuple(next(names) if is_constant(a) else a for a in f.args)
        return Atom(pred, args)
    if isinstance(f, Junction):
        return Junction(f.op, tuple(_fill(c, names) for c in f.children))
    return Quantified(f.quantifier, f.var, _fill(f.body, names))


# --------------------------------------------------------------------------------------
# lark and its errors


def _parse_text(text: str, fmt: str, strict: bool) -> Formula:
    limit = MAX_LF_DEPTH
    # Before lark, a cheap bound on the tree it would build (redundant brackets add no AST depth,
    # hence the slack); the tree → AST transform itself is iterative.
    _check_brackets(text, fmt, limit, BRACKET_SLACK * limit)
    parser = lark_parser(fmt, "strict" if strict else "lenient")  # type: ignore[arg-type]
    try:
        tree = parser.parse(text)
    except UnexpectedInput as exc:
        raise _error(text, fmt, exc, parser) from None
    formula = _TRANSFORMERS[fmt].transform(tree)
    if depth(formula) > limit:  # e.g. a long chain of quantifiers between connectives
        raise _too_deep(text, fmt, len(text), limit)
    return formula


def depth(f: Formula) -> int:
    """Nesting depth of an AST (an atom is 1), computed without recursion."""
    deepest = 0
    stack: list[tuple[Formula, int]] = [(f, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, Junction):
            stack.extend((child, level + 1) for child in node.children)
        elif isinstance(node, Quantified):
            stack.append((node.body, level + 1))
    return deepest


#: Bracket nesting allowed per level of AST depth (atoms' own brackets, redundant groups).
BRACKET_SLACK = 4


def _check_brackets(text: str, fmt: str, limit: int, brackets: int) -> None:
    """Refuse bracket nesting deeper than ``brackets`` in one pass over the text."""
    level = 0
    for match in _BRACKET.finditer(text):
        if match.group() == "(":
            level += 1
            if level > brackets:
                raise _too_deep(text, fmt, match.start(), limit)
        else:
            level -= 1


_BRACKET = re.compile(r"[()]")


def _too_deep(text: str, fmt: str, position: int, limit: int) -> LFParseError:
    line, column = _line_of(text, position), _column_of(text, position)
    return LFParseError(
        f"cannot parse {fmt.upper()}: the logical form is nested more than {limit} levels deep "
        f"(at line {line}, column {column})",
        text=text, position=position, line=line, column=column, found=text[position:position + 1],
        expected=(), fmt=fmt,
    )


END = "end of input"


def _error(text: str, fmt: str, exc: UnexpectedInput, parser: Any) -> LFParseError:
    position = exc.pos_in_stream if exc.pos_in_stream is not None else len(text)
    line = getattr(exc, "line", None) or 1
    column = getattr(exc, "column", None) or 1
    if isinstance(exc, UnexpectedCharacters):
        word = _WORD.match(text, position)
        found = word.group(0) if word else text[position]
        names = set(exc.allowed or ())
    elif isinstance(exc, (UnexpectedToken, UnexpectedEOF)):
        token = getattr(exc, "token", None)
        if token is None or token.type == "$END":
            found = ""
            position, line, column = len(text), _line_of(text, len(text)), _column_of(text, len(text))
        else:
            found = str(token)
        interactive = getattr(exc, "interactive_parser", None)
        names = set(interactive.accepts()) if interactive is not None else set(exc.expected or ())
    else:  # pragma: no cover - lark has no other UnexpectedInput subclasses
        found, names = text[position:position + 1], set()
    expected = _literals(names, parser)
    where = f"line {line}, column {column}" if "\n" in text.rstrip("\n") else f"column {column}"
    message = (
        f"cannot parse {fmt.upper()} at {where}: found {repr(found) if found else END}, "
        f"expected one of: {_describe(expected)}"
    )
    return LFParseError(
        message, text=text, position=position, line=line, column=column,
        found=found, expected=expected, fmt=fmt,
    )


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _column_of(text: str, position: int) -> int:
    return position - (text.rfind("\n", 0, position) + 1) + 1


def _literals(names: set[str], parser: Any) -> tuple[str, ...]:
    """Terminal names → the literal strings they stand for (``$END`` → "end of input")."""
    out: set[str] = set()
    end = False
    for name in names:
        if name == "$END":
            end = True
            continue
        if name in _WORD_CLASSES:  # the open word classes of the parse grammars
            out.add(_WORD_CLASSES[name])
            continue
        try:
            pattern = parser.get_terminal(name).pattern
        except KeyError:  # pragma: no cover - defensive
            out.add(name)
            continue
        out.add(pattern.value if pattern.type == "str" else f"/{pattern.value}/")
    return tuple(sorted(out)) + ((END,) if end else ())


#: How the open word terminals are named in error messages.
_WORD_CLASSES = {"PRED": "a predicate", "VAR": "a variable", "CONST": "a constant (capitalised)"}


def _describe(expected: tuple[str, ...]) -> str:
    """Human-readable list; the big closed classes (predicates, variables, …) are summarised."""
    preds, consts = _vocabulary()
    variables = set(lexicon.VARIABLES) | set(CANONICAL_VARIABLES)
    classes = {"a predicate": preds, "a constant": consts, "a variable": variables}
    summaries: list[str] = []
    rest = [e for e in expected if e != END]
    for label, members in classes.items():
        if sum(e in members for e in rest) > 3:
            summaries.append(label)
            rest = [e for e in rest if e not in members]
    words = [e for e in rest if e in _WORD_CLASSES.values()]
    rest = [e for e in rest if e not in words]
    parts = [f'"{e}"' for e in rest] + words + summaries + ([END] if END in expected else [])
    return ", ".join(parts) if parts else "nothing"
