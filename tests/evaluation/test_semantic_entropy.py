"""Semantic entropy over canonical meanings (docs/paper-notes.md §17; amp.evaluation.semantic_entropy)."""

from __future__ import annotations

import math

import pytest

from amp.evaluation.errors import SemanticEntropyError
from amp.evaluation.semantic_entropy import beam_shares, semantic_entropy

LF0 = "exists x . forall y . exists a . cow(y) AND dog(x) AND saw(a) AND agent(a, y) AND patient(a, x)"
LF1 = "forall x . exists y . exists a . cow(x) AND dog(y) AND saw(a) AND agent(a, x) AND patient(a, y)"
LF0_REORDERED = "exists x . forall y . exists a . saw(a) AND agent(a, y) AND patient(a, x) AND dog(x) AND cow(y)"
LF1_RENAMED = "forall y . exists x . exists e . cow(y) AND dog(x) AND saw(e) AND agent(e, y) AND patient(e, x)"
OTHER = "exists x . exists a . man(x) AND slept(a) AND agent(a, x)"
JUNK = "this is not an LF"


def test_one_meaning_in_many_spellings_has_zero_entropy() -> None:
    se = semantic_entropy([LF0, LF0_REORDERED, LF0], [0.5, 0.3, 0.2], LF0, LF1)
    assert se.entropy == 0.0
    assert se.n_meanings == 1 and se.n == 3
    assert se.p_lf0 == pytest.approx(1.0) and se.p_lf1 == 0.0 and se.p_neither == 0.0
    assert se.classes[0].count == 3 and se.classes[0].match == "lf0"


def test_two_equal_meanings_give_ln2() -> None:
    # four beams, two spellings of each reading, equal mass on each meaning
    se = semantic_entropy([LF0, LF1, LF0_REORDERED, LF1_RENAMED], [0.1, 0.3, 0.4, 0.2], LF0, LF1)
    assert se.entropy == pytest.approx(math.log(2), abs=1e-12)
    assert (se.p_lf0, se.p_lf1, se.p_neither) == pytest.approx((0.5, 0.5, 0.0))
    assert se.n_meanings == 2


def test_mass_split_three_ways_by_hand() -> None:
    # weights 2 : 1 : 1 (un-normalised) on LF0, LF1 and a third meaning
    se = semantic_entropy([LF0, LF1, OTHER], [2.0, 1.0, 1.0], LF0, LF1)
    expected = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))  # = 1.5 ln 2
    assert se.entropy == pytest.approx(expected, abs=1e-12)
    assert se.entropy == pytest.approx(1.5 * math.log(2), abs=1e-12)
    assert (se.p_lf0, se.p_lf1, se.p_neither) == pytest.approx((0.5, 0.25, 0.25))
    assert [(c.match, c.mass) for c in se.classes][0] == ("lf0", 0.5)  # largest mass first
    assert {c.match: c.mass for c in se.classes} == pytest.approx({"lf0": 0.5, "lf1": 0.25, "neither": 0.25})


def test_string_entropy_would_differ() -> None:
    """Four distinct strings, two meanings: string entropy ln 4, semantic entropy ln 2."""
    se = semantic_entropy([LF0, LF0_REORDERED, LF1, LF1_RENAMED])  # equal weights: samples
    assert se.entropy == pytest.approx(math.log(2), abs=1e-12)
    assert se.p_neither == 1.0  # no gold given: nothing matches a reading


def test_unparseable_outputs_are_each_their_own_meaning() -> None:
    se = semantic_entropy([JUNK, JUNK + "!", JUNK, None], [1, 1, 1, 1], LF0, LF1)
    # JUNK twice (mass 1/2), JUNK! (1/4), None (1/4)
    assert se.n_meanings == 3
    assert se.entropy == pytest.approx(1.5 * math.log(2), abs=1e-12)
    assert se.p_neither == pytest.approx(1.0) and se.p_lf0 == 0.0
    assert {c.match for c in se.classes} == {"unparseable"}


def test_zero_weight_outputs_are_left_out() -> None:
    se = semantic_entropy([LF0, LF1], [1.0, 0.0], LF0, LF1)
    assert se.entropy == 0.0 and se.n == 1 and se.p_lf0 == 1.0


def test_beam_shares_from_logprobs() -> None:
    shares = beam_shares([math.log(0.2), math.log(0.6), -math.inf])
    assert shares == pytest.approx((0.25, 0.75, 0.0))
    assert beam_shares([math.nan, -1.0]) == ()
    assert beam_shares([-math.inf]) == ()
    assert beam_shares([]) == ()
    # large negative log-probs do not underflow
    assert beam_shares([-2000.0, -2000.0 - math.log(3)]) == pytest.approx((0.75, 0.25))


