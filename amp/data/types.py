"""The ambiguity types, each declared once (docs/paper-notes.md §0, §4; paper §3 and Table 1).

An :class:`AmbiguityType` holds everything the library, the figures and the pages know about a
type: its id (the pool name of its templates), the record spelling of its ``type`` field and
other aliases, its display name, the names and one-line notes of its two readings (LF0, LF1),
its colour and its zero-shot ingredient recipe (§10).  Its paraphrase templates (Table 1) are
teaching text: they live beside the paraphraser, :mod:`amp.teaching.paraphrase_templates`
(``register_paraphrases``).

The five built-in types — pp, scope, revscope, bound, conj, in the paper's order — are
registered when this module is imported; :func:`register_type` adds more (with templates of the
same pool, see :func:`amp.data.templates.register_template`).  Every other module reads this
registry: generation and record I/O (aliases), prompts (ingredients), paraphrases (labels),
plots and pages (names and colours), metrics and sweeps (grouping and validation).

This module imports nothing above the data layer: recipes are plain data and pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from amp.data.errors import AmbiguityTypeError, UnknownTypeError
from amp.errors import PromptError
from amp.logic import lexicon

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BUILTIN_TYPES",
    "AmbiguityType",
    "AmbiguityTypeError",
    "Ingredients",
    "UnknownTypeError",
    "all_types",
    "display_name",
    "find_type",
    "get_type",
    "normalise_type",
    "order_types",
    "register_type",
    "type_color",
    "type_ids",
    "unregister_type",
]

#: A zero-shot ingredient recipe (§10): (test surface, its bindings as surface words, RNG) →
#: the ingredient sentences in the original's pre-shuffle order.  Each must be a surface of the
#: ``zeroshot_train`` pool.
Ingredients = Callable[[str, Mapping[str, str], "np.random.Generator"], list[str]]

#: Stable colours for types registered without one (none is a built-in type's colour or an LF's).
_EXTRA_COLORS = ("#E6AB02", "#666666", "#17BECF", "#8C564B", "#BCBD22")


@dataclass(frozen=True)
class AmbiguityType:
    """One ambiguity type (docs/paper-notes.md §0): exactly two readings, LF0 and LF1.

    * ``id`` — the paper's name and the pool name of its templates (``revscope``);
    * ``name`` — the display name used by every figure and page ("quantifier scope");
    * ``readings`` — short names of LF0 and LF1 (paper Table 1: "possessive", "instrument");
    * ``notes`` — one-line explanations of LF0 and LF1, shown next to the LFs;
    * ``record_type`` — the ``type`` string of its records (``scope_reverse``; default: ``id``);
    * ``aliases`` — further spellings accepted for ``id`` (the record type is always one);
    * ``color`` — its colour in figures (``""``: a stable extra colour, :func:`type_color`);
    * ``ingredients`` — its zero-shot recipe (:data:`Ingredients`), ``None`` if it has none.

    Its paraphrase templates are registered in the teaching layer
    (:func:`amp.teaching.paraphrase_templates.register_paraphrases`).
    """

    id: str
    name: str
    readings: tuple[str, str]
    notes: tuple[str, str]
    record_type: str = ""
    aliases: tuple[str, ...] = ()
    color: str = ""
    ingredients: Ingredients | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip() or self.id != self.id.strip():
            raise AmbiguityTypeError(f"an ambiguity type needs a trimmed non-empty string id, got {self.id!r}")
        for what, value in (("readings", self.readings), ("notes", self.notes)):
            if len(value) != 2 or not all(isinstance(v, str) and v for v in value):
                raise AmbiguityTypeError(f"type {self.id!r}: {what} must be two non-empty strings, got {value!r}")
        object.__setattr__(self, "record_type", self.record_type or self.id)

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every string that names this type: id, record type, aliases."""
        return tuple(dict.fromkeys((self.id, self.record_type, *self.aliases)))


# --- the registry ------------------------------------------------------------------------------

_TYPES: dict[str, AmbiguityType] = {}
_SPELLINGS: dict[str, str] = {}


