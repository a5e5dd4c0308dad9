"""The order of conjuncts in the prompt convention (docs/paper-notes.md §16, "Conjunct order").

Forced decoding scores a token sequence, so ``chicken(w) AND ready(w) AND eat(v) AND …`` and
``eat(v) AND … AND chicken(w) AND ready(w)`` — one meaning — get different P(LF0)s (issue #40).
Every pool LF writes the children of each ``AND``/``OR`` in one structural order, which
:func:`order_conjuncts` computes from the LF and, for the ties structure cannot decide, from the
sentence:

1. **events** (a variable that is the first argument of a two-place role atom,
   :data:`EVENT_ROLES`) are ranked by the position in the sentence of their verb's words
   (:func:`word_position`); an event whose verb is not found comes after the found ones, a
   wordless event (:data:`WORDLESS_VERBS`: the possessive ``have``, never looked up) after all
   others;
2. **entities** (every other variable, and the constants) are ranked by their first role:
   the earliest event they fill a role of, then the role (agent < patient < instrument); an
   entity without a role comes after those with one, by the sentence position of its words;
3. a conjunct's place is decided by its atom: an atom on an entity (a noun, ``chicken(w)``;
   several on one entity by their words' sentence positions; then its relations, ``have(x, Her)``:
   a two-place atom whose first argument is an entity or constant, that is not a role) comes
   first, in entity rank; then each event's block, in event rank: its own atoms (the verb,
   ``saw(a)``, and any other one-place atom on it, by sentence position), its role atoms in role
   order (ties by the rank of the filler), then its other atoms (two-place, not a role).  An
   event's atom whose other argument is a later event (``patient(a, e)`` of "I saw her duck",
   where ``e`` is the ducking) waits for that event: it ends the later event's block, so every
   argument is introduced before an atom relates it.  An atom without arguments goes last.  An atom whose first argument is a constant belongs to
   that constant, as a noun belongs to its entity (``ready(Mary)``);
4. **the template exception**: when the first event's roles have no constant filler, an entity
   whose first role is in a later event sits right before that event's block — the pp template
   ``the N V the N with the N`` writes ``… patient(a, y) AND telescope(z) AND have(e) …``;
5. a compound conjunct (a bracketed junction, a nested quantifier) is placed where its first
   atom, once ordered, would be: a sub-junction sits among the event blocks by its first event.

The keys never use variable names (only ranks; variables are renamed afterwards).  Ties neither
structure nor sentence decide keep their written order (a stable sort), so every pool LF,
ordered without its sentence, is itself again; with its sentence, any shuffle of any junction's
children orders back to it (``tests/logic/test_conjunct_order.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from amp.logic.ast import Atom, Formula, Junction, Quantified, atoms, free_variables, is_constant
from amp.logic.lexicon import surface_word

__all__ = ["EVENT_ROLES", "WORDLESS_VERBS", "order_conjuncts", "sentence_words", "word_position"]

#: Two-place atoms whose first argument is an event, in the order an event's block writes them
#: (docs/paper-notes.md §10, §16).
EVENT_ROLES: tuple[str, ...] = ("agent", "patient", "instrument")
#: Verbs of events with no word in the sentence (``have`` of ``the boy with the telescope``): never
#: looked up, their events come after all others (so ordering with a sentence, then without, is
#: the same as with it).
WORDLESS_VERBS: frozenset[str] = frozenset({"have"})

_WORD = re.compile(r"[^\W_]+")
_NOT_FOUND = (1, 0)
#: Key classes: entity blocks, then event blocks, then atoms without arguments.
_ENTITY, _EVENT, _BARE = 0, 1, 2
#: Slots inside an event block: late entities (rule 4), its own atoms, its roles, its others, the
#: atoms of earlier events that take this one as an argument (rule 3).
_LATE, _OWN, _ROLE0 = 0, 1, 2
_OTHER = _ROLE0 + len(EVENT_ROLES)
_DEFERRED = _OTHER + 1

Key = tuple[int, ...]


def sentence_words(sentence: str | None) -> tuple[str, ...]:
    """The sentence's words, lower-cased, as :func:`word_position` matches them (``()`` for none)."""
    return tuple(_WORD.findall(sentence.lower())) if sentence else ()


@lru_cache(maxsize=8192)
def word_position(pred: str, words: tuple[str, ...]) -> int | None:
    """Where the words of ``pred`` first occur in ``words`` (whole words, case-insensitive), or
    ``None``.  A predicate's words are its surface words (:func:`amp.logic.lexicon.surface_word`:
    ``picked_up`` ↔ "picked up") split at spaces and underscores."""
    phrase = tuple(_WORD.findall(surface_word(pred).lower()))
    if not phrase:
        return None
    for start in range(len(words) - len(phrase) + 1):
        if words[start:start + len(phrase)] == phrase:
            return start
    return None


def order_conjuncts(f: Formula, sentence: str | None = None) -> Formula:
    """``f`` with the children of every junction in the pools' order (module docstring;
    docs/paper-notes.md §16).  Only junction children move: quantifiers, brackets and names stay."""
    binders = [q.var for q in _quantifiers(f)]
    if len(set(binders)) == len(binders) and free_variables(f).isdisjoint(binders):
        return _order(f, _Ranks.of(f, sentence_words(sentence)))[0]  # every name is one variable
    unique, names = _unique(f)
    ordered, _ = _order(unique, _Ranks.of(unique, sentence_words(sentence)))
    return _rename(ordered, names)


# --------------------------------------------------------------------------------------


