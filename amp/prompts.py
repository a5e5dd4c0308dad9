"""Prompts: the zero-shot ingredient prompts (docs/paper-notes.md §10) and mixed prompts (§11).

A :class:`Prompt` is a value: a header, Human/Computer examples and a test utterance.  Editing
methods (:meth:`Prompt.flip`, :meth:`Prompt.remove`, :meth:`Prompt.move`, :meth:`Prompt.add`,
:meth:`Prompt.with_test`) return new prompts.  All randomness is a local
``numpy.random.default_rng(seed)``; the global RNG is never used.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Annotated, Any, Literal, Self

import numpy as np
from pydantic import BeforeValidator, Field, ValidationError

from amp.data.generate import AmbiguousPair, find_pair, pairs, pool
from amp.data.splits_render import render_ordered
from amp.data.templates.engine import registry_version
from amp.data.templates.records import Example
from amp.data.types import get_type, type_ids
from amp.errors import PromptError, RatioError
from amp.logic import lexicon
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT, Format, check_format, format_of
from amp.records import JsonRecord, describe

#: The preamble of every prompt (docs/paper-notes.md §10).
HEADER = "Let's translate what a human user says into what a computer might say."


def _no_bool(label: Any) -> Any:
    """``true``/``false`` are not the labels 1/0 (JSON readers would otherwise take them as such)."""
    if isinstance(label, bool):
        raise ValueError(f"label must be 0, 1 or null, not {label!r}")
    return label


@dataclass(frozen=True)
class PromptExample(JsonRecord):
    """One Human/Computer example.

    ``label`` is 0 when shown with LF0, 1 when shown with LF1, ``None`` for an unambiguous
    ingredient; ``alt_lf`` is the other reading of an ambiguous example.
    """

    utterance: str
    lf: str
    alt_lf: str | None = None
    label: Annotated[Literal[0, 1] | None, BeforeValidator(_no_bool)] = None

    @property
    def is_ambiguous(self) -> bool:
        return self.label is not None and self.alt_lf is not None

    def flipped(self) -> PromptExample:
        """The same sentence shown with its other reading."""
        if not self.is_ambiguous:
            raise PromptError(f"example {self.utterance!r} is not ambiguous: it has no other reading")
        return PromptExample(self.utterance, self.alt_lf, self.lf, 1 - self.label)  # type: ignore[arg-type, operator]

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The schema's reading, with :class:`PromptError` saying what is wrong and where."""
        try:
            return super().from_dict(data)
        except ValidationError as exc:
            raise PromptError(f"malformed prompt example {data!r}: {describe(exc)}") from None