def register_type(kind: AmbiguityType, *, replace: bool = False) -> None:
    """Add an ambiguity type (after the others).  Ids and aliases are unique unless ``replace``."""
    if not isinstance(kind, AmbiguityType):
        raise AmbiguityTypeError(f"expected an AmbiguityType, got {type(kind).__name__}")
    if kind.id in _TYPES and not replace:
        raise AmbiguityTypeError(f"ambiguity type {kind.id!r} is already registered (pass replace=True)")
    taken = [s for s in kind.spellings if _SPELLINGS.get(s, kind.id) != kind.id]
    if taken:
        raise AmbiguityTypeError(f"type {kind.id!r}: {taken} already name(s) another type")
    if kind.id in _TYPES:
        unregister_type(kind.id)
    _TYPES[kind.id] = kind
    _SPELLINGS.update(dict.fromkeys(kind.spellings, kind.id))


def unregister_type(type_id: str) -> None:
    """Remove a registered type (its templates stay registered until removed themselves)."""
    kind = _TYPES.pop(type_id, None)
    if kind is None:
        raise UnknownTypeError(f"no ambiguity type {type_id!r}; known: {', '.join(_TYPES)}")
    for spelling in kind.spellings:
        _SPELLINGS.pop(spelling, None)


def all_types() -> list[AmbiguityType]:
    """Every registered type: the built-in ones in the paper's order, then the added ones."""
    return list(_TYPES.values())


def type_ids() -> tuple[str, ...]:
    """The ids of :func:`all_types`."""
    return tuple(_TYPES)


def find_type(name: str) -> AmbiguityType | None:
    """The type spelt exactly ``name`` (its id, record type or an alias), or ``None``."""
    if not isinstance(name, str):
        return None
    type_id = _SPELLINGS.get(name)
    return None if type_id is None else _TYPES[type_id]


def get_type(name: str) -> AmbiguityType:
    """The type named ``name`` (id or alias, blanks around it ignored); :class:`UnknownTypeError`
    naming the known ones."""
    kind = find_type(name.strip()) if isinstance(name, str) else None
    if kind is None:
        raise UnknownTypeError(
            f"unknown ambiguity type {name!r}; known types: {', '.join(_TYPES)} "
            f"(aliases: {', '.join(s for s, t in _SPELLINGS.items() if s != t)})"
        )
    return kind


def normalise_type(name: str) -> str:
    """The paper's name of a type: ``scope_reverse`` → ``revscope``; unknown names are returned
    stripped but otherwise unchanged (``unambig`` stays ``unambig``).

    Grouping by this name (not the raw data string) avoids the original's empty revscope group
    (docs/paper-notes.md §13.3).
    """
    name = name.strip()
    kind = find_type(name)
    return kind.id if kind is not None else name


def display_name(name: str) -> str:
    """The display name of a type ("quantifier scope"); an unknown name is shown as is."""
    kind = find_type(name)
    return kind.name if kind is not None else name


def type_color(name: str) -> str:
    """The fixed colour of a type; unknown or colourless types get a stable extra colour."""
    kind = find_type(name)
    if kind is not None and kind.color:
        return kind.color
    key = kind.id if kind is not None else name
    return _EXTRA_COLORS[sum(map(ord, key)) % len(_EXTRA_COLORS)]


def order_types(types: Iterable[str]) -> list[str]:
    """Distinct type names, registered ones in registry (paper) order first, the rest sorted."""
    present = list(dict.fromkeys(str(t) for t in types))
    known = [t for t in _TYPES if t in present]
    return known + sorted(t for t in present if t not in _TYPES)


# --- the built-in zero-shot ingredient recipes (docs/paper-notes.md §10) ---------------------------------


def _article(word: str) -> str:
    """The article before ``word`` (§10: "an" before a lowercase vowel)."""
    return "an" if word and word[0] in "aeiou" else "a"


def _plural_phrase(noun: str) -> str:
    return lexicon.PLURAL_PHRASES.get(noun, noun)


