"""Calibration of P(LF0) at the divergence point (pure): reliability tables, ECE, Brier, poll agreement.

P(LF0) (paper §2/§4; docs/paper-notes.md §12) is the model's probability of the first reading where the
two gold LFs diverge.  A calibrated model's P(LF0) is also how often its top beam *is* LF0:
among the sentences with P(LF0) ≈ 0.7, about 70 % should be parsed as LF0.
:func:`calibrate` checks that on sweep records (:class:`~amp.evaluation.sweep_run.SweepRecord`),
overall, per ambiguity type and per prompt ratio r, with the measures of Guo et al. 2017
("On Calibration of Modern Neural Networks", ICML, §2):

* a **reliability table** — P(LF0) cut into B equal-width bins; per bin the count n_b, the mean
  predicted P(LF0) ``conf_b`` and the observed rate ``acc_b`` of top-1 = LF0;
* **ECE** (expected calibration error) = Σ_b (n_b / N) · |acc_b − conf_b|, 0 = calibrated;
* **Brier score** = (1/N) Σ_i (p_i − y_i)², y_i = 1 when the top beam is LF0 (Brier 1950).

Decisions made once, here:

* **y = 1** when the top beam's :attr:`~amp.evaluation.sweep_run.SweepRecord.match` is ``lf0``
  *or* ``both`` (a beam equal to both golds is LF0 too — the same rule as the top-1 LF0 accuracy,
  :func:`amp.evaluation.metrics.top1_accuracy`); ``lf1``, ``neither`` and ``unparseable`` are
  y = 0 (not LF0).
* **Left out, and counted**: records with an ``error`` (``n_errors``), without a finite P(LF0)
  (``n_unscored``) and without beams, ``match == "missing"`` (``n_unparsed``) — they have no
  prediction or no probability to compare.  The sweep summaries leave the same records out.
* **Bins** are [k/B, (k+1)/B), the last one closed: P(LF0) = 1.0 falls in the last bin.  B is
  a whole number from :data:`MIN_BINS` to :data:`MAX_BINS` (default :data:`DEFAULT_BINS`).
* **Nothing left** gives ``None`` for ECE, Brier and the per-bin means, never 0.
* ``match`` is read as stored: to switch the canonicaliser, re-label the records first with
  :func:`amp.evaluation.sweep_run.rematch`.

:func:`poll_agreement` sets the model's P(LF0) beside a class poll's P(LF0) for the same
sentences (paper Fig. 5's model-vs-human analogue): Pearson's r and the mean absolute
difference.  It takes plain ``(surface, model_p, class_p)`` tuples, so this layer never reads
polls (the teaching layer, :mod:`amp.teaching.poll_calibration`, turns stored polls into them).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from amp.data.types import order_types
from amp.evaluation.errors import CalibrationError
from amp.evaluation.matching import is_lf0_like
from amp.evaluation.sweep_run import SweepRecord
from amp.records import JsonRecord

__all__ = [
    "DEFAULT_BINS",
    "MAX_BINS",
    "MAX_POLL_POINTS",
    "MIN_BINS",
    "RELIABILITY_COLUMNS",
    "SUMMARY_COLUMNS",
    "AgreementPoint",
    "Calibration",
    "CalibrationError",
    "CalibrationReport",
    "GroupBy",
    "PollAgreement",
    "ReliabilityBin",
    "agreement_frame",
    "calibrate",
    "calibration_of",
    "check_bins",
    "poll_agreement",
    "ratio_label",
    "reliability_frame",
    "summary_frame",
]

DEFAULT_BINS = 10
MIN_BINS = 2
MAX_BINS = 50
#: At most this many (sentence, model, class) points in one :func:`poll_agreement`.
MAX_POLL_POINTS = 50_000

GroupBy = Literal["all", "type", "ratio"]


@dataclass(frozen=True)
class ReliabilityBin(JsonRecord):
    """One bin of a reliability table: P(LF0) in [``lower``, ``upper``) (the last bin closed).

    ``n`` records fell in it; ``mean_p_lf0`` is their mean predicted P(LF0) (conf_b),
    ``observed_lf0`` the fraction whose top beam is LF0 (acc_b); both ``None`` for an empty bin.
    """

    index: int
    lower: float
    upper: float
    n: int
    mean_p_lf0: float | None
    observed_lf0: float | None

    @property
    def gap(self) -> float | None:
        """acc_b − conf_b: positive = the model picks LF0 more often than its P(LF0) says."""
        if self.mean_p_lf0 is None or self.observed_lf0 is None:
            return None
        return self.observed_lf0 - self.mean_p_lf0


@dataclass(frozen=True)
class Calibration(JsonRecord):
    """The reliability table, ECE and Brier score of one group of records.

    ``group_by`` is ``"all"``, ``"type"`` or ``"ratio"``; ``group`` is ``"all"``, the type id or
    the ratio (:func:`ratio_label`, ``ratio`` holds it as a number).  ``n`` records were used;
    ``n_errors``/``n_unscored``/``n_unparsed`` were left out (see the module docstring).
    """

    group_by: str
    group: str
    bins: tuple[ReliabilityBin, ...]
    n: int
    ece: float | None
    brier: float | None
    n_errors: int = 0
    n_unscored: int = 0
    n_unparsed: int = 0
    ratio: float | None = None

    @property
    def n_left_out(self) -> int:
        return self.n_errors + self.n_unscored + self.n_unparsed


@dataclass(frozen=True)
class CalibrationReport(JsonRecord):
    """:func:`calibrate`'s result: all records, then per type (registry order) and per ratio (ascending)."""

    n_bins: int
    overall: Calibration
    per_type: tuple[Calibration, ...]
    per_ratio: tuple[Calibration, ...]

    def groups(self, by: GroupBy) -> tuple[Calibration, ...]:
        """The calibrations of one grouping: ``(overall,)``, ``per_type`` or ``per_ratio``."""
        if by == "all":
            return (self.overall,)
        if by == "type":
            return self.per_type
        if by == "ratio":
            return self.per_ratio
        raise CalibrationError(f"group by 'all', 'type' or 'ratio', not {by!r}")


