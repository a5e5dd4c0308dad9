"""Declarative templates and the fill engine (docs/paper-notes.md §3).

A :class:`Template` is plain data: an id, the surface slots, one LF format string per reading
and the record fields of the original.  The engine (:func:`expand`, :func:`fill`) knows nothing
about particular templates, so a new construction is a new ``Template(...)`` value, e.g.::

    Template(
        id="pp/visual/a", pool="pp", ambiguity="pp", type="pp",
        slots="the {np1:INDEFINITE_HUMAN_NPS} {vp1:VISUAL_VPS} the {np2:INDEFINITE_HUMAN_NPS} "
              "[with the] {np3:VISUAL_INSTRUMENT_NPS}",
        lfs=(LF0, LF1),
    )

Surface slots are written as a *slot spec* (:func:`parse_slots`): ``{tag:LIST}`` is a slot
filled from the word list ``LIST`` (see :data:`WORD_LISTS`), ``[several words]`` is one fixed
slot, and every other bare word is a fixed slot of its own.  The slot boundaries matter for the
fluency rule: ``"with the"`` is *one* slot, so a plural noun after it keeps its bare form.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, cast

from amp.data.errors import TemplateError
from amp.data.templates.records import Example
from amp.logic import lexicon

# --- word lists --------------------------------------------------------------------------

_LEXICON_LISTS = (
    "NAMES", "MALE_NAMES", "FEMALE_NAMES",
    "INDEFINITE_HUMAN_NPS", "INDEFINITE_MALE_NPS", "INDEFINITE_FEMALE_NPS",
    "INDEFINITE_NONHUMAN_SENTIENT_NPS", "INDEFINITE_NONHUMAN_NONSENTIENT_NPS",
    "VISUAL_INSTRUMENT_NPS", "TACTILE_INSTRUMENT_NPS", "CLOTHING_NPS", "NONVISUAL_NPS",
    "INDEFINITE_NPS", "INDEFINITE_SENTIENT_NPS",
    "VISUAL_VPS", "TACTILE_VPS", "AUDITORY_VPS", "OTHER_VPS", "TRANSITIVE_VPS",
    "INTRANSITIVE_VPS", "INTRANSITIVE_VPS_FOR_BOUND",
)

#: Word lists a slot may name: every list of docs/paper-notes.md §2 (from :mod:`amp.logic.lexicon`, source
#: order) plus ``INTRANSITIVE_AND_BOUND_VPS`` = Int ∪ Bd (14 verbs, used by the basic and
#: single-conjunction sets, §4.6).  Extend it with :func:`register_word_list`.
WORD_LISTS: dict[str, tuple[str, ...]] = {name: getattr(lexicon, name) for name in _LEXICON_LISTS}
WORD_LISTS["INTRANSITIVE_AND_BOUND_VPS"] = (
    lexicon.INTRANSITIVE_VPS + lexicon.INTRANSITIVE_VPS_FOR_BOUND
)

#: Bumped whenever :data:`WORD_LISTS` or the template registry changes, so that caches keyed
#: on it (``amp.data.generate``) never serve stale pools.
_VERSION = [0]


def registry_version() -> int:
    """A counter that changes whenever word lists or registered templates change."""
    return _VERSION[0]


def _bump() -> None:
    _VERSION[0] += 1


def register_word_list(name: str, words: Sequence[str], *, replace: bool = False) -> None:
    """Add a word list that template slots can name.  Order matters: it is enumeration order."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise TemplateError(f"word list name {name!r} is not an identifier")
    if name in WORD_LISTS and not replace:
        raise TemplateError(f"word list {name!r} already exists (pass replace=True)")
    words = tuple(words)
    if not words or not all(isinstance(w, str) and w.strip() == w and w for w in words):
        raise TemplateError(f"word list {name!r} must be a non-empty sequence of trimmed strings")
    WORD_LISTS[name] = words
    _bump()


# --- slots and templates -------------------------------------------------------------------

_TAG_RE = re.compile(r"[a-z][a-z0-9_]*")
_SPEC_RE = re.compile(r"\{([^{}]*)\}|\[([^\[\]]*)\]|(\S+)")


