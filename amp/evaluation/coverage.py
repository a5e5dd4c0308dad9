"""Interpretation coverage of zero-shot parses: recall, precision and both-found over k (pure).

The AmP paper scores a zero-shot beam with ZM_k (paper Eq. 1; :func:`amp.evaluation.metrics.zm_k`):
whether *both* gold readings are among the top k beams.  Ambiguity benchmarks after AmP report the
same question as coverage of a set of interpretations (e.g. AMBROSIA, Saparina & Lapata 2024:
recall, precision and "all found"); these are those coverage measures for the two AmP readings.

For one test sentence, its ranked beams and its gold LF0 and LF1, the **top-k distinct
interpretations** T_k are the first k beams with distinct canonical forms in ``mode`` (beams that
do not parse are dropped), exactly as :func:`amp.evaluation.interpretations.distinct_from_beams`
keeps them.  Then, per item and k:

* **recall** = |{LF0, LF1} ∩ T_k| / 2 — the fraction of the two readings found;
* **precision** = |{t ∈ T_k : t is LF0 or LF1}| / |T_k| — the fraction of the interpretations
  offered that are a reading.  An item with **no** parseable beam offers nothing (|T_k| = 0); its
  precision is undefined and it is **left out of the precision mean** (as FIM leaves out an
  undefined P(LF0), docs/paper-notes.md §13.5); ``n_precision`` says how many items the mean is over, and
  with none it is NaN;
* **both found** = 1[LF0 ∈ T_k] · 1[LF1 ∈ T_k].

"Is a reading" is canonical equality with a gold LF, the judgement of
:func:`amp.evaluation.matching.match_lf`: if the two golds canonicalise alike in ``mode`` (its
``both``), one interpretation finds both readings.  A gold LF that does not parse is a
:class:`~amp.errors.MetricError`, as for ZM_k.

Per type, the measures are averaged over the items that ran and have beams (the ``n`` of
:func:`amp.evaluation.sweep_summary.zeroshot_summary`; failed items are left out), for k = 1 … K.
Beside them each point carries ZM_k of the same items on the raw beams, in percent like the
paper's Table 2.  Because T_k holds at least the interpretations of the top k beams, both-found
at k is never below ZM_k / 100; the two are equal when the top beams are all distinct and parse.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import pandas as pd

from amp.data.types import order_types
from amp.errors import MetricError
from amp.evaluation import metrics
from amp.evaluation.interpretations import distinct_from_beams
from amp.evaluation.matching import gold_key
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, MODES
from amp.parser.core.limits import MAX_WIDTH
from amp.records import JsonRecord, NanAsNull

__all__ = [
    "COVERAGE_COLUMNS",
    "CoveragePoint",
    "ItemCoverage",
    "coverage_curves",
    "coverage_frame",
    "item_coverage",
]


class ZeroShotRecord(Protocol):
    """What coverage reads of a zero-shot record (:class:`~amp.evaluation.sweep_run.SweepRecord` has it)."""

    @property
    def type(self) -> str: ...
    @property
    def beams(self) -> Sequence[str]: ...
    @property
    def lf0(self) -> str: ...
    @property
    def lf1(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def mode(self) -> str: ...
    @property
    def fmt(self) -> str: ...


@dataclass(frozen=True)
class ItemCoverage(JsonRecord):
    """One item's top-k distinct interpretations T_k, counted: which readings, how many in all."""

    k: int
    found_lf0: bool
    found_lf1: bool
    n_distinct: int  #: |T_k| (at most k; fewer when the beams hold fewer distinct readings)
    n_readings: int  #: interpretations in T_k that are LF0 or LF1 (0, 1 or 2)

    @property
    def recall(self) -> float:
        """|{LF0, LF1} ∩ T_k| / 2."""
        return (self.found_lf0 + self.found_lf1) / 2

    @property
    def precision(self) -> float:
        """|readings in T_k| / |T_k|; NaN when T_k is empty (no beam parses)."""
        return self.n_readings / self.n_distinct if self.n_distinct else math.nan

    @property
    def both_found(self) -> bool:
        """Both readings in T_k."""
        return self.found_lf0 and self.found_lf1


@dataclass(frozen=True)
class CoveragePoint(JsonRecord):
    """The coverage of one type at one k, averaged over its ``n`` items (fractions 0–1; ``zm`` in %).

    ``precision`` is the mean over the ``n_precision`` items with at least one parseable beam
    (NaN without any); ``mean_distinct`` the mean |T_k|; ``zm`` is ZM_k (paper Eq. 1, percent)
    of the same items on their raw beams.  All NaN when ``n`` is 0.
    """

    type: str
    k: int
    n: int
    recall: NanAsNull
    precision: NanAsNull
    both_found: NanAsNull
    zm: NanAsNull
    n_precision: int
    mean_distinct: NanAsNull