def ratio_label(ratio: float) -> str:
    """A ratio as a group name: ``0.5`` → ``"0.5"``, ``1.0`` → ``"1"``."""
    return f"{float(ratio):g}"


def check_bins(bins: object) -> int:
    """``bins`` if it is a whole number in [:data:`MIN_BINS`, :data:`MAX_BINS`], else :class:`CalibrationError`."""
    if isinstance(bins, bool) or not isinstance(bins, int) or not MIN_BINS <= bins <= MAX_BINS:
        raise CalibrationError(f"the number of P(LF0) bins must be a whole number from {MIN_BINS} to {MAX_BINS}, "
                               f"not {bins!r}")
    return bins


def _bin_index(p: float, n_bins: int) -> int:
    """The equal-width bin of ``p`` in [0, 1]; 1.0 goes into the last bin."""
    return min(int(p * n_bins), n_bins - 1)


def _usable(record: SweepRecord) -> tuple[str, float | None, int]:
    """(why left out — "" if used —, P(LF0), y) of one record; a P(LF0) outside [0, 1] is an error."""
    if not isinstance(record, SweepRecord):
        raise CalibrationError(f"calibration takes SweepRecords (from a sweep), got {type(record).__name__}")
    if record.error is not None:
        return "error", None, 0
    p = record.p_lf0
    if p is None or isinstance(p, bool) or not isinstance(p, int | float) or math.isnan(p):
        return "unscored", None, 0
    if not 0.0 <= p <= 1.0:
        raise CalibrationError(f"record {record.id!r}: P(LF0) must lie in [0, 1], got {p!r}")
    if record.match == "missing":
        return "unparsed", None, 0
    return "", float(p), int(is_lf0_like(record.match))