@dataclass(frozen=True)
class Prompt(JsonRecord):
    """A few-shot prompt (docs/paper-notes.md §10, "Exact prompt text")."""

    examples: tuple[PromptExample, ...]
    test_utterance: str
    header: str = HEADER
    type: str | None = None
    gold_lf0: str | None = None
    gold_lf1: str | None = None
    #: Words outside the lexicon that this prompt's LFs use (a teacher's own sentence,
    #: :mod:`amp.logic.own_words`): the parser extends its decoding grammar with them.  Not
    #: written when empty, so prompts without own words keep their JSON.
    words: Annotated[OwnWords, Field(exclude_if=lambda w: not w)] = NO_WORDS

    def __post_init__(self) -> None:
        object.__setattr__(self, "examples", tuple(self.examples))
        for ex in self.examples:
            if not isinstance(ex, PromptExample):
                raise PromptError(f"prompt examples must be PromptExample, got {type(ex).__name__}")

    # --- editing ---------------------------------------------------------------------------

    def _index(self, i: int, *, name: str = "index") -> int:
        n = len(self.examples)
        if isinstance(i, bool) or not isinstance(i, int | np.integer) or not -n <= i < n:
            raise PromptError(f"{name} {i!r} is out of range for a prompt with {n} examples")
        return int(i) % n

    @property
    def lf_format(self) -> Format:
        """The notation of the prompt's LFs (:func:`~amp.logic.vocabulary.format_of` of its first LF)."""
        return format_of(self.gold_lf0 or next((ex.lf for ex in self.examples), "") or "")

    def flip(self, i: int) -> Prompt:
        """Show example ``i`` with its other reading (label 0 ↔ 1)."""
        k = self._index(i)
        examples = list(self.examples)
        examples[k] = examples[k].flipped()
        return replace(self, examples=tuple(examples))

    def remove(self, i: int) -> Prompt:
        """Drop example ``i``."""
        k = self._index(i)
        return replace(self, examples=self.examples[:k] + self.examples[k + 1:])

    def move(self, i: int, j: int) -> Prompt:
        """Move example ``i`` so that it ends up at position ``j``."""
        k = self._index(i)
        target = self._index(j, name="target index")
        examples = list(self.examples)
        examples.insert(target, examples.pop(k))
        return replace(self, examples=tuple(examples))

    def add(self, example: PromptExample, at: int | None = None) -> Prompt:
        """Insert ``example`` at position ``at`` (0…len), or append it."""
        if not isinstance(example, PromptExample):
            raise PromptError(f"can only add a PromptExample, not {type(example).__name__}")
        n = len(self.examples)
        if at is None:
            at = n
        if isinstance(at, bool) or not isinstance(at, int | np.integer) or not 0 <= at <= n:
            raise PromptError(f"position {at!r} is out of range 0..{n}")
        k = int(at)
        return replace(self, examples=self.examples[:k] + (example,) + self.examples[k:])

    def with_test(
        self, utterance: str, gold_lf0: str | None = None, gold_lf1: str | None = None
    ) -> Prompt:
        """The same examples with another test utterance (and its gold LFs, if known)."""
        return replace(self, test_utterance=utterance, gold_lf0=gold_lf0, gold_lf1=gold_lf1)

    # --- views ---------------------------------------------------------------------------------

    @property
    def lf0_fraction(self) -> float | None:
        """Fraction of labelled examples shown with LF0; ``None`` when none is labelled."""
        labels = [ex.label for ex in self.examples if ex.label is not None]
        return labels.count(0) / len(labels) if labels else None

    def render(self, *, trailing_space: bool = False) -> str:
        """The prompt text (docs/paper-notes.md §10).

        Blocks ``HEADER + "\\n\\n"``, ``"Human: u\\nComputer: lf\\n"`` per example and the test
        block ``"Human: t\\nComputer:"`` are joined with ``"\\n"``: three newlines after the
        header, one blank line between examples.  The test block ends ``Computer:`` (the GPT-2
        style builder strips the trailing space) unless ``trailing_space`` is true.  An empty
        header drops the header block.
        """
        blocks = [self.header + "\n\n"] if self.header else []
        blocks += [f"Human: {ex.utterance}\nComputer: {ex.lf}\n" for ex in self.examples]
        blocks.append(f"Human: {self.test_utterance}\nComputer:" + (" " if trailing_space else ""))
        return "\n".join(blocks)

    def to_dict(self) -> dict[str, Any]:
        """The schema's JSON-safe dict, ``header`` and ``type`` first (as prompts were always written)."""
        d = super().to_dict()
        return {"header": d.pop("header"), "type": d.pop("type"), **d}

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Inverse of :meth:`to_dict`; unknown keys (e.g. a rendered ``text``) are ignored;
        :class:`PromptError` says what is wrong and where."""
        try:
            return super().from_dict(data)
        except ValidationError as exc:
            raise PromptError(f"malformed prompt dict: {describe(exc)}") from None


# --- helpers -----------------------------------------------------------------------------------


def _test_pair(test: str | AmbiguousPair, extra: Iterable[AmbiguousPair] = ()) -> AmbiguousPair:
    if isinstance(test, AmbiguousPair):
        return test
    if not isinstance(test, str):
        raise PromptError(f"the test must be a sentence or an AmbiguousPair, not {test!r}")
    found = find_pair(test)
    if found is None:
        found = next((p for p in extra if p.surface == test), None)
    if found is None:
        raise PromptError(f"{test!r} is not an ambiguous sentence of any pool ({', '.join(type_ids())})")
    return found


@lru_cache(maxsize=4)
def _ingredient_index(version: int) -> dict[str, tuple[Example, ...]]:
    index: dict[str, list[Example]] = {}
    for r in pool("zeroshot_train"):
        index.setdefault(r.surface, []).append(r)
    return {k: tuple(v) for k, v in index.items()}  # pool (file) order


def _lookup(surface: str) -> Example:
    """The unambiguous pool record of ``surface`` as the original looked it up (docs/paper-notes.md §10):
    a surface → record dict over the *unshuffled* zero-shot training file, so the last record in
    file order wins — for a double conjunction (idx 0, then idx 1) its ``template_idx`` 1
    bracketing, as the paper's example "the bird left or walked and ate" shows."""
    found = _ingredient_index(registry_version()).get(surface)
    if not found:
        raise PromptError(f"no unambiguous pool record for the ingredient {surface!r}")
    return found[-1]


def _ingredient_surfaces(pair: AmbiguousPair, rng: np.random.Generator) -> list[str]:
    """The ingredient sentences of docs/paper-notes.md §10 by the recipe of the pair's type
    (:attr:`amp.data.types.AmbiguityType.ingredients`), in the original's pre-shuffle order."""
    recipe = get_type(pair.type).ingredients
    if recipe is None:
        raise PromptError(f"no zero-shot ingredients are defined for type {pair.type!r}")
    return recipe(pair.surface, {k: lexicon.surface_word(v) for k, v in pair.var_bindings.items()}, rng)


