"""Which gold LF a predicted LF is: the one place that labels a beam (docs/paper-notes.md §13.1).

Matching is exact equality of canonical forms (:func:`amp.logic.canonical.canonical`) in a
canonical ``mode``: ``"logical"`` (meaning up to reordering, renaming, same-kind quantifier
order) or ``"paper"`` (the original metric's judgement).  A prediction that is missing, empty or
does not read as an LF is kept raw in the original and so never matches; here it is labelled
``unparseable``.  Sweeps, metrics, the parse inspector and the beam tables all read
:func:`match_lf`; they only rename its labels for display.
"""

from __future__ import annotations

from enum import StrEnum

from amp.errors import MetricError
from amp.logic.canonical import canonical, canonical_or_none
from amp.logic.errors import LFParseError
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE


class Match(StrEnum):
    """What :func:`match_lf` returns (a ``StrEnum``: records and tables hold its value).

    ``lf0``/``lf1`` — the prediction canonicalises to that gold LF;
    ``both`` — it equals both golds (they canonicalise alike in this mode; counts for both);
    ``neither`` — a well-formed LF that is neither gold (lowers both accuracies, §13.4);
    ``unparseable`` — missing, empty or not an LF (kept raw in the original, never matches, §13.1).
    """

    LF0 = "lf0"
    LF1 = "lf1"
    BOTH = "both"
    NEITHER = "neither"
    UNPARSEABLE = "unparseable"


MATCHES: tuple[Match, ...] = tuple(Match)


def is_lf0_like(label: str | None) -> bool:
    """Whether a match label counts as LF0 (``lf0``, or ``both`` when the golds coincide; §13.4)."""
    return label in (Match.LF0, Match.BOTH)


def is_lf1_like(label: str | None) -> bool:
    """Whether a match label counts as LF1 (``lf1``, or ``both``)."""
    return label in (Match.LF1, Match.BOTH)


def is_a_reading(label: str | None) -> bool:
    """Whether a match label is one of the two readings (``lf0``, ``lf1`` or ``both``)."""
    return is_lf0_like(label) or is_lf1_like(label)


def gold_key(lf: str, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> str:
    """Canonical form of a gold LF; a gold LF that does not parse is a MetricError."""
    try:
        return canonical(lf, mode, fmt)
    except LFParseError as exc:
        raise MetricError(f"gold LF does not parse: {exc}") from exc
    except TypeError as exc:
        raise MetricError(f"gold LF must be a string, got {type(lf).__name__}") from exc


def prediction_key(prediction: str | None, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> str | None:
    """Canonical form of a prediction, or ``None`` (never matches) if missing or unparseable."""
    if not isinstance(prediction, str) or not prediction.strip():
        return None
    return canonical_or_none(prediction, mode, fmt)


def match_lf(
    prediction: str | None, lf0: str | None, lf1: str | None, *, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT
) -> Match:
    """Which gold LF ``prediction`` is, by canonical equality in ``mode`` (docs/paper-notes.md §13.1).

    ``lf0``/``lf1`` may be None (an unambiguous sentence has no LF1, §13.1): a missing gold
    matches nothing.  A gold that does not canonicalise is compared as raw text.
    """
    key = prediction_key(prediction, mode, fmt)
    if key is None:
        return Match.UNPARSEABLE
    is0 = lf0 is not None and key == (prediction_key(lf0, mode, fmt) or lf0)
    is1 = lf1 is not None and key == (prediction_key(lf1, mode, fmt) or lf1)
    if is0 and is1:
        return Match.BOTH
    if is0:
        return Match.LF0
    if is1:
        return Match.LF1
    return Match.NEITHER
