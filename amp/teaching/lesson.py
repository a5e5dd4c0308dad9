"""What the teaching pages say about one ambiguous sentence, without any widget.

A sentence's two readings in words (paper Table 1 labels, read from the ambiguity-type registry,
and paraphrases, through :mod:`amp.teaching.paraphrase`), the model's parse and P(LF0) for it
under the lesson's one prompt (:mod:`amp.teaching.lesson_prompt`; P(LF0) where the readings part,
docs/paper-notes.md §12), which reading the model prefers, and the cache keys a demo pack of chosen
sentences exports.  Pure functions: the Streamlit glue (session memo,
spinners, error boxes) lives in ``ui/shared/readings.py``, ``ui/classroom/model_reveal.py`` and
``ui/classroom/demo_pack.py``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from amp.data.generate import AmbiguousPair, find_pair
from amp.data.types import display_name
from amp.errors import AmpError
from amp.evaluation.matching import is_a_reading, match_lf
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.evaluation.verdict import (
    VERDICT_MEASURE,
    Preference,
    Verdict,
    degenerate_sentence,
    preferred_index,
    scores_sentence,
    verdict,
)
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.prompts import (
    DEFAULT_MIXED_RATIO,
    DEFAULT_MIXED_SEED,
    EXAMPLES_PER_PROMPT,
    Prompt,
    mixed_prompt,
    zero_shot_prompt,
)
from amp.teaching.errors import PackSelectionEmpty
from amp.teaching.lesson_prompt import LessonPrompt, describe_prompt, pool_prompt
from amp.teaching.own_library import find_own
from amp.teaching.paraphrase import interpretation_label, paraphrases, verbalise_lf
from amp.teaching.poll_records import PollItem

if TYPE_CHECKING:
    from amp.parser import Parser
    from amp.teaching.own_sentences import OwnSentence

#: A lesson's prompt until the teacher chooses one: the default mixed prompt.
DEFAULT_LESSON = LessonPrompt()

__all__ = [
    "DEFAULT_LESSON",
    "NOT_RUN",
    "item_prompt",
    "reveal_under",
    "PackSelectionEmpty",
    "SentenceKeys",
    "explain_parse",
    "ModelReveal",
    "model_choice_text",
    "model_reading",
    "model_reveal",
    "reveal_verdict",
    "sentence_prompt",
    "model_p_lf0",
    "own_sentence",
    "pool_pair",
    "sentence_item",
    "preferred_reading",
    "reading_name",
    "readings_in_words",
    "sentence_keys",
]


# --- a sentence's readings in words ------------------------------------------------------------


def pool_pair(surface: str) -> AmbiguousPair | None:
    """The pool pair of a sentence, or ``None`` (not in any pool, or the pools cannot be built)."""
    try:
        return find_pair(surface)
    except AmpError:
        return None


def readings_in_words(pair_or_surface: AmbiguousPair | str) -> tuple[str, str] | None:
    """The (LF0, LF1) paraphrases (paper Table 1) — for a teacher's own sentence the teacher's —
    or ``None`` when the sentence has none (in no pool and not an own sentence, or a template
    without paraphrases it can be verbalised from)."""
    if isinstance(pair_or_surface, str) and pool_pair(pair_or_surface) is None:
        own = own_sentence(pair_or_surface)
        return (own.paraphrase0, own.paraphrase1) if own is not None else None
    try:
        return paraphrases(pair_or_surface)
    except (AmpError, KeyError, ValueError):
        return None


def own_sentence(surface: str) -> OwnSentence | None:
    """The teacher's own sentence with this surface in the default library (:mod:`amp.teaching.own_library`),
    or ``None`` (not there, or the library cannot be read: the Own sentences page says why)."""

    try:
        return find_own(surface)
    except AmpError:
        return None


def sentence_item(surface: str, model_p_lf0: float | None = None) -> PollItem | None:
    """A sentence as a class sees it (readings in words and their names): a pool sentence, else a
    teacher's own sentence from the library, else ``None``."""
    pair = pool_pair(surface)
    if pair is not None:
        try:
            return PollItem.from_pair(pair, model_p_lf0)
        except (AmpError, KeyError, ValueError):
            return None
    own = own_sentence(surface)
    if own is None:
        return None
    return replace(own.poll_item(model_p_lf0), name0=own.name0, name1=own.name1)


def reading_name(type_: str, idx: int) -> str:
    """The short name of reading ``idx`` of a type ("possessive", "instrument"; paper Table 1),
    ``"reading <idx>"`` for an unregistered type or an index other than 0/1."""
    try:
        return interpretation_label(type_, idx)
    except (AmpError, KeyError, ValueError):
        return f"reading {idx}"


