"""A teacher's own ambiguous sentence (issue #11 point 1): its two readings, checked and typed.

A teacher types any ambiguous sentence ("I saw her duck") with its two readings as FOL logical
forms and in words.  :class:`OwnSentence` validates it once, on construction, so that everything
downstream can trust it: each reading reads (the lenient reader, so ``duck(x)AND …`` is fine)
and is stored in the strict AmP spacing the decoding grammar demands (:func:`normalise_lf`); it
has no free variable; it uses only the variables and argument positions the decoding grammar
can write (:func:`decodable_problem`); the two readings differ in meaning (logical canonical
forms); and its words outside the lexicon form valid :class:`~amp.logic.own_words.OwnWords`.

The readings are stored as typed (``lf0``/``lf1``, in the strict spacing) and *scored and
prompted* in the paper's prompt convention (:attr:`OwnSentence.readings`,
:func:`amp.logic.prompt_convention.prompt_text`, docs/paper-notes.md §16): entity variables x, y,
z and event variables a, e, i in the templates' order, so P(LF0) compares meanings, not a
teacher's letters (issue #26).  The teacher's own examples are prompted in it too.

The record then behaves like a template sentence: :meth:`OwnSentence.pair` is an
:class:`~amp.data.generate.AmbiguousPair` (template ``"own"``) that
:func:`amp.prompts.mixed_prompt` takes as its test, :meth:`OwnSentence.prompt` the Parse page's
prompt (with :attr:`~amp.prompts.Prompt.words` set, so the parser extends its grammar), and
:meth:`OwnSentence.poll_item` a class-poll item.  Its ``type`` names the registry type whose pool
gives the few-shot examples; by default the :func:`~amp.teaching.own_types.closest_type` of
the readings.  The library on disk is :mod:`amp.teaching.own_library`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Self

from pydantic import ValidationError

from amp.data.generate import AmbiguousPair
from amp.data.templates.records import Example, record_type
from amp.data.types import type_ids
from amp.logic import lexicon
from amp.logic.ast import Formula, atoms, free_variables, is_constant
from amp.logic.canonical import canonical
from amp.logic.errors import LFParseError, OwnWordsError
from amp.logic.own_words import OwnWords
from amp.logic.prompt_convention import EVENT_NAMES, prompt_form, prompt_text
from amp.logic.reader import parse_lf
from amp.logic.render import render_fol
from amp.logic.unknown_words import own_words_of
from amp.logic.vocabulary import Format
from amp.prompts import (
    DEFAULT_MIXED_RATIO,
    DEFAULT_MIXED_SEED,
    EXAMPLES_PER_PROMPT,
    Prompt,
    PromptExample,
    mixed_prompt,
)
from amp.records import JsonRecord, describe
from amp.teaching.errors import OwnSentenceError
from amp.teaching.own_types import closest_type
from amp.teaching.poll_records import PollItem

__all__ = [
    "MAX_EXAMPLES", "MAX_LF_CHARS", "MAX_NAME_CHARS", "MAX_PARAPHRASE_CHARS", "MAX_SURFACE_CHARS",
    "OWN_PROMPT_MODES", "OWN_TEMPLATE", "OwnSentence", "OwnSentenceError", "closest_type",
    "decodable_problem", "examples_from_text", "free_variable_hint", "examples_text", "normalise_lf", "normalise_text",
]

#: Bounds of the fields (a sentence is typed by a person and stored, exported and polled).
MAX_SURFACE_CHARS = 200
MAX_PARAPHRASE_CHARS = 300
MAX_NAME_CHARS = 40
MAX_LF_CHARS = 2000
#: At most this many of the teacher's own (utterance, LF) examples.
MAX_EXAMPLES = 20
#: The ``template`` id of an own sentence's :class:`~amp.data.generate.AmbiguousPair`.
OWN_TEMPLATE = "own"
#: How :meth:`OwnSentence.prompt` builds a prompt: few-shot from the type's pool, or from the
#: teacher's examples (there is no zero-shot prompt: its ingredients come from template slots).
OWN_PROMPT_MODES = ("mixed", "own examples")

_SPACES = re.compile(r"\s+")


def normalise_text(text: object, field: str, limit: int, *, required: bool = True) -> str:
    """``text`` stripped with its whitespace runs made single spaces (one line, as a prompt needs)."""
    if not isinstance(text, str):
        raise OwnSentenceError(field, f"{field} must be text, not {type(text).__name__}")
    if len(text) > 4 * limit:  # bound the work before normalising
        raise OwnSentenceError(field, f"{field} is longer than {limit} characters")
    out = _SPACES.sub(" ", text).strip()
    if required and not out:
        raise OwnSentenceError(field, f"{field} is empty")
    if len(out) > limit:
        raise OwnSentenceError(field, f"{field} is {len(out)} characters long; at most {limit} are allowed")
    return out


def decodable_problem(f: Formula) -> str | None:
    """What the decoding grammar cannot write in ``f`` as the prompts spell it, or ``None``.

    ``f`` is read in the prompt convention (:func:`~amp.logic.prompt_convention.prompt_form`), so
    any variable names do; the decoding grammar is the lexicon's
    (:func:`amp.logic.grammar.grammar_text`), whose variables are only ``x``, ``y``, ``z``
    (entities) and ``a``, ``e``, ``i`` (events): at most three of each kind.  The reader already
    admits a name (capitalised constant) only as the second argument of a two-place atom, as the
    decoding grammar does."""
    for atom in atoms(prompt_form(f)):
        for arg in atom.args:
            if not is_constant(arg) and arg not in lexicon.VARIABLES:
                kind = "event" if arg[0] in EVENT_NAMES else "entity"
                return (f"more than three {kind} variables: the model can write only x, y, z for things and "
                        "people and a, e, i for events")
    return None


def free_variable_hint(var: str) -> str:
    """What to do about an unbound word in an atom (issue #26 point 7): a single letter is a
    variable to bind; a longer word is usually a name, which is capitalised."""
    if len(var) == 1:
        return f"bind it with a quantifier (exists {var} . …)"
    return (f"a name is capitalised ({var[:1].upper() + var[1:]}); a variable is a single letter bound by a "
            "quantifier (exists x . …)")


def normalise_lf(text: object, field: str = "lf") -> str:
    """One reading, checked (reads, no free variable, decodable) and printed in the strict AmP
    spacing (``" . "``, ``", "``, single spaces) that the decoding grammar demands."""
    label = field.upper() if field in ("lf0", "lf1") else field
    raw = normalise_text(text, field, MAX_LF_CHARS)
    try:
        tree = parse_lf(raw, Format.FOL)
    except LFParseError as exc:
        raise OwnSentenceError(field, f"{label} does not read as a logical form: {exc}") from exc
    free = sorted(free_variables(tree))
    if free:
        raise OwnSentenceError(field, f"{label} has the free variable {free[0]!r}: {free_variable_hint(free[0])}")
    problem = decodable_problem(tree)
    if problem is not None:
        raise OwnSentenceError(field, f"{label}: {problem}")
    return render_fol(tree)


@dataclass(frozen=True)
class OwnSentence(JsonRecord):
    """A teacher's ambiguous sentence with its two readings (see the module docstring).

    ``name0``/``name1`` are optional short names of the readings ("she ducked"); when empty the
    type's reading names are used.  ``examples`` are the teacher's own (utterance, LF) examples
    for an ``"own examples"`` prompt.  ``type`` empty means :func:`closest_type`.
    """

    surface: str
    lf0: str
    lf1: str
    paraphrase0: str
    paraphrase1: str
    type: str = ""
    name0: str = ""
    name1: str = ""
    examples: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        put("surface", normalise_text(self.surface, "sentence", MAX_SURFACE_CHARS))
        put("paraphrase0", normalise_text(self.paraphrase0, "paraphrase0", MAX_PARAPHRASE_CHARS))
        put("paraphrase1", normalise_text(self.paraphrase1, "paraphrase1", MAX_PARAPHRASE_CHARS))
        for name in ("name0", "name1"):
            put(name, normalise_text(getattr(self, name), name, MAX_NAME_CHARS, required=False))
        put("lf0", normalise_lf(self.lf0, "lf0"))
        put("lf1", normalise_lf(self.lf1, "lf1"))
        if canonical(self.lf0) == canonical(self.lf1):
            raise OwnSentenceError("lf1", "LF0 and LF1 mean the same (equal up to variable names and the order "
                                          "of conjuncts): an ambiguous sentence needs two different readings")
        put("examples", _checked_examples(self.examples))
        try:
            self.words  # noqa: B018 (validates the words once, with the field named)
        except OwnWordsError as exc:
            raise OwnSentenceError("words", f"own words: {exc}") from exc
        kind = normalise_text(self.type, "type", 64, required=False)
        if kind and kind not in type_ids():
            raise OwnSentenceError("type", f"type {kind!r} is not a registered ambiguity type "
                                           f"({', '.join(type_ids())})")
        put("type", kind or closest_type(*self.readings))

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The schema's reading; a failed check is the :class:`OwnSentenceError` it raised."""
        try:
            return super().from_dict(data)
        except ValidationError as exc:
            for err in exc.errors():
                cause = (err.get("ctx") or {}).get("error")
                if isinstance(cause, OwnSentenceError):
                    raise cause from None
            raise OwnSentenceError("record", f"not an own sentence: {describe(exc)}") from None

    @property
    def words(self) -> OwnWords:
        """The words of the readings and examples that the lexicon lacks, typed by arity."""
        return own_words_of([self.lf0, self.lf1, *(lf for _, lf in self.examples)])

    @property
    def readings(self) -> tuple[str, str]:
        """LF0 and LF1 as they are scored and prompted: in the prompt convention (module docstring),
        their conjuncts in the order the sentence's words decide (docs/paper-notes.md §16)."""
        return prompt_text(self.lf0, Format.FOL, self.surface), prompt_text(self.lf1, Format.FOL, self.surface)

    @property
    def typed_readings(self) -> tuple[str, str]:
        """LF0 and LF1 as the teacher typed them (strict spacing)."""
        return self.lf0, self.lf1

    @property
    def prompt_examples(self) -> tuple[tuple[str, str], ...]:
        """The teacher's examples with their LFs in the prompt convention (each ordered by its own utterance)."""
        return tuple((u, prompt_text(lf, Format.FOL, u)) for u, lf in self.examples)

    def pair(self) -> AmbiguousPair:
        """The sentence as a generated pair would be (template ``"own"``), for prompts and lessons;
        its readings in the prompt convention."""
        kind = record_type(self.type)
        records = [Example(self.surface, lf, template_idx=i, type=kind, template=OWN_TEMPLATE)
                   for i, lf in enumerate(self.readings)]
        return AmbiguousPair(self.surface, self.type, OWN_TEMPLATE, records[0], records[1])

    def poll_item(self, model_p_lf0: float | None = None) -> PollItem:
        """A class-poll item of this sentence (its readings in the teacher's words, with their names)."""
        lf0, lf1 = self.readings
        return PollItem(self.surface, self.type, lf0, lf1, self.paraphrase0, self.paraphrase1,
                        model_p_lf0, self.name0, self.name1)

    def prompt(self, mode: str = "mixed", ratio: float | None = None, k: int | None = None,
               seed: int | None = None) -> Prompt:
        """The prompt to parse this sentence with, carrying its own :attr:`words`.

        ``"mixed"``: ``k`` examples of :attr:`type` from its pool, a fraction ``ratio`` with LF0
        (defaults: :data:`~amp.prompts.DEFAULT_MIXED_RATIO`, :data:`~amp.prompts.EXAMPLES_PER_PROMPT`,
        :data:`~amp.prompts.DEFAULT_MIXED_SEED`, as a template sentence gets).  ``"own examples"``: the teacher's examples in
        their order (``ratio``, ``k`` and ``seed`` do not apply).  FOL only.
        """
        if mode == "mixed":
            built = mixed_prompt(self.pair(), DEFAULT_MIXED_RATIO if ratio is None else ratio,
                                 seed=DEFAULT_MIXED_SEED if seed is None else seed,
                                 k=EXAMPLES_PER_PROMPT if k is None else k)
            return replace(built, words=self.words)
        if mode == "own examples":
            if not self.examples:
                raise OwnSentenceError("examples", f"{self.surface!r} has no examples of its own: add some, "
                                                   "or use the mixed prompt (examples of its type's pool)")
            examples = tuple(PromptExample(u, lf) for u, lf in self.prompt_examples)
            lf0, lf1 = self.readings
            return Prompt(examples, self.surface, type=self.type, gold_lf0=lf0, gold_lf1=lf1,
                          words=self.words)
        if mode == "zero-shot":
            raise OwnSentenceError("mode", "an own sentence has no zero-shot prompt: its unambiguous "
                                           "ingredients are built from a template's slot words; use 'mixed' "
                                           "(examples of its type) or 'own examples'")
        raise OwnSentenceError("mode", f"unknown prompt mode {mode!r}; use one of {', '.join(OWN_PROMPT_MODES)}")


def _checked_examples(examples: Iterable[Any]) -> tuple[tuple[str, str], ...]:
    """The teacher's (utterance, LF) examples, each checked like a reading and normalised."""
    if isinstance(examples, str | bytes):
        raise OwnSentenceError("examples", "examples must be a list of (sentence, LF) pairs")
    items = tuple(examples)
    if len(items) > MAX_EXAMPLES:
        raise OwnSentenceError("examples", f"{len(items)} examples: at most {MAX_EXAMPLES} are allowed")
    out = []
    for n, item in enumerate(items, 1):
        if isinstance(item, str | bytes) or len(tuple(item)) != 2:
            raise OwnSentenceError("examples", f"example {n} must be a (sentence, LF) pair")
        utterance, lf = tuple(item)
        out.append((normalise_text(utterance, f"example {n} sentence", MAX_SURFACE_CHARS),
                    normalise_lf(lf, f"example {n} LF")))
    return tuple(out)


#: Separator of a sentence and its LF in the one-example-per-line text of :func:`examples_from_text`
#: (an LF never holds it).
EXAMPLE_SEPARATOR = "|"


def examples_from_text(text: str) -> tuple[tuple[str, str], ...]:
    """The teacher's examples typed one per line as ``sentence | LF`` (blank lines skipped); the
    pairs are checked when the :class:`OwnSentence` is built."""
    limit = MAX_EXAMPLES * (MAX_SURFACE_CHARS + MAX_LF_CHARS + 4)
    if not isinstance(text, str) or len(text) > limit:
        raise OwnSentenceError("examples", f"the examples must be text of at most {limit:,} characters")
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if EXAMPLE_SEPARATOR not in line:
            raise OwnSentenceError("examples", f"example line {n} has no '{EXAMPLE_SEPARATOR}': write "
                                               f"'sentence {EXAMPLE_SEPARATOR} LF'")
        utterance, lf = line.rsplit(EXAMPLE_SEPARATOR, 1)
        out.append((utterance.strip(), lf.strip()))
    return tuple(out)


def examples_text(examples: Iterable[tuple[str, str]]) -> str:
    """Inverse of :func:`examples_from_text`."""
    return "\n".join(f"{u} {EXAMPLE_SEPARATOR} {lf}" for u, lf in examples)
