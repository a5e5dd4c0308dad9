"""Ratio sweep and zero-shot pages: runs, live-drawn charts and tables, cache on a second run."""

from __future__ import annotations

import pytest
from app_helpers import assert_ok, goto, plotly_spec, texts

from amp.evaluation import experiments as ex


def _specs(app) -> list[dict]:
    return [plotly_spec(app, i) for i in range(len(app.get("plotly_chart")))]


@pytest.fixture
def fewshot(at):
    goto(at, "ratio_sweep")
    assert any("Press **Run sweep**" in i for i in texts(at, "info"))
    assert at.multiselect(key="fs_types").value == ["pp"]
    assert at.pills(key="fs_ratios").value == [0.0, 0.5, 1.0]
    at.pills(key="fs_ratios").set_value([0.0, 1.0])
    at.number_input(key="fs_n").set_value(1)
    at.number_input(key="fs_k").set_value(2)
    at.number_input(key="fs_beams").set_value(2).run()
    captions = texts(at, "caption")  # says how long it will take (or that it is all cached already)
    assert any(c.startswith("2 prompt(s) × ~") and "≈" in c or c.startswith("All 2 prompt(s) are cached")
               for c in captions), captions
    at.button(key="fs_run").click().run()
    assert_ok(at)
    return at


def test_fewshot_sweep_results(fewshot) -> None:
    state = fewshot.session_state["fewshot_sweep"]
    assert state.status == "done" and len(state.records) == 2
    assert {r.ratio for r in state.records} == {0.0, 1.0}
    assert any(s.startswith("Sweep finished: 2 prompts") for s in texts(fewshot, "success"))
    per_ratio, per_type = ex.fewshot_summary(state.records, "logical")
    table = fewshot.dataframe[0].value
    assert list(table["type"]) == ["pp"] and table["FDM"].iloc[0] == pytest.approx(per_type["FDM"].iloc[0])
    assert 0.0 <= table["FDM"].iloc[0] <= 2.0
    assert any("**0–2**" in m for m in texts(fewshot, "markdown"))  # FDM's real range is stated
    specs = _specs(fewshot)
    p_lf0 = next(s for s in specs if "Mean P(LF0)" in s["layout"]["title"]["text"])
    line = next(t for t in p_lf0["data"] if t.get("meta", {}).get("type") == "pp")
    assert line["x"] == [0.0, 1.0]
    assert line["y"] == pytest.approx(list(per_ratio["mean_p_lf0"]), nan_ok=True)
    assert any(t.get("meta", {}).get("type") == "ideal" for t in p_lf0["data"])  # the diagonal
    acc = next(s for s in specs if "accuracy vs LF0 ratio" in s["layout"]["title"]["text"])
    assert {t["meta"]["lf"] for t in acc["data"]} == {"lf0", "lf1"}
    assert {b.label for b in fewshot.get("download_button")} >= {"Per-type CSV", "All results CSV",
                                                                 "Meaning-level uncertainty CSV"}
    meaning = next(d.value for d in fewshot.dataframe if "semantic_entropy" in d.value.columns)
    assert list(meaning["ratio"]) == [0.0, 1.0]  # per type and ratio
    for col in ex.MEANING_COLUMNS:
        assert list(meaning[col]) == pytest.approx(list(per_ratio[col]), nan_ok=True)
    assert all(0.0 <= v <= 1.0 + 1e-9 for v in meaning["mass_lf0"] + meaning["mass_lf1"] + meaning["mass_neither"])


def test_second_run_comes_from_the_cache(fewshot) -> None:
    assert any(c.startswith("All 2 prompt(s) are cached") for c in texts(fewshot, "caption"))
    fewshot.button(key="fs_run").click().run()
    assert_ok(fewshot)
    state = fewshot.session_state["fewshot_sweep"]
    assert all(r.cached for r in state.records)
    assert any("(2 from the cache)" in s for s in texts(fewshot, "success"))