def calibration_of(
    records: Iterable[SweepRecord], bins: int = DEFAULT_BINS, *, group_by: str = "all", group: str = "all",
    ratio: float | None = None,
) -> Calibration:
    """Reliability table, ECE and Brier score (Guo et al. 2017, §2; Brier 1950) of ``records``.

    ECE = Σ_b (n_b / N) · |acc_b − conf_b| over the non-empty bins; Brier = (1/N) Σ (p − y)².
    ``group_by``/``group``/``ratio`` only label the result.  See the module docstring for y and
    for the records left out.
    """
    n_bins = check_bins(bins)
    left = {"error": 0, "unscored": 0, "unparsed": 0}
    counts, p_sums, y_sums = [0] * n_bins, [0.0] * n_bins, [0] * n_bins
    squared = 0.0
    for record in records:
        why, p, y = _usable(record)
        if p is None:
            left[why] += 1
            continue
        k = _bin_index(p, n_bins)
        counts[k] += 1
        p_sums[k] += p
        y_sums[k] += y
        squared += (p - y) ** 2
    n = sum(counts)
    table = tuple(
        ReliabilityBin(index=k, lower=k / n_bins, upper=(k + 1) / n_bins, n=c,
                       mean_p_lf0=p_sums[k] / c if c else None, observed_lf0=y_sums[k] / c if c else None)
        for k, c in enumerate(counts)
    )
    ece = sum(b.n / n * abs(b.gap) for b in table if b.gap is not None) if n else None
    return Calibration(group_by=group_by, group=group, bins=table, n=n, ece=ece, brier=squared / n if n else None,
                       n_errors=left["error"], n_unscored=left["unscored"], n_unparsed=left["unparsed"], ratio=ratio)


def calibrate(records: Iterable[SweepRecord], bins: int = DEFAULT_BINS) -> CalibrationReport:
    """:func:`calibration_of` over all ``records``, per type and per ratio (records without a ratio,
    zero-shot ones, are in the overall and per-type groups only).  Empty input works (n = 0)."""
    n_bins = check_bins(bins)
    rows = list(records)
    for r in rows:
        _usable(r)  # a bad record is an error before any grouping
    per_type = tuple(
        calibration_of([r for r in rows if r.type == t], n_bins, group_by="type", group=t)
        for t in order_types({r.type for r in rows})
    )
    ratios = sorted({float(r.ratio) for r in rows if r.ratio is not None})
    per_ratio = tuple(
        calibration_of([r for r in rows if r.ratio is not None and float(r.ratio) == q], n_bins,
                       group_by="ratio", group=ratio_label(q), ratio=q)
        for q in ratios
    )
    return CalibrationReport(n_bins=n_bins, overall=calibration_of(rows, n_bins), per_type=per_type,
                             per_ratio=per_ratio)


#: Columns of :func:`reliability_frame`: one row per group and bin.
RELIABILITY_COLUMNS: tuple[str, ...] = (
    "group_by", "group", "bin", "lower", "upper", "n", "mean_p_lf0", "observed_lf0", "gap",
)
#: Columns of :func:`summary_frame`: one row per group.
SUMMARY_COLUMNS: tuple[str, ...] = (
    "group_by", "group", "n", "ece", "brier", "n_errors", "n_unscored", "n_unparsed",
)


def _all_groups(report: CalibrationReport) -> tuple[Calibration, ...]:
    return (report.overall, *report.per_type, *report.per_ratio)