def zero_shot_prompt(test: str | AmbiguousPair, *, seed: int = 12345) -> Prompt:
    """The zero-shot prompt of docs/paper-notes.md §10: unambiguous "ingredients", shuffled.

    Ingredients per type (exact lookups in the ``zeroshot_train`` pool, raw template-order LFs),
    by the recipes declared with the types in :mod:`amp.data.types`:

    * pp (3): ``<subj> <verb> <obj>``, ``<subj> <verb> with the <instr>``, ``<obj> with the <instr>``;
    * scope (2): ``<Q> <np1>``, ``a|an <rest after Q>``;
    * revscope (2): ``<Q> <obj>``, ``<words before Q> a|an <obj>`` (obj with its pair-of phrase);
    * bound (4): the transitive clause, ``<subj> <vp2>``, ``<obj> <vp2>`` and
      ``<subj> <r> and <vp2>`` with ``r`` drawn from Bd − {vp2} (source order) by the RNG.
      Works for both genders (the original's zero-shot data is female only);
    * conj (2): the sentence with every "and" → "or", and with every "or" → "and".  Each is a
      double conjunction with two bracketings (idx 0/1); the one shown is the last record of
      the unshuffled training file, ``template_idx`` 1, as in the original's lookup.

    RNG call order with ``default_rng(seed)``: bound's extra verb, then the shuffle
    (``rng.permutation``).
    """
    pair = _test_pair(test)
    rng = np.random.default_rng(seed)
    records = [_lookup(s) for s in _ingredient_surfaces(pair, rng)]
    order = rng.permutation(len(records))
    examples = tuple(PromptExample(records[i].surface, records[i].lf) for i in order)
    return Prompt(examples, pair.surface, type=pair.type,
                  gold_lf0=pair.lf0.lf, gold_lf1=pair.lf1.lf)


#: Examples in one few-shot prompt (paper §4: k = 10); every page, command and sweep defaults to it.
EXAMPLES_PER_PROMPT = 10

#: The mixed prompt a sentence gets unless someone builds another ("Parse this sentence", the
#: Parse page's default, lessons, the classic demo pack): :data:`EXAMPLES_PER_PROMPT` same-type
#: examples, 30 % of them with LF0 (the paper's running 30/70 example), seed 0.
DEFAULT_MIXED_RATIO, DEFAULT_MIXED_SEED = 0.3, 0


def check_ratio(ratio: object) -> float:
    """A ratio r of LF0 examples in a prompt (docs/paper-notes.md §11) as a float: a real number in [0, 1]."""
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real):
        raise RatioError(f"ratio {ratio!r} is not a number in [0, 1]")
    value = float(ratio)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise RatioError(f"ratio {ratio!r} is outside the range [0, 1] (the fraction of examples shown with LF0)")
    return value


def lf0_count(k: int, ratio: float) -> int:
    """int(k·r), robust to float error: ``lf0_count(10, 0.3) == 3`` (not 2)."""
    return int(round(k * ratio, 9))


def mixed_prompt(
    test: str | AmbiguousPair,
    ratio: float,
    *,
    seed: int,
    k: int = EXAMPLES_PER_PROMPT,
    fmt: str = DEFAULT_FORMAT,
    pool_pairs: Sequence[AmbiguousPair] | None = None,
) -> Prompt:
    """A mixed prompt of docs/paper-notes.md §11: ``k`` same-type examples, ``int(k·r)`` with LF0.

    ``k`` distinct surfaces of the test's type are drawn uniformly without replacement from
    ``pool_pairs`` (default: the full pool of the type) minus the test sentence; the first
    :func:`lf0_count` drawn are shown with LF0, the rest with LF1, and the list is shuffled.
    RNG: ``default_rng(seed)`` — ``choice`` then ``permutation``; neither depends on ``ratio``,
    so one seed gives the same sentences in the same positions at every ratio (the original's
    paired design).  ``fmt=Format.LISP`` shows the example LFs and the gold LFs in the released Lisp
    form (sorted and flattened, ordered variables, as the original's Lisp folders hold them).
    """
    check_ratio(ratio)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise PromptError(f"k must be a non-negative integer, got {k!r}")
    check_format(fmt, PromptError)
    pair = _test_pair(test, pool_pairs or ())
    source = pairs(pair.type) if pool_pairs is None else pool_pairs
    seen: set[str] = {pair.surface}
    candidates: list[AmbiguousPair] = []
    for p in source:
        if p.type == pair.type and p.surface not in seen:
            seen.add(p.surface)
            candidates.append(p)
    if k > len(candidates):
        raise PromptError(
            f"k={k} is larger than the {len(candidates)} {pair.type} sentences available"
        )
    rng = np.random.default_rng(seed)
    drawn = [candidates[int(i)] for i in rng.choice(len(candidates), size=int(k), replace=False)]
    n0 = lf0_count(int(k), float(ratio))
    convert = _converter(fmt)
    examples = [
        PromptExample(p.surface, convert(p.lf(label).lf), convert(p.lf(1 - label).lf), label)
        for j, p in enumerate(drawn)
        for label in ((0 if j < n0 else 1),)
    ]
    examples = [examples[int(i)] for i in rng.permutation(len(examples))]
    return Prompt(tuple(examples), pair.surface, type=pair.type,
                  gold_lf0=convert(pair.lf0.lf), gold_lf1=convert(pair.lf1.lf))