def test_results_survive_a_page_switch_and_cancel(fewshot) -> None:
    goto(fewshot, "templates")
    goto(fewshot, "ratio_sweep")
    assert fewshot.pills(key="fs_ratios").value == [0.0, 1.0]  # settings persist
    assert len(_specs(fewshot)) == 3  # P(LF0) and accuracy against r, the reliability diagram
    fewshot.session_state["fewshot_sweep"].status = "running"  # as if stopped mid-run
    fewshot.button(key="fs_cancel").click().run()
    assert_ok(fewshot)
    assert any("cancelled after 2 of 2" in w for w in texts(fewshot, "warning"))


def test_no_type_is_a_message(at) -> None:
    goto(at, "ratio_sweep")
    at.multiselect(key="fs_types").set_value([]).run()
    assert_ok(at)
    assert any("at least one type" in w for w in texts(at, "warning"))


def test_zero_shot_sweep(at) -> None:
    goto(at, "zero_shot")
    at.number_input(key="zs_n").set_value(2)
    at.number_input(key="zs_beams").set_value(2).run()
    at.button(key="zs_run").click().run()
    assert_ok(at)
    state = at.session_state["zeroshot_sweep"]
    assert state.status == "done" and len(state.records) == 2
    summary = at.dataframe[0].value
    assert "ZM_2" in summary.columns and list(summary["type"]) == ["pp"]
    meaning = next(d.value for d in at.dataframe if list(d.value.columns)[:2] == ["type", "n"]
                   and "semantic_entropy" in d.value.columns)
    expected = ex.zeroshot_summary(state.records, k=2, mode="logical")
    assert meaning["semantic_entropy"].iloc[0] == pytest.approx(expected["semantic_entropy"].iloc[0])
    specs = _specs(at)
    zm = next(s for s in specs if "ZM_2" in s["layout"]["title"]["text"])
    assert zm["data"][0]["y"] == pytest.approx(list(summary["ZM_2"]))
    at.slider(key="zs_k").set_value(1).run()
    assert_ok(at)
    assert "ZM_1" in at.dataframe[0].value.columns
    dist = next(s for s in _specs(at) if "Distribution" in s["layout"]["title"]["text"])
    assert len(dist["data"][0]["y"]) == 2
    assert at.radio(key="zs_pcol").options == [  # every P(LF0) of the records, the paper's first
        "min-token probability (paper's definition)", "min-token probability where the readings part",
        "total sequence probability (what Fig. 3 plotted)"]
    at.radio(key="zs_pcol").set_value("p_lf0_total").run()
    dist = next(s for s in _specs(at) if "Distribution" in s["layout"]["title"]["text"])
    assert "total sequence" in dist["layout"]["title"]["text"]
    at.radio(key="zs_pcol").set_value("p_lf0_parted").run()
    dist = next(s for s in _specs(at) if "Distribution" in s["layout"]["title"]["text"])
    assert "where the readings part" in dist["layout"]["title"]["text"] and len(dist["data"][0]["y"]) == 2


def test_a_jobs_settings_are_read_from_either_config_layout() -> None:
    """The jobs panel describes a job's sweep from its meta, saved by this code or by older code (a flat beams)."""
    from ui.sweeps.job_runs import settings_of

    old = {"kind": "fewshot", "types": ["pp"], "ratios": [0.0, 1.0], "n_per_ratio": 1, "seed": 7, "k": 2,
           "fmt": "fol", "beams": 2, "mode": "logical", "independent_draws": False}
    new = ex.config_to_dict(ex.config_from_dict(old))
    assert "beams" not in new and new["search"]["beams"] == 2
    words = "types pp · ratios 0.0, 1.0 · n_per_ratio 1 · k 2 · beams 2 · seed 7 · mode logical · fmt fol"
    assert settings_of({"config": old}) == settings_of({"config": new}) == words
    assert settings_of({"config": {"kind": "sweep"}}) == settings_of({}) == ""
