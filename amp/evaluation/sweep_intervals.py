"""Bootstrap intervals of the sweep summaries: every cell of Tables 2–3 and every point of Figures 2, 3
and 6 with its 95 % percentile-bootstrap interval (docs/paper-notes.md §21).

The unit resampled is the **test sentence**, never the record: a few-shot sentence has one record
per ratio r, and a resample takes or leaves all of them together (the paired design, §11), so
FDM and FIM — means over ratios — vary as the sentence sample would.  Each per-type cell resamples
within its type (the type is the stratum: every resample keeps the type's n).  The estimate of an
interval is :mod:`amp.evaluation.sweep_summary`'s own value, computed again from the same per-sentence
counts: :func:`amp.evaluation.metrics.top1_accuracy` labels each top beam,
:func:`amp.evaluation.metrics.zm_k` decides each sentence's ZM indicator, and FDM and FIM use
:func:`~amp.evaluation.metrics.fdm_distance` and :func:`~amp.evaluation.metrics.fim_error`.

:func:`zeroshot_with_intervals` and :func:`fewshot_with_intervals` return the summaries with
``<stat>_low`` and ``<stat>_high`` after each statistic of :func:`zeroshot_stats` /
:data:`FEWSHOT_RATIO_STATS` / :data:`FEWSHOT_TYPE_STATS`; ``n`` counts sentences.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from amp.evaluation import metrics
from amp.evaluation.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, bootstrap_interval
from amp.evaluation.errors import BootstrapError
from amp.evaluation.sweep_run import SweepRecord
from amp.evaluation.sweep_summary import (
    fewshot_summary,
    ran_rows,
    records_frame,
    sentence_keys,
    single_setting,
    zeroshot_summary,
)
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, FORMATS, MODES

__all__ = [
    "FEWSHOT_RATIO_STATS",
    "FEWSHOT_TYPE_STATS",
    "INTERVAL_SUFFIXES",
    "BootstrapSettings",
    "fewshot_with_intervals",
    "interval_columns",
    "zeroshot_stats",
    "zeroshot_with_intervals",
]

#: The suffixes of an interval's two columns, after the statistic's own name.
INTERVAL_SUFFIXES: tuple[str, str] = ("_low", "_high")
#: Few-shot statistics per (type, ratio) that get intervals (Fig. 6).
FEWSHOT_RATIO_STATS: tuple[str, ...] = ("acc_lf0", "acc_lf1", "neither", "mean_p_lf0")
#: Few-shot statistics per type that get intervals (Table 3).
FEWSHOT_TYPE_STATS: tuple[str, ...] = ("FDM", "FIM")


def zeroshot_stats(k: int) -> tuple[str, ...]:
    """Zero-shot statistics per type that get intervals (Table 2, Fig. 2, Fig. 3's mean)."""
    return (f"ZM_{k}", "acc_lf0", "acc_lf1", "neither", "mean_p_lf0")


def interval_columns(stat: str) -> tuple[str, str]:
    """The two columns holding ``stat``'s interval: ``<stat>_low``, ``<stat>_high``."""
    return f"{stat}{INTERVAL_SUFFIXES[0]}", f"{stat}{INTERVAL_SUFFIXES[1]}"


@dataclass(frozen=True)
class BootstrapSettings:
    """How the intervals are drawn: ``resamples`` of the sentences, coverage ``level``, ``seed``
    (checked here, once: :class:`~amp.evaluation.errors.BootstrapError`)."""

    resamples: int = DEFAULT_RESAMPLES
    level: float = DEFAULT_LEVEL
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.resamples, bool) or not isinstance(self.resamples, int) or self.resamples < 1:
            raise BootstrapError(f"resamples must be a whole number >= 1, got {self.resamples!r}")
        if not 0.0 < float(self.level) < 1.0:
            raise BootstrapError(f"level must lie strictly between 0 and 1, got {self.level!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise BootstrapError(f"seed must be a whole number >= 0, got {self.seed!r}")


@dataclass(frozen=True)
class _Counts:
    """Per-sentence counts of one type, arrays of shape (sentences, ratios): records with a prediction,
    whose top-1 is LF0 / LF1 / either, with both LFs in the top k; P(LF0)'s sum, count and summed FIM terms."""

    ratios: tuple[float, ...]
    pred: np.ndarray
    lf0: np.ndarray
    lf1: np.ndarray
    either: np.ndarray
    hit: np.ndarray
    p_sum: np.ndarray
    p_count: np.ndarray
    fim_sum: np.ndarray


def _counts(df: pd.DataFrame, k: int | None, mode: str, fmt: str) -> _Counts:
    """The :class:`_Counts` of one type's rows that ran (``ratio`` NaN for zero-shot: one column);
    ZM_k's indicator only with ``k`` (few-shot tables have no ZM)."""
    keys = sentence_keys(df)
    sentences = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    raw = [float(r) for r in df["ratio"]]
    ratios = tuple(sorted({r for r in raw if not math.isnan(r)})) or (math.nan,)
    where = {r: j for j, r in enumerate(ratios)}
    shape = (len(sentences), len(ratios))
    arrays = {name: np.zeros(shape) for name in ("pred", "lf0", "lf1", "either", "hit", "p_sum", "p_count", "fim_sum")}
    for key, r, beams, lf0, lf1, p in zip(keys, raw, df["beams"], df["lf0"], df["lf1"], df["p_lf0"], strict=True):
        i, j = sentences[key], where.get(r, 0)
        if isinstance(beams, list | tuple) and len(beams):
            acc = metrics.top1_accuracy([beams[0]], [lf0], [lf1], mode, fmt=fmt)
            for name in ("lf0", "lf1", "either"):
                arrays[name][i, j] += acc[name]
            arrays["pred"][i, j] += 1
            if k is not None:
                arrays["hit"][i, j] += metrics.zm_k([(tuple(beams), lf0, lf1)], k, mode, fmt=fmt) / 100
        value = float("nan") if p is None else float(p)
        if not math.isnan(value):
            arrays["p_sum"][i, j] += value
            arrays["p_count"][i, j] += 1
            if not math.isnan(r):
                arrays["fim_sum"][i, j] += metrics.fim_error(value, r)
    return _Counts(ratios, **arrays)


def _ratio(num: np.ndarray, den: np.ndarray) -> float:
    total = float(den.sum())
    return float(num.sum()) / total if total else math.nan


def _cell_statistics(c: _Counts, j: int, k: int | None) -> dict[str, Callable[[np.ndarray], float]]:
    """Statistic of a resample (row indices into ``c``) per column name, for ratio column ``j`` (ZM_k with ``k``)."""
    pred, lf0, lf1, either, hit, p_sum, p_count = (np.ascontiguousarray(a[:, j]) for a in (
        c.pred, c.lf0, c.lf1, c.either, c.hit, c.p_sum, c.p_count))
    zm: dict[str, Callable[[np.ndarray], float]] = (
        {f"ZM_{k}": lambda rows: 100 * _ratio(hit[rows], pred[rows])} if k is not None else {})
    return {
        **zm,
        "acc_lf0": lambda rows: _ratio(lf0[rows], pred[rows]),
        "acc_lf1": lambda rows: _ratio(lf1[rows], pred[rows]),
        "neither": lambda rows: 1 - _ratio(either[rows], pred[rows]),
        "mean_p_lf0": lambda rows: _ratio(p_sum[rows], p_count[rows]),
    }


def _fdm(c: _Counts, rows: np.ndarray) -> float:
    """FDM of a resample: the mean over ratios with a prediction of d(r) (§13.4)."""
    pred = c.pred[rows].sum(axis=0)
    lf0, lf1 = c.lf0[rows].sum(axis=0), c.lf1[rows].sum(axis=0)
    terms = [metrics.fdm_distance(lf0[j] / pred[j], lf1[j] / pred[j], r) for j, r in enumerate(c.ratios) if pred[j]]
    return math.fsum(terms) / len(terms) if terms else math.nan


def _fim(c: _Counts, rows: np.ndarray) -> float:
    """FIM of a resample: the mean over scored ratios of the mean (P(LF0) − r)² (§13.5)."""
    count, errors = c.p_count[rows].sum(axis=0), c.fim_sum[rows].sum(axis=0)
    terms = [errors[j] / count[j] for j in range(len(c.ratios)) if count[j]]
    return math.fsum(terms) / len(terms) if terms else math.nan


def _interval(c: _Counts, statistic: Callable[[np.ndarray], float], boot: BootstrapSettings) -> tuple[float, float]:
    """(low, high) of ``statistic`` over resamples of the type's sentences."""
    if not len(c.pred):
        return math.nan, math.nan
    got = bootstrap_interval(range(len(c.pred)), lambda rows: statistic(np.asarray(rows, dtype=np.int64)),
                             resamples=boot.resamples, level=boot.level, seed=boot.seed)
    return got.low, got.high


def _insert(df: pd.DataFrame, bounds: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    """``df`` with ``<stat>_low``/``<stat>_high`` right after each statistic of ``bounds``."""
    cols: list[str] = []
    out = df.copy()
    for col in df.columns:
        cols.append(col)
        if col in bounds:
            low, high = interval_columns(col)
            out[low] = [lo for lo, _ in bounds[col]] if bounds[col] else []
            out[high] = [hi for _, hi in bounds[col]] if bounds[col] else []
            out[low] = out[low].astype("float64")
            out[high] = out[high].astype("float64")
            cols += [low, high]
    return out[cols]


def _mode_fmt(df: pd.DataFrame, mode: str | None) -> tuple[str, str]:
    """The records' mode (or ``mode``) and format, as the summaries read them."""
    return (single_setting(df, "mode", mode, DEFAULT_MODE, MODES),
            single_setting(df, "fmt", None, DEFAULT_FORMAT, FORMATS))


def zeroshot_with_intervals(records: Iterable[SweepRecord] | pd.DataFrame, k: int = 5, mode: str | None = None,
                            boot: BootstrapSettings = BootstrapSettings()) -> pd.DataFrame:
    """:func:`~amp.evaluation.sweep_summary.zeroshot_summary` with the intervals of :func:`zeroshot_stats`
    (columns ``<stat>_low``, ``<stat>_high`` after each), resampling each type's sentences (§21)."""
    df = records if isinstance(records, pd.DataFrame) else records_frame(records)
    summary = zeroshot_summary(df, k=k, mode=mode)
    mode, fmt = _mode_fmt(df, mode)
    bounds: dict[str, list[tuple[float, float]]] = {stat: [] for stat in zeroshot_stats(k)}
    for type_ in summary["type"]:
        c = _counts(ran_rows(df[df["type"] == type_]), k, mode, fmt)
        for stat, statistic in _cell_statistics(c, 0, k).items():
            bounds[stat].append(_interval(c, statistic, boot))
    return _insert(summary, bounds)


def fewshot_with_intervals(records: Iterable[SweepRecord] | pd.DataFrame, mode: str | None = None,
                           boot: BootstrapSettings = BootstrapSettings()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`~amp.evaluation.sweep_summary.fewshot_summary` with intervals: :data:`FEWSHOT_RATIO_STATS`
    per (type, ratio) and :data:`FEWSHOT_TYPE_STATS` per type, each resampling the type's sentences
    with all their ratios (§21)."""
    df = records if isinstance(records, pd.DataFrame) else records_frame(records)
    per_ratio, per_type = fewshot_summary(df, mode=mode)
    df = df[df["ratio"].notna()]
    mode, fmt = _mode_fmt(df, mode)
    ratio_bounds: dict[str, list[tuple[float, float]]] = {stat: [] for stat in FEWSHOT_RATIO_STATS}
    type_bounds: dict[str, list[tuple[float, float]]] = {stat: [] for stat in FEWSHOT_TYPE_STATS}
    counts = {t: _counts(ran_rows(df[df["type"] == t]), None, mode, fmt) for t in per_type["type"]}
    for type_, ratio in zip(per_ratio["type"], per_ratio["ratio"], strict=True):
        c = counts[type_]
        j = c.ratios.index(float(ratio)) if float(ratio) in c.ratios else None
        cells = _cell_statistics(c, j, None) if j is not None else {}
        for stat in FEWSHOT_RATIO_STATS:
            ratio_bounds[stat].append(_interval(c, cells[stat], boot) if stat in cells else (math.nan, math.nan))
    for type_ in per_type["type"]:
        c = counts[type_]
        type_bounds["FDM"].append(_interval(c, partial(_fdm, c), boot))
        type_bounds["FIM"].append(_interval(c, partial(_fim, c), boot))
    return _insert(per_ratio, ratio_bounds), _insert(per_type, type_bounds)

