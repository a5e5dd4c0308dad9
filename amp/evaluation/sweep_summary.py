"""Sweep summaries (pure): records → the paper's tables (FDM, FIM, ZM_k, top-1 accuracies, P(LF0),
semantic entropy).

:func:`fewshot_summary` (accuracy and P(LF0) per type and ratio, FDM and FIM per type) and
:func:`zeroshot_summary` (ZM_k, top-1 accuracies, P(LF0) per type) take
:class:`~amp.evaluation.sweep_run.SweepRecord` s or :func:`records_frame`'s DataFrame, work on
partial sweeps and return empty frames with the right columns on empty input.

Differences from the original, on purpose: ZM_k counts revscope like every other type (the
original's type-name mismatch made it 0, §13.3), and FDM is reported with its true range 0–2
(§13.4).  Section numbers "§n" refer to ``docs/paper-notes.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

import pandas as pd

from amp.data.types import order_types
from amp.evaluation import metrics
from amp.evaluation.errors import ExperimentError
from amp.evaluation.semantic_entropy import semantic_entropy
from amp.evaluation.sweep_run import RECORD_COLUMNS, SweepRecord
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, FORMATS, MODES

__all__ = [
    "FEWSHOT_PER_RATIO_COLUMNS",
    "FEWSHOT_PER_TYPE_COLUMNS",
    "MEANING_COLUMNS",
    "RECORD_VIEW_FIRST",
    "fewshot_summary",
    "json_cells",
    "records_frame",
    "ran_rows",
    "records_view",
    "sentence_keys",
    "single_setting",
    "zeroshot_columns",
    "zeroshot_summary",
]


def records_frame(records: Iterable[SweepRecord]) -> pd.DataFrame:
    """The records as a DataFrame, one row per record, columns :data:`RECORD_COLUMNS`.

    ``ratio``, the probabilities and ranks are float columns (NaN = missing); empty input gives
    an empty frame with the same columns.
    """
    rows = [asdict(r) for r in records]
    df = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    for col in ("ratio", "lf0_rank", "lf1_rank", "p_lf0", "p_lf0_total", "p_lf0_parted", "min_prob_lf0",
                "min_prob_lf1"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    df["cached"] = df["cached"].astype(bool)
    return df


#: The columns a person reads first in a records table: which reading won at top-1, and P(LF0).
RECORD_VIEW_FIRST: tuple[str, ...] = ("match", "p_lf0")


def records_view(records: Iterable[SweepRecord]) -> pd.DataFrame:
    """:func:`records_frame` with :data:`RECORD_VIEW_FIRST` as the first columns (the pages' tables and CSVs)."""
    df = records_frame(records)
    return df[[*RECORD_VIEW_FIRST, *(c for c in df.columns if c not in RECORD_VIEW_FIRST)]]


def _frame(records: Iterable[SweepRecord] | pd.DataFrame) -> pd.DataFrame:
    if isinstance(records, pd.DataFrame):
        missing = [c for c in ("type", "ratio", "lf0", "lf1", "beams", "p_lf0") if c not in records.columns]
        if missing:
            raise ExperimentError(f"records frame lacks column(s) {missing}; build it with records_frame()")
        return records
    return records_frame(records)


def single_setting(df: pd.DataFrame, column: str, override: str | None, default: str, allowed: Sequence[str]) -> str:
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
    # astype(bool): on no rows, map gives an object Series, which pandas would read as column labels
    return df[df["beams"].map(lambda b: isinstance(b, list | tuple) and len(b) > 0).astype(bool)]


def ran_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows that ran (no error)."""
    return df[df["error"].isna()] if "error" in df.columns else df


def _scored(df: pd.DataFrame) -> list[float]:
    """The non-missing P(LF0) values of rows that ran."""
    df = ran_rows(df)
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


#: The meaning-level uncertainty columns of every summary (docs/paper-notes.md §17): the mean over
#: sentences of the beams' semantic entropy (nats) and of their mass on LF0, LF1 and neither.
MEANING_COLUMNS: tuple[str, ...] = ("semantic_entropy", "mass_lf0", "mass_lf1", "mass_neither")


def _meanings(df: pd.DataFrame, mode: str, fmt: str) -> dict[str, float]:
    """Mean semantic entropy and mass on LF0/LF1/neither of the rows' beams
    (:func:`amp.evaluation.semantic_entropy.semantic_entropy`, weights ``beam_shares``; equal
    weights for records without them); NaN on no rows."""
    values = []
    shares_col = df["beam_shares"] if "beam_shares" in df.columns else [()] * len(df)
    for beams, shares, lf0, lf1 in zip(df["beams"], shares_col, df["lf0"], df["lf1"], strict=True):
        weights = list(shares) if isinstance(shares, list | tuple) and len(shares) == len(beams) else None
        if weights is not None and sum(weights) <= 0:
            weights = None
        se = semantic_entropy(list(beams), weights, lf0, lf1, mode=mode, fmt=fmt)
        values.append((se.entropy, se.p_lf0, se.p_lf1, se.p_neither))
    if not values:
        return dict.fromkeys(MEANING_COLUMNS, math.nan)
    return {col: math.fsum(v[i] for v in values) / len(values) for i, col in enumerate(MEANING_COLUMNS)}


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
    "mean_p_lf0", "std_p_lf0", "sem_p_lf0", "n_p_lf0", *MEANING_COLUMNS, "n_errors",
)
#: Columns of :func:`fewshot_summary`'s per-type frame: ``n`` counts test sentences, ``n_records``
#: their records (one per sentence and ratio).
FEWSHOT_PER_TYPE_COLUMNS: tuple[str, ...] = ("type", "FDM", "FIM", "n", "n_records", "n_ratios", "n_errors")


def zeroshot_columns(k: int) -> tuple[str, ...]:
    """Columns of :func:`zeroshot_summary` for ``k``."""
    return ("type", "n", f"ZM_{k}", "acc_lf0", "acc_lf1", "neither", "mean_p_lf0", "mean_p_lf0_total",
            *MEANING_COLUMNS, "n_errors")


def sentence_keys(df: pd.DataFrame) -> list[tuple[str, ...]]:
    """One key per row naming its test sentence, ``(type, surface, lf0, lf1)`` — the pair a sweep drew
    (:func:`amp.data.generate.sample_pairs` draws distinct pairs): a few-shot sentence has one record
    per ratio, all with the same key.  What ``n`` counts and the bootstrap resamples (§21)."""
    names = df["surface"] if "surface" in df.columns else df["id"] if "id" in df.columns else df.index
    return [(str(t), str(s), str(a), str(b)) for t, s, a, b in zip(df["type"], names, df["lf0"], df["lf1"], strict=True)]


def json_cells(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every list or tuple cell (beams, beam shares) written as a JSON list, for CSVs
    that any reader parses with ``json.loads`` (not Python's tuple syntax)."""
    out = df.copy()
    for col in out.columns:
        if out[col].map(lambda v: isinstance(v, list | tuple)).any():
            out[col] = out[col].map(lambda v: json.dumps(list(v), ensure_ascii=False)
                                    if isinstance(v, list | tuple) else v)
    return out


def _n_errors(df: pd.DataFrame) -> int:
    return int(df["error"].notna().sum()) if "error" in df.columns else 0


def fewshot_summary(
    records: Iterable[SweepRecord] | pd.DataFrame, mode: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Few-shot results per (type, ratio) and per type (paper §4, Fig. 6; docs/paper-notes.md §13.4–13.5).

    Returns ``(per_ratio, per_type)``:

    * ``per_ratio`` — :data:`FEWSHOT_PER_RATIO_COLUMNS`: ``n`` sentences with a prediction,
      ``acc_lf0``/``acc_lf1`` the fractions (0–1) whose top beam is LF0/LF1, ``neither`` the
      fraction that is neither (including unparseable), mean/std/sem of P(LF0) over the
      ``n_p_lf0`` scored sentences, :data:`MEANING_COLUMNS` (mean semantic entropy of the beams'
      meanings and their mass on LF0, LF1 and neither, docs/paper-notes.md §17), and ``n_errors`` items that failed to run (they are left
      out of everything else).
    * ``per_type`` — :data:`FEWSHOT_PER_TYPE_COLUMNS`: ``FDM`` (paper Eq. 2, :func:`amp.evaluation.metrics.fdm`)
      = mean over ratios of |acc_lf0 − r| + |acc_lf1 − (1 − r)|, **range 0–2** (the paper says
      0–1, docs/paper-notes.md §13.4), lower is better; ``FIM`` (paper Eq. 3, :func:`amp.evaluation.metrics.fim`) =
      mean over ratios of the mean (P(LF0) − r)², range 0–1; ``n`` test sentences (one record each
      per ratio), ``n_records`` records, the ``n_ratios`` ratios they cover, ``n_errors``.

    Works on a partial sweep — records arriving one by one; the metrics then average over the
    ratios seen so far — and on empty input (empty frames with these columns).  Matching uses
    ``mode`` ("logical"/"paper"; default: the mode the records were made with), so the
    canonicaliser can be switched without running the model again.
    """
    df = _frame(records)
    df = df[df["ratio"].notna()]
    mode = single_setting(df, "mode", mode, DEFAULT_MODE, MODES)
    fmt = single_setting(df, "fmt", None, DEFAULT_FORMAT, FORMATS)
    per_ratio_rows: list[dict[str, Any]] = []
    per_type_rows: list[dict[str, Any]] = []
    for type_ in order_types(df["type"]):
        sub = df[df["type"] == type_]
        ratio_rows = [_fewshot_ratio(sub[sub["ratio"] == r], type_, r, mode, fmt)
                      for r in sorted(float(r) for r in sub["ratio"].unique())]
        per_ratio_rows += [row for row, _, _ in ratio_rows]
        fdm_input = {row["ratio"]: triples for row, triples, _ in ratio_rows if row["n"]}
        fim_input = {row["ratio"]: ps for row, _, ps in ratio_rows if ps}
        per_type_rows.append({
            "type": type_,
            "FDM": metrics.fdm(fdm_input, mode, fmt=fmt),
            "FIM": metrics.fim(fim_input),
            "n": len(set(sentence_keys(ran_rows(sub)))),
            "n_records": len(sub) - _n_errors(sub),
            "n_ratios": int(sub["ratio"].nunique()),
            "n_errors": _n_errors(sub),
        })
    per_ratio = pd.DataFrame(per_ratio_rows, columns=list(FEWSHOT_PER_RATIO_COLUMNS))
    per_type = pd.DataFrame(per_type_rows, columns=list(FEWSHOT_PER_TYPE_COLUMNS))
    return (
        _typed(per_ratio, ints=("n", "n_p_lf0", "n_errors")),
        _typed(per_type, ints=("n", "n_records", "n_ratios", "n_errors")),
    )


def _fewshot_ratio(
    rows: pd.DataFrame, type_: str, ratio: float, mode: str, fmt: str
) -> tuple[dict[str, Any], list[tuple[str | None, str, str]], list[float]]:
    """One (type, ratio) row of :func:`fewshot_summary`, with its FDM triples and FIM P(LF0) values."""
    predicted = _predictions(rows)
    n, acc0, acc1, neither = _accuracies(predicted, mode, fmt)
    ps = _scored(rows)
    mean, std, sem = _p_stats(ps)
    row = {
        "type": type_, "ratio": ratio, "n": n, "acc_lf0": acc0, "acc_lf1": acc1,
        "neither": neither, "mean_p_lf0": mean, "std_p_lf0": std, "sem_p_lf0": sem,
        "n_p_lf0": len(ps), **_meanings(predicted, mode, fmt), "n_errors": _n_errors(rows),
    }
    return row, _triples(predicted) if n else [], ps


def zeroshot_summary(
    records: Iterable[SweepRecord] | pd.DataFrame, k: int = 5, mode: str | None = None
) -> pd.DataFrame:
    """Zero-shot results per type (paper §3: Table 2, Fig. 2, Fig. 3; docs/paper-notes.md §13.2–13.3).

    Columns ``zeroshot_columns(k)``: ``n`` sentences with a prediction; ``ZM_<k>`` (paper
    Eq. 1, :func:`amp.evaluation.metrics.zm_k`) the **percentage** (0–100) of them with *both* gold LFs
    among the top k beams; ``acc_lf0``/``acc_lf1`` top-1 accuracies and ``neither`` (fractions
    0–1, Fig. 2); ``mean_p_lf0`` (min-prob normalised, the paper's definition) and
    ``mean_p_lf0_total`` (total-prob normalised, what Fig. 3 plotted); :data:`MEANING_COLUMNS`
    (mean semantic entropy of the beams' meanings, their mass on LF0/LF1/neither, §17); ``n_errors`` failed items
    (left out of the rest).  Partial input works; empty input gives an empty frame with these
    columns.  ``mode`` as in :func:`fewshot_summary`.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ExperimentError(f"k must be a whole number >= 1, not {k!r}")
    df = _frame(records)
    mode = single_setting(df, "mode", mode, DEFAULT_MODE, MODES)
    fmt = single_setting(df, "fmt", None, DEFAULT_FORMAT, FORMATS)
    rows: list[dict[str, Any]] = []
    for type_ in order_types(df["type"]):
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
            **_meanings(predicted, mode, fmt),
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