# --- the model's P(LF0) ------------------------------------------------------------------------


def item_prompt(item: PollItem | str, lesson: LessonPrompt = DEFAULT_LESSON,
                own_prompt: Prompt | None = None) -> Prompt | None:
    """The one prompt a class sentence is scored under (:mod:`amp.teaching.lesson_prompt`).

    A poll item that carries its prompt: that one (every page then scores it alike, also after a
    reload).  An item stored before items carried one, with the model's numbers: the prompt those
    were computed under then (a template sentence's zero-shot prompt, an own sentence's default
    mixed prompt).  Otherwise, for a template sentence, the lesson's prompt
    (:func:`~amp.teaching.lesson_prompt.pool_prompt`); for a teacher's own sentence, ``own_prompt``
    (the examples chosen for it, :mod:`amp.teaching.own_examples`) or its default mixed prompt.
    ``None`` when the sentence is in no pool nor the library."""
    surface = item if isinstance(item, str) else item.surface
    if isinstance(item, PollItem):
        if item.prompt is not None:
            return item.prompt
        legacy = item.model_p_lf0 is not None or bool(item.model_match)
    else:
        legacy = False
    pair = pool_pair(surface)
    if pair is not None:
        return zero_shot_prompt(pair) if legacy else pool_prompt(lesson, pair)
    own = own_sentence(surface)
    if own is None:
        return None
    if own_prompt is not None and not legacy and own_prompt.gold_lf0 and own_prompt.gold_lf1:
        return own_prompt
    return own.prompt("mixed")


def model_p_lf0(parser: Parser, surface: str, lesson: LessonPrompt = DEFAULT_LESSON) -> float | None:
    """The model's P(LF0) of a class sentence under the lesson's prompt (:func:`item_prompt`):
    P(LF0) where the two readings part (:attr:`~amp.parser.core.results.PairScore.p_lf0_parted`,
    docs/paper-notes.md §12), the measure the explorer's verdicts use; cached by the parser.

    ``None`` when the sentence is in no pool nor the library (the model is then never asked) or the
    score has no P(LF0).  Errors of the model itself (:class:`~amp.errors.AmpError` subclasses
    from loading or a remote server) propagate: the caller decides how a class goes on without it.
    """
    prompt = item_prompt(surface, lesson)
    if prompt is None or prompt.gold_lf0 is None or prompt.gold_lf1 is None:
        return None
    score = parser.score_pair(prompt.render(), prompt.gold_lf0, prompt.gold_lf1, words=prompt.words)
    return _p(score.p_lf0_parted)


