"""The model's uncertainty signals on each detection sentence, and how well each detects ambiguity
(docs/paper-notes.md §22).

**Prompts** (:class:`PromptKind`).  Every sentence of a type is read after the *same* examples, only
the test utterance changing, so the context cannot tell an ambiguous sentence from an unambiguous
one:

* ``zero-shot`` — the zero-shot prompt of docs/paper-notes.md §10 built for the type's first
  ambiguous pair (unambiguous "ingredient" examples only), the prompt the probes read
  (:func:`amp.detection.hidden_states.probe_prompt`);
* ``mixed`` — the mixed prompt of §11 (:func:`amp.prompts.mixed_prompt`, the default ratio 0.3 and
  seed 0, ``k`` = 10 ambiguous examples of the type shown with a reading) whose examples are
  drawn from the type's pool *minus every sentence of the detection set*, so no test sentence is
  shown with a reading.

**Signals** (:class:`Signal`), from one beam search (the search settings' beams, scored by their
sequence probability) and one forced decode per sentence:

* ``semantic_entropy`` — the entropy (nats) of the beams' mass over their canonical meanings
  (:func:`amp.evaluation.semantic_entropy.semantic_entropy`, §17);
* ``top2_gap`` — the top meaning's share of the beam mass minus the second's (the second is 0 when
  the beams hold one meaning);
* ``margin_min_token`` and ``margin_total`` — ``|P(A) − 0.5|`` with P(A) the P(LF0) of §12 (the
  paper's min-token ratio, and the total-probability ratio) where the two readings compared are
  **the two most probable distinct meanings the search found** (A the top one, B the second),
  both forced-decoded under the same prompt.  An unambiguous sentence has no LF1, and a signal
  that used the gold LF1 of the ambiguous ones would need the label it is meant to detect; so
  every sentence, ambiguous or not, is scored on its own search's top two meanings.  When the
  beams hold a single meaning (that reads as an LF) there is no rival to score: the model is
  taken as certain, margin 0.5; when fewer than two meanings read as LFs the margin is unknown.
  (The gold-reading P(LF0) of an ambiguous sentence is what the sweeps report; it is not a
  detector.)

**Direction.**  Each signal's raw value is kept; the detection *score* is oriented so that higher
means "more ambiguous" (:attr:`Signal.higher_is_ambiguous`): semantic entropy as is; the top-2 gap
and both margins negated (a close race between two meanings is the ambiguous sign).

**AUROC.**  Per prompt kind and signal, :func:`amp.detection.auroc.auroc_interval` over every
sentence of a type (train and test parts alike: no signal is trained) and over all types, plus
the overall figure on the test part alone (the sentences the probes are scored on).  A sentence
whose search failed is left out of its signals' AUROCs (and the report is then not cached, so a
rerun retries it).

Model calls go through :func:`amp.parser.batch.run_batch` (each parse and score cached by the
parser); the whole :class:`SignalsReport` is cached too, under a key of the model's runtime, the
set, the prompts' kinds and the search (the code digest is in every key).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from amp.data.generate import pairs
from amp.detection.auroc import auroc_interval
from amp.detection.dataset import DetectionItem, DetectionPart, DetectionSet
from amp.detection.errors import DetectionError
from amp.detection.hidden_states import probe_prompt
from amp.errors import CacheError
from amp.evaluation.bootstrap import DEFAULT_RESAMPLES, Interval
from amp.evaluation.matching import Match
from amp.evaluation.semantic_entropy import beam_shares, semantic_entropy
from amp.parser.batch import run_batch
from amp.parser.core.errors import SearchCancelled
from amp.parser.core.results import BatchItem, BatchItemResult
from amp.parser.search.settings import SearchSettings
from amp.prompts import DEFAULT_MIXED_RATIO, DEFAULT_MIXED_SEED, mixed_prompt
from amp.records import JsonFloat, JsonRecord

if TYPE_CHECKING:
    from amp.parser.parser import Parser

__all__ = [
    "ALL_TYPES",
    "PromptKind",
    "SentenceSignals",
    "Signal",
    "SignalAuroc",
    "SignalsReport",
    "detection_prompt",
    "run_signals",
    "signal_aurocs",
]

#: The ``type`` of an AUROC over every type together.
ALL_TYPES = "all"


class PromptKind(StrEnum):
    """The prompt a sentence is read in (module docstring)."""

    ZERO_SHOT = "zero-shot"
    MIXED = "mixed"


class Signal(StrEnum):
    """An uncertainty signal (module docstring); the value names its raw value in :attr:`SentenceSignals.values`."""

    SEMANTIC_ENTROPY = "semantic_entropy"
    MARGIN_MIN_TOKEN = "margin_min_token"
    MARGIN_TOTAL = "margin_total"
    TOP2_GAP = "top2_gap"

    @property
    def higher_is_ambiguous(self) -> bool:
        """Whether a higher raw value means "more ambiguous" (else the score is the value negated)."""
        return self is Signal.SEMANTIC_ENTROPY

    @property
    def label(self) -> str:
        return _LABELS[self]

    def score(self, value: float) -> float:
        """The detection score of a raw value: higher = more ambiguous."""
        return value if self.higher_is_ambiguous else -value


_LABELS: dict[Signal, str] = {
    Signal.SEMANTIC_ENTROPY: "semantic entropy over meanings",
    Signal.MARGIN_MIN_TOKEN: "|P(top meaning) − 0.5|, min-token (paper)",
    Signal.MARGIN_TOTAL: "|P(top meaning) − 0.5|, total probability",
    Signal.TOP2_GAP: "top-2 meaning gap of the beam mass",
}


@dataclass(frozen=True)
class SentenceSignals(JsonRecord):
    """One sentence's signals under one prompt: ``values`` maps each :class:`Signal` to its raw value
    (NaN where unknown); ``meanings`` the number of distinct meanings among the beams, ``top`` the
    texts of the two most probable (one when there is one); ``error`` why the search failed."""

    sentence: str
    type: str
    ambiguous: bool
    part: DetectionPart
    prompt: PromptKind
    values: dict[Signal, JsonFloat]
    meanings: int = 0
    top: tuple[str, ...] = ()
    error: str | None = None

    def score(self, signal: Signal) -> float:
        """The oriented score of ``signal`` (NaN where unknown)."""
        return signal.score(float(self.values.get(signal, math.nan)))


@dataclass(frozen=True)
class SignalAuroc(JsonRecord):
    """How well ``signal`` under ``prompt`` detects ambiguity on ``type`` (:data:`ALL_TYPES`: every
    type) in ``part`` (``all``, or ``test``: the probes' test sentences): the AUROC and its interval."""

    signal: Signal
    prompt: PromptKind
    type: str
    part: str
    auroc: Interval


@dataclass(frozen=True)
class SignalsReport(JsonRecord):
    """Every sentence's signals under each prompt kind and the AUROCs (module docstring)."""

    model: str
    prompts: tuple[PromptKind, ...]
    sentences: tuple[SentenceSignals, ...]
    aurocs: tuple[SignalAuroc, ...]
    beams: int
    seed: int
    resamples: int

    def auroc(self, signal: Signal, prompt: PromptKind, type: str = ALL_TYPES, part: str = "all") -> Interval | None:
        """The AUROC row asked for, or ``None``."""
        return next((a.auroc for a in self.aurocs
                     if (a.signal, a.prompt, a.type, a.part) == (signal, prompt, type, part)), None)

    def scores(self, signal: Signal, prompt: PromptKind) -> tuple[tuple[float, ...], tuple[bool, ...]]:
        """The oriented scores and labels (ambiguous) of the sentences with a value, for ROC curves."""
        rows = [(s.score(signal), s.ambiguous) for s in self.sentences
                if s.prompt == prompt and not math.isnan(s.score(signal))]
        return tuple(r[0] for r in rows), tuple(r[1] for r in rows)


# --- prompts ---------------------------------------------------------------------------------------


def detection_prompt(sentence: str, type_id: str, kind: PromptKind, dataset: DetectionSet) -> str:
    """The rendered prompt ``sentence`` is read in under ``kind`` (module docstring)."""
    kind = PromptKind(kind)
    if kind is PromptKind.ZERO_SHOT:
        return probe_prompt(sentence, type_id)
    found = pairs(type_id)
    if not found:
        raise DetectionError(f"type {type_id!r} has no ambiguous pair to build its mixed prompt from")
    excluded = {item.sentence for item in dataset.items}
    shown = [p for p in found if p.surface not in excluded]
    prompt = mixed_prompt(found[0], DEFAULT_MIXED_RATIO, seed=DEFAULT_MIXED_SEED, pool_pairs=shown)
    return prompt.with_test(sentence).render()


# --- running ---------------------------------------------------------------------------------------


def _check_prompts(prompts: Iterable[PromptKind | str]) -> tuple[PromptKind, ...]:
    out: list[PromptKind] = []
    for p in prompts:
        try:
            kind = PromptKind(p)
        except ValueError:
            raise DetectionError(f"unknown prompt kind {p!r}; choose from {', '.join(PromptKind)}") from None
        if kind not in out:
            out.append(kind)
    if not out:
        raise DetectionError("choose at least one prompt kind")
    return tuple(out)


def _ids(kind: PromptKind, i: int) -> str:
    return f"{kind}:{i}"


def _run(parser: Parser, items: list[BatchItem], search: SearchSettings, step: Callable[[], None],
         cancelled: Callable[[], bool] | None) -> dict[str, BatchItemResult]:
    out: dict[str, BatchItemResult] = {}
    if not items:
        return out
    run = run_batch(parser, items, search, cancel=cancelled, label="ambiguity detection")
    for result in run:
        out[result.id] = result
        step()
    if len(out) < len(items):
        raise SearchCancelled("the detection signals were cancelled")
    return out


def _meanings(result: BatchItemResult, item: DetectionItem) -> tuple[dict[Signal, float], int, tuple[str, ...]]:
    """Semantic entropy, top-2 gap, the number of meanings and the two top meanings' texts."""
    beams = result.parse.beams if result.parse is not None else ()
    if not beams:
        raise DetectionError("the search returned no beam")
    texts = [str(b.text) for b in beams]
    weights = beam_shares([b.logprob for b in beams]) or None
    gold0 = item.lfs[0]
    gold1 = item.lfs[1] if len(item.lfs) > 1 else None
    se = semantic_entropy(texts, weights, gold0, gold1)
    classes = se.classes
    second = classes[1].mass if len(classes) > 1 else 0.0
    readable = [c.text for c in classes if c.match != Match.UNPARSEABLE][:2]
    values = {Signal.SEMANTIC_ENTROPY: se.entropy, Signal.TOP2_GAP: classes[0].mass - second}
    return values, se.n_meanings, tuple(readable)


# long: one pass over prompts × sentences (search, forced pair, signals) with its progress, cancel and cache steps
def run_signals(
    parser: Parser, dataset: DetectionSet, *, prompts: Sequence[PromptKind | str] = tuple(PromptKind),
    search: SearchSettings | None = None, seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
    progress: Callable[[int, int], None] | None = None, cancelled: Callable[[], bool] | None = None,
) -> SignalsReport:
    """Every sentence's signals under each prompt kind and their AUROCs (module docstring).

    ``progress(done, total)`` counts model results (a search per sentence and prompt, then a forced
    decode per sentence with two meanings); ``cancelled()`` stops the run
    (:class:`~amp.parser.core.errors.SearchCancelled`).  ``seed``/``resamples``: the bootstrap's.
    """
    kinds = _check_prompts(prompts)
    search = SearchSettings.of(search)
    if not dataset.items:
        raise DetectionError("the detection set is empty")
    digest = hashlib.sha256(dataset.to_json()).hexdigest()
    key = parser.cache_key("detection-signals", dataset=digest, prompts=[str(k) for k in kinds],
                           search=search.as_dict(), seed=int(seed), resamples=int(resamples))
    cache = parser.cache
    stored = cache.get(key) if cache is not None else None
    if stored is not None and cache is not None:
        try:
            return SignalsReport.from_dict(stored)
        except (TypeError, ValueError):
            cache.discard(key, "does not rebuild into a signals report")
    items = dataset.items
    texts = {(kind, i): detection_prompt(item.sentence, item.type, kind, dataset)
             for kind in kinds for i, item in enumerate(items)}
    total = [len(texts) * 2]  # a search each, and (at most) a forced decode each
    done = [0]

    def step() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total[0])

    if progress is not None:
        progress(0, total[0])
    searched = _run(parser, [BatchItem(id=_ids(k, i), prompt=t, parse=True, score=False)
                             for (k, i), t in texts.items()], search, step, cancelled)
    partial: dict[tuple[PromptKind, int], tuple[dict[Signal, float], int, tuple[str, ...], str | None]] = {}
    for (kind, i), _ in texts.items():
        result = searched[_ids(kind, i)]
        try:
            if result.error is not None:
                raise DetectionError(result.error)
            values, n, top = _meanings(result, items[i])
            partial[(kind, i)] = (values, n, top, None)
        except (DetectionError, ValueError) as exc:
            partial[(kind, i)] = ({}, 0, (), str(exc))
    to_score = [BatchItem(id=_ids(k, i), prompt=texts[(k, i)], lf0=top[0], lf1=top[1], parse=False, score=True)
                for (k, i), (_, _, top, err) in partial.items() if err is None and len(top) == 2]
    total[0] = len(texts) + len(to_score)
    scored = _run(parser, to_score, search, step, cancelled)
    sentences: list[SentenceSignals] = []
    for (kind, i), (values, n, top, err) in partial.items():
        item = items[i]
        values = dict(values)
        if err is None:
            values.update(_margins(scored.get(_ids(kind, i)), n, len(top)))
        full = {s: float(values.get(s, math.nan)) for s in Signal}
        sentences.append(SentenceSignals(item.sentence, item.type, item.ambiguous, item.part, kind, full, n, top, err))
    report = SignalsReport(model=parser.identity, prompts=kinds, sentences=tuple(sentences),
                           aurocs=signal_aurocs(sentences, kinds, seed=seed, resamples=resamples),
                           beams=search.beams, seed=int(seed), resamples=int(resamples))
    if cache is not None and not any(s.error for s in sentences):  # a failed search is retried next time
        with contextlib.suppress(CacheError):  # a cache that cannot be written: the report is still good
            cache.set(key, report.to_dict(), model=parser.identity)
    return report


