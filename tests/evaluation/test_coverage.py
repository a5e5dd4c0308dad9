"""Interpretation coverage (issue #15 point 5): exact recall, precision, both-found on hand-made beams."""

from __future__ import annotations

import json
import math

import pytest

from amp.errors import MetricError
from amp.evaluation import experiments as ex
from amp.evaluation.coverage import (
    COVERAGE_COLUMNS,
    CoveragePoint,
    coverage_curves,
    coverage_frame,
    item_coverage,
)
from amp.evaluation.metrics import zm_k

LF0 = "exists x . man(x) AND exists y . girl(y) AND saw(x, y)"
LF0_RENAMED = "exists y . man(y) AND exists x . girl(x) AND saw(y, x)"  # LF0 again, other variable names
LF1 = "exists x . girl(x) AND exists y . man(y) AND saw(x, y)"
OTHER = "exists x . man(x) AND exists y . boy(y) AND saw(x, y)"  # parses, is neither reading
BAD = "exists x . man(x) AND ("  # does not parse: dropped


def _rec(id_: str, type_: str, beams: list[str], error: str | None = None) -> ex.SweepRecord:
    return ex.SweepRecord(id=id_, type=type_, ratio=None, surface="s", lf0=LF0, lf1=LF1, beams=tuple(beams),
                          error=error, **ex.match_fields(beams, LF0, LF1, "logical", "fol"))


def _records() -> list[ex.SweepRecord]:
    return [
        _rec("z/pp/0", "pp", [LF0, BAD, LF0_RENAMED, OTHER, LF1]),  # distinct: LF0, OTHER, LF1
        _rec("z/pp/1", "pp", ["not an LF", ""]),  # nothing parses: no interpretation at all
        _rec("z/pp/2", "pp", [LF0, LF1], error="RuntimeError: boom"),  # failed: left out
        _rec("z/scope/0", "scope", [LF1, LF0]),
    ]


def test_item_coverage_counts_distinct_interpretations_per_k() -> None:
    got = item_coverage([LF0, BAD, LF0_RENAMED, OTHER, LF1], LF0, LF1, 5)
    assert [(c.k, c.found_lf0, c.found_lf1, c.n_distinct, c.n_readings) for c in got] == [
        (1, True, False, 1, 1), (2, True, False, 2, 1), (3, True, True, 3, 2), (4, True, True, 3, 2),
        (5, True, True, 3, 2)]
    assert [c.recall for c in got] == [0.5, 0.5, 1.0, 1.0, 1.0]
    assert [c.precision for c in got] == [1.0, 0.5, 2 / 3, 2 / 3, 2 / 3]
    assert [c.both_found for c in got] == [False, False, True, True, True]


def test_no_parseable_beam_has_undefined_precision() -> None:
    got = item_coverage(["not an LF", ""], LF0, LF1, 2)
    assert [(c.recall, c.both_found, c.n_distinct) for c in got] == [(0.0, False, 0), (0.0, False, 0)]
    assert all(math.isnan(c.precision) for c in got)


def test_golds_that_canonicalise_alike_are_both_found_at_once() -> None:
    (one,) = item_coverage([LF0_RENAMED], LF0, LF0, 1)
    assert (one.found_lf0, one.found_lf1, one.recall, one.precision, one.both_found) == (True, True, 1.0, 1.0, True)


def test_curves_average_per_type_and_skip_failed_items() -> None:
    points = coverage_curves(_records())
    assert [(p.type, p.k) for p in points] == [("pp", k) for k in range(1, 6)] + [("scope", k) for k in range(1, 6)]
    pp = {p.k: p for p in points if p.type == "pp"}
    assert [pp[k].n for k in range(1, 6)] == [2] * 5  # the failed item is left out
    assert [pp[k].recall for k in range(1, 6)] == [0.25, 0.25, 0.5, 0.5, 0.5]
    assert [pp[k].precision for k in range(1, 6)] == [1.0, 0.5, 2 / 3, 2 / 3, 2 / 3]  # over the 1 item with LFs
    assert [pp[k].n_precision for k in range(1, 6)] == [1] * 5
    assert [pp[k].both_found for k in range(1, 6)] == [0.0, 0.0, 0.5, 0.5, 0.5]
    assert [pp[k].zm for k in range(1, 6)] == [0.0, 0.0, 0.0, 0.0, 50.0]  # raw beams: LF1 is beam 5
    assert [pp[k].mean_distinct for k in range(1, 6)] == [0.5, 1.0, 1.5, 1.5, 1.5]
    scope = {p.k: p for p in points if p.type == "scope"}
    assert [(scope[k].recall, scope[k].precision, scope[k].both_found, scope[k].zm) for k in (1, 2, 5)] == [
        (0.5, 1.0, 0.0, 0.0), (1.0, 1.0, 1.0, 100.0), (1.0, 1.0, 1.0, 100.0)]


def test_both_found_is_never_below_zm_and_zm_matches_the_metric() -> None:
    recs = _records()
    for p in coverage_curves(recs, max_k=5):
        assert p.both_found >= p.zm / 100
        rows = [(r.beams, r.lf0, r.lf1) for r in recs if r.type == p.type and r.error is None]
        assert p.zm == zm_k(rows, p.k)