def _p(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def preferred_reading(p_lf0: float | None) -> int | None:
    """The reading the model's scores favour: 0 (LF0) or 1; ``None`` without a score or when
    undecided (within :data:`amp.evaluation.verdict.UNDECIDED_BAND` of 0.5)."""
    return preferred_index(p_lf0)


def model_choice_text(p_lf0: float | None) -> str:
    """Which reading the model scores higher, as one plain sentence
    (:func:`amp.evaluation.verdict.scores_sentence`: LF0, LF1, undecided or unavailable)."""
    return scores_sentence(p_lf0)


@dataclass(frozen=True)
class ModelReveal:
    """What the model did with one sentence under one prompt: its top beam's match against the two
    readings (:class:`~amp.evaluation.matching.Match` value), P(LF0) where the readings part (the
    explorer's measure), the paper's min-token P(LF0) beside it, the token both readings share
    when that one is pinned at 0.50 by it, and the prompt (any number ``None`` when unknown)."""

    match: str | None
    p_lf0: float | None
    parse: str | None = None
    paper_p_lf0: float | None = None
    shared_token: str | None = None
    prompt: Prompt | None = None

    @property
    def prompt_name(self) -> str:
        """Which prompt the numbers are under, as the slide says it ("under 10 examples, 3 of them LF0")."""
        return describe_prompt(self.prompt) if self.prompt is not None else ""


def reveal_under(parser: Parser, prompt: Prompt) -> ModelReveal:
    """The model's parse *and* scores of a prompt's test sentence (its gold LFs are the two
    readings): one prompt pass, cached by the parser, default search settings.  What the
    Presentation's reveal, the poll's "Model P(LF0)" and Parse & inspect's scores agree on."""
    lf0, lf1 = prompt.gold_lf0 or "", prompt.gold_lf1 or ""
    ((result, score),) = parser.parse_and_score_many([(prompt.render(), lf0, lf1)], words=prompt.words)
    top = result.beams[0].text if result.beams else None
    if score is None:
        return ModelReveal(match_lf(top, lf0, lf1).value, None, top, prompt=prompt)
    return ModelReveal(match_lf(top, lf0, lf1).value, _p(score.p_lf0_parted), top, _p(score.p_lf0),
                       score.shared_minimum, prompt)


def model_reveal(parser: Parser, surface: str | PollItem, own_prompt: Prompt | None = None, *,
                 lesson: LessonPrompt = DEFAULT_LESSON) -> ModelReveal | None:
    """:func:`reveal_under` the sentence's prompt (:func:`item_prompt`: the item's own, else the
    lesson's, or ``own_prompt`` — the examples the teacher chose — for an own sentence).  ``None``
    when the sentence is in no pool nor the library."""
    prompt = item_prompt(surface, lesson, own_prompt)
    if prompt is None:
        return None
    return reveal_under(parser, prompt)


def slide_label(item: PollItem) -> str:
    """What a slide says the sentence is: its ambiguity type's name for a template sentence,
    "your own sentence" for a teacher's (whose type only names where its examples came from)."""
    if pool_pair(item.surface) is None and own_sentence(item.surface) is not None:
        return "your own sentence"
    return display_name(item.type)


#: What a class sentence's verdict says when the model was not run on it at all.
NOT_RUN = "The model was not run on this sentence."


def reveal_verdict(item: PollItem, match: str | None, p_lf0: float | None,
                   reveal: ModelReveal | None = None) -> Verdict:
    """The verdict on a class sentence in its readings' own names and paraphrases
    (:func:`amp.evaluation.verdict.verdict`): what the model wrote, then what it scores, naming the
    measure (P(LF0) where the readings part; the paper's min-token P(LF0) for an item stored
    before polls named their prompt) and, from ``reveal``, why the paper's P(LF0) is pinned at 0.5
    when a token both readings share decides it; one sentence, :data:`NOT_RUN`, when there is
    neither a parse nor a score."""
    if match is None and p_lf0 is None:
        return Verdict(None, None, None, Preference.UNAVAILABLE, NOT_RUN, "")
    legacy = reveal is None and item.prompt is None
    v = verdict(match, p_lf0, names=(item.reading_name(0), item.reading_name(1)),
                paraphrases=(item.paraphrase0, item.paraphrase1),
                measure=PLf0Measure.PAPER if legacy else VERDICT_MEASURE)
    if reveal is not None and reveal.shared_token is not None and reveal.paper_p_lf0 is not None:
        v = replace(v, scores_text=f"{v.scores_text} {degenerate_sentence(reveal.shared_token, reveal.paper_p_lf0)}",
                    p_lf0_paper=reveal.paper_p_lf0, shared_minimum=reveal.shared_token)
    return v


def sentence_prompt(sentence: str | AmbiguousPair, mode: str = "mixed", *, fmt: str = DEFAULT_FORMAT,
                    k: int = EXAMPLES_PER_PROMPT) -> Prompt:
    """The default prompt for a pool sentence: mixed (:data:`~amp.prompts.DEFAULT_MIXED_RATIO`,
    ``k`` examples, :data:`~amp.prompts.DEFAULT_MIXED_SEED`) or ``"zero-shot"`` (its ingredients,
    the same seed, FOL)."""
    if mode == "zero-shot":
        return zero_shot_prompt(sentence, seed=DEFAULT_MIXED_SEED)
    return mixed_prompt(sentence, DEFAULT_MIXED_RATIO, seed=DEFAULT_MIXED_SEED, k=k, fmt=fmt)


def model_reading(paraphrases: tuple[str, str], p_lf0: float | None,
                  match: str | None = None) -> tuple[int | None, str]:
    """The reveal in words: (the reading shown — what the model wrote if it wrote one, else the
    one it scores higher, ``None`` for neither/undecided — and the verdict's plain text,
    :func:`amp.evaluation.verdict.verdict`)."""
    v = verdict(match, p_lf0, paraphrases=paraphrases)
    shown = v.wrote_index if match is not None else preferred_index(p_lf0)
    return shown, v.text


def explain_parse(pair: AmbiguousPair, predicted: str | None, *, fmt: str = DEFAULT_FORMAT,
                  item: PollItem | None = None) -> str:
    """The model's parse in words, against the sentence's two readings (issue #11 point 4).

    A parse that is one reading is that reading's paraphrase; one that is neither is compared
    with each reading with two of its words (nouns, names) swapped — "the same as *instrument*,
    but with *boy* and *man* swapped" — and otherwise verbalised as it stands
    (:func:`amp.teaching.paraphrase.verbalise_lf`).  Matching is the metrics' (logical mode).
    ``item``: the readings' names and paraphrases when they are not the type's (a teacher's own
    sentence, :func:`sentence_item`).
    """
    match = match_lf(predicted, pair.lf0.lf, pair.lf1.lf, fmt=fmt)
    texts = (item.paraphrase0, item.paraphrase1) if item is not None else paraphrases(pair)
    names = [item.reading_name(i) if item is not None else reading_name(pair.type, i) for i in (0, 1)]
    if is_a_reading(match):
        idx = 1 if match == "lf1" else 0
        return f"{names[idx]}: {texts[idx]}"
    if match == "unparseable" or predicted is None:
        return "not a logical form: the parse does not read as one"
    for idx, reading in enumerate((pair.lf0.lf, pair.lf1.lf)):
        swap = _swapped_words(reading, predicted, fmt)
        if swap is not None:
            return f"neither reading: the same as {names[idx]}, but with {swap[0]} and {swap[1]} swapped"
    try:
        return f"neither reading: {verbalise_lf(predicted, fmt)}"
    except AmpError:
        return "neither reading"


def _swapped_words(reading: str, predicted: str, fmt: str) -> tuple[str, str] | None:
    """Two words (one-place predicates or names) whose exchange turns ``reading`` into ``predicted``."""
    words = sorted({m.group(1) or m.group(2) for m in _WORD_RE.finditer(reading)})
    for i, a in enumerate(words):
        for b in words[i + 1 :]:
            if match_lf(predicted, _exchange(reading, a, b), None, fmt=fmt) == "lf0":
                return a, b
    return None


def _exchange(text: str, a: str, b: str) -> str:
    """``text`` with the whole words ``a`` and ``b`` exchanged."""
    other = {a: b, b: a}
    return re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: other[m.group(1)], text)


