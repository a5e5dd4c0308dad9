"""The default rule of ``bench/engine_bench.py --agreement`` (bench/engine_agreement.py) and its
records files (bench/engine_records.py), on toy records with hand-computed expectations; no model."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from engine_agreement import (  # noqa: E402
    AgreementRule,
    ItemPair,
    StatisticRow,
    is_flip,
    judge,
    lies_inside,
    pair_items,
    split_items,
    statistic_rows,
)
from engine_records import (  # noqa: E402
    ItemKey,
    ItemLine,
    RecordsHeader,
    append_lines,
    item_key,
    open_records,
    read_records,
    write_header,
)
from errors import AgreementError  # noqa: E402

from amp.evaluation.bootstrap import Interval  # noqa: E402
from amp.evaluation.matching import Match  # noqa: E402
from amp.evaluation.sweep_plan import SweepItem  # noqa: E402
from amp.evaluation.sweep_run import SweepRecord  # noqa: E402

LF0, LF1 = "a(x)", "b(x)"  # toy gold LFs: match_lf tells them apart


def rec(sentence: str, p: float | None, beams: tuple[str, ...], ratio: float | None = None,
        type_: str = "pp") -> SweepRecord:
    match = Match({LF0: "lf0", LF1: "lf1"}.get(beams[0], "neither")) if beams else "missing"
    return SweepRecord(id=f"{type_}/{ratio}/{sentence}", type=type_, ratio=ratio, surface=sentence, lf0=LF0, lf1=LF1,
                       beams=beams, top1=beams[0] if beams else None, match=match, p_lf0=p)


def row(name: str, rows: tuple[StatisticRow, ...], where: str) -> StatisticRow:
    [found] = [r for r in rows if r.statistic == name and r.where == where]
    return found


# --------------------------------------------------------------------------- rule (a): the table


def test_zero_shot_statistics_inside_and_outside_transformers_interval() -> None:
    """Two sentences, P(LF0) 0.6 and 0.8: the resampled means are 0.6, 0.7, 0.8 with chances ¼, ½, ¼,
    so the 95 % interval is [0.6, 0.8]; both gold LFs in every top-5: ZM_5 = 100 in [100, 100]."""
    ref = [rec("s1", 0.6, (LF0, LF1)), rec("s2", 0.8, (LF1, LF0))]
    close = [rec("s1", 0.7, (LF0, LF1)), rec("s2", 0.8, (LF0, LF1))]  # mean 0.75, ZM 100
    far = [rec("s1", 0.9, (LF0,)), rec("s2", 0.8, (LF0, LF1))]  # mean 0.85, ZM 50
    rows = statistic_rows(ref, close)
    mean, zm = row("mean P(LF0)", rows, "zero"), row("ZM_5", rows, "zero")
    assert (mean.type, mean.reference.n) == ("pp", 2)
    assert mean.reference.estimate == pytest.approx(0.7)
    assert (mean.reference.low, mean.reference.high) == pytest.approx((0.6, 0.8))
    assert mean.candidate == pytest.approx(0.75) and mean.inside
    assert (zm.reference.estimate, zm.reference.low, zm.reference.high, zm.candidate) == (100, 100, 100, 100)
    assert zm.inside
    rows = statistic_rows(ref, far)
    mean, zm = row("mean P(LF0)", rows, "zero"), row("ZM_5", rows, "zero")
    assert mean.candidate == pytest.approx(0.85) and not mean.inside
    assert zm.candidate == 50 and not zm.inside


def test_few_shot_fdm_and_mean_p_per_ratio() -> None:
    """One sentence at ratios 0 and 1.  transformers: top beam LF1 at r = 0, LF0 at r = 1, so
    d(0) = |0 − 0| + |1 − 1| = 0, d(1) = 0, FDM 0 in [0, 0].  llama.cpp reads LF1 at r = 1 too:
    d(1) = |0 − 1| + |1 − 0| = 2, FDM = (0 + 2) / 2 = 1: outside.  Mean P(LF0) per ratio: one value each."""
    ref = [rec("s1", 0.2, (LF1,), ratio=0.0), rec("s1", 0.9, (LF0,), ratio=1.0)]
    cand = [rec("s1", 0.2, (LF1,), ratio=0.0), rec("s1", 0.4, (LF1,), ratio=1.0)]
    rows = statistic_rows(ref, cand)
    fdm = row("FDM", rows, "few")
    assert (fdm.reference.estimate, fdm.reference.low, fdm.reference.high) == (0, 0, 0)
    assert fdm.candidate == 1 and not fdm.inside
    assert row("mean P(LF0)", rows, "few r=0.00").inside
    at_one = row("mean P(LF0)", rows, "few r=1.00")
    assert at_one.reference.estimate == pytest.approx(0.9) and at_one.candidate == pytest.approx(0.4)
    assert not at_one.inside
    assert {r.statistic for r in rows} == {"FDM", "mean P(LF0)"}  # few-shot records: no ZM row


def test_lies_inside_includes_both_ends_and_treats_undefined_values() -> None:
    ref = Interval(0.5, 0.4, 0.6, 10)
    assert lies_inside(ref, 0.4) and lies_inside(ref, 0.6) and lies_inside(ref, 0.5)
    assert not lies_inside(ref, 0.6000001) and not lies_inside(ref, 0.3999999)
    assert not lies_inside(ref, math.nan)  # defined on transformers' side only
    undefined = Interval(math.nan, math.nan, math.nan, 0)
    assert lies_inside(undefined, math.nan)  # undefined on both sides: they agree
    assert not lies_inside(undefined, 0.5)
    assert not lies_inside(Interval(0.5, math.nan, math.nan, 1), 0.5)  # no interval to lie in


# --------------------------------------------------------------------------- rule (b): flips


def test_a_flip_counts_only_away_from_one_half() -> None:
    assert not is_flip(0.45, 0.55, 0.1)  # readings differ, both within 0.1 of 0.5
    assert is_flip(0.3, 0.55, 0.1)  # transformers 0.2 from 0.5
    assert is_flip(0.45, 0.7, 0.1)  # either engine suffices: llama.cpp 0.2 from 0.5
    assert not is_flip(0.3, 0.2, 0.1)  # the same reading, however far
    assert is_flip(0.5, 0.2, 0.1) and not is_flip(0.5, 0.5, 0.1)  # 0.5 reads LF0
    # exactly at the margin (0.25 is exact in binary): not more than the margin, so no flip
    assert not is_flip(0.25, 0.75, 0.25)
    assert is_flip(0.25, 0.7500001, 0.25)


# --------------------------------------------------------------------------- the verdict


def inside_row(inside: bool = True) -> StatisticRow:
    return StatisticRow("pp", "ZM_5", "zero", Interval(50.0, 40.0, 60.0, 10), 55.0 if inside else 70.0, inside)


def pair(key: str, p_ref: float | None, p_cand: float | None, m_ref: str = "lf0", m_cand: str = "lf0") -> ItemPair:
    return ItemPair(key, p_ref, p_cand, m_ref, m_cand)


SMALL = AgreementRule(min_items=2)


def test_verdict_holds_and_item_level_match_is_not_gated() -> None:
    pairs = [pair("i1", 0.495, 0.505, "lf0", "lf1"), pair("i2", 0.9, 0.9, "lf0", "neither")]
    v = judge([inside_row()], pairs, 2, SMALL)
    assert v.holds and v.reasons == ()
    assert v.same_match == 0 and v.n_paired == 2  # reported only
    assert v.flips == ()  # 0.495 against 0.505: the readings differ, inside the margin
    assert v.mean_abs_delta == pytest.approx(0.005)  # (0.01 + 0) / 2


def test_verdict_fails_on_the_mean_rule_but_holds_at_exactly_the_bound() -> None:
    at_bound = judge([inside_row()], [pair("i1", 0.0, 0.02), pair("i2", 0.5, 0.5)], 2,
                     AgreementRule(min_items=2, max_mean_delta=0.01))
    assert at_bound.mean_abs_delta == 0.01 and at_bound.holds  # (0.02 + 0) / 2 = 0.01 <= 0.01
    over = judge([inside_row()], [pair("i1", 0.0, 0.03), pair("i2", 0.5, 0.5)], 2,
                 AgreementRule(min_items=2, max_mean_delta=0.01))
    assert not over.holds
    assert over.reasons == ("mean |dP(LF0)| 0.0150 > 0.01",)


def test_verdict_reasons_name_each_failure() -> None:
    rows = [inside_row(), inside_row(False)]
    pairs = [pair("i1", 0.3, 0.55), pair("i2", 0.3, 0.3), pair("i3", None, 0.4)]
    v = judge(rows, pairs, 4, AgreementRule(min_items=5, max_mean_delta=1.0))
    assert not v.holds
    assert [p.key for p in v.flips] == ["i1"]
    assert v.n_scored == 2 and v.mean_abs_delta == pytest.approx(0.125)
    assert v.reasons == (
        "only 4 items: the rule needs at least 5",
        "1 of the 4 items are missing on an engine",
        "1 of 2 statistics outside transformers' interval: pp ZM_5 (zero)",
        "1 item(s) flip reading with |P(LF0) - 0.5| > 0.1 on an engine",
    )


def test_no_item_scored_is_no_verdict() -> None:
    v = judge([inside_row()], [pair("i1", None, None)], 1, AgreementRule(min_items=1))
    assert not v.holds and v.reasons == ("no item was scored on both engines",)


def test_pair_items_follows_the_planned_keys() -> None:
    ref = {"k1": rec("s1", 0.6, (LF0,)), "k2": rec("s2", 0.4, (LF1,))}
    cand = {"k2": rec("s2", 0.45, (LF0,)), "k3": rec("s3", 0.5, (LF0,))}
    assert pair_items(ref, cand, ["k3", "k2", "k1"]) == (ItemPair("k2", 0.4, 0.45, "lf1", "lf0"),)


@pytest.mark.parametrize("bad", [{"k": 0}, {"min_items": True}, {"level": 1.0}, {"flip_margin": 0.5},
                                 {"max_mean_delta": -0.1}, {"seed": -1}])
def test_rule_settings_are_checked(bad: dict) -> None:
    with pytest.raises(AgreementError):
        AgreementRule(**bad)


# --------------------------------------------------------------------------- plan size


def test_split_items_gives_the_exact_counts() -> None:
    assert split_items(200, 5, 3) == (10, 10)  # 5 · (10 + 3 · 10) = 200 items
    assert split_items(300, 5, 3) == (15, 15)
    assert split_items(10, 5, 3) == (1, 1)  # the smoke test: 5 · (1 + 3) = 20 items
    with pytest.raises(AgreementError):
        split_items(0, 5, 3)


# --------------------------------------------------------------------------- records files


def header(commit: str = "abc", dtype: str = "float32") -> RecordsHeader:
    return RecordsHeader(engine="transformers", model="gemma", settings={"dtype": dtype, "beams": "5"},
                         commit=commit, date="2026-12-06 17:00 UTC", threads=2)


def line(sentence: str, p: float, ratio: float | None = None) -> ItemLine:
    key = ItemKey(type="pp", shot="zero" if ratio is None else "few", ratio=ratio, sentence=sentence,
                  prompt="0123456789abcdef")
    return ItemLine(key=key, record=rec(sentence, p, (LF0, LF1), ratio=ratio))


def test_records_round_trip_and_a_half_written_last_line(tmp_path: Path) -> None:
    path = tmp_path / "transformers.jsonl"
    write_header(path, header())
    assert append_lines(path, [line("s1", 0.6), line("s2", 0.4, ratio=0.5)]) == 2
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"key": {"type": "pp", "sh')  # a run stopped mid-line
    got_header, lines = read_records(path)
    assert got_header == header()
    assert [ln.record.p_lf0 for ln in lines.values()] == [0.6, 0.4]
    assert lines[line("s2", 0.4, ratio=0.5).key].record.beams == (LF0, LF1)


def test_a_broken_line_in_the_middle_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "llama.jsonl"
    write_header(path, header())
    with path.open("a", encoding="utf-8") as fh:
        fh.write("{}\n")
    append_lines(path, [line("s1", 0.6)])
    with pytest.raises(AgreementError, match=r"llama.jsonl:2: not an item line"):
        read_records(path)


def test_reuse_needs_the_same_settings_not_the_same_commit() -> None:
    assert header("abc").same_numbers(header("def+dirty"))
    assert not header().same_numbers(header(dtype="bfloat16"))


def test_an_item_key_names_zero_or_few_shot() -> None:
    with pytest.raises(AgreementError):
        ItemKey(type="pp", shot="one", ratio=None, sentence="s", prompt="0")
    assert line("s", 0.5, ratio=0.5).key.text() == "pp few r=0.50 's'"


def item(sentence: str) -> SweepItem:
    return SweepItem(id=sentence, type="pp", ratio=None, surface=sentence, lf0=LF0, lf1=LF1,
                     prompt_text=f"prompt of {sentence}", prompt=None)


def test_reuse_goes_on_from_a_stopped_run(tmp_path: Path) -> None:
    """A run stopped after one item (and half a line): under --reuse the next run keeps that item,
    computes the other, drops the half line and names both commits; without --reuse it starts afresh."""
    path = tmp_path / "transformers.jsonl"
    items = [item("s1"), item("s2")]
    done, todo, _ = open_records(path, header("abc"), items, reuse=True)  # no file yet: a fresh one
    assert done == {} and todo == items
    first = ItemLine(key=item_key(items[0]), record=rec("s1", 0.6, (LF0,)))
    append_lines(path, [first])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"key": ')
    done, todo, note = open_records(path, header("def"), items, reuse=True)
    assert list(done) == [first.key] and todo == [items[1]] and note.startswith("reusing 1 records")
    second = ItemLine(key=item_key(items[1]), record=rec("s2", 0.4, (LF1,)))
    append_lines(path, [second])
    got, lines = read_records(path)  # the half line is gone: the file reads whole
    assert got.commit == "abc, then def" and list(lines.values()) == [first, second]
    done, todo, _ = open_records(path, header("ghi", dtype="bfloat16"), items, reuse=True)
    assert done == {} and todo == items  # other settings: afresh
    assert read_records(path) == (header("ghi", dtype="bfloat16"), {})
    append_lines(path, [first])
    done, todo, _ = open_records(path, header("ghi", dtype="bfloat16"), items, reuse=False)
    assert done == {} and read_records(path)[1] == {}  # without --reuse: afresh
