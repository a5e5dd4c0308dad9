"""The beams of one parse as a table for the app, each labelled with the gold LF it is.

Beams often differ only in a few characters, near the end (``instrument(a, z)`` / ``(a, y)`` /
``(a)``): the table keeps every LF whole and adds where each differs from the top beam
(:func:`difference_from`), that part marked, so no two beams look alike however long they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from amp.evaluation.matching import Match, match_lf
from amp.evaluation.sweep_run import optional_float
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE
from amp.parser.core.results import Beam, ParseResult

__all__ = ["BEAM_TABLE_COLUMNS", "DIFFERENCE_COLUMN", "MATCH_NAMES", "beam_table", "difference_from",
           "lf_lines"]

#: The column that says where a beam differs from the top beam.
DIFFERENCE_COLUMN = "differs from beam 1"
BEAM_TABLE_COLUMNS = ("rank", "LF", DIFFERENCE_COLUMN, "score", "log-prob", "finished", "parses", "match")
#: The marks around the part of a beam that differs from the top beam, and where the top beam has
#: more that the beam lacks; :data:`TOP_BEAM`: what the top beam's own row says.
MARK_OPEN, MARK_CLOSE, MARK_MISSING = "«", "»", "‸"
TOP_BEAM = "(top beam)"
SAME_AS_TOP = "(same text as the top beam)"
_CALL = re.compile(r"[A-Za-z_][\w]*\(")
#: How every table, metric and sentence of the app words :func:`~amp.evaluation.matching.match_lf`'s
#: labels: one word for a parse that is neither reading, everywhere.
MATCH_NAMES: dict[Match, str] = {
    Match.LF0: "LF0", Match.LF1: "LF1", Match.BOTH: "LF0 = LF1", Match.NEITHER: "neither reading",
    Match.UNPARSEABLE: "unparseable",
}


def difference_from(top: str, text: str) -> str:
    """Where ``text`` differs from ``top``: the predicate call (or the start) around the first
    difference up to the end of the differing part, with that part between :data:`MARK_OPEN` and
    :data:`MARK_CLOSE` (:data:`MARK_MISSING` where ``text`` lacks what ``top`` has), ``…`` for
    what is left out.  ``instrument(a, y)`` against ``instrument(a, z)`` gives ``…instrument(a, «y»)``.
    """
    if text == top:
        return SAME_AS_TOP
    prefix = 0
    limit = min(len(top), len(text))
    while prefix < limit and top[prefix] == text[prefix]:
        prefix += 1
    suffix = 0
    while (suffix < len(text) - prefix and suffix < len(top) - prefix
           and top[len(top) - 1 - suffix] == text[len(text) - 1 - suffix]):
        suffix += 1
    end = len(text) - suffix
    start = 0  # back to the start of the predicate call (or quantifier) the difference is in
    for call in _CALL.finditer(text, 0, prefix):
        start = call.start()
    space = text.rfind(" ", 0, prefix)
    if start == 0 and space > 0:
        start = space + 1
    close = text.find(")", end)
    stop = len(text) if close < 0 else close + 1
    changed = text[prefix:end]
    marked = f"{MARK_OPEN}{changed}{MARK_CLOSE}" if changed else MARK_MISSING
    return (("…" if start > 0 else "") + text[start:prefix] + marked + text[end:stop]
            + ("…" if stop < len(text) else ""))


def lf_lines(texts: Sequence[str], width: int = 70) -> int:
    """The lines the longest of ``texts`` takes when wrapped at ``width`` characters (at least 1)."""
    longest = max((len(t) for t in texts), default=0)
    return max(1, -(-longest // width))


def beam_table(parse_result: ParseResult | Sequence[Beam], lf0: str | None, lf1: str | None, mode: str = DEFAULT_MODE,
               *, fmt: str = DEFAULT_FORMAT) -> pd.DataFrame:
    """The beams of one :class:`~amp.parser.core.results.ParseResult` as a table for the app.

    Columns: ``rank`` (1 = best), ``LF`` (the beam's text), ``score`` (length-normalised, what
    the beam search ranks by), ``log-prob`` (summed token log-probability), ``finished``,
    ``parses`` (whether the text parses as an LF), ``match`` (:func:`amp.evaluation.matching.match_lf`
    in ``mode``, worded by :data:`MATCH_NAMES`: ``"LF0"``, ``"LF1"``, ``"LF0 = LF1"`` when the
    two golds canonicalise alike, ``"neither reading"`` for a well-formed LF that is neither,
    ``"unparseable"``).  A gold LF that is missing matches nothing.  ``parse_result`` may also be
    a plain sequence of beams.  :data:`DIFFERENCE_COLUMN` says where each beam's LF differs from
    the top beam's (:func:`difference_from`); ``LF`` is always the whole text.
    """
    beams = parse_result.beams if isinstance(parse_result, ParseResult) else parse_result
    rows = []
    top = beams[0].text if beams else ""
    for position, beam in enumerate(beams):
        match = match_lf(beam.text, lf0, lf1, mode=mode, fmt=fmt)
        rows.append({
            "rank": position + 1,
            "LF": beam.text,
            DIFFERENCE_COLUMN: TOP_BEAM if position == 0 else difference_from(top, beam.text),
            "score": optional_float(beam.score),
            "log-prob": optional_float(beam.logprob),
            "finished": bool(beam.finished),
            "parses": bool(beam.parses),
            "match": MATCH_NAMES[match],
        })
    return pd.DataFrame(rows, columns=list(BEAM_TABLE_COLUMNS))