@dataclass(frozen=True)
class Slot:
    """One surface position: a fixed ``text``, or a ``tag`` filled from the word list ``words``."""

    text: str | None = None
    tag: str | None = None
    words: str | None = None

    @property
    def is_fixed(self) -> bool:
        return self.tag is None

    def spec(self) -> str:
        """This slot in slot-spec notation (the inverse of :func:`parse_slots`)."""
        if self.tag is not None:
            return f"{{{self.tag}:{self.words}}}"
        text = self.text or ""
        return text if " " not in text and text else f"[{text}]"


def parse_slots(spec: str, *, template_id: str = "?") -> tuple[Slot, ...]:
    """Parse a slot spec: ``{tag:LIST}`` variable slot, ``[fixed words]`` one fixed slot, bare words."""
    slots: list[Slot] = []
    pos = 0
    for m in _SPEC_RE.finditer(spec):
        if spec[pos:m.start()].strip():
            raise TemplateError(f"template {template_id!r}: cannot read {spec[pos:m.start()]!r}")
        pos = m.end()
        var, fixed, bare = m.groups()
        if var is not None:
            tag, sep, words = (part.strip() for part in var.partition(":"))
            if not sep or not words:
                raise TemplateError(
                    f"template {template_id!r}: slot {{{var}}} names no word list "
                    f"(write {{{tag or 'tag'}:LIST_NAME}})"
                )
            slots.append(Slot(tag=tag, words=words))
        elif fixed is not None:
            if not fixed.strip():
                raise TemplateError(f"template {template_id!r}: empty fixed slot []")
            slots.append(Slot(text=" ".join(fixed.split())))
        else:
            if any(c in bare for c in "{}[]"):
                raise TemplateError(f"template {template_id!r}: cannot read {bare!r} in the slot spec")
            slots.append(Slot(text=bare))
    if spec[pos:].strip():
        raise TemplateError(f"template {template_id!r}: cannot read {spec[pos:]!r}")
    return tuple(slots)


def _as_slot(item: object, template_id: str) -> Slot:
    if isinstance(item, Slot):
        return item
    if isinstance(item, str):
        return Slot(text=item)
    if isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, str) for x in item):
        return Slot(tag=item[0], words=item[1])
    raise TemplateError(f"template {template_id!r}: cannot use {item!r} as a slot")


def lf_holes(lf: str) -> tuple[str, ...]:
    """The ``{tag}`` holes of an LF template, in order of appearance."""
    try:
        return tuple(name for _, name, _, _ in string.Formatter().parse(lf) if name is not None)
    except ValueError as exc:
        raise TemplateError(f"LF template {lf!r} is not a valid format string: {exc}") from None


