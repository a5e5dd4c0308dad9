"""The paper's prompt convention, declared once: any LF rendered as the templates spell it
(docs/paper-notes.md §16; the rule and its check on the pools: §10, "Variable convention of the
prompts and golds"; paper §2, "Data").

The AmP prompts and golds name entity variables x, y, z and event variables a, e, i in a fixed
order.  A teacher's or a model's LF with other letters, or with adjacent same-kind quantifiers in
another order, means the same but is another token sequence, so forced decoding of it measures
the spelling.  :func:`prompt_form` rewrites an AST into the convention:

* a bound variable is an **event** if it is the first argument of a thematic-role atom
  (:data:`EVENT_ROLES`: ``agent``, ``patient``, ``instrument``) in the body of its quantifier,
  an **entity** otherwise;
* every maximal chain of directly nested quantifiers is split into runs of the same quantifier
  (``exists … exists``, ``forall …``); within a run the entity variables come first, then the
  event variables, each group in order of first use in the chain's body (atoms read left to
  right, arguments left to right); a variable the body never uses goes last in its group, in
  written order.  Runs never move across each other (∃x∀y ≠ ∀y∃x), so the meaning is kept;
* variables are named in prefix order — outer chains first, then nested ones in written order —
  entities x, y, z, x1, y1, z1, x2, … and events a, e, i, a1, e1, i1, …; a name that occurs free
  in the LF is skipped, so a free variable is never captured.

Before the names are given, the children of every junction are put in the pools' order
(:func:`amp.logic.conjunct_order.order_conjuncts`: nouns first, then each event's verb and roles,
events in the order of their verbs in the sentence when one is given; docs/paper-notes.md §16,
"Conjunct order"), so first use — and with it every name — follows that order.  Brackets,
connectives and unused quantifiers are kept.  :func:`prompt_text` reads FOL or Lisp and renders
the result in the same format (render normal form, :mod:`amp.logic.render`).  For every LF of the
ambiguous pools, in both formats, renaming its variables by any bijection and reordering adjacent
same-kind quantifiers (and, given its sentence, shuffling any junction's children), then
rendering, gives back the original text exactly (``tests/logic/test_prompt_convention.py``,
``tests/logic/test_conjunct_order.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from amp.logic.ast import Atom, Formula, Junction, Quantified, free_variables, is_variable
from amp.logic.conjunct_order import EVENT_ROLES, order_conjuncts
from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.vocabulary import DEFAULT_FORMAT, check_format

__all__ = ["ENTITY_NAMES", "EVENT_NAMES", "EVENT_ROLES", "REORDERED_NOTE", "conjuncts_reordered", "names_follow",
           "prompt_form", "prompt_text", "same_spelling"]

#: The first names of each kind, in order; later ones carry a number (``x1``, ``a1``, …).
ENTITY_NAMES: tuple[str, ...] = ("x", "y", "z")
EVENT_NAMES: tuple[str, ...] = ("a", "e", "i")
#: What a page or the CLI says, once, when the spelling that is scored puts the conjuncts of the
#: LF as typed in another order (:func:`conjuncts_reordered`; docs/paper-notes.md §16).
REORDERED_NOTE = ("Its conjuncts were put in the order the prompts' examples use (nouns first, then each "
                  "event's verb and roles, events in the order of the sentence).")


def prompt_form(f: Formula, *, reorder: bool = True, sentence: str | None = None) -> Formula:
    """``f`` with its conjuncts in the pools' order (given ``sentence``, its words decide the ties
    structure leaves), then its variables named and its same-kind quantifier runs ordered as the
    templates do (module docstring; docs/paper-notes.md §16).  Free variables keep their names.

    ``reorder=False`` keeps the written conjunct and quantifier order and only names the variables
    (the names then follow the prefix as written): what :func:`names_follow` compares with."""
    if reorder:
        f = order_conjuncts(f, sentence)
    return _normalise(f, {}, _Namer(free_variables(f)), reorder)


def names_follow(lf: str, fmt: str = DEFAULT_FORMAT) -> bool:
    """Whether ``lf``'s variables are already named as the convention names them in its written
    prefix order (its same-kind runs may still be in another order).  True for every LF the
    project's prompts show, the original's ordered sorted Lisp form included (§10), whose
    displayed body no longer gives the template's first-use order."""
    f = parse_lf(lf, check_format(fmt))
    return prompt_form(f, reorder=False) == f