def _margins(result: BatchItemResult | None, meanings: int, readable: int) -> dict[Signal, float]:
    """``|P(A) − 0.5|`` of both measures: 0.5 (certain) when the beams hold one meaning and it reads as
    an LF; unknown (left out, NaN) when fewer than two meanings read as LFs or the forced decode failed."""
    if meanings == 1 and readable == 1:
        return {Signal.MARGIN_MIN_TOKEN: 0.5, Signal.MARGIN_TOTAL: 0.5}
    pair = None if result is None or result.error is not None or readable < 2 else result.pair
    if pair is None:
        return {}
    return {Signal.MARGIN_MIN_TOKEN: abs(float(pair.p_lf0) - 0.5),
            Signal.MARGIN_TOTAL: abs(float(pair.p_lf0_total) - 0.5)}


def signal_aurocs(sentences: Sequence[SentenceSignals], prompts: Sequence[PromptKind], *, seed: int = 0,
                  resamples: int = DEFAULT_RESAMPLES) -> tuple[SignalAuroc, ...]:
    """Per prompt kind and signal: the AUROC per type and over all types (every part), and over all
    types on the test part (module docstring).  Sentences without a value are left out."""
    out: list[SignalAuroc] = []
    types = list(dict.fromkeys(s.type for s in sentences))
    for kind in prompts:
        for signal in Signal:
            rows = [s for s in sentences if s.prompt == kind and not math.isnan(s.score(signal))]
            groups: list[tuple[str, str, list[SentenceSignals]]] = [
                *((t, "all", [s for s in rows if s.type == t]) for t in types),
                (ALL_TYPES, "all", rows),
                (ALL_TYPES, str(DetectionPart.TEST), [s for s in rows if s.part == DetectionPart.TEST]),
            ]
            for type_id, part, group in groups:
                interval = auroc_interval([s.score(signal) for s in group], [s.ambiguous for s in group],
                                          seed=seed, resamples=resamples)
                out.append(SignalAuroc(signal, kind, type_id, part, interval))
    return tuple(out)