def _converter(fmt: str):
    """FOL prompts show the raw template-order LFs (the original's ``train_eval``); Lisp prompts
    and golds the released Lisp form — sorted, flattened, ordered variables (§6.1, §11)."""
    if fmt == Format.FOL:
        return lambda lf: lf

    return lambda lf: render_ordered(lf, Format.LISP)


# --- reading prompts back ----------------------------------------------------------------------------

#: The most characters :func:`prompt_from_text` reads (a prompt file's own bound is
#: :data:`amp.teaching.prompt_file.MAX_PROMPT_FILE_BYTES`).
MAX_PROMPT_FILE_CHARS = 400_000


def _label_from_pool(utterance: str, lf: str, fmt: str) -> tuple[str | None, int | None]:
    """``(alt_lf, label)`` of an example whose sentence is an ambiguous pool sentence and whose LF
    is one of its two readings (in ``fmt``); ``(None, None)`` otherwise."""
    pair = find_pair(utterance)
    if pair is None:
        return None, None
    convert = _converter(fmt)
    readings = [" ".join(convert(pair.lf0.lf).split()), " ".join(convert(pair.lf1.lf).split())]
    shown = " ".join(lf.split())
    if shown not in readings:
        return None, None
    label = readings.index(shown)
    return convert((pair.lf1 if label == 0 else pair.lf0).lf), label


def prompt_from_text(text: str, *, gold_lf0: str | None = None, gold_lf1: str | None = None) -> Prompt:
    """A prompt read back from its rendered text (:meth:`Prompt.render`): the header, the
    ``Human:``/``Computer:`` examples and the final ``Human: …\\nComputer:`` test block.

    An example whose sentence is an ambiguous pool sentence shown with one of its readings gets
    its label and other reading back (so it can be flipped); other examples are plain.  The test
    sentence's golds are ``gold_lf0``/``gold_lf1``, else its pool readings when it is a pool
    sentence.  :class:`PromptError` names the line of anything that is not a prompt."""
    if not isinstance(text, str) or len(text) > MAX_PROMPT_FILE_CHARS:
        raise PromptError(f"a prompt text must be a string of at most {MAX_PROMPT_FILE_CHARS:,} characters")
    lines = text.replace("\r\n", "\n").split("\n")
    header_lines: list[str] = []
    i = 0
    while i < len(lines) and not lines[i].startswith("Human:"):
        header_lines.append(lines[i])
        i += 1
    pairs_: list[tuple[str, str]] = []
    test: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if not line.startswith("Human:"):
            raise PromptError(f"prompt line {i + 1}: expected 'Human: <sentence>', got {line[:60]!r}")
        utterance = line[len("Human:"):].strip()
        answer = lines[i + 1] if i + 1 < len(lines) else ""
        if not answer.startswith("Computer:"):
            raise PromptError(f"prompt line {i + 2}: expected 'Computer: …' after the sentence {utterance!r}")
        lf = answer[len("Computer:"):].strip()
        if not lf:
            if any(rest.strip() for rest in lines[i + 2:]):
                raise PromptError(f"prompt line {i + 2}: an example without its LF ({utterance!r})")
            test = utterance
            break
        pairs_.append((utterance, lf))
        i += 2
    if test is None:
        raise PromptError("the prompt does not end with the test block 'Human: <sentence>' / 'Computer:'")
    fmt = format_of(pairs_[0][1]) if pairs_ else DEFAULT_FORMAT
    examples = []
    for utterance, lf in pairs_:
        alt, label = _label_from_pool(utterance, lf, fmt)
        examples.append(PromptExample(utterance, lf, alt, label))  # type: ignore[arg-type]
    test_pair = find_pair(test)
    if (gold_lf0 is None or gold_lf1 is None) and test_pair is not None:
        convert = _converter(fmt)
        gold_lf0, gold_lf1 = gold_lf0 or convert(test_pair.lf0.lf), gold_lf1 or convert(test_pair.lf1.lf)
    return Prompt(tuple(examples), test, header="\n".join(header_lines).strip(),
                  type=test_pair.type if test_pair is not None else None, gold_lf0=gold_lf0, gold_lf1=gold_lf1)

