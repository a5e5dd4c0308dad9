"""A teacher's own templates: one ambiguous sentence with ``{slots}`` and a word list per slot.

An own sentence ("I saw her duck", :mod:`amp.teaching.own_sentences`) is one pair of readings.
An :class:`OwnTemplate` writes a family of them at once: the sentence pattern
``I saw her {animal}``, the word list ``animal: duck, goose``, and the two readings and their
paraphrases (both required, as an own sentence needs them) as patterns with the same slots
(``… {animal}(x) …``).  :func:`expand` fills every combination of the word lists; :func:`words`
gives the own words (:mod:`amp.logic.own_words`) that the filled readings need beyond the
lexicon.  Each filled-in sentence fits the bounds of an own sentence.

**Slot words in the logical forms.**  A slot word goes into the sentence and the paraphrases as
written.  In the readings it becomes an LF word: the template's ``slot_lf`` table when it names
the word (``slot_lf = {"animal": {"geese": "goose"}}``), else the word with each run of spaces
or hyphens turned into ``_`` (``picked up`` → ``picked_up``); the case is kept, so a name slot
(``Anna``) gives a constant.  In the word-list text of the form (:func:`parse_word_lists`) a
table entry is written ``geese=goose``.

**Validation on construction** (:class:`OwnTemplateError`, a message naming the template and
the place): bounded texts and counts (:data:`MAX_SENTENCES` combinations, :data:`MAX_SLOTS`
slots, :data:`MAX_WORDS` words a list); slot syntax (``{animal}``; a stray brace or a bad name
is refused); every ``{slot}`` of a pattern has a word list and every word list is used in the
sentence; each reading, filled in, reads, binds every variable and uses only the variables the model can
write (:func:`amp.teaching.own_sentences.decodable_problem`) (a free variable that is not a
slot word is the reading's fault; a parse error inside a slot word, a lowercase "name" left
free, or a word that cannot be an own word is that word's fault, and the message lists the words
that fail and why); no two sentences come out alike; the two readings differ in meaning
(:func:`amp.logic.canonical.equivalent`); the own words of all sentences together can extend the
grammar.  Pure functions, no model.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from amp.logic.ast import free_variables
from amp.logic.canonical import equivalent
from amp.logic.errors import LFParseError, OwnWordsError
from amp.logic.own_words import OwnWords
from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.unknown_words import own_words_of
from amp.records import JsonRecord, describe
from amp.teaching import own_sentences
from amp.teaching.errors import OwnTemplateError
from amp.teaching.own_sentences import decodable_problem

#: At most this many sentences (combinations of the word lists) in one template.
MAX_SENTENCES = 200
#: At most this many slots in one template.
MAX_SLOTS = 8
#: At most this many words in one word list.
MAX_WORDS = 50
#: At most this many characters in a template's name.
MAX_NAME_CHARS = 80
#: At most this many characters in the sentence pattern and in a paraphrase pattern.
MAX_PATTERN_CHARS = 200
#: At most this many characters in a reading pattern.
MAX_LF_CHARS = 400
#: At most this many characters in one slot word (and in its LF word).
MAX_SLOT_WORD_CHARS = 40
#: At most this many characters in the word-list text of the form.
MAX_LISTS_CHARS = 4000

_HOLE = re.compile(r"\{([^{}]*)\}")
_BRACE = re.compile(r"[{}]")
_SLOT_NAME = re.compile(r"[a-z][a-z0-9_]*")
_JOINER = re.compile(r"[\s-]+")
_SHOWN_FAILURES = 4
_PATTERNS = (("sentence", "the sentence pattern"), ("lf0", "LF0"), ("lf1", "LF1"),
             ("paraphrase0", "paraphrase 0"), ("paraphrase1", "paraphrase 1"))


@dataclass(frozen=True)
class ExpandedSentence(JsonRecord):
    """One filled-in sentence of an own template: the surface, its two readings (FOL, checked
    to read with no free variable) and their paraphrases."""

    surface: str
    lf0: str
    lf1: str
    paraphrase0: str
    paraphrase1: str


@dataclass(frozen=True)
class OwnTemplate(JsonRecord):
    """A sentence pattern with ``{slot}`` holes, a word list per slot and two reading patterns.

    ``slots`` maps each slot to its words (their order is the expansion order); ``slot_lf``
    optionally maps a slot's surface word to its LF word (module docstring).  Validated on
    construction (:class:`OwnTemplateError`); the dictionaries take no part in the hash.
    """

    name: str
    sentence: str
    slots: dict[str, tuple[str, ...]] = field(hash=False)
    lf0: str
    lf1: str
    paraphrase0: str
    paraphrase1: str
    slot_lf: dict[str, dict[str, str]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        _normalise(self)
        _check_texts(self)
        order = _check_slots(self)
        object.__setattr__(self, "_expanded", _checked_expansion(self, order))

    @property
    def slot_order(self) -> tuple[str, ...]:
        """The slots in order of first appearance in the sentence pattern (first varies slowest)."""
        return tuple(dict.fromkeys(_holes(self.sentence)))

    def size(self) -> int:
        """How many sentences the template makes (the product of its word lists' lengths)."""
        return len(expand(self))


def expand(template: OwnTemplate) -> tuple[ExpandedSentence, ...]:
    """Every sentence of ``template``: the product of its word lists in :attr:`~OwnTemplate.slot_order`,
    the first slot's words varying slowest, each list in its own order (checked on construction)."""
    out: tuple[ExpandedSentence, ...] = template.__dict__["_expanded"]
    return out


def words(template: OwnTemplate) -> OwnWords:
    """The own words (outside the lexicon, typed by arity) that the template's readings need."""
    return own_words_of(lf for s in expand(template) for lf in (s.lf0, s.lf1))


def lf_word(template: OwnTemplate, slot: str, word: str) -> str:
    """The word that ``word`` of ``slot`` becomes in the readings (``slot_lf``, else spaces → ``_``)."""
    return template.slot_lf.get(slot, {}).get(word) or _JOINER.sub("_", word)


# --- from the form and from JSON --------------------------------------------------------------


def parse_word_lists(text: str) -> tuple[dict[str, tuple[str, ...]], dict[str, dict[str, str]]]:
    """Read the form's word lists: one ``slot: word, word`` line per slot; ``word=lf_word`` gives a
    word its own LF word.  Returns ``(slots, slot_lf)``; :class:`OwnTemplateError` names the line."""
    if len(text) > MAX_LISTS_CHARS:
        raise OwnTemplateError(f"the word lists are longer than {MAX_LISTS_CHARS} characters")
    slots: dict[str, tuple[str, ...]] = {}
    slot_lf: dict[str, dict[str, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        slot, colon, rest = (part.strip() for part in line.partition(":"))
        if not colon or not slot:
            raise OwnTemplateError(f"word lists, line {number}: write 'slot: word, word' (found {line.strip()!r})")
        if slot in slots:
            raise OwnTemplateError(f"word lists, line {number}: slot {slot!r} has a word list already")
        listed: list[str] = []
        for item in (i.strip() for i in rest.split(",")):
            if not item:
                continue
            word, eq, lf = (part.strip() for part in item.partition("="))
            if eq and (not word or not lf):
                raise OwnTemplateError(f"word lists, line {number}: write 'word=lf_word' (found {item!r})")
            listed.append(word)
            if eq:
                slot_lf.setdefault(slot, {})[word] = lf
        slots[slot] = tuple(listed)
    return slots, slot_lf


def word_lists_text(template: OwnTemplate) -> str:
    """The inverse of :func:`parse_word_lists`: the template's word lists as form text."""
    def item(slot: str, word: str) -> str:
        lf = template.slot_lf.get(slot, {}).get(word)
        return f"{word}={lf}" if lf else word
    return "\n".join(f"{slot}: " + ", ".join(item(slot, w) for w in ws) for slot, ws in template.slots.items())


def template_from_form(name: str, sentence: str, lists: str, lf0: str, lf1: str,
                       paraphrase0: str, paraphrase1: str) -> OwnTemplate:
    """An :class:`OwnTemplate` from the form's texts (word lists as :func:`parse_word_lists` reads them)."""
    slots, slot_lf = parse_word_lists(lists)
    return OwnTemplate(name.strip(), sentence.strip(), slots, lf0.strip(), lf1.strip(),
                       paraphrase0.strip(), paraphrase1.strip(), slot_lf)


def template_from_dict(data: Any) -> OwnTemplate:
    """An :class:`OwnTemplate` read from JSON data; :class:`OwnTemplateError` with the reason if it does not fit."""
    try:
        return OwnTemplate.from_dict(data)
    except ValidationError as exc:
        errors = exc.errors()
        cause = errors[0].get("ctx", {}).get("error") if errors else None
        if isinstance(cause, OwnTemplateError):
            raise OwnTemplateError(str(cause)) from None
        raise OwnTemplateError(f"not an own template: {describe(exc)}") from None


# --- validation ---------------------------------------------------------------------------------


def _fail(template: OwnTemplate, message: str) -> OwnTemplateError:
    return OwnTemplateError(f"template {template.name!r}: {message}")


def _normalise(t: OwnTemplate) -> None:
    """Word lists as fresh dicts of tuples (a list from JSON or the caller becomes a tuple)."""
    if not isinstance(t.slots, Mapping) or not isinstance(t.slot_lf, Mapping):
        raise OwnTemplateError(f"template {t.name!r}: slots and slot_lf must be mappings")
    slots = {}
    for slot, ws in t.slots.items():
        if isinstance(ws, str) or not isinstance(ws, Sequence):
            raise _fail(t, f"the word list of {{{slot}}} must be a list of words, not {ws!r}")
        slots[slot] = tuple(ws)
    object.__setattr__(t, "slots", slots)
    object.__setattr__(t, "slot_lf", {slot: dict(table) for slot, table in t.slot_lf.items()})


def _check_texts(t: OwnTemplate) -> None:
    for name in ("name", "sentence", "lf0", "lf1", "paraphrase0", "paraphrase1"):
        if not isinstance(getattr(t, name), str):
            raise OwnTemplateError(f"template {t.name!r}: {name} must be text, not {getattr(t, name)!r}")
    if not t.name.strip():
        raise OwnTemplateError("an own template needs a name")
    if len(t.name) > MAX_NAME_CHARS:
        raise OwnTemplateError(f"template name {t.name[:MAX_NAME_CHARS]!r}… is longer than {MAX_NAME_CHARS} characters")
    for attr, label in _PATTERNS:
        text, limit = getattr(t, attr), (MAX_LF_CHARS if attr.startswith("lf") else MAX_PATTERN_CHARS)
        if not text.strip():
            raise _fail(t, f"{label} is empty")
        if len(text) > limit:
            raise _fail(t, f"{label} is longer than {limit} characters")
        _holes(text, t, label)


def _holes(text: str, t: OwnTemplate | None = None, label: str = "") -> list[str]:
    """The ``{slot}`` names of ``text`` in order; with ``t``, bad slot syntax raises an error
    naming the template and the pattern (``label``)."""
    def error(message: str) -> OwnTemplateError:
        return _fail(t, f"{label}: {message}") if t is not None else OwnTemplateError(message)

    found: list[str] = []
    pos = 0
    for m in [*_HOLE.finditer(text), None]:
        end = len(text) if m is None else m.start()
        stray = _BRACE.search(text, pos, end)
        if stray and t is not None:
            raise error(f"unmatched {stray.group()!r} at character {stray.start() + 1} (write a slot as {{name}})")
        if m is None:
            break
        if not _SLOT_NAME.fullmatch(m.group(1)) and t is not None:
            raise error(f"{m.group()} is not a slot: a slot name is lowercase letters, digits and _, "
                        "starting with a letter, e.g. {animal}")
        found.append(m.group(1))
        pos = m.end()
    return found


def _check_slots(t: OwnTemplate) -> tuple[str, ...]:
    order = t.slot_order
    if not order:
        raise _fail(t, "the sentence pattern has no {slot}: put one where the words vary, e.g. 'I saw her {animal}'")
    if len(t.slots) > MAX_SLOTS:
        raise _fail(t, f"{len(t.slots)} word lists: at most {MAX_SLOTS} slots")
    lists = ", ".join(sorted(t.slots)) or "none"
    for attr, label in _PATTERNS:
        for hole in _holes(getattr(t, attr)):
            if hole not in t.slots:
                raise _fail(t, f"{label} uses slot {{{hole}}}, which has no word list (word lists: {lists})")
    used = {hole for attr, _ in _PATTERNS for hole in _holes(getattr(t, attr))}
    for slot in t.slots:
        if slot not in used:
            raise _fail(t, f"the word list {slot!r} is used in no pattern (slots in the sentence: "
                           f"{', '.join('{' + s + '}' for s in order)})")
        if slot not in order:
            raise _fail(t, f"slot {{{slot}}} is not in the sentence pattern: every slot must show in the sentence")
    for slot in order:
        _check_word_list(t, slot)
    for slot, table in t.slot_lf.items():
        for word in table:
            if slot not in t.slots or word not in t.slots[slot]:
                raise _fail(t, f"slot_lf gives an LF word for {word!r}, which is not in the word list of {{{slot}}}")
    count = 1
    for slot in order:
        count *= len(t.slots[slot])
    if count > MAX_SENTENCES:
        sizes = " × ".join(str(len(t.slots[s])) for s in order)
        raise _fail(t, f"{count} sentences ({sizes}): at most {MAX_SENTENCES}; shorten the word lists")
    return order


def _check_word_list(t: OwnTemplate, slot: str) -> None:
    ws = t.slots[slot]
    if not ws:
        raise _fail(t, f"the word list of {{{slot}}} is empty: it makes no sentence")
    if len(ws) > MAX_WORDS:
        raise _fail(t, f"the word list of {{{slot}}} has {len(ws)} words: at most {MAX_WORDS}")
    for word in ws:
        lf = t.slot_lf.get(slot, {}).get(word, "")
        if not isinstance(word, str) or not isinstance(lf, str):
            raise _fail(t, f"the word list of {{{slot}}} holds {word!r}, which is not text")
        if not word.strip() or word != word.strip() or _BRACE.search(word) or "\n" in word:
            raise _fail(t, f"the word list of {{{slot}}} holds {word!r}: a word is trimmed text without braces")
        if len(word) > MAX_SLOT_WORD_CHARS or len(lf) > MAX_SLOT_WORD_CHARS:
            raise _fail(t, f"{word[:MAX_SLOT_WORD_CHARS]!r}… in {{{slot}}} is longer than {MAX_SLOT_WORD_CHARS} characters")
    if len(set(ws)) != len(ws):
        twice = next(w for w in ws if ws.count(w) > 1)
        raise _fail(t, f"the word list of {{{slot}}} lists {twice!r} twice")


# --- filling and checking the readings ------------------------------------------------------------


@dataclass(frozen=True)
class _Fault:
    """Why one filled reading fails: the slot word to blame (``None``: the reading) and the reason."""

    culprit: tuple[str, str] | None
    reason: str
    lf: str


def _fill(text: str, values: Mapping[str, str]) -> tuple[str, list[tuple[str, int, int]]]:
    """``text`` with its holes filled; the spans ``(slot, start, end)`` of the filled words."""
    parts: list[str] = []
    spans: list[tuple[str, int, int]] = []
    pos = length = 0
    for m in _HOLE.finditer(text):
        parts.append(text[pos:m.start()])
        length += m.start() - pos
        value = values[m.group(1)]
        spans.append((m.group(1), length, length + len(value)))
        parts.append(value)
        length += len(value)
        pos = m.end()
    parts.append(text[pos:])
    return "".join(parts), spans


def _check_reading(lf: str, spans: list[tuple[str, int, int]], label: str,
                   choice: Mapping[str, str]) -> tuple[str, _Fault | None]:
    """The reading rendered in the data's spacing, or the fault that stops it."""
    def slot_at(position: int) -> tuple[str, str] | None:
        return next(((s, choice[s]) for s, start, end in spans if start <= position <= end), None)
    lf_words = {lf[start:end]: (s, choice[s]) for s, start, end in spans}
    try:
        formula = parse_lf(lf)
    except LFParseError as exc:
        return lf, _Fault(slot_at(exc.position), f"{label} does not read: {exc}", lf)
    free = sorted(free_variables(formula))
    for var in free:
        if var in lf_words:
            return lf, _Fault(lf_words[var], f"{label} leaves {var!r} unbound (a name is written with a capital letter)", lf)
    if free:
        var = free[0]
        return lf, _Fault(None, f"{label} has an unbound variable {var!r}: no 'exists {var} .' or "
                                f"'forall {var} .' binds it", lf)
    problem = decodable_problem(formula)
    if problem is not None:
        return lf, _Fault(next((lf_words[w] for w in lf_words if repr(w) in problem), None), f"{label}: {problem}", lf)
    try:
        own_words_of([lf])
    except OwnWordsError as exc:
        culprit = next((lf_words[w] for w in lf_words if repr(w) in str(exc)), None)
        return lf, _Fault(culprit, f"{label}: {exc}", lf)
    return render(formula), None


def _checked_expansion(t: OwnTemplate, order: tuple[str, ...]) -> tuple[ExpandedSentence, ...]:
    out: list[ExpandedSentence] = []
    word_faults: dict[tuple[str, str], str] = {}
    for combination in itertools.product(*(t.slots[s] for s in order)):
        choice = dict(zip(order, combination, strict=True))
        surface = _fill(t.sentence, choice)[0]
        lf_values = {s: lf_word(t, s, w) for s, w in choice.items()}
        lfs: list[str] = []
        faults: list[_Fault] = []
        for j, pattern in enumerate((t.lf0, t.lf1)):
            lf, fault = _check_reading(*_fill(pattern, lf_values), f"LF{j}", choice)
            lfs.append(lf)
            if fault is not None:
                faults.append(fault)
        for fault in faults:
            if fault.culprit is None:
                raise _fail(t, f"{fault.reason} (in the reading of {surface!r}: {fault.lf})")
            word_faults.setdefault(fault.culprit, fault.reason)
        if faults:
            continue
        sentence = ExpandedSentence(surface, lfs[0], lfs[1], _fill(t.paraphrase0, choice)[0],
                                    _fill(t.paraphrase1, choice)[0])
        _check_lengths(t, sentence)
        out.append(sentence)
    if word_faults:
        raise _fail(t, _word_fault_message(t, order, word_faults))
    surfaces = [s.surface for s in out]
    twice = next((s for s in surfaces if surfaces.count(s) > 1), None)
    if twice is not None:
        raise _fail(t, f"the sentence {twice!r} comes out twice: the word lists must make different sentences")
    _check_meanings(t, out)
    try:
        own_words_of(lf for s in out for lf in (s.lf0, s.lf1))
    except OwnWordsError as exc:
        raise _fail(t, f"the own words of its sentences cannot extend the grammar: {exc}") from None
    return tuple(out)


def _word_fault_message(t: OwnTemplate, order: tuple[str, ...], faults: dict[tuple[str, str], str]) -> str:
    parts = []
    for slot in order:
        bad = [(w, faults[(slot, w)]) for w in t.slots[slot] if (slot, w) in faults]
        if not bad:
            continue
        shown = "; ".join(f"{_word_label(t, slot, w)}: {reason}" for w, reason in bad[:_SHOWN_FAILURES])
        more = f"; and {len(bad) - _SHOWN_FAILURES} more" if len(bad) > _SHOWN_FAILURES else ""
        head = (f"the word list of {{{slot}}} makes no sentence, every word fails"
                if len(bad) == len(t.slots[slot]) else
                f"in the word list of {{{slot}}}, {len(bad)} of {len(t.slots[slot])} words fail")
        parts.append(f"{head} — {shown}{more}")
    return "; ".join(parts)


def _check_lengths(t: OwnTemplate, s: ExpandedSentence) -> None:
    """A filled-in sentence fits an own sentence's bounds (:mod:`amp.teaching.own_sentences`)."""
    for attr, label, limit in (("surface", "the sentence", own_sentences.MAX_SURFACE_CHARS),
                               ("paraphrase0", "paraphrase 0", own_sentences.MAX_PARAPHRASE_CHARS),
                               ("paraphrase1", "paraphrase 1", own_sentences.MAX_PARAPHRASE_CHARS),
                               ("lf0", "LF0", own_sentences.MAX_LF_CHARS), ("lf1", "LF1", own_sentences.MAX_LF_CHARS)):
        text = getattr(s, attr)
        if len(text) > limit:
            raise _fail(t, f"{label} of {s.surface[:40]!r}… is {len(text)} characters long, filled in: at most "
                           f"{limit}; shorten the pattern or the words")


def _word_label(t: OwnTemplate, slot: str, word: str) -> str:
    lf = lf_word(t, slot, word)
    return repr(word) if lf == word else f"{word!r} (LF word {lf!r})"


def _check_meanings(t: OwnTemplate, sentences: Sequence[ExpandedSentence]) -> None:
    for s in sentences:
        if equivalent(s.lf0, s.lf1):
            raise _fail(t, f"LF0 and LF1 mean the same for {s.surface!r} ({s.lf0}): an ambiguous "
                           "sentence needs two different readings")
