"""The model's verdict on one ambiguous sentence in words: what it *wrote*, then what it *scores*.

Every front end (Parse & inspect, Presentation, the class poll, ``amp parse``/``amp score``)
says the same two things in the same order (issue #26 point 5):

1. **What the model wrote**: the canonical match (:class:`~amp.evaluation.matching.Match`,
   docs/paper-notes.md §13.1) of its top beam against the two readings — LF0, LF1, both (the
   golds mean the same), *neither reading* (another formula, or not even a logical form); or that its
   own parse was not run.
2. **Which reading it scores higher** when forced to write each one: P(LF0) = m0 / (m0 + m1)
   with m the lowest token probability of each reading (paper §2, docs/paper-notes.md §12).
   Within :data:`UNDECIDED_BAND` of 0.5 the model is **undecided**: a P(LF0) of 0.50 or 0.53
   is not a preference worth telling a class about.

The two can disagree (the parse is LF1 although LF0 scores higher, or neither reading at all):
the verdict says both and never lets the score speak for the parse.  Pure functions, no widget.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from amp.evaluation.matching import Match

#: Half-width of the band around 0.5 in which the model's P(LF0) is *undecided*:
#: ``|P(LF0) − 0.5| ≤ UNDECIDED_BAND``.  0.05 is a declared choice (the paper draws no such line):
#: it keeps 0.45–0.55 — where a change of prompt flips the sign — from being read as a preference.
UNDECIDED_BAND = 0.05

#: How the model's P(LF0) is computed, in words (paper §2, docs/paper-notes.md §12).
MODEL_P_LF0_HOW = ("Model P(LF0) = m0 / (m0 + m1): the model is forced to write each reading, and m is the "
                   "lowest probability it gives any token of that reading (paper §2).")

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
    unavailable without a score."""
    if p_lf0 is None:
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
    and ``p_lf0``: the forced scores' side.  ``wrote_text`` and ``scores_text`` are plain
    sentences (no Markdown): show them as plain text.
    """

    wrote: Match | None
    wrote_index: int | None
    p_lf0: float | None
    preference: Preference
    wrote_text: str
    scores_text: str

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


def scores_sentence(p_lf0: float | None, names: tuple[str, str] | None = None) -> str:
    """Which reading the forced scores favour, in one plain sentence, with P(LF0) to 2 places."""
    pref = preference(p_lf0)
    if p_lf0 is None or pref is Preference.UNAVAILABLE:
        return "Its score for the two readings (P(LF0)) is unavailable."
    shown = f"P(LF0) = {p_lf0:.2f}"
    if pref is Preference.UNDECIDED:
        return (f"Forced to write each reading, it is undecided: {shown} is within "
                f"{UNDECIDED_BAND:.2f} of 0.5.")
    idx = 0 if pref is Preference.LF0 else 1
    return f"Forced to write each reading, it scores {_reading(idx, names, None)} higher: {shown}."


def verdict(match: str | None, p_lf0: float | None, *, names: tuple[str, str] | None = None,
            paraphrases: tuple[str, str] | None = None) -> Verdict:
    """The verdict on one sentence: ``match`` of the model's top beam (``None``: not parsed),
    its P(LF0) (``None``: not scored), the readings' short ``names`` and ``paraphrases``."""
    wrote = None if match is None else Match(match)
    index = 0 if wrote in (Match.LF0, Match.BOTH) else 1 if wrote == Match.LF1 else None
    return Verdict(wrote=wrote, wrote_index=index, p_lf0=p_lf0, preference=preference(p_lf0),
                   wrote_text=wrote_sentence(wrote, names, paraphrases), scores_text=scores_sentence(p_lf0, names))
