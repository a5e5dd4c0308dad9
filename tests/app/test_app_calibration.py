"""Calibration views (AppTest): the reliability diagram, ECE and Brier on the Ratio sweep page, and
the model-vs-class P(LF0) scatter on the Class poll page."""

from __future__ import annotations

import pytest
from app_helpers import assert_ok, goto, plotly_spec

from amp.data import generate as gen
from amp.evaluation.calibration import calibrate
from amp.teaching.poll import PollItem, PollStore
from amp.teaching.poll_calibration import stored_agreement
from ui.shared.common import fmt_prob


def _spec(app, title: str) -> dict:
    specs = [plotly_spec(app, i) for i in range(len(app.get("plotly_chart")))]
    return next(s for s in specs if s["layout"].get("title", {}).get("text", "").startswith(title))


def _metric(app, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def test_ratio_sweep_shows_the_reliability_diagram(at) -> None:
    goto(at, "ratio_sweep")
    at.pills(key="fs_ratios").set_value([0.0, 1.0])
    at.number_input(key="fs_n").set_value(2)
    at.number_input(key="fs_k").set_value(2)
    at.number_input(key="fs_beams").set_value(2).run()
    at.button(key="fs_run").click().run()
    assert_ok(at)
    records = at.session_state["fewshot_sweep"].records
    assert len(records) == 4 and all(r.p_lf0 is not None and r.error is None for r in records)
    report = calibrate(records, 10)
    assert report.overall.n == 4
    assert _metric(at, "ECE") == fmt_prob(report.overall.ece)
    assert _metric(at, "Brier score") == fmt_prob(report.overall.brier)
    assert _metric(at, "Scored predictions") == "4"
    spec = _spec(at, "Reliability of P(LF0), all records")
    bars = next(t for t in spec["data"] if t["type"] == "bar")
    full = [b for b in report.overall.bins if b.n]
    assert bars["y"] == pytest.approx([b.observed_lf0 for b in full])
    assert [row[2] for row in bars["customdata"]] == [b.n for b in full]
    assert f"ECE = {report.overall.ece:.3f}" in spec["layout"]["title"]["text"]
    assert any(t.get("meta", {}).get("group") == "ideal" for t in spec["data"])
    assert {"Reliability table CSV", "ECE and Brier CSV"} <= {b.label for b in at.get("download_button")}

    at.radio(key="fs_cal_by").set_value("ratio").run()
    assert_ok(at)
    lines = _spec(at, "Reliability of P(LF0), per LF0 ratio r")["data"]
    assert [t["meta"]["group"] for t in lines] == ["0", "1", "ideal"]
    assert [t["meta"]["n"] for t in lines[:2]] == [2, 2]
    at.number_input(key="fs_cal_bins").set_value(2).run()
    assert_ok(at)
    two = calibrate(records, 2)
    assert _metric(at, "ECE") == fmt_prob(two.overall.ece)
    assert "2 bins" in _spec(at, "Reliability of P(LF0)")["layout"]["title"]["text"]


def test_class_poll_shows_model_vs_class_scatter(at) -> None:
    store = PollStore()  # under $AMP_CACHE_DIR (the app_env fixture)
    pairs = gen.pairs("pp")[:3]
    poll = store.create_poll([PollItem.from_pair(p, m) for p, m in zip(pairs, (0.7, 0.2, 0.5), strict=True)],
                             "calibration poll")
    store.submit_vote(poll.code, 0, "s1", 0, 3)  # s1's range 1–3: LF0 at 3 → P(LF0) 1.0
    store.submit_vote(poll.code, 1, "s1", 1, 1)  # LF1 at 1 → P(LF1) 0.5 → P(LF0) 0.5
    store.submit_vote(poll.code, 0, "s2", 1, 2)  # one vote: raw 0.75 for LF1 → P(LF0) 0.25
    goto(at, "teach_poll")
    at.text_input(key="tp_open_code").set_value(poll.code)
    at.button(key="tp_open").click().run()
    assert_ok(at)
    at.radio(key="tp_cal_scope").set_value("this").run()
    assert_ok(at)
    spec = _spec(at, "Model vs class P(LF0) per sentence")
    points = spec["data"][0]
    assert points["x"] == pytest.approx([0.7, 0.2])  # the third sentence has no vote
    assert points["y"] == pytest.approx([(1.0 + 0.25) / 2, 0.5])
    assert points["text"] == [pairs[0].surface, pairs[1].surface]
    assert "r = 1.000" in spec["layout"]["title"]["text"]
    assert _metric(at, "Sentences compared") == "2"
    assert _metric(at, "Mean |model − class|") == fmt_prob((abs(0.7 - 0.625) + abs(0.2 - 0.5)) / 2)
    assert "Model vs class CSV" in {b.label for b in at.get("download_button")}

    at.radio(key="tp_cal_scope").set_value("all").run()  # every stored poll with votes and a model P(LF0)
    assert_ok(at)
    everything = stored_agreement(store)
    assert _metric(at, "Sentences compared") == str(everything.n)
    assert set(_spec(at, "Model vs class P(LF0) per sentence")["data"][0]["text"]) >= set(points["text"])
