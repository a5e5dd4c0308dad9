"""The three P(LF0)s of a scored pair, declared once: their names, labels and how-texts.

* :attr:`PLf0Measure.PAPER` — the paper's ``m0 / (m0 + m1)``, m the minimum token probability of
  each reading's forced decode (paper §2, docs/paper-notes.md §12).  Reproduction keeps it
  everywhere: the tables, Fig. 3 and Fig. 6, FDM/FIM, paper mode.
* :attr:`PLf0Measure.PARTED` — the same ratio over the tokens from where the readings' tokens part
  on (:func:`amp.parser.core.results.parted_p_lf0`, docs/paper-notes.md §12): a token both
  readings share can never decide it.  The explorer's verdicts use it.
* :attr:`PLf0Measure.TOTAL` — the normalised total sequence probability (what the paper's
  Fig. 3 notebooks plotted, docs/paper-notes.md §12).

A member's value is the attribute of :class:`~amp.parser.core.results.PairScore` and the column of
:class:`~amp.evaluation.sweep_run.SweepRecord` that hold it.  Pure data, no widget.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from amp.parser.core.results import PairScore


@dataclass(frozen=True)
class MeasureTexts:
    """How a measure is named: ``label`` (a metric's or a CLI line's name), ``choice`` (an option
    in a list of measures), ``phrase`` (what a verdict adds after "scores LF0 higher"), ``chart``
    (a figure's name of the value) and ``how`` (how it is computed, in words)."""

    label: str
    choice: str
    phrase: str
    chart: str
    how: str


class PLf0Measure(StrEnum):
    """Which P(LF0) of a :class:`~amp.parser.core.results.PairScore` (the value names its attribute)."""

    PAPER = "p_lf0"
    PARTED = "p_lf0_parted"
    TOTAL = "p_lf0_total"

    @property
    def texts(self) -> MeasureTexts:
        return _TEXTS[self]

    @property
    def label(self) -> str:
        return self.texts.label

    @property
    def choice(self) -> str:
        return self.texts.choice

    @property
    def phrase(self) -> str:
        return self.texts.phrase

    @property
    def chart(self) -> str:
        return self.texts.chart

    @property
    def how(self) -> str:
        return self.texts.how

    def of(self, pair: PairScore) -> float:
        """This measure's value for ``pair`` (NaN where it is undefined)."""
        return float(getattr(pair, self.value))


_TEXTS: dict[PLf0Measure, MeasureTexts] = {
    PLf0Measure.PAPER: MeasureTexts(
        label="P(LF0), min-token (paper)",
        choice="min-token probability (paper's definition)",
        phrase="by each reading's least likely token",
        chart="P(LF0)",
        how=("The paper's P(LF0) = m0 / (m0 + m1): the model is forced to write each reading, and m is the "
             "lowest probability it gives any token of that reading (paper §2). A token both readings share "
             "can be that lowest token for both: the paper's P(LF0) is then 0.50 whatever the model prefers."),
    ),
    PLf0Measure.PARTED: MeasureTexts(
        label="P(LF0) where the readings part",
        choice="min-token probability where the readings part",
        phrase="where the readings part",
        chart="P(LF0) where the readings part",
        how=("Model P(LF0) = m0 / (m0 + m1) where the readings part: the model is forced to write each reading, "
             "and m is the lowest probability it gives a token of that reading from the first token where the "
             "two readings differ to the end. The tokens before it are the same in both readings and have the "
             "same probability in both, so they cannot say which reading the model prefers (the paper's "
             "P(LF0), paper §2, takes the minimum over every token)."),
    ),
    PLf0Measure.TOTAL: MeasureTexts(
        label="P(LF0), total prob.",
        choice="total sequence probability (what Fig. 3 plotted)",
        phrase="by total probability",
        chart="P(LF0) from total sequence probability",
        how=("P(LF0) from total probabilities = p0 / (p0 + p1), p the probability of the whole reading "
             "(every token's probability multiplied): what the paper's Fig. 3 plotted."),
    ),
}