def _unique(f: Formula) -> tuple[Formula, dict[str, str]]:
    """``f`` with every binder's variable renamed to a unique ``#n`` (shadowing resolved), and
    the map back.  Free variables keep their names (no ``#`` can occur in an LF's names)."""
    names: dict[str, str] = {}

    def walk(node: Formula, env: dict[str, str]) -> Formula:
        if isinstance(node, Atom):
            return Atom(node.pred, tuple(env.get(a, a) for a in node.args))
        if isinstance(node, Junction):
            return Junction(node.op, tuple(walk(c, env) for c in node.children))
        token = f"#{len(names)}"
        names[token] = node.var
        return Quantified(node.quantifier, token, walk(node.body, {**env, node.var: token}))

    return walk(f, {}), names


def _rename(f: Formula, names: dict[str, str]) -> Formula:
    if isinstance(f, Atom):
        return Atom(f.pred, tuple(names.get(a, a) for a in f.args))
    if isinstance(f, Junction):
        return Junction(f.op, tuple(_rename(c, names) for c in f.children))
    return Quantified(f.quantifier, names[f.var], _rename(f.body, names))


def _quantifiers(f: Formula) -> Iterator[Quantified]:
    if isinstance(f, Junction):
        for c in f.children:
            yield from _quantifiers(c)
    elif isinstance(f, Quantified):
        yield f
        yield from _quantifiers(f.body)


def _is_role(atom: Atom) -> bool:
    return len(atom.args) == 2 and atom.pred in EVENT_ROLES and not is_constant(atom.args[0])


@dataclass(frozen=True)
class _Ranks:
    """Each event's and entity's rank (0 = first), the late entities' events, the sentence's words."""

    events: dict[str, int]
    entities: dict[str, int]
    late: dict[str, int]
    words: tuple[str, ...]

    @classmethod
    def of(cls, f: Formula, words: tuple[str, ...]) -> _Ranks:
        found = list(atoms(f))
        first: dict[str, int] = {}
        for n, atom in enumerate(found):
            for arg in atom.args:
                first.setdefault(arg, n)
        events = {a.args[0] for a in found if _is_role(a)}

        def word_key(preds: list[str]) -> tuple[int, int]:
            spots = [p for p in (word_position(pred, words) for pred in preds) if p is not None]
            return (0, min(spots)) if spots else _NOT_FOUND

        def event_key(ev: str) -> tuple[int, ...]:
            verbs = [a.pred for a in found if a.args == (ev,)]
            wordless = bool(verbs) and all(v in WORDLESS_VERBS for v in verbs)
            return (int(wordless), *word_key([] if wordless else verbs), first[ev])

        event_rank = _rank(events, event_key)
        roles: dict[str, tuple[int, int]] = {}
        for a in found:
            if _is_role(a) and a.args[1] not in events:
                spot = (event_rank[a.args[0]], EVENT_ROLES.index(a.pred))
                roles[a.args[1]] = min(roles.get(a.args[1], spot), spot)

        def entity_key(ent: str) -> tuple[int, ...]:
            own = [a.pred for a in found if a.args == (ent,)]
            role = (0, *roles[ent]) if ent in roles else (1, 0, 0)
            return (*role, *word_key(own), first[ent])

        entities = {arg for a in found for arg in a.args if arg not in events}
        entity_rank = _rank(entities, entity_key)
        late: dict[str, int] = {}
        opening = [ev for ev, r in event_rank.items() if r == 0]
        if opening and not any(_is_role(a) and a.args[0] == opening[0] and is_constant(a.args[1]) for a in found):
            late = {ent: spot[0] for ent, spot in roles.items() if spot[0] > 0 and not is_constant(ent)}
        return cls(event_rank, entity_rank, late, words)

    def arg(self, name: str) -> Key:
        return (1, self.events[name]) if name in self.events else (0, self.entities[name])

    def atom(self, atom: Atom) -> Key:
        if not atom.args:
            return (_BARE, *self.word(atom.pred))
        head, rest = atom.args[0], atom.args[1:]
        tail = tuple(n for name in rest for n in self.arg(name))
        if head in self.events:
            rank = self.events[head]
            if not rest:
                return (_EVENT, rank, _OWN, *self.word(atom.pred))
            role = EVENT_ROLES.index(atom.pred) if atom.pred in EVENT_ROLES and len(rest) == 1 else len(EVENT_ROLES)
            later = max((self.events[name] for name in rest if name in self.events), default=rank)
            if later > rank:  # an event argument introduced later: after that event's block
                return (_EVENT, later, _DEFERRED, rank, role, *tail)
            if role < len(EVENT_ROLES):
                return (_EVENT, rank, _ROLE0 + role, *tail)
            return (_EVENT, rank, _OTHER, *self.word(atom.pred), *tail)
        own = (self.entities[head], 0 if not rest else 1, *self.word(atom.pred), *tail)
        if head in self.late:
            return (_EVENT, self.late[head], _LATE, *own)
        return (_ENTITY, *own)

    def word(self, pred: str) -> tuple[int, int]:
        spot = word_position(pred, self.words)
        return _NOT_FOUND if spot is None else (0, spot)


def _rank(items: set[str], key: Callable[[str], tuple[int, ...]]) -> dict[str, int]:
    ordered = sorted(items, key=key)
    return {item: n for n, item in enumerate(ordered)}


def _order(f: Formula, ranks: _Ranks) -> tuple[Formula, Key]:
    """``f`` ordered, and the key of its first atom (where ``f`` goes as a conjunct)."""
    if isinstance(f, Atom):
        return f, ranks.atom(f)
    if isinstance(f, Quantified):
        body, key = _order(f.body, ranks)
        return Quantified(f.quantifier, f.var, body), key
    children = sorted((_order(c, ranks) for c in f.children), key=lambda pair: pair[1])
    return Junction(f.op, tuple(c for c, _ in children)), children[0][1]
