"""Parse & inspect one prompt: the beams labelled by gold LF and where the parse leaves the other reading.

:func:`inspect` puts a :class:`~amp.parser.parser.Parser`'s parse, both readings' forced scores
(paper §2) and the divergence of the predicted parse from the other reading (paper Fig. 4)
together.  It lives in the evaluation layer because it labels beams with
:func:`amp.evaluation.matching.match_lf`; the parser layer knows no gold labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amp.evaluation.matching import Match, match_lf
from amp.parser.results import Beam, Divergence, PairScore, ParseResult, TokenStep

if TYPE_CHECKING:
    from amp.parser.parser import Parser


@dataclass(frozen=True)
class Inspection:
    """A parse, both readings' forced scores, and where the parse and the other reading diverge.

    ``matches[i]`` is :func:`~amp.evaluation.matching.match_lf` of beam ``i`` in
    ``canonical_mode`` (``lf0``/``lf1``/``both``/``neither``/``unparseable``).  ``predicted`` is
    the top beam and ``predicted_match`` its label (``unparseable`` without beams).
    ``alternative`` names the *other* gold LF (``"lf1"`` when the top beam is LF0 or both, ``"lf0"``
    when it is LF1; otherwise the gold LF the model prefers by ``pair.p_lf0``).  ``divergence``
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "lf0": self.lf0,
            "lf1": self.lf1,
            "fmt": self.fmt,
            "parse": self.parse.to_dict(),
            "pair": self.pair.to_dict(),
            "matches": list(self.matches),
            "predicted": self.predicted.to_dict() if self.predicted else None,
            "predicted_match": self.predicted_match,
            "predicted_steps": [s.to_dict() for s in self.predicted_steps],
            "alternative": self.alternative,
            "alternative_lf": self.alternative_lf,
            "alternative_steps": [s.to_dict() for s in self.alternative_steps],
            "divergence": self.divergence.to_dict() if self.divergence else None,
            "canonical_mode": self.canonical_mode,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Inspection:
        return cls(
            prompt=d["prompt"],
            lf0=d["lf0"],
            lf1=d["lf1"],
            fmt=d["fmt"],
            parse=ParseResult.from_dict(d["parse"]),
            pair=PairScore.from_dict(d["pair"]),
            matches=tuple(d["matches"]),
            predicted=Beam.from_dict(d["predicted"]) if d.get("predicted") else None,
            predicted_match=d["predicted_match"],
            predicted_steps=tuple(TokenStep.from_dict(s) for s in d["predicted_steps"]),
            alternative=d["alternative"],
            alternative_lf=d["alternative_lf"],
            alternative_steps=tuple(TokenStep.from_dict(s) for s in d["alternative_steps"]),
            divergence=Divergence.from_dict(d["divergence"]) if d.get("divergence") else None,
            canonical_mode=d["canonical_mode"],
        )


def _alternative(top_match: Match, pair: PairScore) -> str:
    """The gold LF the top beam is *not* (the model's preferred gold when it is neither)."""
    if top_match in ("lf0", "both"):
        return "lf1"
    if top_match == "lf1":
        return "lf0"
    return "lf0" if not pair.p_lf0 < 0.5 else "lf1"


def inspect(
    parser: Parser,
    prompt: str,
    lf0: str,
    lf1: str,
    *,
    fmt: str = "fol",
    beams: int = 5,
    alpha: float = 0.7,
    constrained: bool = True,
    max_new_tokens: int | None = None,
    canonical_mode: str = "logical",
) -> Inspection:
    """Parse, score both readings, label the beams and locate the divergence (Fig. 4)."""
    from amp.parser.divergence import divergence

    # One prompt pass for the search, the pair and the top beam's steps (issue #16).
    ((result, pair),) = parser.parse_and_score_many([(prompt, lf0, lf1)], fmt=fmt, beams=beams, alpha=alpha,
                                                    constrained=constrained, max_new_tokens=max_new_tokens)
    assert pair is not None
    matches = tuple(match_lf(b.text, lf0, lf1, mode=canonical_mode, fmt=fmt) for b in result.beams)
    top = result.beams[0] if result.beams else None
    top_match: Match = match_lf(top.text if top else None, lf0, lf1, mode=canonical_mode, fmt=fmt)
    alternative = _alternative(top_match, pair)
    alt_score = pair.lf0 if alternative == "lf0" else pair.lf1
    top_steps = (
        parser.beam_steps(prompt, top, fmt=fmt, constrained=result.constrained) if top is not None else ()
    )
    div = divergence(top_steps, alt_score.steps) if top is not None else None
    return Inspection(
        prompt=prompt, lf0=lf0, lf1=lf1, fmt=fmt, parse=result, pair=pair, matches=matches,
        predicted=top, predicted_match=top_match, predicted_steps=tuple(top_steps),
        alternative=alternative, alternative_lf=alt_score.lf,
        alternative_steps=tuple(alt_score.steps), divergence=div, canonical_mode=canonical_mode,
    )
