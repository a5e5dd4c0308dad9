"""Sweeps of the AmP paper's experiments: pure planning, a streaming runner, pure summaries.

Three layers, so that each can be tested and reused on its own (``docs/style.md``):

1. **Planning** (pure, no model): a frozen config (:class:`FewShotConfig`,
   :class:`ZeroShotConfig`) becomes a list of :class:`SweepItem` — one prompt per test sentence
   (and per ratio, few-shot).  Everything random is seeded from the config, so the same config
   gives the same prompts, which then hit the result cache on a rerun.
2. **Running** (:func:`run_items`): streams the items through
   :func:`amp.parser.batch.run_batch` and yields one :class:`SweepRecord` per item as it
   finishes — beams, which gold LF the top beam matches, the ranks of both gold LFs among the
   beams, and P(LF0) from the forced decode.  Cancellable, with a progress callback.
3. **Summaries** (pure): :func:`fewshot_summary` (accuracy and P(LF0) per type and ratio,
   FDM and FIM per type) and :func:`zeroshot_summary` (ZM_k, top-1 accuracies, P(LF0) per
   type).  They take records or :func:`records_frame`'s DataFrame, work on partial sweeps and
   return empty frames with the right columns on empty input.

Paper: Stengel-Eskin et al. 2023, "Zero and Few-shot Semantic Parsing with Ambiguous Inputs"
(arXiv 2306.00824); section numbers "§n" refer to ``docs/amp-reference.md``.

Differences from the original, on purpose:

* few-shot: the LF0 and LF1 forced decodes of a sentence are scored under the **same** prompt
  (the original drew a fresh random prompt for each, §11 end);
* ZM_k counts revscope like every other type (the original's type-name mismatch made it 0,
  §13.3), and FDM is reported with its true range 0–2 (§13.4).
"""

from __future__ import annotations

import hashlib
import math
import numbers
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

import pandas as pd

from amp.data.generate import AMBIGUOUS_TYPES, sample_pairs
from amp.errors import AmpError
from amp.evaluation import metrics
from amp.prompts import Prompt, mixed_prompt, zero_shot_prompt

__all__ = [
    "DEFAULT_RATIOS",
    "FEWSHOT_PER_RATIO_COLUMNS",
    "FEWSHOT_PER_TYPE_COLUMNS",
    "MATCH_LABELS",
    "RECORD_COLUMNS",
    "ExperimentError",
    "FewShotConfig",
    "SweepItem",
    "SweepRecord",
    "ZeroShotConfig",
    "fewshot_summary",
    "match_label",
    "plan",
    "plan_fewshot",
    "plan_zeroshot",
    "record_from_result",
    "records_frame",
    "rematch",
    "run_items",
    "run_sweep",
    "zeroshot_columns",
    "zeroshot_summary",
]


class ExperimentError(AmpError, ValueError):
    """A sweep configuration or sweep input that cannot be used; the message says what to change."""


#: The paper's 11 LF0 ratios r = 0, 0.1, …, 1 (§0.6).
DEFAULT_RATIOS: tuple[float, ...] = tuple(i / 10 for i in range(11))

_FORMATS = ("fol", "lisp")
_MODES = ("logical", "paper")
#: The data's type string for inverse scope, accepted as an alias of ``revscope`` (§14.1).
_TYPE_ALIASES = {"scope_reverse": "revscope"}

Match = Literal["lf0", "lf1", "both", "neither", "unparseable", "missing"]
#: Possible :attr:`SweepRecord.match` values:
#: ``lf0``/``lf1`` — the top beam canonicalises to that gold LF;
#: ``both`` — it equals both golds (they canonicalise alike in this mode; counts for both);
#: ``neither`` — a well-formed LF that is neither gold (lowers both accuracies, §13.4);
#: ``unparseable`` — the top beam is not an LF (kept raw, never matches, §13.1);
#: ``missing`` — no beams at all (parsing skipped or failed; excluded from accuracies).
MATCH_LABELS: tuple[str, ...] = ("lf0", "lf1", "both", "neither", "unparseable", "missing")


# --------------------------------------------------------------------------- configs