#: One-place predicates (``boy(`` followed by a single variable) and capitalised names.
_WORD_RE = re.compile(r"\b([a-z]+)(?=\(\s*[a-z]\s*\))|\b([A-Z][a-z]+)\b")


# --- demo packs of chosen sentences ------------------------------------------------------------


@dataclass(frozen=True)
class SentenceKeys:
    """The cache keys behind chosen sentences (no duplicates, in order), the sentences that are
    in no pool nor the own-sentence library, and the chosen own sentences (a pack carries them)."""

    keys: tuple[str, ...]
    unknown: tuple[str, ...]
    own: tuple[OwnSentence, ...] = ()

    def require_keys(self) -> tuple[str, ...]:
        """The keys; :class:`PackSelectionEmpty` when nothing is cached for these sentences (and
        there is no own sentence to carry)."""
        if not self.keys and not self.own:
            raise PackSelectionEmpty("nothing is cached for these sentences yet: run them on the "
                                     "Presentation, Class poll or Parse page first")
        return self.keys


def sentence_keys(parser: Parser | None, text: str, built: Prompt | None = None, *,
                  built_fmt: str = DEFAULT_FORMAT, lesson: LessonPrompt = DEFAULT_LESSON) -> SentenceKeys:
    """Cache keys behind the sentences typed one per line (never computes, never loads a model).

    For each pool sentence: the keys of its results under the lesson's prompt (what the poll and
    presentation pages score, :func:`item_prompt`) and under its zero-shot prompt (what polls
    scored before they named their prompt); for a teacher's own sentence those of its default
    mixed prompt (what they score for it, with its own words); and, when ``built`` tests that
    sentence, of the built prompt's (its LFs in ``built_fmt``).  Without a parser only the unknown
    and the own sentences are found.
    """
    keys: list[str] = []
    unknown: list[str] = []
    own: list[OwnSentence] = []
    for sentence in (line.strip() for line in text.splitlines()):
        if not sentence:
            continue
        pair = pool_pair(sentence)
        mine = own_sentence(sentence) if pair is None else None
        if pair is None and mine is None:
            unknown.append(sentence)
            continue
        if mine is not None:
            own.append(mine)
        if parser is None:
            continue
        if pair is not None:
            for prompt in (pool_prompt(lesson, pair), zero_shot_prompt(pair)):
                keys += parser.result_keys(prompt.render(), pair.lf0.lf, pair.lf1.lf)
        elif mine is not None:
            default = mine.prompt("mixed")
            keys += parser.result_keys(default.render(), default.gold_lf0, default.gold_lf1, words=default.words)
        if built is not None and built.test_utterance in (sentence, mine.surface if mine else None):
            keys += parser.result_keys(built.render(), built.gold_lf0, built.gold_lf1, fmt=built_fmt,
                                       words=built.words)
    return SentenceKeys(tuple(dict.fromkeys(keys)), tuple(unknown), tuple(own))
