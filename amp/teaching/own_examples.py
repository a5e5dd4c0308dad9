"""Which few-shot examples a teacher's own sentence is parsed with, chosen and said (issue #26 point 6).

An own sentence has no template of its own, so its examples come from somewhere else, and the
class must be told where (the slide once said "PP attachment" for "I saw her duck" because the
examples were silently borrowed from the *closest type*'s pool).  :class:`ExampleChoice` is the
teacher's choice, one of :class:`ExampleSource`:

* ``type``: a mixed prompt (docs/paper-notes.md §11) of a template type's pool — the sentence's
  own type (the one saved, by default :func:`~amp.teaching.own_types.closest_type`) or another;
* ``own examples``: the (sentence, LF) examples typed with the sentence;
* ``library``: other sentences of the teacher's library, each shown with the reading the
  teacher chose for it (LF0 or LF1).

:func:`choice_prompt` builds the prompt (carrying the words of the sentence *and* of its
examples, :mod:`amp.logic.own_words`), :func:`describe_examples` says in one plain sentence
which examples it holds.  Pure functions: the widgets are in ``ui/own/examples.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum

from amp.data.types import display_name
from amp.logic.errors import LFParseError, OwnWordsError
from amp.logic.unknown_words import own_words_of
from amp.prompts import DEFAULT_MIXED_RATIO, EXAMPLES_PER_PROMPT, Prompt, PromptExample
from amp.teaching.errors import OwnSentenceError
from amp.teaching.own_sentences import MAX_EXAMPLES, OwnSentence
from amp.teaching.own_types import closest_type


class ExampleSource(StrEnum):
    """Where an own sentence's few-shot examples come from (see the module docstring)."""

    TYPE = "type"
    OWN = "own examples"
    LIBRARY = "library"


EXAMPLE_SOURCES: tuple[ExampleSource, ...] = tuple(ExampleSource)


@dataclass(frozen=True)
class ExampleChoice:
    """The teacher's choice: ``source``; for ``type`` the template ``type`` (empty: the sentence's
    saved type); for ``library`` the ``picks``, ``(surface, reading index)`` of other sentences."""

    source: ExampleSource = ExampleSource.TYPE
    type: str = ""
    picks: tuple[tuple[str, int], ...] = ()


DEFAULT_CHOICE = ExampleChoice()


def _picked(sentence: OwnSentence, choice: ExampleChoice,
            library: Iterable[OwnSentence]) -> list[tuple[OwnSentence, int]]:
    """The library sentences the choice picks, in the order picked (never the sentence itself)."""
    by_surface = {s.surface: s for s in library}
    out = []
    for surface, idx in choice.picks:
        other = by_surface.get(surface)
        if other is None:
            raise OwnSentenceError("examples", f"{surface!r} is not in your library (any more): pick again")
        if other.surface == sentence.surface:
            raise OwnSentenceError("examples", "a sentence cannot be its own example: pick other sentences")
        if idx not in (0, 1):
            raise OwnSentenceError("examples", f"reading {idx!r} of {surface!r}: choose LF0 or LF1")
        out.append((other, idx))
    if not out:
        raise OwnSentenceError("examples", "no sentences picked from your library: pick at least one, with "
                                           "the reading to show")
    if len(out) > MAX_EXAMPLES:
        raise OwnSentenceError("examples", f"{len(out)} sentences picked: at most {MAX_EXAMPLES} are allowed")
    return out


def choice_prompt(sentence: OwnSentence, choice: ExampleChoice = DEFAULT_CHOICE,
                  library: Iterable[OwnSentence] = ()) -> Prompt:
    """The prompt of ``sentence`` with the chosen examples (its two readings as gold LFs).

    Raises :class:`~amp.teaching.errors.OwnSentenceError` saying what is wrong with the choice
    (no own examples, an unknown type, a picked sentence no longer in ``library``…)."""
    if choice.source == ExampleSource.TYPE:
        kind = choice.type or sentence.type
        typed = sentence if kind == sentence.type else replace(sentence, type=kind)  # checks the type
        return typed.prompt("mixed")
    if choice.source == ExampleSource.OWN:
        return sentence.prompt("own examples")
    picked = _picked(sentence, choice, library)
    examples = tuple(PromptExample(other.surface, other.readings[idx], other.readings[1 - idx], 0 if idx == 0 else 1)
                     for other, idx in picked)
    try:
        words = own_words_of([*sentence.readings, *(e.lf for e in examples)])
    except (LFParseError, OwnWordsError) as exc:
        raise OwnSentenceError("examples", f"the picked sentences' words do not fit together: {exc}") from exc
    lf0, lf1 = sentence.readings  # in the prompt convention (docs/paper-notes.md §16)
    return Prompt(examples, sentence.surface, type=sentence.type, gold_lf0=lf0, gold_lf1=lf1,
                  words=words)


def describe_examples(sentence: OwnSentence, choice: ExampleChoice = DEFAULT_CHOICE,
                      library: Iterable[OwnSentence] = ()) -> str:
    """Which examples the prompt of :func:`choice_prompt` holds, as one plain sentence."""
    if choice.source == ExampleSource.TYPE:
        kind = choice.type or sentence.type
        why = (" (the template type closest to your readings, not your sentence's own ambiguity)"
               if kind == closest_type(sentence.lf0, sentence.lf1) else " (the type you chose)")
        return (f"Few-shot examples: {EXAMPLES_PER_PROMPT} template sentences of {display_name(kind)}{why}, "
                f"{DEFAULT_MIXED_RATIO:.0%} shown with LF0.")
    if choice.source == ExampleSource.OWN:
        return f"Few-shot examples: your own {len(sentence.examples)} example(s) typed with this sentence."
    try:
        picked = _picked(sentence, choice, library)
    except OwnSentenceError as exc:
        return f"Few-shot examples from your library: none usable ({exc})."
    shown = "; ".join(f"“{other.surface}” as LF{idx}" + (f" ({name})" if (name := (other.name0, other.name1)[idx]) else "")
                      for other, idx in picked)
    return f"Few-shot examples: {len(picked)} of your own sentences, each with the reading you chose: {shown}."