def _whole(name: str, value: Any, minimum: int | None = 1) -> int:
    """``value`` as an int (numpy ints accepted, bools and floats not), at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ExperimentError(f"{name} must be a whole number, not {value!r}")
    if minimum is not None and value < minimum:
        raise ExperimentError(f"{name} must be a whole number >= {minimum}, not {value!r}")
    return int(value)


def _check_common(types: Sequence[str], beams: int, fmt: str, mode: str) -> tuple[str, ...]:
    if isinstance(types, str):
        types = (types,)
    normalised = tuple(_TYPE_ALIASES.get(str(t), str(t)) for t in types)
    if not normalised:
        raise ExperimentError(f"types is empty; choose some of {', '.join(AMBIGUOUS_TYPES)}")
    unknown = [t for t in normalised if t not in AMBIGUOUS_TYPES]
    if unknown:
        raise ExperimentError(
            f"unknown ambiguity type(s) {unknown}; choose from {', '.join(AMBIGUOUS_TYPES)}"
        )
    if len(set(normalised)) != len(normalised):
        raise ExperimentError(f"types {list(normalised)} lists a type twice")
    _whole("beams", beams)
    if fmt not in _FORMATS:
        raise ExperimentError(f"fmt must be one of {_FORMATS}, not {fmt!r}")
    if mode not in _MODES:
        raise ExperimentError(f"mode must be one of {_MODES}, not {mode!r}")
    return normalised


@dataclass(frozen=True)
class FewShotConfig:
    """A few-shot ("mixed prompt") sweep, paper §4 / Fig. 6 (reference §11).

    For every type, ``n_per_ratio`` test sentences are drawn once (``sample_pairs(type, n,
    seed)``) and each is parsed under one prompt per ratio r in ``ratios``: ``k`` random
    same-type examples, int(k·r) of them shown with LF0 and the rest with LF1
    (:func:`amp.prompts.lf0_count`, robust to float error).  So the test set
    is the same for all ratios, as in the paper.  ``beams`` is the beam size, ``mode`` the
    canonicaliser used for matching (``"logical"`` or the faithful ``"paper"``).

    Paired design (the default, as in the original, reference §11): a test sentence sees the
    *same* ``k`` example sentences in the same positions at every ratio; only which of them
    carry LF0 changes.  ``independent_draws=True`` draws fresh examples per ratio instead
    (more noise in FDM/FIM and the P(LF0) curve; kept for comparison only).
    """

    types: tuple[str, ...] = AMBIGUOUS_TYPES
    ratios: tuple[float, ...] = DEFAULT_RATIOS
    n_per_ratio: int = 5
    seed: int = 0
    k: int = 10
    fmt: str = "fol"
    beams: int = 5
    mode: str = "logical"
    independent_draws: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", _check_common(self.types, self.beams, self.fmt, self.mode))
        if not isinstance(self.independent_draws, bool) and type(self.independent_draws).__name__ != "bool_":
            raise ExperimentError(f"independent_draws must be True or False, not {self.independent_draws!r}")
        object.__setattr__(self, "independent_draws", bool(self.independent_draws))
        ratios = (self.ratios,) if isinstance(self.ratios, int | float) else tuple(self.ratios)
        if not ratios:
            raise ExperimentError("ratios is empty; the paper uses 0, 0.1, …, 1")
        clean: list[float] = []
        for r in ratios:
            try:
                value = float(r)
            except (TypeError, ValueError):
                raise ExperimentError(f"ratio {r!r} is not a number between 0 and 1") from None
            if math.isnan(value) or not 0.0 <= value <= 1.0:
                raise ExperimentError(
                    f"ratio {r!r} is outside [0, 1]; it is the fraction of prompt examples shown with LF0"
                )
            clean.append(round(value, 6))  # 0.1 * 3 and 0.3 are the same ratio
        if len(set(clean)) != len(clean):
            raise ExperimentError(f"ratios {clean} lists a ratio twice")
        object.__setattr__(self, "ratios", tuple(clean))
        object.__setattr__(self, "n_per_ratio", _whole("n_per_ratio", self.n_per_ratio))
        object.__setattr__(self, "k", _whole("k (examples per prompt)", self.k))
        object.__setattr__(self, "seed", _whole("seed", self.seed, None))
        object.__setattr__(self, "beams", int(self.beams))

    @property
    def n_items(self) -> int:
        """How many prompts the sweep parses: types × ratios × n_per_ratio."""
        return len(self.types) * len(self.ratios) * self.n_per_ratio


@dataclass(frozen=True)
class ZeroShotConfig:
    """A zero-shot sweep, paper §3 / Fig. 2–3 / Table 2 (reference §10).

    ``n`` test sentences per type (the paper: 200), each under its zero-shot prompt of
    unambiguous "ingredient" examples.  ``beams`` bounds the ZM_k that can be computed (k ≤ beams).
    """

    types: tuple[str, ...] = AMBIGUOUS_TYPES
    n: int = 20
    seed: int = 0
    beams: int = 5
    fmt: str = "fol"
    mode: str = "logical"

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", _check_common(self.types, self.beams, self.fmt, self.mode))
        if self.fmt != "fol":
            raise ExperimentError(
                f"zero-shot prompts are FOL only (paper §3; reference §10), so fmt must be 'fol', not {self.fmt!r}"
            )
        object.__setattr__(self, "n", _whole("n (test sentences per type)", self.n))
        object.__setattr__(self, "seed", _whole("seed", self.seed, None))
        object.__setattr__(self, "beams", int(self.beams))

    @property
    def n_items(self) -> int:
        """How many prompts the sweep parses: types × n."""
        return len(self.types) * self.n


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class SweepItem:
    """One prompt of a sweep: a test sentence, its two gold LFs and the prompt to parse it with.

    ``ratio`` is None for zero-shot items.  ``lf0``/``lf1`` are in the sweep's ``fmt`` (the
    prompt's gold), ``prompt_text`` is the rendered prompt, ``index`` the sentence's position
    in its type's test set (the same across ratios).
    """

    id: str
    type: str
    ratio: float | None
    surface: str
    lf0: str
    lf1: str
    prompt_text: str
    prompt: Prompt = field(repr=False, compare=False)
    index: int = 0
    fmt: str = "fol"
    seed: int = 0


def _derive_seed(*parts: object) -> int:
    """A stable 31-bit seed from the parts (unlike ``hash``, the same in every process)."""
    key = "\x1f".join("None" if p is None else (f"{p:.6f}" if isinstance(p, float) else str(p)) for p in parts)
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") & 0x7FFFFFFF


def _gold(prompt: Prompt, pair: Any, which: int) -> str:
    gold = getattr(prompt, f"gold_lf{which}", None)
    if gold is None:
        gold = getattr(pair, f"lf{which}").lf
    return str(gold)


def plan_fewshot(config: FewShotConfig) -> list[SweepItem]:
    """All items of a few-shot sweep, grouped by type, then ratio, then test sentence.

    The ``n_per_ratio`` test sentences of a type are drawn once with
    ``sample_pairs(type, n_per_ratio, config.seed)`` and reused for every ratio (paper §4: one
    test set, all ratios).  The prompt of (type, ratio, sentence index) is
    ``mixed_prompt(pair, ratio, seed=s, k=config.k, fmt=config.fmt)`` with ``s`` derived from
    (seed, type, index) — the same at every ratio, so the item sees the same example sentences
    in the same positions at every ratio (the original's paired design, reference §11) — or,
    with ``config.independent_draws``, from (seed, type, ratio, index).  The plan is a pure
    function of the config.
    """
    items: list[SweepItem] = []
    for type_ in config.types:
        pairs = list(sample_pairs(type_, config.n_per_ratio, config.seed))
        for ratio in config.ratios:
            for index, pair in enumerate(pairs):
                if config.independent_draws:
                    seed = _derive_seed("fewshot", config.seed, type_, ratio, index)
                else:
                    seed = _derive_seed("fewshot", config.seed, type_, index)
                prompt = mixed_prompt(pair, ratio, seed=seed, k=config.k, fmt=config.fmt)
                items.append(
                    _sweep_item(f"fewshot/{type_}/r={ratio:.2f}/{index:03d}", type_, ratio, pair,
                                prompt, index=index, fmt=config.fmt, seed=seed)
                )
    return items


def _sweep_item(
    id_: str, type_: str, ratio: float | None, pair: Any, prompt: Prompt, *, index: int, fmt: str, seed: int
) -> SweepItem:
    """One planned item: the test pair, its prompt (rendered once) and the gold LFs it is scored on."""
    return SweepItem(
        id=id_,
        type=type_,
        ratio=ratio,
        surface=pair.surface,
        lf0=_gold(prompt, pair, 0),
        lf1=_gold(prompt, pair, 1),
        prompt_text=prompt.render(),
        prompt=prompt,
        index=index,
        fmt=fmt,
        seed=seed,
    )


def plan_zeroshot(config: ZeroShotConfig) -> list[SweepItem]:
    """All items of a zero-shot sweep: ``n`` sentences per type, each with its zero-shot prompt.

    Sentences come from ``sample_pairs(type, n, config.seed)``; the prompt's example shuffle is
    seeded from (seed, type, index).  Zero-shot prompts are FOL (paper §3; reference §10).
    """
    items: list[SweepItem] = []
    for type_ in config.types:
        for index, pair in enumerate(sample_pairs(type_, config.n, config.seed)):
            seed = _derive_seed("zeroshot", config.seed, type_, index)
            prompt = zero_shot_prompt(pair, seed=seed)
            items.append(
                _sweep_item(f"zeroshot/{type_}/{index:03d}", type_, None, pair, prompt,
                            index=index, fmt=config.fmt, seed=seed)
            )
    return items


def config_to_dict(config: FewShotConfig | ZeroShotConfig) -> dict[str, Any]:
    """A sweep config as JSON data (kept with a server job so a page can rebuild its plan)."""
    kind = "fewshot" if isinstance(config, FewShotConfig) else "zeroshot"
    return {"kind": kind, **{k: list(v) if isinstance(v, tuple) else v for k, v in config.__dict__.items()}}


def config_from_dict(d: dict[str, Any]) -> FewShotConfig | ZeroShotConfig:
    """Inverse of :func:`config_to_dict` (raises :class:`ExperimentError` for anything else)."""
    try:
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k != "kind"}
        cls = {"fewshot": FewShotConfig, "zeroshot": ZeroShotConfig}[d["kind"]]
        return cls(**fields)
    except (KeyError, TypeError) as exc:
        raise ExperimentError(f"not a sweep configuration: {exc}") from None


def plan(config: FewShotConfig | ZeroShotConfig) -> list[SweepItem]:
    """:func:`plan_fewshot` or :func:`plan_zeroshot`, by the config's class."""
    if isinstance(config, FewShotConfig):
        return plan_fewshot(config)
    if isinstance(config, ZeroShotConfig):
        return plan_zeroshot(config)
    raise ExperimentError(f"expected a FewShotConfig or ZeroShotConfig, not {type(config).__name__}")


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class SweepRecord:
    """The outcome of one :class:`SweepItem`: plain data, one row of :func:`records_frame`.

    ``beams`` are the beam texts, best first; ``top1`` the best one (None without beams).
    ``match`` says which gold LF ``top1`` equals after canonicalisation in ``mode`` (see
    :data:`MATCH_LABELS`); ``lf0_rank``/``lf1_rank`` are the 1-based positions of the gold LFs
    among the beams (None if absent), so "LF in the top k" is ``rank <= k`` (ZM_k, §13.3).
    ``p_lf0`` is P(LF0) = m0 / (m0 + m1) with m the minimum token probability of each LF's forced
    decode under the item's prompt (paper §4, FIM; §12), ``p_lf0_total`` the same with total
    sequence probabilities (what the paper's Fig. 3 plotted), ``min_prob_lf0/lf1`` the minima.
    ``cached`` says the result came from the on-disk cache; ``error`` holds the failure message
    of an item that could not be run (such records are left out of the summaries).
    """

    id: str
    type: str
    ratio: float | None
    surface: str
    lf0: str
    lf1: str
    beams: tuple[str, ...] = ()
    top1: str | None = None
    match: Match = "missing"
    lf0_rank: int | None = None
    lf1_rank: int | None = None
    p_lf0: float | None = None
    p_lf0_total: float | None = None
    min_prob_lf0: float | None = None
    min_prob_lf1: float | None = None
    cached: bool = False
    error: str | None = None
    fmt: str = "fol"
    mode: str = "logical"


#: Columns of :func:`records_frame`, in order (the :class:`SweepRecord` fields).
RECORD_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(SweepRecord))