#: Columns of :func:`coverage_frame` (the :class:`CoveragePoint` fields), in order.
COVERAGE_COLUMNS: tuple[str, ...] = ("type", "k", "n", "recall", "precision", "both_found", "zm", "n_precision",
                                     "mean_distinct")


def _check_k(max_k: object) -> int:
    if isinstance(max_k, bool) or not isinstance(max_k, int) or not 1 <= max_k <= MAX_WIDTH:
        raise MetricError(f"k must be a whole number from 1 to {MAX_WIDTH}, not {max_k!r}")
    return max_k


def item_coverage(
    beams: Sequence[str], lf0: str, lf1: str, max_k: int, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT
) -> tuple[ItemCoverage, ...]:
    """One item's coverage at k = 1 … ``max_k`` (see the module docstring), one record per k.

    The distinct interpretations are found once: T_k is the first k of the first ``max_k``.
    """
    _check_k(max_k)
    if isinstance(beams, str):
        raise MetricError("beams must be a list of strings (best first), not one string")
    key0, key1 = gold_key(lf0, mode, fmt), gold_key(lf1, mode, fmt)
    keys = [i.canonical for i in distinct_from_beams(list(beams), max_k, mode, fmt)]
    out: list[ItemCoverage] = []
    for k in range(1, max_k + 1):
        top = keys[:k]
        out.append(ItemCoverage(k=k, found_lf0=key0 in top, found_lf1=key1 in top, n_distinct=len(top),
                                n_readings=sum(t in (key0, key1) for t in top)))
    return tuple(out)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _one_mode(records: Sequence[ZeroShotRecord], mode: str | None) -> str:
    if mode is not None:
        if mode not in MODES:
            raise MetricError(f"mode must be one of {MODES}, not {mode!r}")
        return mode
    modes = {r.mode for r in records}
    if len(modes) > 1:
        raise MetricError(f"records mix several modes {sorted(modes)}; pass mode=")
    return modes.pop() if modes else DEFAULT_MODE


def _type_points(type_: str, rows: Sequence[ZeroShotRecord], max_k: int, mode: str) -> list[CoveragePoint]:
    per_item = [item_coverage(r.beams, r.lf0, r.lf1, max_k, mode, r.fmt) for r in rows]
    fmts = {r.fmt for r in rows}
    if len(fmts) > 1:
        raise MetricError(f"{type_} records mix several formats {sorted(fmts)}")
    fmt = fmts.pop() if fmts else DEFAULT_FORMAT
    examples = [(tuple(r.beams), r.lf0, r.lf1) for r in rows]
    points = []
    for k in range(1, max_k + 1):
        at_k = [item[k - 1] for item in per_item]
        precisions = [c.precision for c in at_k if c.n_distinct]
        points.append(CoveragePoint(
            type=type_, k=k, n=len(at_k),
            recall=_mean([c.recall for c in at_k]),
            precision=_mean(precisions),
            both_found=_mean([float(c.both_found) for c in at_k]),
            zm=metrics.zm_k(examples, k, mode, fmt=fmt),
            n_precision=len(precisions),
            mean_distinct=_mean([float(c.n_distinct) for c in at_k]),
        ))
    return points


def coverage_curves(
    records: Iterable[ZeroShotRecord], max_k: int | None = None, mode: str | None = None
) -> list[CoveragePoint]:
    """Coverage per type (registry order) and k = 1 … ``max_k``, from zero-shot records.

    ``records`` are :class:`~amp.evaluation.sweep_run.SweepRecord` s (or anything with ``type``,
    ``beams``, ``lf0``, ``lf1``, ``error``, ``mode``, ``fmt``); records with an error or without
    beams are left out, as in :func:`amp.evaluation.sweep_summary.zeroshot_summary`.  ``max_k``
    defaults to the longest beam list (at least 1); ``mode`` to the records' one mode (mixed
    modes are a MetricError), so the canonicaliser can be switched without a model.
    """
    rows = list(records)
    mode = _one_mode(rows, mode)
    used = [r for r in rows if r.error is None and len(r.beams) > 0]
    if max_k is None:
        max_k = min(MAX_WIDTH, max([len(r.beams) for r in used], default=1))
    _check_k(max_k)
    points: list[CoveragePoint] = []
    for type_ in order_types(r.type for r in rows):
        points += _type_points(type_, [r for r in used if r.type == type_], max_k, mode)
    return points


def coverage_frame(points: Iterable[CoveragePoint]) -> pd.DataFrame:
    """The points as a table (columns :data:`COVERAGE_COLUMNS`; the CSV of the coverage curves)."""
    df = pd.DataFrame([asdict(p) for p in points], columns=list(COVERAGE_COLUMNS))
    for col in ("k", "n", "n_precision"):
        df[col] = df[col].astype("int64")
    for col in ("recall", "precision", "both_found", "zm", "mean_distinct"):
        df[col] = df[col].astype("float64")
    df["type"] = df["type"].astype(object)
    return df