def reliability_frame(report: CalibrationReport) -> pd.DataFrame:
    """Every group's reliability table as one frame (:data:`RELIABILITY_COLUMNS`; NaN = empty bin)."""
    rows = [
        {"group_by": c.group_by, "group": c.group, "bin": b.index, "lower": b.lower, "upper": b.upper, "n": b.n,
         "mean_p_lf0": b.mean_p_lf0, "observed_lf0": b.observed_lf0, "gap": b.gap}
        for c in _all_groups(report) for b in c.bins
    ]
    df = pd.DataFrame(rows, columns=list(RELIABILITY_COLUMNS))
    for col in ("mean_p_lf0", "observed_lf0", "gap"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    return df


def summary_frame(report: CalibrationReport) -> pd.DataFrame:
    """ECE, Brier score and counts of every group (:data:`SUMMARY_COLUMNS`; NaN = no records)."""
    rows = [
        {"group_by": c.group_by, "group": c.group, "n": c.n, "ece": c.ece, "brier": c.brier,
         "n_errors": c.n_errors, "n_unscored": c.n_unscored, "n_unparsed": c.n_unparsed}
        for c in _all_groups(report)
    ]
    df = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    for col in ("ece", "brier"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    return df


# --------------------------------------------------------------------------- model vs class poll


@dataclass(frozen=True)
class AgreementPoint(JsonRecord):
    """One sentence: the model's P(LF0) and the class's P(LF0) (paper Appendix A.5 conversion)."""

    surface: str
    model_p_lf0: float
    class_p_lf0: float


@dataclass(frozen=True)
class PollAgreement(JsonRecord):
    """Model vs class P(LF0) per sentence (the paper's Fig. 5 analogue).

    ``pearson_r`` is Pearson's correlation of the two (``None`` with fewer than 2 points or when
    either side has no spread: every value equal); ``mean_abs_diff`` the mean |model − class|
    (``None`` without points).
    """

    points: tuple[AgreementPoint, ...]
    pearson_r: float | None
    mean_abs_diff: float | None

    @property
    def n(self) -> int:
        return len(self.points)


def _probability(value: object, what: str, where: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise CalibrationError(f"point {where}: {what} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _point(where: int, pair: object) -> AgreementPoint:
    if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 3:
        raise CalibrationError(f"point {where}: expected a (surface, model_p, class_p) tuple, got {pair!r:.80}")
    surface, model_p, class_p = pair
    if not isinstance(surface, str):
        raise CalibrationError(f"point {where}: the sentence must be a string, got {type(surface).__name__}")
    return AgreementPoint(surface, _probability(model_p, "the model's P(LF0)", where),
                          _probability(class_p, "the class's P(LF0)", where))


def poll_agreement(pairs: Iterable[Sequence[object]]) -> PollAgreement:
    """Pearson's r and the mean absolute difference of model vs class P(LF0), one point per sentence.

    ``pairs`` are ``(surface, model_p_lf0, class_p_lf0)`` tuples, probabilities in [0, 1]
    (:class:`CalibrationError` otherwise; at most :data:`MAX_POLL_POINTS`).  r = cov(x, y) /
    (σ_x σ_y) (:func:`statistics.correlation`).
    """
    points: list[AgreementPoint] = []
    for i, pair in enumerate(pairs):
        if i >= MAX_POLL_POINTS:
            raise CalibrationError(f"at most {MAX_POLL_POINTS} sentences can be compared at once")
        points.append(_point(i, pair))
    xs = [p.model_p_lf0 for p in points]
    ys = [p.class_p_lf0 for p in points]
    spread = len(set(xs)) > 1 and len(set(ys)) > 1
    r = None
    if len(points) >= 2 and spread:
        try:
            r = max(-1.0, min(1.0, statistics.correlation(xs, ys)))
        except statistics.StatisticsError:  # a spread too small to divide by
            r = None
    mad = sum(abs(x - y) for x, y in zip(xs, ys, strict=True)) / len(points) if points else None
    return PollAgreement(points=tuple(points), pearson_r=r, mean_abs_diff=mad)


def agreement_frame(agreement: PollAgreement) -> pd.DataFrame:
    """One row per sentence: ``surface``, ``model_p_lf0``, ``class_p_lf0``, ``difference`` (model − class)."""
    rows = [{"surface": p.surface, "model_p_lf0": p.model_p_lf0, "class_p_lf0": p.class_p_lf0,
             "difference": p.model_p_lf0 - p.class_p_lf0} for p in agreement.points]
    return pd.DataFrame(rows, columns=["surface", "model_p_lf0", "class_p_lf0", "difference"])