def _canon(text: str | None, mode: str, fmt: str) -> str | None:
    """Canonical form, or None for a missing, empty or unparseable LF (never matches, §13.1)."""
    return metrics.prediction_key(text, mode, fmt)


def match_label(prediction: str | None, gold0: str | None, gold1: str | None) -> str:
    """Which gold a *canonicalised* prediction equals (:data:`MATCH_LABELS`; None = unparseable)."""
    if prediction is None:
        return "unparseable"
    is0 = gold0 is not None and prediction == gold0
    is1 = gold1 is not None and prediction == gold1
    if is0 and is1:
        return "both"
    if is0:
        return "lf0"
    if is1:
        return "lf1"
    return "neither"


def _match_fields(beams: Sequence[str], lf0: str, lf1: str, mode: str, fmt: str) -> dict[str, Any]:
    """top1, match and the gold ranks of a beam list, by canonical equality in ``mode`` (§13.1)."""
    # A gold that does not canonicalise (should not happen) is compared as raw text.
    gold0 = _canon(lf0, mode, fmt) or lf0
    gold1 = _canon(lf1, mode, fmt) or lf1
    canon = [_canon(b, mode, fmt) for b in beams]
    rank0 = next((i + 1 for i, c in enumerate(canon) if c is not None and c == gold0), None)
    rank1 = next((i + 1 for i, c in enumerate(canon) if c is not None and c == gold1), None)
    if not beams:
        match = "missing"
    else:
        match = match_label(canon[0], gold0, gold1)
    return {
        "top1": beams[0] if beams else None,
        "match": match,
        "lf0_rank": rank0,
        "lf1_rank": rank1,
    }


