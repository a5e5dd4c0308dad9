"""The beams of one parse as a table for the app, each labelled with the gold LF it is."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from amp.evaluation.matching import Match, match_lf
from amp.evaluation.sweep_run import optional_float
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE
from amp.parser.core.results import Beam, ParseResult

__all__ = ["BEAM_TABLE_COLUMNS", "MATCH_NAMES", "beam_table"]

BEAM_TABLE_COLUMNS = ("rank", "LF", "score", "log-prob", "finished", "parses", "match")
#: How every table, metric and sentence of the app words :func:`~amp.evaluation.matching.match_lf`'s
#: labels: one word for a parse that is neither reading, everywhere.
MATCH_NAMES: dict[Match, str] = {
    Match.LF0: "LF0", Match.LF1: "LF1", Match.BOTH: "LF0 = LF1", Match.NEITHER: "neither reading",
    Match.UNPARSEABLE: "unparseable",
}


def beam_table(parse_result: ParseResult | Sequence[Beam], lf0: str | None, lf1: str | None, mode: str = DEFAULT_MODE,
               *, fmt: str = DEFAULT_FORMAT) -> pd.DataFrame:
    """The beams of one :class:`~amp.parser.core.results.ParseResult` as a table for the app.

    Columns: ``rank`` (1 = best), ``LF`` (the beam's text), ``score`` (length-normalised, what
    the beam search ranks by), ``log-prob`` (summed token log-probability), ``finished``,
    ``parses`` (whether the text parses as an LF), ``match`` (:func:`amp.evaluation.matching.match_lf`
    in ``mode``, worded by :data:`MATCH_NAMES`: ``"LF0"``, ``"LF1"``, ``"LF0 = LF1"`` when the
    two golds canonicalise alike, ``"neither reading"`` for a well-formed LF that is neither,
    ``"unparseable"``).  A gold LF that is missing matches nothing.  ``parse_result`` may also be
    a plain sequence of beams.
    """
    beams = parse_result.beams if isinstance(parse_result, ParseResult) else parse_result
    rows = []
    for position, beam in enumerate(beams):
        match = match_lf(beam.text, lf0, lf1, mode=mode, fmt=fmt)
        rows.append({
            "rank": position + 1,
            "LF": beam.text,
            "score": optional_float(beam.score),
            "log-prob": optional_float(beam.logprob),
            "finished": bool(beam.finished),
            "parses": bool(beam.parses),
            "match": MATCH_NAMES[match],
        })
    return pd.DataFrame(rows, columns=list(BEAM_TABLE_COLUMNS))