@lru_cache(maxsize=4096)
def prompt_text(lf: str, fmt: str = DEFAULT_FORMAT, sentence: str | None = None) -> str:
    """The text of ``lf`` (FOL or Lisp, as ``fmt`` says) in the prompt convention, in ``fmt``;
    ``sentence`` (the LF's utterance) decides the conjunct-order ties structure leaves.

    Raises :class:`~amp.logic.errors.LFParseError` when ``lf`` does not parse.
    """
    fmt = check_format(fmt)
    return render(prompt_form(parse_lf(lf, fmt), sentence=sentence), fmt)


def same_spelling(lf: str, fmt: str = DEFAULT_FORMAT, sentence: str | None = None) -> bool:
    """Whether ``lf`` already is its prompt-convention text (spacing aside)."""
    fmt = check_format(fmt)
    return render(parse_lf(lf, fmt), fmt) == prompt_text(lf, fmt, sentence)


def conjuncts_reordered(lf: str, fmt: str = DEFAULT_FORMAT, sentence: str | None = None) -> bool:
    """Whether the prompt convention puts ``lf``'s conjuncts in another order than written (then
    :data:`REORDERED_NOTE` says so where the scored spelling is shown)."""
    f = parse_lf(lf, check_format(fmt))
    return order_conjuncts(f, sentence) != f


# --------------------------------------------------------------------------------------


@dataclass
class _Namer:
    """Hands out the next entity or event name, skipping the LF's free variable names."""

    taken: frozenset[str]
    counts: dict[bool, int] = field(default_factory=lambda: {False: 0, True: 0})

    def next(self, event: bool) -> str:
        while True:
            k = self.counts[event]
            self.counts[event] = k + 1
            letters = EVENT_NAMES if event else ENTITY_NAMES
            name = letters[k % len(letters)] + (str(k // len(letters)) if k >= len(letters) else "")
            if name not in self.taken:
                return name


def _normalise(f: Formula, env: dict[str, str], namer: _Namer, reorder: bool) -> Formula:
    if isinstance(f, Atom):
        return Atom(f.pred, tuple(env.get(a, a) if is_variable(a) else a for a in f.args))
    if isinstance(f, Junction):
        return Junction(f.op, tuple(_normalise(c, env, namer, reorder) for c in f.children))
    chain: list[tuple[str, str]] = []
    body: Formula = f
    while isinstance(body, Quantified):
        chain.append((body.quantifier, body.var))
        body = body.body
    first_use, events = _uses(body)
    # The binder a body occurrence refers to is the last one of that name (inner shadows outer).
    live = {var: i for i, (_, var) in enumerate(chain)}
    order: list[int] = [] if reorder else list(range(len(chain)))
    start = 0
    for end in range(1, len(chain) + 1 if reorder else 0):
        if end == len(chain) or chain[end][0] != chain[start][0]:
            order.extend(sorted(range(start, end), key=lambda i: _key(i, chain, live, first_use, events)))
            start = end
    inner = dict(env)
    prefix: list[tuple[str, str]] = []
    for i in order:
        quantifier, var = chain[i]
        used = live[var] == i and var in first_use
        name = namer.next(used and var in events)
        if live[var] == i:
            inner[var] = name
        prefix.append((quantifier, name))
    out = _normalise(body, inner, namer, reorder)
    for quantifier, name in reversed(prefix):
        out = Quantified(quantifier, name, out)  # type: ignore[arg-type]
    return out


def _key(i: int, chain: list[tuple[str, str]], live: dict[str, int], first_use: dict[str, int],
         events: set[str]) -> tuple[int, int, int]:
    var = chain[i][1]
    if live[var] != i or var not in first_use:  # shadowed or unused: last, in written order
        return (2, 0, i)
    return (1 if var in events else 0, first_use[var], i)


def _uses(body: Formula) -> tuple[dict[str, int], set[str]]:
    """The free variables of ``body`` in order of first use, and those used as events."""
    first: dict[str, int] = {}
    events: set[str] = set()
    stack: list[tuple[Formula, frozenset[str]]] = [(body, frozenset())]
    while stack:
        node, bound = stack.pop()
        if isinstance(node, Atom):
            for position, arg in enumerate(node.args):
                if not is_variable(arg) or arg in bound:
                    continue
                first.setdefault(arg, len(first))
                if position == 0 and len(node.args) == 2 and node.pred in EVENT_ROLES:
                    events.add(arg)
        elif isinstance(node, Junction):
            stack.extend((c, bound) for c in reversed(node.children))
        else:
            stack.append((node.body, bound | {node.var}))
    return first, events