def _float(value: Any) -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def record_from_result(item: SweepItem, result: Any, *, mode: str = "logical") -> SweepRecord:
    """Turn one :class:`~amp.parser.batch.BatchItemResult` into a :class:`SweepRecord`.

    ``result.parse`` (a ParseResult or None) gives the beams; ``result.pair`` (a PairScore or
    None) gives P(LF0) and the minimum token probabilities; ``result.error`` passes through.
    """
    parse = getattr(result, "parse", None)
    pair = getattr(result, "pair", None)
    beams = tuple(str(b.text) for b in getattr(parse, "beams", None) or ())
    score0 = getattr(pair, "lf0", None)
    score1 = getattr(pair, "lf1", None)
    error = getattr(result, "error", None)
    return SweepRecord(
        id=item.id,
        type=item.type,
        ratio=item.ratio,
        surface=item.surface,
        lf0=item.lf0,
        lf1=item.lf1,
        beams=beams,
        **_match_fields(beams, item.lf0, item.lf1, mode, item.fmt),
        p_lf0=_float(getattr(pair, "p_lf0", None)),
        p_lf0_total=_float(getattr(pair, "p_lf0_total", None)),
        min_prob_lf0=_float(getattr(score0, "min_prob", None)),
        min_prob_lf1=_float(getattr(score1, "min_prob", None)),
        cached=bool(getattr(result, "cached", False)),
        error=None if error is None else str(error),
        fmt=item.fmt,
        mode=mode,
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
    parser: Any,
    items: Iterable[SweepItem],
    *,
    beams: int = 5,
    mode: str = "logical",
    parse: bool = True,
    score: bool = True,
    on_progress: Progress | None = None,
    cancel: Cancel = None,
    batch_size: int | None = None,
    label: str = "",
    meta: dict[str, Any] | None = None,
) -> Iterator[SweepRecord]:
    """Run planned items through the parser, yielding one :class:`SweepRecord` per item as it ends.

    Uses :func:`amp.parser.batch.run_batch` (cached results first, then the rest, batched on a
    GPU): each item is beam-decoded with ``beams`` beams (``parse``) and its two gold LFs are
    forced-decoded under the *same* prompt (``score``).  Records may come in a different order
    than ``items`` (cached ones first); match them by ``id``.  Matching uses the canonicaliser
    in ``mode``.  ``on_progress(done, total, record)`` is called after each record (unlike
    ``run_batch``'s callback it receives the :class:`SweepRecord`).  ``cancel`` (a
    :class:`threading.Event` or a callable returning True) stops the stream early: the records
    already yielded stay valid, so a partial sweep can be summarised.  ``batch_size``: items per
    model call (default :func:`amp.parser.batch.default_batch_size`).  Bad arguments raise
    :class:`ExperimentError` at call time, not at the first ``next``.
    """
    if mode not in _MODES:
        raise ExperimentError(f"mode must be one of {_MODES}, not {mode!r}")
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
    return _stream(parser, planned, by_id, beams=beams, mode=mode, parse=parse, score=score,
                   on_progress=on_progress, cancel=cancel, batch_size=batch_size, label=label, meta=meta)