@pytest.mark.parametrize(("outputs", "weights", "match"), [
    ([LF0], [1.0, 2.0], "outputs but 2 weights"),
    ([LF0, LF1], [1.0, -1.0], "non-negative"),
    ([LF0], [math.nan], "non-negative"),
    ([LF0], [0.0], "positive weight"),
    ([], None, "positive weight"),
])
def test_bad_input_is_a_typed_error(outputs, weights, match) -> None:
    with pytest.raises(SemanticEntropyError, match=match):
        semantic_entropy(outputs, weights, LF0, LF1)


def test_bad_mode_is_a_typed_error() -> None:
    with pytest.raises(SemanticEntropyError, match="canonical mode"):
        semantic_entropy([LF0], mode="fuzzy")


# ---------------------------------------------------------------------------- in the sweep summaries


def _record(id_: str, ratio: float | None, beams: tuple[str, ...], shares: tuple[float, ...] = ()):
    from amp.evaluation.sweep_run import SweepRecord, match_fields

    return SweepRecord(id=id_, type="scope", ratio=ratio, surface="every dog saw a cow", lf0=LF0, lf1=LF1,
                       beams=beams, **match_fields(beams, LF0, LF1, "logical", "fol"), p_lf0=0.5,
                       beam_shares=shares)


def test_fewshot_summary_has_semantic_entropy_per_type_and_ratio() -> None:
    from amp.evaluation.sweep_summary import MEANING_COLUMNS, fewshot_summary

    records = [
        _record("a", 0.0, (LF0, LF1), (0.5, 0.5)),          # ln 2, half on each
        _record("b", 0.0, (LF0, LF0_REORDERED), (0.9, 0.1)),  # 0, all LF0
        _record("c", 1.0, (LF1, OTHER), (0.75, 0.25)),       # H(0.75, 0.25)
    ]
    per_ratio, _ = fewshot_summary(records)
    assert set(MEANING_COLUMNS) <= set(per_ratio.columns)
    r0, r1 = per_ratio.iloc[0], per_ratio.iloc[1]
    assert r0["semantic_entropy"] == pytest.approx(math.log(2) / 2)
    assert (r0["mass_lf0"], r0["mass_lf1"], r0["mass_neither"]) == pytest.approx((0.75, 0.25, 0.0))
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert r1["semantic_entropy"] == pytest.approx(h)
    assert (r1["mass_lf0"], r1["mass_lf1"], r1["mass_neither"]) == pytest.approx((0.0, 0.75, 0.25))


def test_zeroshot_summary_weighs_beams_equally_without_shares() -> None:
    from amp.evaluation.sweep_summary import zeroshot_summary

    records = [_record("a", None, (LF0, LF1, OTHER, LF0_REORDERED))]  # older record: no shares
    row = zeroshot_summary(records, k=2).iloc[0]
    assert row["semantic_entropy"] == pytest.approx(1.5 * math.log(2))
    assert (row["mass_lf0"], row["mass_lf1"], row["mass_neither"]) == pytest.approx((0.5, 0.25, 0.25))


def test_records_keep_their_shares_through_json() -> None:
    from amp.evaluation.runs import record_from_dict, record_to_dict

    rec = _record("a", 0.5, (LF0, LF1), (0.25, 0.75))
    assert record_from_dict(record_to_dict(rec)) == rec
    old = record_to_dict(rec)
    del old["beam_shares"]
    assert record_from_dict(old).beam_shares == ()


def test_record_from_result_stores_each_beams_share() -> None:
    from amp.evaluation.sweep_plan import SweepItem
    from amp.evaluation.sweep_run import record_from_result
    from amp.parser.core.results import BatchItemResult, Beam, ParseResult

    def beam(rank: int, text: str, lp: float) -> Beam:
        return Beam(rank=rank, text=text, raw_text=f" {text}\n", token_ids=(1,), tokens=("x",), logprob=lp,
                    score=lp, finished=True, parses=True)

    parse = ParseResult(beams=(beam(0, LF0, math.log(0.3)), beam(1, LF1, math.log(0.1)), beam(2, "", -math.inf)),
                        constrained=True, fmt="fol")
    item = SweepItem(id="x", type="scope", ratio=None, surface="s", lf0=LF0, lf1=LF1, prompt_text="p",
                     prompt=None)  # type: ignore[arg-type]  # the prompt object is not read here
    rec = record_from_result(item, BatchItemResult(id="x", parse=parse, pair=None))
    assert rec.beam_shares == pytest.approx((0.75, 0.25, 0.0))
