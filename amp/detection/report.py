"""The ambiguity-detection report: the data, the uncertainty signals and the probes in one record
(docs/paper-notes.md §22), and its flat table (``ambiguity_detection.csv``, ``amp detect --csv``).

:func:`detection_report` builds the detection set (:func:`amp.detection.dataset.build_detection_set`)
and runs what is asked: the signals (:func:`amp.detection.signals.run_signals`) and the probes
(:func:`amp.detection.probe.run_probes`).  Each part is cached under the parser's keys (model,
runtime, the set's digest, every setting, the code digest), so the report of a finished run is
rebuilt from the cache without a model call.  :func:`report_rows` flattens it: one row per AUROC —
a signal's (per prompt kind, type and part), a probe layer's and its shuffled-label control, and
the bag-of-words baseline.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from amp.detection.dataset import DetectionPart, DetectionSet, build_detection_set
from amp.detection.probe import ProbeReport, run_probes
from amp.detection.signals import ALL_TYPES, PromptKind, Signal, SignalsReport, run_signals
from amp.evaluation.bootstrap import DEFAULT_RESAMPLES, Interval
from amp.parser.search.settings import SearchSettings
from amp.records import JsonRecord

if TYPE_CHECKING:
    from amp.parser.parser import Parser

__all__ = ["CHANCE_AUROC", "CSV_COLUMNS", "Chance", "DetectionReport", "RowKind", "against_chance", "best_signal",
           "detection_report", "probe_beats_words", "report_csv", "report_rows"]


class RowKind(StrEnum):
    """What a row of :func:`report_rows` measures."""

    SIGNAL = "signal"
    PROBE = "probe"
    SHUFFLED = "shuffled labels"
    WORDS = "bag of words"


#: The AUROC of a detector that guesses (docs/paper-notes.md §22).
CHANCE_AUROC = 0.5


class Chance(StrEnum):
    """Where an AUROC's 95 % interval lies against :data:`CHANCE_AUROC` (:func:`against_chance`)."""

    ABOVE = "above chance"
    AT = "at chance"  # the interval holds 0.5 (or is unknown): no evidence either way
    BELOW = "below chance"


def against_chance(interval: Interval) -> Chance:
    """:attr:`Chance.ABOVE` when the whole interval lies above 0.5, :attr:`Chance.BELOW` when below,
    else (it holds 0.5, or a bound is unknown) :attr:`Chance.AT`."""
    if math.isnan(interval.low) or math.isnan(interval.high):
        return Chance.AT
    if interval.low > CHANCE_AUROC:
        return Chance.ABOVE
    return Chance.BELOW if interval.high < CHANCE_AUROC else Chance.AT


def probe_beats_words(probes: ProbeReport) -> bool:
    """Whether the best probe's interval lies wholly above the bag-of-words baseline's (the two do not
    overlap): only then has the probe read more than the sentence's words (§22)."""
    best = probes.best()
    return best is not None and best.auroc.low > probes.words.high


#: The columns of :func:`report_rows`, in order.
CSV_COLUMNS: tuple[str, ...] = ("kind", "name", "prompt", "layer", "type", "part", "auroc", "low", "high", "n")


@dataclass(frozen=True)
class DetectionReport(JsonRecord):
    """What :func:`detection_report` found on ``model``: the set's settings and sizes, its held-out
    words, and the signals and probes reports (``None`` where not asked for)."""

    model: str
    seed: int
    per_type: int
    test_share: float
    types: tuple[str, ...]
    held_out: tuple[str, ...]
    n_train: int
    n_test: int
    signals: SignalsReport | None = None
    probes: ProbeReport | None = None