def _stream(
    parser: Any,
    planned: list[SweepItem],
    by_id: dict[str, SweepItem],
    *,
    beams: int,
    mode: str,
    parse: bool,
    score: bool,
    on_progress: Progress | None,
    cancel: Cancel,
    batch_size: int | None = None,
    label: str = "",
    meta: dict[str, Any] | None = None,
) -> Iterator[SweepRecord]:
    # Imported here so that planning and summaries never import the parser stack.
    from amp.parser.batch import BatchItem, run_batch

    total = len(planned)
    if total == 0 or _cancelled(cancel):
        return
    batch = (
        BatchItem(id=it.id, prompt=it.prompt_text, lf0=it.lf0, lf1=it.lf1, fmt=it.fmt, parse=parse, score=score)
        for it in planned
    )
    done = 0
    stream = run_batch(parser, batch, beams=beams, cancel=cancel, batch_size=batch_size, label=label, meta=meta)
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
    parser: Any,
    config: FewShotConfig | ZeroShotConfig,
    *,
    on_progress: Progress | None = None,
    cancel: Cancel = None,
) -> Iterator[SweepRecord]:
    """Plan ``config`` and run it with the config's beams and mode (see :func:`run_items`)."""
    return run_items(
        parser, plan(config), beams=config.beams, mode=config.mode, on_progress=on_progress, cancel=cancel
    )


