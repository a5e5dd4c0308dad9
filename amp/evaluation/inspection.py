"""Parse & inspect one prompt: the beams labelled by gold LF and where the parse leaves the other reading.

:func:`inspect` puts a :class:`~amp.parser.parser.Parser`'s parse, both readings' forced scores
(paper §2) and the divergence of the predicted parse from the other reading (paper Fig. 4)
together.  It lives in the evaluation layer because it labels beams with
:func:`amp.evaluation.matching.match_lf`; the parser layer knows no gold labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from amp.evaluation.matching import Match, is_lf0_like, match_lf
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE
from amp.parser.core.results import Beam, Divergence, PairScore, ParseResult, TokenStep
from amp.parser.search.divergence import divergence
from amp.parser.search.settings import SearchKeywords, SearchSettings
from amp.records import JsonRecord

if TYPE_CHECKING:
    from amp.parser.parser import Parser


@dataclass(frozen=True)
class Inspection(JsonRecord):
    """A parse, both readings' forced scores, and where the parse and the other reading diverge.

    ``matches[i]`` is :func:`~amp.evaluation.matching.match_lf` of beam ``i`` in
    ``canonical_mode`` (``lf0``/``lf1``/``both``/``neither``/``unparseable``).  ``predicted`` is
    the top beam and ``predicted_match`` its label (``unparseable`` without beams).
    ``alternative`` names the *other* gold LF (``"lf1"`` when the top beam is LF0 or both, ``"lf0"``
    when it is LF1; otherwise the gold LF the model prefers by ``pair.p_lf0_parted``, P(LF0) where
    the readings part, docs/paper-notes.md §12).  ``divergence``
    compares the predicted beam's token steps with the alternative's forced-decoding steps
    (``None`` when there is no beam).
    """

    prompt: str
    lf0: str
    lf1: str
    fmt: str
    parse: ParseResult
    pair: PairScore
    matches: tuple[str, ...]
    predicted: Beam | None
    predicted_match: str
    predicted_steps: tuple[TokenStep, ...]
    alternative: str
    alternative_lf: str
    alternative_steps: tuple[TokenStep, ...]
    divergence: Divergence | None
    canonical_mode: str



def _alternative(top_match: Match, pair: PairScore) -> str:
    """The gold LF the top beam is *not* (the model's preferred gold when it is neither)."""
    if is_lf0_like(top_match):
        return "lf1"
    if top_match == "lf1":
        return "lf0"
    return "lf0" if not pair.p_lf0_parted < 0.5 else "lf1"


def inspect(
    parser: Parser,
    prompt: str,
    lf0: str,
    lf1: str,
    search: SearchSettings | None = None,
    *,
    fmt: str = DEFAULT_FORMAT,
    canonical_mode: str = DEFAULT_MODE,
    words: OwnWords = NO_WORDS,
    **settings: Unpack[SearchKeywords],
) -> Inspection:
    """Parse, score both readings, label the beams and locate the divergence (Fig. 4).

    ``search``: the search settings (the defaults when None; keywords override its fields).
    ``words``: a teacher's own words the readings use (:mod:`amp.logic.own_words`)."""

    # One prompt pass for the search, the pair and the top beam's steps (issue #16).
    ((result, pair),) = parser.parse_and_score_many([(prompt, lf0, lf1)], fmt=fmt, words=words,
                                                    search=SearchSettings.of(search, **settings))
    assert pair is not None
    matches = tuple(match_lf(b.text, lf0, lf1, mode=canonical_mode, fmt=fmt) for b in result.beams)
    top = result.beams[0] if result.beams else None
    top_match: Match = match_lf(top.text if top else None, lf0, lf1, mode=canonical_mode, fmt=fmt)
    alternative = _alternative(top_match, pair)
    alt_score = pair.lf0 if alternative == "lf0" else pair.lf1
    top_steps = (
        parser.beam_steps(prompt, top, fmt=fmt, constrained=result.constrained, words=words) if top is not None else ()
    )
    div = divergence(top_steps, alt_score.steps) if top is not None else None
    return Inspection(
        prompt=prompt, lf0=lf0, lf1=lf1, fmt=fmt, parse=result, pair=pair, matches=matches,
        predicted=top, predicted_match=top_match, predicted_steps=tuple(top_steps),
        alternative=alternative, alternative_lf=alt_score.lf,
        alternative_steps=tuple(alt_score.steps), divergence=div, canonical_mode=canonical_mode,
    )
