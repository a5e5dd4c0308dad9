"""Sweep running: planned items through the parser, one :class:`SweepRecord` per item as it ends.

:func:`run_items` streams :class:`~amp.evaluation.sweep_plan.SweepItem` s through
:func:`amp.parser.batch.run_batch` and yields one :class:`SweepRecord` per item as it finishes —
beams, which gold LF the top beam is (:func:`amp.evaluation.matching.match_lf`), the ranks of
both gold LFs among the beams, and P(LF0) from the forced decode.  Cancellable, with a progress
callback.  :func:`rematch` re-labels stored records in another canonical mode without a model.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal, Unpack

from amp.evaluation.errors import ExperimentError
from amp.evaluation.matching import MATCHES, Match, is_lf0_like, is_lf1_like, match_lf
from amp.evaluation.semantic_entropy import beam_shares
from amp.evaluation.sweep_plan import FewShotConfig, SweepItem, SweepSentence, ZeroShotConfig, plan
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, check_mode
from amp.parser.batch import run_batch
from amp.parser.core.results import BatchItem
from amp.parser.search.settings import SearchKeywords, SearchSettings

if TYPE_CHECKING:
    from amp.parser.core.results import BatchItemResult
    from amp.parser.parser import Parser

__all__ = [
    "MATCH_LABELS",
    "RECORD_COLUMNS",
    "SweepMatch",
    "SweepRecord",
    "match_fields",
    "optional_float",
    "record_from_result",
    "rematch",
    "run_items",
    "run_sweep",
]

SweepMatch = Match | Literal["missing"]
#: Possible :attr:`SweepRecord.match` values: the labels of
#: :func:`~amp.evaluation.matching.match_lf` (``lf0``, ``lf1``, ``both``, ``neither``,
#: ``unparseable``) for the top beam, or ``missing`` — no beams at all (parsing skipped or
#: failed; excluded from accuracies).
MATCH_LABELS: tuple[str, ...] = (*MATCHES, "missing")


@dataclass(frozen=True)
class SweepRecord(SweepSentence):
    """The outcome of one :class:`SweepItem`: plain data, one row of :func:`~amp.evaluation.sweep_summary.records_frame`.

    ``beams`` are the beam texts, best first; ``top1`` the best one (None without beams).
    ``match`` says which gold LF ``top1`` equals after canonicalisation in ``mode`` (see
    :data:`MATCH_LABELS`); ``lf0_rank``/``lf1_rank`` are the 1-based positions of the gold LFs
    among the beams (None if absent), so "LF in the top k" is ``rank <= k`` (ZM_k, §13.3).
    ``p_lf0`` is P(LF0) = m0 / (m0 + m1) with m the minimum token probability of each LF's forced
    decode under the item's prompt (paper §4, FIM; §12), ``p_lf0_total`` the same with total
    sequence probabilities (what the paper's Fig. 3 plotted), ``p_lf0_parted`` the min-token one
    over the tokens from where the readings part (the explorer's verdicts' measure, §12; the
    reproduction's tables and figures keep ``p_lf0``), ``min_prob_lf0/lf1`` the paper's minima.
    ``cached`` says the result came from the on-disk cache; ``error`` holds the failure message
    of an item that could not be run (such records are left out of the summaries).
    ``beam_shares`` is each beam's share of the beams' probability mass
    (:func:`amp.evaluation.semantic_entropy.beam_shares`; empty where the beams carry no
    probability, e.g. older records: the beams then weigh equally in the semantic entropy).
    """

    beams: tuple[str, ...] = ()
    top1: str | None = None
    match: SweepMatch = "missing"
    lf0_rank: int | None = None
    lf1_rank: int | None = None
    p_lf0: float | None = None
    p_lf0_total: float | None = None
    p_lf0_parted: float | None = None
    min_prob_lf0: float | None = None
    min_prob_lf1: float | None = None
    cached: bool = False
    error: str | None = None
    fmt: str = DEFAULT_FORMAT
    mode: str = DEFAULT_MODE
    beam_shares: tuple[float, ...] = ()


#: Columns of :func:`~amp.evaluation.sweep_summary.records_frame`, in order (the :class:`SweepRecord` fields).
RECORD_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(SweepRecord))


def match_fields(beams: Sequence[str], lf0: str, lf1: str, mode: str, fmt: str) -> dict[str, Any]:
    """top1, match and the gold ranks of a beam list, by :func:`~amp.evaluation.matching.match_lf` (§13.1)."""
    labels = [match_lf(b, lf0, lf1, mode=mode, fmt=fmt) for b in beams]
    return {
        "top1": beams[0] if beams else None,
        "match": labels[0] if labels else "missing",
        "lf0_rank": next((i + 1 for i, m in enumerate(labels) if is_lf0_like(m)), None),
        "lf1_rank": next((i + 1 for i, m in enumerate(labels) if is_lf1_like(m)), None),
    }


def optional_float(value: Any) -> float | None:
    """A float, or None for a missing, non-numeric or NaN value (JSON-safe; plotly leaves a gap)."""
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def record_from_result(item: SweepItem, result: BatchItemResult, *, mode: str = DEFAULT_MODE) -> SweepRecord:
    """Turn one :class:`~amp.parser.core.results.BatchItemResult` into a :class:`SweepRecord`.

    ``result.parse`` (a ParseResult or None) gives the beams; ``result.pair`` (a PairScore or
    None) gives P(LF0) and the minimum token probabilities (NaN → None); ``result.error`` passes through.
    """
    beams = tuple(str(b.text) for b in result.parse.beams) if result.parse is not None else ()
    pair = result.pair
    return SweepRecord(
        id=item.id,
        type=item.type,
        ratio=item.ratio,
        surface=item.surface,
        lf0=item.lf0,
        lf1=item.lf1,
        beams=beams,
        **match_fields(beams, item.lf0, item.lf1, mode, item.fmt),
        p_lf0=None if pair is None else optional_float(pair.p_lf0),
        p_lf0_total=None if pair is None else optional_float(pair.p_lf0_total),
        p_lf0_parted=None if pair is None else optional_float(pair.p_lf0_parted),
        min_prob_lf0=None if pair is None else optional_float(pair.lf0.min_prob),
        min_prob_lf1=None if pair is None else optional_float(pair.lf1.min_prob),
        cached=bool(result.cached),
        error=None if result.error is None else str(result.error),
        fmt=item.fmt,
        mode=mode,
        beam_shares=beam_shares([b.logprob for b in result.parse.beams]) if result.parse is not None else (),
    )


# --------------------------------------------------------------------------- running

Cancel = threading.Event | Callable[[], bool] | None
Progress = Callable[[int, int, SweepRecord], None]


def _cancelled(cancel: Cancel) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


def run_items(
    parser: Parser,
    items: Iterable[SweepItem],
    search: SearchSettings | None = None,
    *,
    mode: str = DEFAULT_MODE,
    parse: bool = True,
    score: bool | None = None,
    on_progress: Progress | None = None,
    cancel: Cancel = None,
    batch_size: int | None = None,
    label: str = "",
    meta: dict[str, Any] | None = None,
    **settings: Unpack[SearchKeywords],
) -> Iterator[SweepRecord]:
    """Run planned items through the parser, yielding one :class:`SweepRecord` per item as it ends.

    ``search``: the search settings record (a sweep's ``config.search``; the defaults when None,
    keywords override its fields, as in :func:`~amp.parser.batch.run_batch`).
    Uses :func:`amp.parser.batch.run_batch` (cached results first, then the rest, batched on a
    GPU): each item is beam-decoded with ``search`` (``parse``) and its two gold LFs are
    forced-decoded under the *same* prompt (``score``; by default whenever the model can score,
    :attr:`amp.parser.Parser.scores`: not a model behind an API without log-probs).  Records may
    come in a different order than ``items`` (cached ones first); match them by ``id``.  Matching uses the canonicaliser
    in ``mode``.  ``on_progress(done, total, record)`` is called after each record (unlike
    ``run_batch``'s callback it receives the :class:`SweepRecord`).  ``cancel`` (a
    :class:`threading.Event` or a callable returning True) stops the stream early: the records
    already yielded stay valid, so a partial sweep can be summarised.  ``batch_size``: items per
    model call (default :func:`amp.parser.batch.default_batch_size`).  Bad arguments raise
    :class:`ExperimentError` at call time, not at the first ``next``.
    """
    check_mode(mode, ExperimentError)
    search = SearchSettings.of(search, **settings)
    planned = list(items)
    by_id: dict[str, SweepItem] = {}
    for item in planned:
        if not isinstance(item, SweepItem):
            raise ExperimentError(f"run_items expects SweepItems (from plan_fewshot/plan_zeroshot), got {item!r}")
        if item.id in by_id:
            raise ExperimentError(f"two sweep items share the id {item.id!r}")
        by_id[item.id] = item
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise ExperimentError(f"batch_size must be a whole number of at least 1, not {batch_size!r}")
    if score is None:  # the backend's capability (a model behind an API without log-probs: no P(LF0))
        score = parser.scores
    return _stream(parser, planned, by_id, search, mode=mode, parse=parse, score=score,
                   on_progress=on_progress, cancel=cancel, batch_size=batch_size, label=label, meta=meta)


def _stream(
    parser: Parser,
    planned: list[SweepItem],
    by_id: dict[str, SweepItem],
    search: SearchSettings,
    *,
    mode: str,
    parse: bool,
    score: bool,
    on_progress: Progress | None,
    cancel: Cancel,
    batch_size: int | None = None,
    label: str = "",
    meta: dict[str, Any] | None = None,
) -> Iterator[SweepRecord]:
    total = len(planned)
    if total == 0 or _cancelled(cancel):
        return
    batch = (
        BatchItem(id=it.id, prompt=it.prompt_text, lf0=it.lf0, lf1=it.lf1, fmt=it.fmt, parse=parse, score=score)
        for it in planned
    )
    done = 0
    stream = run_batch(parser, batch, search, cancel=cancel, batch_size=batch_size, label=label, meta=meta)
    try:
        for result in stream:
            item = by_id.get(result.id)
            if item is None:  # not ours: ignore rather than crash a long sweep
                continue
            record = record_from_result(item, result, mode=mode)
            done += 1
            if on_progress is not None:
                on_progress(done, total, record)
            yield record
            if _cancelled(cancel):
                break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def run_sweep(
    parser: Parser,
    config: FewShotConfig | ZeroShotConfig,
    *,
    on_progress: Progress | None = None,
    cancel: Cancel = None,
) -> Iterator[SweepRecord]:
    """Plan ``config`` and run it with the config's search and mode (see :func:`run_items`)."""
    return run_items(parser, plan(config), config.search, mode=config.mode, on_progress=on_progress, cancel=cancel)


def rematch(records: Iterable[SweepRecord], mode: str) -> list[SweepRecord]:
    """The records re-matched with the canonicaliser in ``mode``, from their stored beams.

    Switching between the "logical" and the faithful "paper" canonicaliser needs no new model
    run: beams and gold LFs are in the records.
    """
    check_mode(mode, ExperimentError)
    return [
        r if r.mode == mode else replace(r, mode=mode, **match_fields(r.beams, r.lf0, r.lf1, mode, r.fmt))
        for r in records
    ]
