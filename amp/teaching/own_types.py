"""Which ambiguity type an own sentence is most like (issue #11 point 1): :func:`closest_type`.

An own sentence's few-shot examples come from one registered type's pool, so the app proposes
the type whose readings *differ the way the sentence's readings do*.  The difference of two
readings is summarised by a few name-free features (:func:`difference`):

* ``quantifiers`` — the sequence of quantifier kinds is the ``same``, ``reordered`` (∃∀ vs ∀∃:
  scope) or ``different`` (another number of quantifiers: PP attachment's extra event);
* ``forall_role`` — the thematic roles (``agent``/``patient``/…, position) of LF0's first
  universally quantified variable: the subject for scope, the object for inverse scope;
* ``predicates`` — whether the readings use the same predicates (PP: ``have`` vs ``instrument``);
* ``arguments`` — ``moved`` when predicates, quantifiers and grouping agree, so the readings
  differ only in which argument fills a role (bound pronouns: ``agent(e, Marie)`` vs ``Ada``);
* ``grouping`` — ``regrouped`` when a reading has ``OR`` and the AND/OR bracketing differs (conj).

Each registered type is represented by the features of a sample of its pool pairs (the first
pair of every template and evenly spaced others), so a type added to the registry takes part
without code here.  The closest type has the smallest weighted feature mismatch to one of its
samples (a predicate difference weighs :data:`PREDICATE_WEIGHT`); ties go to the type with more
samples at that distance, then to registry order.

"I saw her duck" — LF0 ``… saw(a) AND agent(a, Me) AND duck(e) AND agent(e, Her) AND patient(a, e)``
(she ducked), LF1 ``… duck(x) AND have(x, Her) AND saw(a) AND agent(a, Me) AND patient(a, x)``
(her bird) — gives **pp**: its readings use different predicates (``have`` in one only, like PP
attachment's ``have``/``instrument``) and differ in nothing else a type is known by; only the
number of quantifiers (both have two) is unlike the PP pool, one mismatch, while bound and conj
need the predicates to agree (weight 2 plus one more).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import astuple, dataclass
from functools import lru_cache

from amp.data.generate import pairs
from amp.data.templates.engine import registry_version
from amp.data.types import type_ids
from amp.logic.ast import Atom, Formula, Junction, Quantified, atoms
from amp.logic.reader import parse_lf
from amp.logic.vocabulary import Format

#: Thematic-role predicates kept by name in :attr:`Difference.forall_role` (others are ``rel``).
ROLE_PREDICATES = frozenset({"agent", "patient", "instrument", "have"})
#: How much a predicate difference counts against a type (it is the most telling feature).
PREDICATE_WEIGHT = 2
#: Pool pairs sampled per type (besides the first pair of every template).
SAMPLES_PER_TYPE = 40


@dataclass(frozen=True)
class Difference:
    """How two readings differ, without their words (see the module docstring)."""

    quantifiers: str
    forall_role: tuple[str, ...]
    predicates: str
    arguments: str
    grouping: str

    def distance(self, other: Difference) -> int:
        """The weighted number of features on which the two differences disagree."""
        weights = (1, 1, PREDICATE_WEIGHT, 1, 1)
        return sum(w for w, a, b in zip(weights, astuple(self), astuple(other), strict=True) if a != b)


def _quantifiers(f: Formula) -> list[tuple[str, str]]:
    """Every quantifier of ``f`` as (kind, variable), in written order."""
    out: list[tuple[str, str]] = []
    stack: list[Formula] = [f]
    while stack:
        node = stack.pop()
        if isinstance(node, Quantified):
            out.append((node.quantifier, node.var))
            stack.append(node.body)
        elif isinstance(node, Junction):
            stack.extend(reversed(node.children))
    return out


def _shape(f: Formula) -> str:
    """The AND/OR structure with atoms as ``A``, quantifiers dropped, children sorted."""
    if isinstance(f, Atom):
        return "A"
    if isinstance(f, Quantified):
        return _shape(f.body)
    return f"{f.op}({','.join(sorted(_shape(c) for c in f.children))})"


def _forall_role(f: Formula) -> tuple[str, ...]:
    bound = [var for kind, var in _quantifiers(f) if kind == "forall"]
    if not bound:
        return ()
    var = bound[0]
    return tuple(sorted({f"{a.pred if a.pred in ROLE_PREDICATES else 'rel'}{a.args.index(var)}"
                         for a in atoms(f) if len(a.args) == 2 and var in a.args}))


def difference(lf0: str, lf1: str) -> Difference:
    """The name-free :class:`Difference` of two FOL readings (raises LFParseError if one does not read)."""
    f0, f1 = parse_lf(lf0, Format.FOL), parse_lf(lf1, Format.FOL)
    k0 = [kind for kind, _ in _quantifiers(f0)]
    k1 = [kind for kind, _ in _quantifiers(f1)]
    quantifiers = "same" if k0 == k1 else "reordered" if sorted(k0) == sorted(k1) else "different"
    same_predicates = Counter(a.pred for a in atoms(f0)) == Counter(a.pred for a in atoms(f1))
    has_or = "OR" in (_shape(f0) + _shape(f1))
    regrouped = has_or and _shape(f0) != _shape(f1)
    moved = same_predicates and quantifiers == "same" and _shape(f0) == _shape(f1)
    return Difference(quantifiers, _forall_role(f0), "same" if same_predicates else "differ",
                      "moved" if moved else "none", "regrouped" if regrouped else "same")


@lru_cache(maxsize=4)
def _type_samples(version: int) -> dict[str, Counter[Difference]]:
    """Per registered type, how often each difference occurs in a sample of its pool."""
    out: dict[str, Counter[Difference]] = {}
    for kind in type_ids():
        pool = pairs(kind)
        firsts = {p.template: i for i, p in reversed(list(enumerate(pool)))}
        step = max(1, len(pool) // SAMPLES_PER_TYPE)
        chosen = sorted(set(firsts.values()) | set(range(0, len(pool), step)))
        out[kind] = Counter(difference(pool[i].lf0.lf, pool[i].lf1.lf) for i in chosen)
    return out


def closest_type(lf0: str, lf1: str) -> str:
    """The registered type whose pool readings differ most like ``lf0`` and ``lf1`` do."""
    diff = difference(lf0, lf1)
    order = type_ids()
    best: tuple[int, float, int] | None = None
    choice = order[0]
    for rank, (kind, samples) in enumerate(_type_samples(registry_version()).items()):
        if not samples:
            continue
        dist = min(diff.distance(d) for d in samples)
        share = sum(n for d, n in samples.items() if diff.distance(d) == dist) / sum(samples.values())
        score = (dist, -share, order.index(kind) if kind in order else rank)
        if best is None or score < best:
            best, choice = score, kind
    return choice