@dataclass(frozen=True)
class Template:
    """A surface template with one LF template per reading (docs/paper-notes.md §3, §4).

    Fields:

    * ``id`` — unique, path-like (``pp/visual/a``, ``scope/every``, ``bound/female/a``).
    * ``pool`` — the pool it belongs to (``pp``, ``basic``, ``double_conj``, …, see
      ``amp.data.generate.POOLS``).
    * ``ambiguity`` — the ambiguity type (``pp``, ``scope``, ``revscope``, ``bound``, ``conj``)
      for ambiguous templates, ``None`` for unambiguous ones.
    * ``type`` — the original record ``type`` string (``pp``, ``scope_reverse``, ``unambig``, …).
    * ``slots`` — a slot spec string (:func:`parse_slots`) or a sequence of :class:`Slot`,
      plain strings (fixed) and ``(tag, LIST)`` pairs; stored as a tuple of :class:`Slot`.
    * ``lfs`` — LF format strings with ``{tag}`` holes; LF0 and LF1 for ambiguous templates.
    * ``template_idx`` — the record's ``template_idx`` per LF (default ``0, 1, …``).
    * ``no_repeat`` — the no-repeat rule of §3: a word from a list of more than one word is
      skipped when the *same string* was already chosen for an earlier slot of the combination.
      (That is how scope's object differs from its subject and PP-d gets two names.)
      Gender agreement and the visual/tactile pairing are expressed by the lists chosen.
    * ``gender`` — ``female``/``male`` for the gendered bound sets, else ``None``.
    * ``paraphrases`` — optional, one plain-English paraphrase template per LF with ``{tag}``
      / ``{tag:form}`` holes (see :mod:`amp.teaching.paraphrase`); ``None`` (the default) means
      :mod:`amp.teaching.paraphrase` uses its own table or its generic fallback.  Not part of equality.
    """

    id: str
    pool: str
    type: str
    slots: tuple[Slot, ...] | str | Sequence[object]
    lfs: tuple[str, ...]
    ambiguity: str | None = None
    template_idx: tuple[int, ...] | None = None
    no_repeat: bool = True
    gender: str | None = None
    description: str = field(default="", compare=False)
    paraphrases: tuple[str, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise TemplateError(f"a template needs a non-empty string id, got {self.id!r}")
        raw = self.slots
        slots = (
            parse_slots(raw, template_id=self.id)
            if isinstance(raw, str)
            else tuple(_as_slot(item, self.id) for item in raw)
        )
        object.__setattr__(self, "slots", slots)
        lfs = (self.lfs,) if isinstance(self.lfs, str) else tuple(self.lfs)
        object.__setattr__(self, "lfs", lfs)
        idx = tuple(range(len(lfs))) if self.template_idx is None else tuple(self.template_idx)
        object.__setattr__(self, "template_idx", idx)
        if self.paraphrases is not None:
            texts = (self.paraphrases,) if isinstance(self.paraphrases, str) else tuple(self.paraphrases)
            if len(texts) != len(lfs) or not all(isinstance(t, str) and t.strip() for t in texts):
                raise TemplateError(
                    f"template {self.id!r}: paraphrases must be {len(lfs)} non-empty strings "
                    f"(one per LF), got {self.paraphrases!r}"
                )
            object.__setattr__(self, "paraphrases", texts)
        self._check_structure()

    @property
    def slot_records(self) -> tuple[Slot, ...]:
        """The surface slots as :class:`Slot` records (``__post_init__`` normalises ``slots``)."""
        return cast("tuple[Slot, ...]", self.slots)

    @property
    def lf_indices(self) -> tuple[int, ...]:
        """The ``template_idx`` per LF (``__post_init__`` fills the default ``0, 1, …``)."""
        return cast("tuple[int, ...]", self.template_idx)

    def _check_structure(self) -> None:
        if not self.slots:
            raise TemplateError(f"template {self.id!r} has no surface slots")
        if not self.lfs:
            raise TemplateError(f"template {self.id!r} has no LF template")
        if len(self.lf_indices) != len(self.lfs):
            raise TemplateError(
                f"template {self.id!r}: {len(self.lfs)} LF templates but "
                f"{len(self.lf_indices)} template_idx values"
            )
        seen: set[str] = set()
        for position, slot in enumerate(self.slot_records):
            if slot.tag is None:
                if not isinstance(slot.text, str) or not slot.text.strip():
                    raise TemplateError(f"template {self.id!r}: slot {position} is empty")
                continue
            if not _TAG_RE.fullmatch(slot.tag):
                raise TemplateError(
                    f"template {self.id!r}: slot tag {slot.tag!r} (slot {position}) is not a "
                    "lowercase identifier like np1 or vp2"
                )
            if slot.tag in seen:
                raise TemplateError(f"template {self.id!r}: slot tag {slot.tag!r} is used twice")
            if not slot.words:
                raise TemplateError(f"template {self.id!r}: slot {slot.tag!r} names no word list")
            seen.add(slot.tag)
        for j, lf in enumerate(self.lfs):
            for hole in lf_holes(lf):
                if hole not in seen:
                    raise TemplateError(
                        f"template {self.id!r}: LF{j} uses slot {{{hole}}}, which no surface "
                        f"slot binds (slot tags: {', '.join(sorted(seen)) or 'none'})"
                    )

    @property
    def is_ambiguous(self) -> bool:
        return self.ambiguity is not None

    @property
    def tags(self) -> tuple[str | None, ...]:
        """The original ``template_tags``: one entry per slot, ``None`` for fixed strings."""
        return tuple(slot.tag for slot in self.slot_records)

    @property
    def spec(self) -> str:
        """The surface slots in slot-spec notation."""
        return " ".join(slot.spec() for slot in self.slot_records)

    def choices(self, word_lists: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, ...]]:
        """The candidate strings of each slot; unknown list names raise :class:`TemplateError`."""
        lists = WORD_LISTS if word_lists is None else word_lists
        out: list[tuple[str, ...]] = []
        for slot in self.slot_records:
            if slot.tag is None:
                out.append((slot.text or "",))
                continue
            if slot.words is None or slot.words not in lists:
                raise TemplateError(
                    f"template {self.id!r}: slot {slot.tag!r} names unknown word list "
                    f"{slot.words!r} (known: {', '.join(sorted(lists))})"
                )
            words = tuple(lists[slot.words])
            if not words:
                raise TemplateError(f"template {self.id!r}: word list {slot.words!r} is empty")
            out.append(words)
        return out

    def size(self, word_lists: Mapping[str, Sequence[str]] | None = None) -> int:
        """Number of surfaces (combinations) this template yields."""
        return len(_product(self.choices(word_lists), self.no_repeat))