def _pp_ingredients(s: str, b: Mapping[str, str], rng: np.random.Generator) -> list[str]:
    """``<subj> <verb> <obj>``, ``<subj> <verb> with the <instr>``, ``<obj> with the <instr>``."""
    subj = f"the {b['np1']}" if s.startswith("the ") else b["np1"]
    obj = b["np2"] if b["np2"][:1].isupper() else f"the {b['np2']}"
    return [f"{subj} {b['vp1']} {obj}", f"{subj} {b['vp1']} with the {b['np3']}", f"{obj} with the {b['np3']}"]


def _scope_ingredients(s: str, b: Mapping[str, str], rng: np.random.Generator) -> list[str]:
    """``<Q> <np1>``, ``a|an <rest after Q>``."""
    quant, rest = s.split(" ", 1)
    return [f"{quant} {_plural_phrase(b['np1'])}", f"{_article(rest)} {rest}"]


def _revscope_ingredients(s: str, b: Mapping[str, str], rng: np.random.Generator) -> list[str]:
    """``<Q> <obj>``, ``<words before Q> a|an <obj>`` (obj with its pair-of phrase)."""
    words = s.split(" ")
    q = next(i for i, w in enumerate(words) if w in ("every", "each"))
    obj = _plural_phrase(b["np2"])
    return [f"{words[q]} {obj}", f"{' '.join(words[:q])} {_article(obj)} {obj}"]


def _bound_ingredients(s: str, b: Mapping[str, str], rng: np.random.Generator) -> list[str]:
    """The transitive clause, ``<subj> <vp2>``, ``<obj> <vp2>``, ``<subj> <r> and <vp2>`` with
    ``r`` drawn from Bd − {vp2} (source order) by the RNG."""
    transitive = s.split(" and ")[0]
    subj, sep, obj = transitive.partition(f" {b['vp1']} ")
    if not sep:
        raise PromptError(f"cannot find the verb {b['vp1']!r} in {transitive!r}")
    others = [v for v in lexicon.INTRANSITIVE_VPS_FOR_BOUND if v != b["vp2"]]
    extra = others[int(rng.integers(len(others)))]
    return [transitive, f"{subj} {b['vp2']}", f"{obj} {b['vp2']}", f"{subj} {extra} and {b['vp2']}"]


def _conj_ingredients(s: str, b: Mapping[str, str], rng: np.random.Generator) -> list[str]:
    """The sentence with every "and" → "or", and with every "or" → "and"."""
    return [s.replace(" and ", " or "), s.replace(" or ", " and ")]


# --- the built-in types (docs/paper-notes.md §0, §4.1–§4.5) ----------------------------------------------

#: The five types of the paper, in its order.  Colours: ColorBrewer Dark2 without its orange,
#: so that no type is confused with LF1 in a figure.
BUILTIN_TYPES: tuple[AmbiguityType, ...] = (
    AmbiguityType(
        "pp", "PP attachment", ("possessive", "instrument"),
        ("possessive: the object *has* the instrument", "instrument: the instrument is used to act"),
        color="#1B9E77", ingredients=_pp_ingredients,
    ),
    AmbiguityType(
        "scope", "quantifier scope", ("one object for all", "possibly different objects"),
        ("one object for all (∃ over ∀)", "one object each (∀ over ∃)"),
        color="#7570B3", ingredients=_scope_ingredients,
    ),
    AmbiguityType(  # the data's record type is "scope_reverse" (docs/paper-notes.md §4.3, §14 item 1)
        "revscope", "inverse scope", ("one subject for all", "possibly different subjects"),
        ("one subject for all (∃ over ∀)", "a subject for each (∀ over ∃)"),
        record_type="scope_reverse", color="#E7298A", ingredients=_revscope_ingredients,
    ),
    AmbiguityType(
        "bound", "bound pronoun", ("pronoun = subject", "pronoun = object"),
        ("the pronoun is the subject", "the pronoun is the object"),
        color="#66A61E", ingredients=_bound_ingredients,
    ),
    AmbiguityType(
        "conj", "conjunction scope", ("AND outermost", "OR outermost"),
        ("AND is the main connective", "OR is the main connective"),
        color="#A6761D", ingredients=_conj_ingredients,
    ),
)

for _builtin in BUILTIN_TYPES:
    register_type(_builtin)
