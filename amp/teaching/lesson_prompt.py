"""The one prompt of a lesson: every page scores a class sentence under it, and says which it is.

A sentence's P(LF0) depends on the prompt (docs/paper-notes.md §10, §11): "the boy saw the man with
the telescope" scored 0.30 under its zero-shot prompt and 0.006 under the 10-example mixed prompt,
on two pages of one lesson, and no screen said which (issue #40).  So the teacher chooses the
prompt once for the lesson (:class:`LessonPrompt`): the zero-shot prompt (unambiguous ingredients
only, §10), or a mixed prompt at a ratio (``k`` examples of the sentence's type, a fraction shown
with LF0, §11).  A teacher's own sentence has no template ingredients and is parsed with the
examples chosen for it (:mod:`amp.teaching.own_examples`).

The prompt a poll item was scored under is stored with the item
(:attr:`amp.teaching.poll_records.PollItem.prompt`), so the Presentation's reveal, the poll's
"Model P(LF0)", "Parse this sentence" and Parse & inspect all use the very same prompt — also after
a reload — and :func:`describe_prompt` names it on the slide ("under 10 examples, 3 of them
LF0").  Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from amp.data.generate import AmbiguousPair, find_pair
from amp.errors import RatioError
from amp.prompts import (
    DEFAULT_MIXED_RATIO,
    DEFAULT_MIXED_SEED,
    EXAMPLES_PER_PROMPT,
    Prompt,
    check_ratio,
    mixed_prompt,
    zero_shot_prompt,
)
from amp.teaching.errors import LessonPromptError

__all__ = ["LESSON_PROMPT_KINDS", "LessonPrompt", "LessonPromptKind", "describe_prompt", "pool_prompt"]

#: The most examples a lesson's mixed prompt may hold (the Prompt builder's bound).
MAX_LESSON_EXAMPLES = 20


class LessonPromptKind(StrEnum):
    """Which prompt a lesson's template sentences are scored under."""

    ZERO_SHOT = "zero-shot"
    MIXED = "mixed"


LESSON_PROMPT_KINDS: tuple[LessonPromptKind, ...] = tuple(LessonPromptKind)


@dataclass(frozen=True)
class LessonPrompt:
    """The teacher's choice for a lesson, validated on construction.

    ``kind``: zero-shot or mixed; for mixed, ``k`` examples of the sentence's type with a fraction
    ``ratio`` shown with LF0 (docs/paper-notes.md §11), drawn with ``seed``.  The default is the
    mixed prompt every page gave a sentence before (10 examples, 30 % LF0, seed 0)."""

    kind: LessonPromptKind = LessonPromptKind.MIXED
    ratio: float = DEFAULT_MIXED_RATIO
    k: int = EXAMPLES_PER_PROMPT
    seed: int = DEFAULT_MIXED_SEED

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", LessonPromptKind(self.kind))
        except ValueError:
            raise LessonPromptError(f"lesson prompt {self.kind!r}: choose one of "
                                    f"{', '.join(LESSON_PROMPT_KINDS)}") from None
        try:
            object.__setattr__(self, "ratio", check_ratio(self.ratio))
        except RatioError as exc:
            raise LessonPromptError(f"lesson prompt ratio: {exc}") from None
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= MAX_LESSON_EXAMPLES:
            raise LessonPromptError(f"lesson prompt examples k must be a whole number in 1…{MAX_LESSON_EXAMPLES}, "
                                    f"got {self.k!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise LessonPromptError(f"lesson prompt seed must be a whole number ≥ 0, got {self.seed!r}")

    @property
    def label(self) -> str:
        """The choice in words, for the selector: "zero-shot" / "10 examples, 3 of them LF0"."""
        if self.kind is LessonPromptKind.ZERO_SHOT:
            return "zero-shot (unambiguous examples only)"
        return f"{self.k} examples, {int(self.k * self.ratio)} of them LF0"


def pool_prompt(lesson: LessonPrompt, pair: AmbiguousPair) -> Prompt:
    """The prompt a template sentence is scored under in this lesson: its zero-shot prompt
    (docs/paper-notes.md §10, the builder's default seed) or the mixed prompt of the lesson's
    ratio, ``k`` and seed (§11; ``int(k·r)`` examples with LF0), in FOL."""
    if lesson.kind is LessonPromptKind.ZERO_SHOT:
        return zero_shot_prompt(pair)
    return mixed_prompt(pair, lesson.ratio, seed=lesson.seed, k=lesson.k)


def describe_prompt(prompt: Prompt) -> str:
    """Which prompt a number was scored under, as a slide says it: "under 10 examples, 3 of them
    LF0" (a mixed prompt: ambiguous examples, some shown with LF0), "under the zero-shot prompt (6
    unambiguous examples, no ambiguous one)", or "under 4 examples" (none ambiguous, an own
    sentence's own)."""
    n = len(prompt.examples)
    labelled = [ex.label for ex in prompt.examples if ex.label is not None]
    examples = f"{n} example{'s' if n != 1 else ''}"
    if labelled:
        lf0 = labelled.count(0)
        return f"under {examples}, {lf0} of them LF0"
    if n and find_pair(prompt.test_utterance) is not None:  # a template sentence's ingredients (§10)
        return f"under the zero-shot prompt ({examples}, none ambiguous)"
    return f"under {examples}, none shown with a reading of an ambiguous sentence" if n else \
        "under a prompt without examples"
