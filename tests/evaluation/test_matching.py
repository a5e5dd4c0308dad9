"""amp.evaluation.matching.match_lf: the one answer to "which gold is this beam" (docs/paper-notes.md §13.1)."""

from __future__ import annotations

import pytest

from amp.errors import MetricError
from amp.evaluation.matching import MATCHES, gold_key, match_lf, prediction_key

LF0 = "exists x . forall y . exists a . cow(y) AND dog(x) AND saw(a) AND agent(a, y) AND patient(a, x)"
LF1 = "forall x . exists y . exists a . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
LF0_REORDERED = "exists x . forall y . exists a . saw(a) AND agent(a, y) AND patient(a, x) AND dog(x) AND cow(y)"
LF1_RENAMED = "forall y . exists x . exists e . cow(y) AND dog(x) AND saw(e) AND agent(e, y) AND patient(e, x)"
OTHER = "exists x . exists a . man(x) AND slept(a) AND agent(a, x)"
# OTHER with its quantifiers swapped: the same meaning, but the paper's positional renaming differs
SWAPPED = "exists a . exists x . man(x) AND slept(a) AND agent(a, x)"
# Two golds that differ only in the order of same-kind quantifiers: one LF in logical mode, two in paper mode
SAME0 = "exists x . exists y . exists a . man(x) AND boy(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
SAME1 = "exists y . exists x . exists a . man(x) AND boy(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
LISP0 = "( exists x ( forall y ( exists a ( AND ( cow y ) ( dog x ) ( saw a ) ( agent a y ) ( patient a x ) ) ) ) )"
LISP1 = "( forall x ( exists y ( exists a ( AND ( cow x ) ( dog y ) ( saw a ) ( agent a x ) ( patient a y ) ) ) ) )"
LISP0_REORDERED = ("( exists x ( forall y ( exists a ( AND ( saw a ) ( agent a y ) ( patient a x ) ( dog x ) "
                   "( cow y ) ) ) ) )")

CASES = [
    # prediction, lf0, lf1, mode, fmt, expected
    (LF0, LF0, LF1, "logical", "fol", "lf0"),
    (LF0_REORDERED, LF0, LF1, "logical", "fol", "lf0"),
    (LF0_REORDERED, LF0, LF1, "paper", "fol", "lf0"),
    (LF1_RENAMED, LF0, LF1, "logical", "fol", "lf1"),
    (LF1_RENAMED, LF0, LF1, "paper", "fol", "lf1"),
    (OTHER, LF0, LF1, "logical", "fol", "neither"),
    (SWAPPED, OTHER, LF1, "logical", "fol", "lf0"),
    (SWAPPED, OTHER, LF1, "paper", "fol", "neither"),  # paper mode keeps quantifier positions (§8.6)
    (SAME0, SAME0, SAME1, "logical", "fol", "both"),
    (SAME1, SAME0, SAME1, "logical", "fol", "both"),
    (SAME0, SAME0, SAME1, "paper", "fol", "lf0"),
    (SAME1, SAME0, SAME1, "paper", "fol", "lf1"),
    ("this is not an LF", LF0, LF1, "logical", "fol", "unparseable"),
    ("exists x . dog(x) AND", LF0, LF1, "logical", "fol", "unparseable"),  # a cut-off beam
    ("", LF0, LF1, "logical", "fol", "unparseable"),
    ("   ", LF0, LF1, "paper", "fol", "unparseable"),
    (None, LF0, LF1, "logical", "fol", "unparseable"),
    (LF0, None, None, "logical", "fol", "neither"),  # no gold to match (an unambiguous sentence has no LF1)
    (LF1, LF0, None, "logical", "fol", "neither"),
    (LISP0, LISP0, LISP1, "logical", "lisp", "lf0"),
    (LISP0_REORDERED, LISP0, LISP1, "paper", "lisp", "lf0"),
    (LISP1, LISP0, LISP1, "logical", "lisp", "lf1"),
    (LF0, LISP0, LISP1, "logical", "lisp", "unparseable"),  # FOL text is not a Lisp LF
    (LISP0, LF0, LF1, "logical", "fol", "unparseable"),  # and vice versa
]


@pytest.mark.parametrize(("prediction", "lf0", "lf1", "mode", "fmt", "expected"), CASES)
def test_match_lf_table(prediction: str | None, lf0: str | None, lf1: str | None, mode: str, fmt: str,
                        expected: str) -> None:
    assert match_lf(prediction, lf0, lf1, mode=mode, fmt=fmt) == expected


def test_labels_cover_the_table() -> None:
    assert {case[-1] for case in CASES} == set(MATCHES)


def test_keys() -> None:
    assert prediction_key(LF0_REORDERED) == prediction_key(LF0) == gold_key(LF0) is not None
    assert prediction_key("not an LF") is None and prediction_key(None) is None
    assert gold_key(LISP0, fmt="lisp") == gold_key(LF0)
    with pytest.raises(MetricError, match="gold LF does not parse"):
        gold_key("not an LF")


def test_gold_that_does_not_parse_matches_nothing() -> None:
    assert match_lf(LF0, "not an LF", LF0) == "lf1"