def test_max_k_mode_and_errors() -> None:
    assert [p.k for p in coverage_curves(_records(), max_k=2)] == [1, 2, 1, 2]
    with pytest.raises(MetricError, match="whole number from 1"):
        coverage_curves(_records(), max_k=0)
    with pytest.raises(MetricError, match="whole number from 1"):
        item_coverage([LF0], LF0, LF1, True)
    with pytest.raises(MetricError, match="gold LF does not parse"):
        item_coverage([LF0], BAD, LF1, 1)
    with pytest.raises(MetricError, match="list of strings"):
        item_coverage(LF0, LF0, LF1, 1)  # type: ignore[arg-type]
    mixed = [_records()[0], ex.rematch([_records()[3]], "paper")[0]]
    with pytest.raises(MetricError, match="mix several modes"):
        coverage_curves(mixed)
    assert coverage_curves([]) == []


def test_a_type_whose_items_all_failed_has_nan_points() -> None:
    (point,) = coverage_curves([_rec("z/pp/0", "pp", [], error="boom")])
    assert (point.type, point.k, point.n, point.n_precision) == ("pp", 1, 0, 0)
    assert all(math.isnan(v) for v in (point.recall, point.precision, point.both_found, point.zm))


def test_frame_and_json() -> None:
    points = coverage_curves(_records(), max_k=3)
    df = coverage_frame(points)
    assert list(df.columns) == list(COVERAGE_COLUMNS) and len(df) == 6
    assert list(df["recall"]) == [0.25, 0.25, 0.5, 0.5, 1.0, 1.0]
    assert str(df["k"].dtype) == "int64" and str(df["precision"].dtype) == "float64"
    assert list(coverage_frame([]).columns) == list(COVERAGE_COLUMNS)
    nan_point = coverage_curves([_rec("z/pp/1", "pp", ["x"])], max_k=1)[0]
    data = json.loads(json.dumps(nan_point.to_dict()))
    assert data["precision"] is None and data["recall"] == 0.0
    assert math.isnan(CoveragePoint.from_dict(data).precision)


def test_figure_draws_one_type_in_percent_next_to_zm() -> None:
    from amp.reporting.coverage_plots import coverage_curves_figure

    frame = coverage_frame(coverage_curves(_records(), max_k=5))
    fig = coverage_curves_figure(frame).to_dict()  # the first type by default
    assert fig["layout"]["title"]["text"].startswith("Interpretation coverage over k — PP attachment (n = 2)")
    lines = {t["meta"]["measure"]: t for t in fig["data"]}
    assert list(lines) == ["recall", "precision", "both_found", "zm"]
    assert list(lines["recall"]["x"]) == [1, 2, 3, 4, 5]
    assert list(lines["recall"]["y"]) == [25.0, 25.0, 50.0, 50.0, 50.0]
    assert list(lines["both_found"]["y"]) == [0.0, 0.0, 50.0, 50.0, 50.0]
    assert list(lines["zm"]["y"]) == [0.0, 0.0, 0.0, 0.0, 50.0]  # already in percent
    assert lines["zm"]["line"]["dash"] == "dash" and lines["recall"]["line"]["dash"] == "solid"
    scope = coverage_curves_figure(frame, "scope").to_dict()
    assert {t["meta"]["type"] for t in scope["data"]} == {"scope"}
    empty = coverage_curves_figure(coverage_frame([])).to_dict()
    assert "No zero-shot results yet" in empty["layout"]["title"]["text"]


def test_figure_says_in_words_when_no_beam_was_a_reading() -> None:
    """Issue #32: every measure 0 at every k is a sentence, not four lines stacked on the zero line."""
    from amp.reporting.coverage_plots import coverage_curves_figure

    unparseable = coverage_curves([_rec("z/pp/1", "pp", ["x"]), _rec("z/pp/3", "pp", ["not an LF", ""])], max_k=2)
    fig = coverage_curves_figure(coverage_frame(unparseable)).to_dict()
    assert fig["data"] == [] and fig["layout"]["meta"] == {"nothing_found": True}
    assert fig["layout"]["title"]["text"].startswith("Interpretation coverage over k — PP attachment (n = 2)")
    assert [a["text"] for a in fig["layout"]["annotations"]] == [
        "No beam was one of the two readings at any k from 1 to 2, in any of the 2 sentences.",
        "No beam parsed as a logical form (so precision is undefined); recall, both found and ZM_k are 0."]
    neither = coverage_curves([_rec("z/scope/1", "scope", [OTHER, BAD])], max_k=3)  # parses, is neither reading
    fig = coverage_curves_figure(coverage_frame(neither)).to_dict()
    assert fig["data"] == [] and "(n = 1)" in fig["layout"]["title"]["text"]
    assert [a["text"] for a in fig["layout"]["annotations"]] == [
        "No beam was one of the two readings at any k from 1 to 3, in the one sentence.",
        "Recall, precision, both found and ZM_k are 0 at every k."]
    one_found = coverage_curves([_rec("z/scope/1", "scope", [OTHER, LF1])], max_k=2)  # found at k = 2: lines
    fig = coverage_curves_figure(coverage_frame(one_found)).to_dict()
    assert [t["meta"]["measure"] for t in fig["data"]] == ["recall", "precision", "both_found", "zm"]
    assert list(fig["data"][0]["y"]) == [0.0, 50.0] and "meta" not in fig["layout"]
