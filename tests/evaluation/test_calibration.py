"""Calibration of P(LF0): reliability tables, ECE, Brier score, model-vs-class agreement and their figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from amp.evaluation import calibration as cal
from amp.evaluation.calibration import calibrate, calibration_of, poll_agreement
from amp.evaluation.errors import CalibrationError
from amp.evaluation.sweep_run import SweepRecord
from amp.reporting.calibration_plots import poll_scatter, ratio_color, reliability_diagram
from amp.reporting.style import LF0_COLOR, LF1_COLOR
from amp.teaching.poll import PollItem, PollNotFoundError, PollStore
from amp.teaching.poll_calibration import agreement_points, stored_agreement

_N = iter(range(10**6))


def rec(p: float | None, match: str = "lf0", *, type_: str = "pp", ratio: float | None = 0.0,
        error: str | None = None) -> SweepRecord:
    i = next(_N)
    beams = () if match == "missing" else ("x",)
    return SweepRecord(id=f"r{i}", type=type_, ratio=ratio, surface=f"sentence {i}", lf0="a", lf1="b", beams=beams,
                       match=match, p_lf0=p, error=error)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- ECE and Brier


def test_perfect_calibration_has_ece_zero_and_a_hand_computed_brier() -> None:
    records = [rec(0.25, "lf0")] + [rec(0.25, "lf1")] * 3 + [rec(0.75, "both")] * 3 + [rec(0.75, "neither")]
    c = calibration_of(records, 2)
    assert [b.n for b in c.bins] == [4, 4]
    assert [b.mean_p_lf0 for b in c.bins] == pytest.approx([0.25, 0.75])
    assert [b.observed_lf0 for b in c.bins] == pytest.approx([0.25, 0.75])
    assert c.ece == pytest.approx(0.0, abs=1e-12)
    # bin 0: 0.75² + 3·0.25² = 0.75; bin 1: 3·0.25² + 0.75² = 0.75; (0.75 + 0.75) / 8
    assert c.brier == pytest.approx(0.1875)


def _layout() -> list[SweepRecord]:
    return [
        rec(0.05, "lf1", type_="pp", ratio=0.0),
        rec(0.15, "lf0", type_="pp", ratio=0.0),
        rec(0.95, "both", type_="scope", ratio=1.0),
        rec(1.0, "neither", type_="scope", ratio=1.0),
        rec(0.9, "unparseable", type_="scope", ratio=0.5),
        rec(0.5, "lf0", error="boom"),  # left out: failed
        rec(None, "lf0"),  # left out: no P(LF0)
        rec(0.3, "missing"),  # left out: no beams
    ]


def test_a_known_bin_layout_gives_the_hand_computed_ece_and_brier() -> None:
    c = calibrate(_layout(), 10).overall
    assert [b.n for b in c.bins] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 3]  # 1.0 and 0.9 fall in the last bin
    last = c.bins[-1]
    assert last.mean_p_lf0 == pytest.approx(0.95) and last.observed_lf0 == pytest.approx(1 / 3)
    assert c.bins[2].mean_p_lf0 is None and c.bins[2].observed_lf0 is None and c.bins[2].gap is None
    # (1/5)·0.05 + (1/5)·0.85 + (3/5)·|1/3 − 0.95|
    assert c.ece == pytest.approx(0.2 * 0.05 + 0.2 * 0.85 + 0.6 * (0.95 - 1 / 3))
    assert c.ece == pytest.approx(0.55)
    # 0.05² + 0.85² + 0.05² + 1² + 0.9², over 5
    assert c.brier == pytest.approx((0.0025 + 0.7225 + 0.0025 + 1.0 + 0.81) / 5)
    assert (c.n, c.n_errors, c.n_unscored, c.n_unparsed, c.n_left_out) == (5, 1, 1, 1, 3)


def test_groups_per_type_and_per_ratio() -> None:
    report = calibrate(_layout(), 10)
    assert [(g.group, g.n) for g in report.per_type] == [("pp", 2), ("scope", 3)]  # registry order
    pp = report.per_type[0]
    assert pp.group_by == "type" and pp.n_errors == 1 and pp.n_unscored == 1 and pp.n_unparsed == 1
    assert pp.ece == pytest.approx(0.5 * 0.05 + 0.5 * 0.85)
    assert pp.brier == pytest.approx((0.0025 + 0.7225) / 2)
    assert [(g.group, g.ratio, g.n) for g in report.per_ratio] == [("0", 0.0, 2), ("0.5", 0.5, 1), ("1", 1.0, 2)]
    one = report.per_ratio[2]
    assert one.ece == pytest.approx(abs(0.5 - 0.975))  # one bin: observed 1 of 2, mean P 0.975
    assert report.groups("all") == (report.overall,) and report.groups("ratio") == report.per_ratio
    with pytest.raises(CalibrationError):
        report.groups("sentence")  # type: ignore[arg-type]


def test_zero_shot_records_have_no_ratio_group() -> None:
    report = calibrate([rec(0.4, "lf0", ratio=None), rec(0.6, "lf1", ratio=None)], 5)
    assert report.per_ratio == () and report.overall.n == 2 and report.per_type[0].n == 2


def test_bin_edges_one_falls_in_the_last_bin_zero_in_the_first() -> None:
    c = calibration_of([rec(0.0), rec(0.5), rec(1.0)], 2)
    assert [b.n for b in c.bins] == [1, 2]
    assert [(b.lower, b.upper) for b in c.bins] == [(0.0, 0.5), (0.5, 1.0)]
    c = calibration_of([rec(1.0)], 50)
    assert c.bins[-1].n == 1 and sum(b.n for b in c.bins) == 1


def test_empty_input_and_all_errors_give_none_not_zero() -> None:
    empty = calibrate([], 10)
    assert empty.overall.n == 0 and empty.overall.ece is None and empty.overall.brier is None
    assert len(empty.overall.bins) == 10 and all(b.n == 0 for b in empty.overall.bins)
    assert empty.per_type == () and empty.per_ratio == ()
    failed = calibrate([rec(None, "missing", error="model gone")] * 3)
    assert failed.overall.n == 0 and failed.overall.n_errors == 3 and failed.overall.ece is None
    assert failed.per_type[0].n_errors == 3


@pytest.mark.parametrize("bins", [1, 51, 0, -3, True, 2.5, "10", None])
def test_bins_out_of_range_are_an_error(bins) -> None:
    with pytest.raises(CalibrationError, match="bins"):
        calibrate([rec(0.5)], bins)


def test_bad_records_are_an_error() -> None:
    with pytest.raises(CalibrationError, match=r"P\(LF0\) must lie in \[0, 1\]"):
        calibrate([rec(0.5), rec(1.5)])
    with pytest.raises(CalibrationError, match="SweepRecords"):
        calibrate([{"p_lf0": 0.5}])  # type: ignore[list-item]
    assert calibrate([rec(math.nan)]).overall.n_unscored == 1  # NaN = no P(LF0)


def test_frames_and_json_round_trip() -> None:
    report = calibrate(_layout(), 4)
    bins = cal.reliability_frame(report)
    assert list(bins.columns) == list(cal.RELIABILITY_COLUMNS)
    assert len(bins) == (1 + 2 + 3) * 4
    overall = bins[bins["group_by"] == "all"]
    assert list(overall["n"]) == [2, 0, 0, 3] and math.isnan(overall["mean_p_lf0"].iloc[1])
    summary = cal.summary_frame(report)
    assert list(summary.columns) == list(cal.SUMMARY_COLUMNS)
    assert list(summary["group"]) == ["all", "pp", "scope", "0", "0.5", "1"]
    assert summary["ece"].iloc[0] == pytest.approx(report.overall.ece)
    back = cal.CalibrationReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert back == report


# --------------------------------------------------------------------------- model vs class


def test_poll_agreement_on_known_points() -> None:
    a = poll_agreement([("a", 0.1, 0.2), ("b", 0.5, 0.4), ("c", 0.9, 0.9)])
    # dx = (−.4, 0, .4), dy = (−.3, −.1, .4): r = .28 / sqrt(.32 · .26)
    assert a.pearson_r == pytest.approx(0.28 / math.sqrt(0.32 * 0.26))
    assert a.mean_abs_diff == pytest.approx(0.2 / 3)
    assert a.n == 3 and a.points[1] == cal.AgreementPoint("b", 0.5, 0.4)
    assert poll_agreement([("a", 0.2, 0.1), ("b", 0.4, 0.5), ("c", 0.6, 0.9)]).pearson_r == pytest.approx(1.0)
    assert poll_agreement([("a", 0.2, 0.9), ("b", 0.8, 0.3)]).pearson_r == pytest.approx(-1.0)
    frame = cal.agreement_frame(a)
    assert list(frame["difference"]) == pytest.approx([-0.1, 0.1, 0.0])


def test_poll_agreement_degenerate_cases() -> None:
    one = poll_agreement([("a", 0.3, 0.8)])
    assert one.pearson_r is None and one.mean_abs_diff == pytest.approx(0.5)
    flat = poll_agreement([("a", 0.1, 0.2), ("b", 0.1, 0.9), ("c", 0.1, 0.4)])  # the model never varies
    assert flat.pearson_r is None and flat.mean_abs_diff == pytest.approx((0.1 + 0.8 + 0.3) / 3)
    same = poll_agreement([("a", 0.1, 0.5), ("b", 0.7, 0.5)])  # the class never varies
    assert same.pearson_r is None
    empty = poll_agreement([])
    assert empty.n == 0 and empty.pearson_r is None and empty.mean_abs_diff is None


@pytest.mark.parametrize("pair", [("a", 1.2, 0.5), ("a", 0.5, math.nan), ("a", True, 0.5), ("a", 0.5),
                                  (3, 0.5, 0.5), "abc", ("a", "0.5", 0.5)])
def test_poll_agreement_bad_points_are_an_error(pair) -> None:
    with pytest.raises(CalibrationError, match="point 1"):
        poll_agreement([("ok", 0.5, 0.5), pair])


def _item(surface: str, model_p: float | None) -> PollItem:
    return PollItem(surface, "pp", "lf zero", "lf one", "reading zero", "reading one", model_p)


def test_stored_polls_become_points_with_model_p_and_a_vote(tmp_path: Path) -> None:
    store = PollStore(tmp_path / "polls.sqlite")
    a = store.create_poll([_item("A voted", 0.7), _item("A no model", None), _item("A no vote", 0.2)], "A")
    b = store.create_poll([_item("B voted", 0.4)], "B")
    store.submit_vote(a.code, 0, "s1", 0, 3)  # one vote, very confident, LF0 → class P(LF0) 1.0
    store.submit_vote(a.code, 1, "s2", 0, 3)  # no model P(LF0): left out
    store.submit_vote(b.code, 0, "s3", 1, 1)  # LF1, not confident → P(LF1) 0.5 → class P(LF0) 0.5
    assert agreement_points([store.results(a.code)]) == [("A voted", 0.7, 1.0)]
    both = stored_agreement(store)
    assert sorted((p.surface, p.model_p_lf0, p.class_p_lf0) for p in both.points) == [
        ("A voted", 0.7, 1.0), ("B voted", 0.4, 0.5)]
    assert both.pearson_r == pytest.approx(1.0) and both.mean_abs_diff == pytest.approx(0.2)
    only_b = stored_agreement(store, [b.code.lower()])
    assert [p.surface for p in only_b.points] == ["B voted"] and only_b.pearson_r is None
    with pytest.raises(PollNotFoundError):
        stored_agreement(store, ["ZZZZZZ"])


# --------------------------------------------------------------------------- figures


def test_reliability_diagram_overall_bars() -> None:
    report = calibrate(_layout(), 10)
    spec = reliability_diagram(report).to_dict()
    bars, ideal = spec["data"]
    assert bars["type"] == "bar" and ideal["meta"] == {"group": "ideal"}
    assert list(bars["x"]) == pytest.approx([0.05, 0.15, 0.95])
    assert list(bars["y"]) == pytest.approx([0.0, 1.0, 1 / 3])
    assert [row[2] for row in bars["customdata"]] == [1, 1, 3]  # counts on hover
    assert bars["meta"]["ece"] == pytest.approx(0.55) and bars["marker"]["color"] == LF0_COLOR
    title = spec["layout"]["title"]["text"]
    assert "ECE = 0.550" in title and f"Brier = {(0.0025 + 0.7225 + 0.0025 + 1.0 + 0.81) / 5:.3f}" in title and "n = 5 (3 left out)" in title


def test_reliability_diagram_per_type_and_per_ratio() -> None:
    report = calibrate(_layout(), 10)
    by_type = reliability_diagram(report, "type").to_dict()["data"]
    assert [t["meta"].get("group") for t in by_type] == ["pp", "scope", "ideal"]
    assert list(by_type[1]["x"]) == pytest.approx([0.95]) and list(by_type[1]["y"]) == pytest.approx([1 / 3])
    assert "ECE 0.62" in by_type[1]["name"]
    by_ratio = reliability_diagram(report, "ratio").to_dict()["data"]
    assert [t["meta"].get("group") for t in by_ratio] == ["0", "0.5", "1", "ideal"]
    assert by_ratio[0]["line"]["color"] == ratio_color(0.0)
    assert ratio_color(0.0) == "rgb(179, 71, 0)" and ratio_color(0.5) == "rgb(90, 92, 89)" and LF1_COLOR == "#B34700"
    assert ratio_color(1.0) == "rgb(0, 114, 178)"


def test_empty_figures_say_what_is_missing() -> None:
    assert "No scored predictions" in reliability_diagram(calibrate([])).to_dict()["layout"]["title"]["text"]
    assert "No sentence" in poll_scatter(poll_agreement([])).to_dict()["layout"]["title"]["text"]


def test_poll_scatter() -> None:
    spec = poll_scatter(poll_agreement([("<b>bold</b> cat", 0.1, 0.2), ("b", 0.5, 0.4), ("c", 0.9, 0.9)])).to_dict()
    points, ideal = spec["data"]
    assert list(points["x"]) == [0.1, 0.5, 0.9] and list(points["y"]) == [0.2, 0.4, 0.9]
    assert points["text"][0] == "&lt;b&gt;bold&lt;/b&gt; cat"  # shown as text, not markup
    assert list(ideal["x"]) == [0.0, 1.0] and list(ideal["y"]) == [0.0, 1.0]
    assert "r = 0.971" in spec["layout"]["title"]["text"]
    one = poll_scatter(poll_agreement([("a", 0.3, 0.8)])).to_dict()
    assert "r = n/a" in one["layout"]["title"]["text"]