def detection_report(
    parser: Parser, *, seed: int = 0, per_type: int | None = None, types: Sequence[str] | None = None,
    signals: bool = True, probes: bool = False, prompts: Sequence[PromptKind | str] = tuple(PromptKind),
    search: SearchSettings | None = None, layers: Sequence[int] | None = None,
    resamples: int = DEFAULT_RESAMPLES, dataset: DetectionSet | None = None, probe_parser: Parser | None = None,
    progress: Callable[[str, int, int], None] | None = None, cancelled: Callable[[], bool] | None = None,
) -> DetectionReport:
    """The report of the module docstring.  ``dataset`` (else built from ``seed``, ``per_type``,
    ``types``); ``probe_parser`` the same model on an engine that gives every layer's states (default
    ``parser``: the signals may run on a faster engine, llama.cpp, than the probes need);
    ``progress(step, done, total)`` with ``step`` ``"signals"`` or ``"probes"``; ``cancelled()`` stops
    the run (:class:`~amp.parser.core.errors.SearchCancelled`)."""
    if dataset is None:
        kwargs: dict[str, Any] = {"seed": seed, "types": types}
        if per_type is not None:
            kwargs["per_type"] = per_type
        dataset = build_detection_set(**kwargs)

    def said(step: str) -> Callable[[int, int], None] | None:
        if progress is None:
            return None
        return lambda done, total: progress(step, done, total)

    signal_report = (run_signals(parser, dataset, prompts=prompts, search=search, seed=dataset.seed,
                                 resamples=resamples, progress=said("signals"), cancelled=cancelled)
                     if signals else None)
    probe_report = (run_probes(probe_parser or parser, dataset, layers=layers, seed=dataset.seed, resamples=resamples,
                               progress=said("probes"), cancelled=cancelled)
                    if probes else None)
    return DetectionReport(
        model=parser.identity, seed=dataset.seed, per_type=dataset.per_type, test_share=dataset.test_share,
        types=dataset.types, held_out=dataset.held_out, n_train=len(dataset.part(DetectionPart.TRAIN)),
        n_test=len(dataset.part(DetectionPart.TEST)), signals=signal_report, probes=probe_report)


def best_signal(report: DetectionReport) -> tuple[Signal, PromptKind, Interval] | None:
    """The signal and prompt kind with the highest AUROC over every type and every sentence, with
    that AUROC (an unknown one skipped); ``None`` without any.  The best of several: an optimistic pick."""
    if report.signals is None:
        return None
    found = [(signal, kind, interval) for kind in report.signals.prompts for signal in Signal
             if (interval := report.signals.auroc(signal, kind)) is not None and not math.isnan(interval.estimate)]
    return max(found, key=lambda row: row[2].estimate, default=None)


def _row(kind: RowKind, name: str, interval: Interval, *, prompt: str = "", layer: int | None = None,
         type: str = ALL_TYPES, part: str = str(DetectionPart.TEST)) -> dict[str, Any]:
    def number(x: float) -> float | None:
        return None if math.isnan(x) else x

    return {"kind": str(kind), "name": name, "prompt": prompt, "layer": layer, "type": type, "part": part,
            "auroc": number(interval.estimate), "low": number(interval.low), "high": number(interval.high),
            "n": interval.n}


def report_rows(report: DetectionReport) -> list[dict[str, Any]]:
    """One dict per AUROC, keys :data:`CSV_COLUMNS` (NaN as ``None``): the signals' rows, then each
    probe layer's and its shuffled-label control's, then the bag-of-words baseline.  Probes are
    scored on the test part; ``name`` of a probe row is its pooling."""
    rows: list[dict[str, Any]] = []
    if report.signals is not None:
        rows += [_row(RowKind.SIGNAL, str(a.signal), a.auroc, prompt=str(a.prompt), type=a.type, part=a.part)
                 for a in report.signals.aurocs]
    if report.probes is not None:
        for r in report.probes.results:
            rows.append(_row(RowKind.PROBE, str(r.pooling), r.auroc, layer=r.layer))
            rows.append(_row(RowKind.SHUFFLED, str(r.pooling), r.shuffled, layer=r.layer))
        rows.append(_row(RowKind.WORDS, "count vectoriser", report.probes.words))
    return rows


def report_csv(report: DetectionReport) -> str:
    """:func:`report_rows` as CSV text (header :data:`CSV_COLUMNS`; an unknown value is an empty cell):
    what ``amp detect --csv`` prints and ``amp reproduce`` writes as ``ambiguity_detection.csv``."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in report_rows(report))
    return out.getvalue()