def rematch(records: Iterable[SweepRecord], mode: str) -> list[SweepRecord]:
    """The records re-matched with the canonicaliser in ``mode``, from their stored beams.

    Switching between the "logical" and the faithful "paper" canonicaliser needs no new model
    run: beams and gold LFs are in the records.
    """
    if mode not in _MODES:
        raise ExperimentError(f"mode must be one of {_MODES}, not {mode!r}")
    return [
        r if r.mode == mode else replace(r, mode=mode, **_match_fields(r.beams, r.lf0, r.lf1, mode, r.fmt))
        for r in records
    ]


def records_frame(records: Iterable[SweepRecord]) -> pd.DataFrame:
    """The records as a DataFrame, one row per record, columns :data:`RECORD_COLUMNS`.

    ``ratio``, the probabilities and ranks are float columns (NaN = missing); empty input gives
    an empty frame with the same columns.
    """
    rows = [asdict(r) for r in records]
    df = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    for col in ("ratio", "lf0_rank", "lf1_rank", "p_lf0", "p_lf0_total", "min_prob_lf0", "min_prob_lf1"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    df["cached"] = df["cached"].astype(bool)
    return df


def _frame(records: Iterable[SweepRecord] | pd.DataFrame) -> pd.DataFrame:
    if isinstance(records, pd.DataFrame):
        missing = [c for c in ("type", "ratio", "lf0", "lf1", "beams", "p_lf0") if c not in records.columns]
        if missing:
            raise ExperimentError(f"records frame lacks column(s) {missing}; build it with records_frame()")
        return records
    return records_frame(records)


def _single(df: pd.DataFrame, column: str, override: str | None, default: str, allowed: Sequence[str]) -> str:
    """The one ``mode``/``fmt`` of a frame's rows (or ``override``); mixed values are an error."""
    if override is not None:
        if override not in allowed:
            raise ExperimentError(f"{column} must be one of {tuple(allowed)}, not {override!r}")
        return override
    values = set(df[column].dropna()) if column in df.columns else set()
    if len(values) > 1:
        raise ExperimentError(
            f"records mix several {column}s {sorted(values)}; summarise them separately or pass {column}="
        )
    return values.pop() if values else default


def _predictions(df: pd.DataFrame) -> pd.DataFrame:
    """Rows that ran (no error) and have beams: the ones accuracies are computed over."""
    if "error" in df.columns:
        df = df[df["error"].isna()]
    return df[df["beams"].map(lambda b: isinstance(b, list | tuple) and len(b) > 0)]


def _scored(df: pd.DataFrame) -> list[float]:
    """The non-missing P(LF0) values of rows that ran."""
    if "error" in df.columns:
        df = df[df["error"].isna()]
    return [float(v) for v in pd.to_numeric(df["p_lf0"], errors="coerce").dropna()]


def _triples(df: pd.DataFrame) -> list[tuple[str | None, str, str]]:
    """(top-1 prediction, gold LF0, gold LF1) per row, the input of the top-1 metrics (§13.2)."""
    return [(b[0] if len(b) else None, lf0, lf1) for b, lf0, lf1 in zip(df["beams"], df["lf0"], df["lf1"], strict=True)]


def _accuracies(df: pd.DataFrame, mode: str, fmt: str) -> tuple[int, float, float, float]:
    """(n, acc_lf0, acc_lf1, neither) of the top beams, by :func:`amp.evaluation.metrics.top1_accuracy`."""
    triples = _triples(df)
    if not triples:
        return 0, math.nan, math.nan, math.nan
    top1s, lf0s, lf1s = zip(*triples, strict=True)
    acc = metrics.top1_accuracy(top1s, lf0s, lf1s, mode, fmt=fmt)
    return len(triples), acc["lf0"], acc["lf1"], acc["neither"]


def _p_stats(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, std, sem) of P(LF0) values (std with ddof=1; std and sem NaN below 2 values)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = sum(values) / n
    if n < 2:
        return mean, math.nan, math.nan
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, std, std / math.sqrt(n)


# --------------------------------------------------------------------------- summaries

#: Columns of :func:`fewshot_summary`'s per-(type, ratio) frame.
FEWSHOT_PER_RATIO_COLUMNS: tuple[str, ...] = (
    "type", "ratio", "n", "acc_lf0", "acc_lf1", "neither",
    "mean_p_lf0", "std_p_lf0", "sem_p_lf0", "n_p_lf0", "n_errors",
)
#: Columns of :func:`fewshot_summary`'s per-type frame.
FEWSHOT_PER_TYPE_COLUMNS: tuple[str, ...] = ("type", "FDM", "FIM", "n", "n_ratios", "n_errors")


def zeroshot_columns(k: int) -> tuple[str, ...]:
    """Columns of :func:`zeroshot_summary` for ``k``."""
    return ("type", "n", f"ZM_{k}", "acc_lf0", "acc_lf1", "neither", "mean_p_lf0", "mean_p_lf0_total",
            "n_errors")


def _type_order(types: Iterable[str]) -> list[str]:
    present = list(dict.fromkeys(types))
    known = [t for t in AMBIGUOUS_TYPES if t in present]
    return known + sorted(t for t in present if t not in AMBIGUOUS_TYPES)


def _n_errors(df: pd.DataFrame) -> int:
    return int(df["error"].notna().sum()) if "error" in df.columns else 0


def fewshot_summary(
    records: Iterable[SweepRecord] | pd.DataFrame, mode: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Few-shot results per (type, ratio) and per type (paper §4, Fig. 6; reference §13.4–13.5).

    Returns ``(per_ratio, per_type)``:

    * ``per_ratio`` — :data:`FEWSHOT_PER_RATIO_COLUMNS`: ``n`` sentences with a prediction,
      ``acc_lf0``/``acc_lf1`` the fractions (0–1) whose top beam is LF0/LF1, ``neither`` the
      fraction that is neither (including unparseable), mean/std/sem of P(LF0) over the
      ``n_p_lf0`` scored sentences, and ``n_errors`` items that failed to run (they are left
      out of everything else).
    * ``per_type`` — :data:`FEWSHOT_PER_TYPE_COLUMNS`: ``FDM`` (paper Eq. 2, :func:`amp.evaluation.metrics.fdm`)
      = mean over ratios of |acc_lf0 − r| + |acc_lf1 − (1 − r)|, **range 0–2** (the paper says
      0–1, reference §13.4), lower is better; ``FIM`` (paper Eq. 3, :func:`amp.evaluation.metrics.fim`) =
      mean over ratios of the mean (P(LF0) − r)², range 0–1; ``n`` records, the ``n_ratios``
      ratios they cover, ``n_errors``.

    Works on a partial sweep — records arriving one by one; the metrics then average over the
    ratios seen so far — and on empty input (empty frames with these columns).  Matching uses
    ``mode`` ("logical"/"paper"; default: the mode the records were made with), so the
    canonicaliser can be switched without running the model again.
    """
    df = _frame(records)
    df = df[df["ratio"].notna()]
    mode = _single(df, "mode", mode, "logical", _MODES)
    fmt = _single(df, "fmt", None, "fol", _FORMATS)
    per_ratio_rows: list[dict[str, Any]] = []
    per_type_rows: list[dict[str, Any]] = []
    for type_ in _type_order(df["type"]):
        sub = df[df["type"] == type_]
        fdm_input: dict[float, list[tuple[str | None, str, str]]] = {}
        fim_input: dict[float, list[float]] = {}
        for ratio in sorted(float(r) for r in sub["ratio"].unique()):
            rows = sub[sub["ratio"] == ratio]
            predicted = _predictions(rows)
            n, acc0, acc1, neither = _accuracies(predicted, mode, fmt)
            ps = _scored(rows)
            mean, std, sem = _p_stats(ps)
            per_ratio_rows.append({
                "type": type_, "ratio": ratio, "n": n, "acc_lf0": acc0, "acc_lf1": acc1,
                "neither": neither, "mean_p_lf0": mean, "std_p_lf0": std, "sem_p_lf0": sem,
                "n_p_lf0": len(ps), "n_errors": _n_errors(rows),
            })
            if n:
                fdm_input[ratio] = _triples(predicted)
            if ps:
                fim_input[ratio] = ps
        per_type_rows.append({
            "type": type_,
            "FDM": metrics.fdm(fdm_input, mode, fmt=fmt),
            "FIM": metrics.fim(fim_input),
            "n": len(sub) - _n_errors(sub),
            "n_ratios": int(sub["ratio"].nunique()),
            "n_errors": _n_errors(sub),
        })
    per_ratio = pd.DataFrame(per_ratio_rows, columns=list(FEWSHOT_PER_RATIO_COLUMNS))
    per_type = pd.DataFrame(per_type_rows, columns=list(FEWSHOT_PER_TYPE_COLUMNS))
    return (
        _typed(per_ratio, ints=("n", "n_p_lf0", "n_errors")),
        _typed(per_type, ints=("n", "n_ratios", "n_errors")),
    )


def zeroshot_summary(
    records: Iterable[SweepRecord] | pd.DataFrame, k: int = 5, mode: str | None = None
) -> pd.DataFrame:
    """Zero-shot results per type (paper §3: Table 2, Fig. 2, Fig. 3; reference §13.2–13.3).

    Columns ``zeroshot_columns(k)``: ``n`` sentences with a prediction; ``ZM_<k>`` (paper
    Eq. 1, :func:`amp.evaluation.metrics.zm_k`) the **percentage** (0–100) of them with *both* gold LFs
    among the top k beams; ``acc_lf0``/``acc_lf1`` top-1 accuracies and ``neither`` (fractions
    0–1, Fig. 2); ``mean_p_lf0`` (min-prob normalised, the paper's definition) and
    ``mean_p_lf0_total`` (total-prob normalised, what Fig. 3 plotted); ``n_errors`` failed items
    (left out of the rest).  Partial input works; empty input gives an empty frame with these
    columns.  ``mode`` as in :func:`fewshot_summary`.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ExperimentError(f"k must be a whole number >= 1, not {k!r}")
    df = _frame(records)
    mode = _single(df, "mode", mode, "logical", _MODES)
    fmt = _single(df, "fmt", None, "fol", _FORMATS)
    rows: list[dict[str, Any]] = []
    for type_ in _type_order(df["type"]):
        sub = df[df["type"] == type_]
        predicted = _predictions(sub)
        n, acc0, acc1, neither = _accuracies(predicted, mode, fmt)
        examples = [
            (tuple(b), lf0, lf1)
            for b, lf0, lf1 in zip(predicted["beams"], predicted["lf0"], predicted["lf1"], strict=True)
        ]
        ok = sub[sub["error"].isna()] if "error" in sub.columns else sub
        total = (pd.to_numeric(ok["p_lf0_total"], errors="coerce").dropna() if "p_lf0_total" in ok
                 else pd.Series([], dtype=float))
        rows.append({
            "type": type_,
            "n": n,
            f"ZM_{k}": metrics.zm_k(examples, k, mode, fmt=fmt),
            "acc_lf0": acc0,
            "acc_lf1": acc1,
            "neither": neither,
            "mean_p_lf0": _p_stats(_scored(sub))[0],
            "mean_p_lf0_total": float(total.mean()) if len(total) else math.nan,
            "n_errors": _n_errors(sub),
        })
    return _typed(pd.DataFrame(rows, columns=list(zeroshot_columns(k))), ints=("n", "n_errors"))


def _typed(df: pd.DataFrame, *, ints: Sequence[str]) -> pd.DataFrame:
    for col in df.columns:
        if col == "type":
            df[col] = df[col].astype(object)
        elif col in ints:
            df[col] = df[col].astype("int64")
        else:
            df[col] = df[col].astype("float64")
    return df
