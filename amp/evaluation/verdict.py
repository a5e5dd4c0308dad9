"""The model's verdict on one ambiguous sentence in words: what it *wrote*, then what it *scores*.

Every front end (Parse & inspect, Presentation, the class poll, ``amp parse``/``amp score``)
says the same two things in the same order (issue #26 point 5):

1. **What the model wrote**: the canonical match (:class:`~amp.evaluation.matching.Match`,
   docs/paper-notes.md §13.1) of its top beam against the two readings — LF0, LF1, both (the
   golds mean the same), *neither reading* (another formula, or not even a logical form); or that its
   own parse was not run.
2. **Which reading it scores higher** when forced to write each one: P(LF0) = m0 / (m0 + m1)
   with m the lowest token probability of each reading *where the readings part*
   (:attr:`~amp.evaluation.p_lf0_measures.PLf0Measure.PARTED`, docs/paper-notes.md §12; the
   paper's m over every token, paper §2, can be a token both readings share, which pins it at
   0.5 — the sentence then says so).  :func:`score_verdict` picks that measure from a
   :class:`~amp.parser.core.results.PairScore`; :func:`verdict` takes a number already chosen.
   Within :data:`UNDECIDED_BAND` of 0.5 the model is **undecided**: a P(LF0) of 0.50 or 0.53
   is not a preference worth telling a class about.

The two can disagree (the parse is LF1 although LF0 scores higher, or neither reading at all):
the verdict says both and never lets the score speak for the parse.  Pure functions, no widget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum

from amp.evaluation.matching import Match
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.parser.core.results import PairScore

#: Half-width of the band around 0.5 in which the model's P(LF0) is *undecided*:
#: ``|P(LF0) − 0.5| ≤ UNDECIDED_BAND``.  0.05 is a declared choice (the paper draws no such line):
#: it keeps 0.45–0.55 — where a change of prompt flips the sign — from being read as a preference.
UNDECIDED_BAND = 0.05

#: How the model's P(LF0) of the verdicts is computed, in words (docs/paper-notes.md §12).
MODEL_P_LF0_HOW = PLf0Measure.PARTED.how

#: How the paper's P(LF0) is computed, in words (paper §2, docs/paper-notes.md §12).
PAPER_P_LF0_HOW = PLf0Measure.PAPER.how

#: The measure of the explorer's verdicts (:func:`score_verdict`).
VERDICT_MEASURE = PLf0Measure.PARTED

#: How the class's P(LF0) is computed, in words (paper Appendix A.5, docs/paper-notes.md §13.7).
CLASS_P_LF0_HOW = ("Class P(LF0) = the mean over the votes of each vote's P(LF0): a vote for LF0 counts as "
                   "its confidence mapped to 0.5 (the voter's least sure) … 1.0 (their most sure), a vote "
                   "for LF1 as one minus that (paper Appendix A.5).")


class Preference(StrEnum):
    """Which reading the forced scores favour (:func:`preference`)."""

    LF0 = "lf0"
    LF1 = "lf1"
    UNDECIDED = "undecided"
    UNAVAILABLE = "unavailable"


def preference(p_lf0: float | None) -> Preference:
    """LF0 above 0.5 + :data:`UNDECIDED_BAND`, LF1 below 0.5 − the band, else undecided;
    unavailable without a score (``None`` or NaN: both readings' minima 0)."""
    if p_lf0 is None or math.isnan(p_lf0):
        return Preference.UNAVAILABLE
    if abs(p_lf0 - 0.5) <= UNDECIDED_BAND + 1e-12:
        return Preference.UNDECIDED
    return Preference.LF0 if p_lf0 > 0.5 else Preference.LF1


def preferred_index(p_lf0: float | None) -> int | None:
    """0 or 1 for the reading the scores favour; ``None`` when undecided or unavailable."""
    pref = preference(p_lf0)
    return 0 if pref is Preference.LF0 else 1 if pref is Preference.LF1 else None


@dataclass(frozen=True)
class Verdict:
    """The two sentences of a verdict and what they were made from.

    ``wrote``: the top beam's match (``None``: the model's parse was not run); ``wrote_index``:
    0/1 when the parse is exactly one reading (0 for *both*), else ``None``; ``preference``
    and ``p_lf0``: the forced scores' side, by ``measure`` (``None``: a number whose measure
    the caller did not name).  ``p_lf0_paper`` is the paper's min-token P(LF0) beside it and
    ``shared_minimum`` the shared token that pins that one at 0.5 (both only from
    :func:`score_verdict`).  ``wrote_text`` and ``scores_text`` are plain sentences (no
    Markdown): show them as plain text.
    """

    wrote: Match | None
    wrote_index: int | None
    p_lf0: float | None
    preference: Preference
    wrote_text: str
    scores_text: str
    measure: PLf0Measure | None = None
    p_lf0_paper: float | None = None
    shared_minimum: str | None = None

    @property
    def text(self) -> str:
        """Both sentences: what the model wrote, then what it scores."""
        return f"{self.wrote_text} {self.scores_text}"

    @property
    def headline(self) -> str:
        """The short reveal: ``LF1 · instrument`` / ``neither reading`` / ``undecided``… (what it
        wrote when known, else what it scores)."""
        return self.wrote_text if self.wrote is not None else self.scores_text


def _reading(idx: int, names: tuple[str, str] | None, paraphrases: tuple[str, str] | None) -> str:
    """``LF0 (possessive): “I saw the duck that belongs to her”`` as far as names/paraphrases go."""
    text = f"LF{idx}"
    if names and names[idx]:
        text += f" ({names[idx]})"
    if paraphrases and paraphrases[idx]:
        text += f": “{paraphrases[idx]}”"
    return text


def wrote_sentence(match: str | None, names: tuple[str, str] | None = None,
                   paraphrases: tuple[str, str] | None = None) -> str:
    """What the model wrote, in one plain sentence (``match``: a :class:`Match` value or ``None``)."""
    if match is None:
        return "The model's own parse was not run here, so only its scores are known."
    if match == Match.LF0 or match == Match.LF1:
        return f"The model wrote {_reading(1 if match == Match.LF1 else 0, names, paraphrases)}."
    if match == Match.BOTH:
        return "The model wrote a parse that is both readings (the two LFs mean the same)."
    if match == Match.NEITHER:
        return "The model wrote neither reading: its parse is a different formula from both LFs."
    return "The model wrote neither reading: its parse is not even a logical form (it does not read as one)."


def scores_sentence(p_lf0: float | None, names: tuple[str, str] | None = None, *,
                    measure: PLf0Measure | None = None) -> str:
    """Which reading the forced scores favour, in one plain sentence, with P(LF0) to 2 places;
    a named ``measure`` adds its phrase ("… higher where the readings part: P(LF0) = 0.95.")."""
    pref = preference(p_lf0)
    if p_lf0 is None or pref is Preference.UNAVAILABLE:
        return "Its score for the two readings (P(LF0)) is unavailable."
    shown = f"P(LF0) = {p_lf0:.2f}"
    where = f" {measure.phrase}" if measure is not None else ""
    if pref is Preference.UNDECIDED:
        return (f"Forced to write each reading, it is undecided{where}: {shown} is within "
                f"{UNDECIDED_BAND:.2f} of 0.5.")
    idx = 0 if pref is Preference.LF0 else 1
    return f"Forced to write each reading, it scores {_reading(idx, names, None)} higher{where}: {shown}."


def degenerate_sentence(shared: str, p_lf0_paper: float) -> str:
    """Why the paper's P(LF0) says nothing here, in one plain sentence (``shared``: the token,
    shown as text)."""
    return (f"The paper's P(LF0) is {p_lf0_paper:.2f} only because both readings' least likely token is "
            f"“{shared.strip()}”, which they share.")


def _wrote(match: str | None) -> tuple[Match | None, int | None]:
    wrote = None if match is None else Match(match)
    return wrote, 0 if wrote in (Match.LF0, Match.BOTH) else 1 if wrote == Match.LF1 else None


def verdict(match: str | None, p_lf0: float | None, *, names: tuple[str, str] | None = None,
            paraphrases: tuple[str, str] | None = None, measure: PLf0Measure | None = None) -> Verdict:
    """The verdict on one sentence from a P(LF0) already chosen: ``match`` of the model's top beam
    (``None``: not parsed), its P(LF0) (``None``: not scored) by ``measure`` (``None``: not named
    in the sentence), the readings' short ``names`` and ``paraphrases``.  With a
    :class:`~amp.parser.core.results.PairScore` at hand use :func:`score_verdict`."""
    wrote, index = _wrote(match)
    return Verdict(wrote=wrote, wrote_index=index, p_lf0=p_lf0, preference=preference(p_lf0),
                   wrote_text=wrote_sentence(wrote, names, paraphrases),
                   scores_text=scores_sentence(p_lf0, names, measure=measure), measure=measure)


def score_verdict(match: str | None, score: PairScore | None, *, names: tuple[str, str] | None = None,
                  paraphrases: tuple[str, str] | None = None) -> Verdict:
    """The explorer's verdict from the forced scores of both readings (``None``: not scored).

    It decides by :data:`VERDICT_MEASURE` (P(LF0) where the readings part, docs/paper-notes.md §12)
    and names it; when the paper's min-token P(LF0) is pinned at 0.5 by a token both readings
    share, the scores sentence says so (:func:`degenerate_sentence`).
    """
    if score is None:
        return verdict(match, None, names=names, paraphrases=paraphrases)
    p = VERDICT_MEASURE.of(score)
    p_shown = None if math.isnan(p) else p
    shared = score.shared_minimum
    base = verdict(match, p_shown, names=names, paraphrases=paraphrases, measure=VERDICT_MEASURE)
    text = base.scores_text if shared is None else f"{base.scores_text} {degenerate_sentence(shared, score.p_lf0)}"
    return replace(base, scores_text=text, p_lf0_paper=score.p_lf0, shared_minimum=shared)
