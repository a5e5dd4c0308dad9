"""The lesson's one prompt (amp.teaching.lesson_prompt): the choice is validated once, and a
prompt is named as a slide says it (issue #40 point 3)."""

from __future__ import annotations

import pytest

from amp.data import generate as gen
from amp.prompts import Prompt, PromptExample, mixed_prompt, zero_shot_prompt
from amp.teaching.errors import LessonPromptError
from amp.teaching.lesson_prompt import LessonPrompt, LessonPromptKind, describe_prompt, pool_prompt

TELESCOPE = "the boy saw the man with the telescope"


@pytest.mark.parametrize(("fields", "what"), [
    ({"kind": "few-shot"}, "choose one of zero-shot, mixed"),
    ({"ratio": 1.5}, "ratio"),
    ({"ratio": "half"}, "ratio"),
    ({"k": 0}, "examples k"),
    ({"k": True}, "examples k"),
    ({"seed": -1}, "seed"),
])
def test_a_choice_that_cannot_be_used_is_a_typed_error_naming_the_field(fields: dict, what: str) -> None:
    with pytest.raises(LessonPromptError, match=what):
        LessonPrompt(**fields)


def test_the_default_is_the_mixed_prompt_every_page_gave_and_its_label() -> None:
    assert LessonPrompt() == LessonPrompt(LessonPromptKind.MIXED, 0.3, 10, 0)
    assert LessonPrompt().label == "10 examples, 3 of them LF0"
    assert LessonPrompt(LessonPromptKind.ZERO_SHOT).label == "zero-shot (unambiguous examples only)"


def test_pool_prompts_and_their_names() -> None:
    pair = gen.find_pair(TELESCOPE)
    assert pair is not None
    mixed = pool_prompt(LessonPrompt(ratio=0.25, k=4, seed=2), pair)
    assert mixed == mixed_prompt(pair, 0.25, seed=2, k=4)
    assert describe_prompt(mixed) == "under 4 examples, 1 of them LF0"  # int(4 × 0.25) shown with LF0
    zero = pool_prompt(LessonPrompt(LessonPromptKind.ZERO_SHOT), pair)
    assert zero == zero_shot_prompt(pair)
    assert describe_prompt(zero) == f"under the zero-shot prompt ({len(zero.examples)} examples, none ambiguous)"
    own = Prompt((PromptExample("I saw a duck", "exists x . duck(x)"),), "I saw her duck")
    assert describe_prompt(own) == "under 1 example, none shown with a reading of an ambiguous sentence"
    assert describe_prompt(Prompt((), "I saw her duck")) == "under a prompt without examples"
