"""The verdict's edge rules, each against a hand-written expectation (issue #45;
:mod:`amp.evaluation.verdict`).

Which reading the parse counts as (``wrote_index``) for every match label, a parse that is
*both* readings included: the golds mean the same, so it counts as LF0 (docs/paper-notes.md
§13.4), and a front end that colours the reading the model wrote must still find index 0.
"""

from __future__ import annotations

import pytest

from amp.evaluation.matching import Match
from amp.evaluation.verdict import Preference, verdict

NAMES = ("she ducked", "her bird")


def test_a_parse_matching_both_readings_keeps_wrote_index_zero() -> None:
    v = verdict("both", 0.5)
    assert v.wrote is Match.BOTH
    assert v.wrote_index == 0
    assert v.preference is Preference.UNDECIDED
    assert v.headline == "The model wrote a parse that is both readings (the two LFs mean the same)."


@pytest.mark.parametrize(("match", "index", "wrote_text"), [
    ("lf0", 0, "The model wrote LF0 (she ducked)."),
    ("lf1", 1, "The model wrote LF1 (her bird)."),
    ("both", 0, "The model wrote a parse that is both readings (the two LFs mean the same)."),
    ("neither", None, "The model wrote neither reading: its parse is a different formula from both LFs."),
    ("unparseable", None,
     "The model wrote neither reading: its parse is not even a logical form (it does not read as one)."),
    (None, None, "The model's own parse was not run here, so only its scores are known."),
], ids=["lf0", "lf1", "both", "neither", "unparseable", "not-run"])
@pytest.mark.parametrize("p_lf0", [0.9, 0.5, 0.1, None])
def test_the_reading_written_does_not_depend_on_the_score(match: str | None, index: int | None, wrote_text: str,
                                                          p_lf0: float | None) -> None:
    v = verdict(match, p_lf0, names=NAMES)
    assert (v.wrote_index, v.wrote_text) == (index, wrote_text)
    assert v.wrote == (None if match is None else Match(match))
    assert v.headline == (wrote_text if match is not None else v.scores_text)