# --- the engine ------------------------------------------------------------------------------

_SINGULARISING_SLOTS = frozenset({"a", "every", "each", "the"})
_A_AN_RE = re.compile(r"(?<![^ ])a (?=[aeiou])")


_PLURALS = frozenset(lexicon.PLURAL_PHRASES)


def make_fluent(words: Sequence[str]) -> str:
    """Join slot strings into a fluent surface (docs/paper-notes.md §3, "Surface fluency").

    1. A plural-list noun (:data:`amp.logic.lexicon.PLURAL_PHRASES`) directly after one of the
       single-word slots ``a``/``every``/``each``/``the`` becomes its "pair of"/"set of" phrase
       (never after the one-slot ``"with the"``).
    2. The slots are joined with single spaces.
    3. A standalone lowercase ``a`` before a lowercase vowel becomes ``an``.
    """
    if not _PLURALS.isdisjoint(words):
        out = list(words)
        for i in range(1, len(out)):
            phrase = lexicon.PLURAL_PHRASES.get(out[i])
            if phrase is not None and out[i - 1] in _SINGULARISING_SLOTS:
                out[i] = phrase
        words = out
    text = " ".join(words)
    return _A_AN_RE.sub("an ", text) if "a " in text else text


def _product(choices: Sequence[Sequence[str]], no_repeat: bool) -> list[tuple[str, ...]]:
    """Cartesian product, first slot slowest, with the no-repeat skip of §3.

    A candidate from a multi-word list is skipped if the same string was chosen for any earlier
    slot of the combination (fixed strings included); single-candidate slots are exempt.
    """
    result: list[tuple[str, ...]] = [()]
    for pool in choices:
        if no_repeat and len(pool) > 1:
            result = [x + (y,) for x in result for y in pool if y not in x]
        else:
            result = [x + (y,) for x in result for y in pool]
    return result


class Combination(NamedTuple):
    """One filled surface of a template: the chosen slot strings, the fluent surface, bindings."""

    words: tuple[str, ...]
    surface: str
    bindings: dict[str, str]  # tag → LF-side value, in slot order; shared, treat as read-only


def expand(
    template: Template, word_lists: Mapping[str, Sequence[str]] | None = None
) -> list[Combination]:
    """All combinations of a template in original enumeration order (docs/paper-notes.md §3)."""
    choices = template.choices(word_lists)
    tagged = [
        (i, slot.tag, {w: lexicon.denotation(w) for w in choices[i]})
        for i, slot in enumerate(template.slot_records)
        if slot.tag is not None
    ]
    return [
        Combination(words, make_fluent(words), {tag: den[words[i]] for i, tag, den in tagged})
        for words in _product(choices, template.no_repeat)
    ]


def fill(
    template: Template,
    word_lists: Mapping[str, Sequence[str]] | None = None,
    *,
    combinations: Sequence[Combination] | None = None,
) -> list[Example]:
    """Every record of a template: all LF0 records in product order, then all LF1 (§3, Ordering).

    The records of one combination share its ``var_bindings`` dict (records are read-only).
    """
    combos = expand(template, word_lists) if combinations is None else combinations
    tags, rtype, tid = template.tags, template.type, template.id
    return [
        Example(combo.surface, lf.format_map(combo.bindings), lf, tags, combo.bindings, idx, rtype, tid)
        for lf, idx in zip(template.lfs, template.template_idx, strict=True)  # type: ignore[arg-type]
        for combo in combos
    ]
