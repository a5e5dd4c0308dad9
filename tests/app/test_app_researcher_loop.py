"""Issue #15 points 5 and 6 in the app: coverage curves, sweeps saved as runs, prompt files, long sweeps.

Each test gets an empty cache root of its own (``AMP_CACHE_DIR``), so the runs it saves are the
only ones the Research and Compare pages can list.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import APP, TIMEOUT, assert_ok, goto, plotly_spec, texts

from amp import prompts
from amp.evaluation import runs
from amp.evaluation.coverage import coverage_curves
from amp.teaching.prompt_file import prompt_json, prompt_text
from ui.shared.common import plain


@pytest.fixture
def app(app_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The app on the tiny model with an empty cache root (result cache and runs) of its own."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert_ok(at)
    return at


def _specs(at) -> list[dict]:
    return [plotly_spec(at, i) for i in range(len(at.get("plotly_chart")))]


def _coverage_spec(at) -> dict:
    return next(s for s in _specs(at) if s["layout"]["title"]["text"].startswith("Interpretation coverage over k"))


def _zero_shot_sweep(at, types: list[str]) -> None:
    goto(at, "zero_shot")
    at.multiselect(key="zs_types").set_value(types)
    at.number_input(key="zs_n").set_value(1)
    at.number_input(key="zs_beams").set_value(3).run()
    at.button(key="zs_run").click().run()
    assert_ok(at)
    assert at.session_state["zeroshot_sweep"].status == "done"


#: What the coverage figure says when the tiny model's beams (noise: none parses) find no reading.
NOTHING_FOUND = ["No beam was one of the two readings at any k from 1 to 3, in the one sentence.",
                 "No beam parsed as a logical form (so precision is undefined); recall, both found and ZM_k are 0."]


def test_zero_shot_coverage_curves_saved_run_and_records_table(app) -> None:
    _zero_shot_sweep(app, ["pp", "scope"])
    state = app.session_state["zeroshot_sweep"]
    points = coverage_curves(state.records, max_k=3, mode="logical")
    # the tiny model's beams are noise: every measure is 0 at every k, and the figure says so in words
    assert all(p.recall == p.both_found == p.zm == 0 and p.n_precision == 0 for p in points)
    spec = _coverage_spec(app)
    assert "PP attachment (n = 1)" in spec["layout"]["title"]["text"]
    assert spec["data"] == [] and spec["layout"]["meta"] == {"nothing_found": True}
    assert [a["text"] for a in spec["layout"]["annotations"]] == NOTHING_FOUND
    summary = app.dataframe[0].value  # ZM_3 of the table is the coverage's last point
    assert list(summary["ZM_3"]) == pytest.approx([p.zm for p in points if p.k == 3])
    app.selectbox(key="zs_cov_type").select("scope").run()
    assert_ok(app)
    spec = _coverage_spec(app)
    assert "quantifier scope (n = 1)" in spec["layout"]["title"]["text"]
    assert [a["text"] for a in spec["layout"]["annotations"]] == NOTHING_FOUND
    assert "Coverage CSV (all types, every k)" in {b.label for b in app.get("download_button")}
    assert any("n = 1 per type" in c and "little information" in c for c in texts(app, "caption"))
    records_table = next(d for d in app.dataframe if "surface" in d.value.columns)
    records = records_table.value
    assert list(records.columns[:2]) == ["match", "p_lf0"]
    # tiny probabilities read as 5.11e-43, not 0.000…0511: floats in three significant digits
    assert 0 < records["p_lf0_total"].min() < 1e-9
    formats = {c: v["type_config"].get("format") for c, v in json.loads(records_table.proto.columns).items()
               if "type_config" in v}
    assert {formats[c] for c in ("p_lf0", "p_lf0_total", "min_prob_lf0", "min_prob_lf1")} == {"%.3g"}
    formats = {c: v["type_config"].get("format") for c, v in json.loads(app.dataframe[0].proto.columns).items()
               if "type_config" in v}
    assert formats["ZM_3"] == "%.1f %%" and formats["mean_p_lf0_total"] == formats["acc_lf0"] == "%.3g"
    # the finished sweep is a saved run, and the Research page lists it
    assert state.saved_as is not None
    assert any(plain(state.saved_as) in c and "Research and Compare" in c for c in texts(app, "caption"))
    assert [p.stem for p in runs.list_runs()] == [state.saved_as]
    saved = runs.load_manifest(runs.list_runs()[0])
    assert saved["zero_shot"] == state.records and saved["settings"]["beams"] == 3
    # where it ran (issue #28): in this process, with transformers, on the CPU in float32
    assert {k: saved["settings"][k] for k in ("server", "engine", "device", "dtype")} == {
        "server": "none (the model ran in this process)", "engine": "transformers", "device": "cpu",
        "dtype": "float32"}
    goto(app, "research")
    assert not any("No saved runs yet" in i for i in texts(app, "info"))
    assert app.selectbox(key="research_run_0").options == [state.saved_as]
    assert any("ZM_3" in d.value.columns for d in app.dataframe)


def test_a_run_that_cannot_be_saved_is_a_warning(app, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "runs").write_text("a file where the runs folder should be", encoding="utf-8")
    _zero_shot_sweep(app, ["pp"])
    state = app.session_state["zeroshot_sweep"]
    assert state.saved_as is None and state.save_error
    assert any(w.startswith("The sweep could not be saved as a run") for w in texts(app, "warning"))
    assert any(s.startswith("Sweep finished: 1 prompt") for s in texts(app, "success"))


def test_ratio_sweep_saved_run_is_listed_by_research_and_compare(app) -> None:
    goto(app, "research")
    assert any("No saved runs yet" in i for i in texts(app, "info"))
    goto(app, "ratio_sweep")
    app.pills(key="fs_ratios").set_value([0.0, 1.0])
    app.number_input(key="fs_n").set_value(1)
    app.number_input(key="fs_k").set_value(2)
    app.number_input(key="fs_beams").set_value(2).run()
    app.button(key="fs_run").click().run()
    assert_ok(app)
    state = app.session_state["fewshot_sweep"]
    assert state.status == "done" and state.saved_as is not None
    assert any("n = 1 per ratio" in c and "little information" in c for c in texts(app, "caption"))
    records_table = next(d for d in app.dataframe if "surface" in d.value.columns)
    records = records_table.value
    assert list(records.columns[:2]) == ["match", "p_lf0"]
    # tiny probabilities read as 5.11e-43, not 0.000…0511: floats in three significant digits
    assert 0 < records["p_lf0_total"].min() < 1e-9
    formats = {c: v["type_config"].get("format") for c, v in json.loads(records_table.proto.columns).items()
               if "type_config" in v}
    assert {formats[c] for c in ("p_lf0", "p_lf0_total", "min_prob_lf0", "min_prob_lf1")} == {"%.3g"}
    per_type = app.dataframe[0]
    formats = {c: v["type_config"].get("format") for c, v in json.loads(per_type.proto.columns).items()
               if "type_config" in v}
    assert formats == {"FDM": "%.3f", "FIM": "%.3f"}  # its own; the rest are whole numbers
    goto(app, "research")
    assert app.selectbox(key="research_run_0").options == [state.saved_as]
    assert any("FDM" in d.value.columns for d in app.dataframe)
    goto(app, "compare")
    assert app.multiselect(key="cmp_runs").options == [state.saved_as]
    app.multiselect(key="cmp_runs").set_value([state.saved_as]).run()
    assert_ok(app)
    assert any(s["layout"]["title"]["text"] == "mean_p_lf0 vs LF0 ratio" for s in _specs(app))


def test_no_caption_with_more_than_one_sentence_per_ratio(app) -> None:
    goto(app, "ratio_sweep")
    app.pills(key="fs_ratios").set_value([0.0])
    app.number_input(key="fs_n").set_value(2)
    app.number_input(key="fs_k").set_value(2)
    app.number_input(key="fs_beams").set_value(2).run()
    app.button(key="fs_run").click().run()
    assert_ok(app)
    assert len(app.session_state["fewshot_sweep"].records) == 2
    assert not any("little information" in c for c in texts(app, "caption"))


def _confirm_boxes(at) -> list:
    return [c for c in at.checkbox if c.label.startswith("Start it anyway")]


def test_a_sweep_of_an_hour_or_more_needs_a_confirmation(app, monkeypatch: pytest.MonkeyPatch) -> None:
    from ui.sweeps import sweep

    monkeypatch.setattr(sweep, "_SPEED", {})  # the CPU guess, not the tiny model's measured speed
    monkeypatch.setitem(sweep.GUESS, "cpu", (110.0, 4.5))  # a slow machine's guess: ~2 min per prompt
    goto(app, "zero_shot")
    app.number_input(key="zs_n").set_value(2).run()
    assert not _confirm_boxes(app) and not app.button(key="zs_run").disabled
    app.number_input(key="zs_n").set_value(60).run()  # 60 prompts × ~2 min
    (box,) = _confirm_boxes(app)
    assert app.button(key="zs_run").disabled
    assert any("60 prompt(s) × ~" in c and " h on CPU" in c for c in texts(app, "caption"))
    box.check().run()
    assert not app.button(key="zs_run").disabled
    goto(app, "ratio_sweep")  # 5 types × 11 ratios × 100 sentences: days, stated in days
    app.multiselect(key="fs_types").set_value(["pp", "scope", "revscope", "bound", "conj"])
    app.pills(key="fs_ratios").set_value(list(sweep_ratios()))
    app.number_input(key="fs_n").set_value(100).run()
    assert_ok(app)
    assert any("5500 prompt(s)" in c and " days on CPU" in c for c in texts(app, "caption"))
    (box,) = _confirm_boxes(app)
    assert " days" in box.label and app.button(key="fs_run").disabled


def sweep_ratios() -> tuple[float, ...]:
    from amp.evaluation.sweep_plan import DEFAULT_RATIOS

    return DEFAULT_RATIOS


def test_duration_text() -> None:
    from ui.sweeps.sweep import duration_text

    assert [duration_text(s) for s in (45, 89.4, 90, 3599, 5400, 3 * 3600, 47.9 * 3600, 48 * 3600, 10 * 86400)] == [
        "45 s", "89 s", "2 min", "60 min", "1.5 h", "3.0 h", "47.9 h", "2.0 days", "10.0 days"]


# --------------------------------------------------------------------------- prompt builder


def test_prompt_downloads_import_and_move_to_top(app) -> None:
    goto(app, "prompt_builder")
    buttons = {b.label for b in app.get("download_button")}
    assert {"Prompt as text", "Prompt as JSON"} <= buttons
    before = app.session_state["prompt"]
    app.button(key="pb_top_3").click().run()
    moved = app.session_state["prompt"]
    assert moved.examples[0] == before.examples[3]
    assert moved.examples[1:4] == before.examples[0:3] and moved.examples[4:] == before.examples[4:]
    assert app.button(key="pb_top_0").disabled
    other = prompts.mixed_prompt("Galileo saw Mary with the camera", 0.8, seed=4, k=5)
    app.file_uploader(key="pb_upload").set_value(("other.json", prompt_json(other), "application/json")).run()
    app.button(key="pb_import").click().run()
    assert_ok(app)
    assert app.session_state["prompt"] == other
    assert app.code[0].value == other.render()
    assert any(s.startswith(f"Imported {plain('other.json')}: 5 examples") for s in texts(app, "success"))
    goto(app, "parse_inspect")  # the Parse page uses the imported prompt
    goto(app, "prompt_builder")
    assert app.session_state["prompt"] == other  # kept across pages while the settings are unchanged
    text = prompts.mixed_prompt("Galileo saw Mary with the camera", 0.2, seed=5, k=4)
    app.file_uploader(key="pb_upload").set_value(("p.txt", prompt_text(text).encode(), "text/plain")).run()
    app.button(key="pb_import").click().run()  # the rendered text reads back whole, labels included
    assert app.session_state["prompt"] == text


@pytest.mark.parametrize(("data", "says"), [
    (b"{not json", "is not JSON"),
    (b"Human: a boy\nComputer: exists x . boy(x)\n", "does not end with the test block"),
    (json.dumps({"examples": [], "test_utterance": "t", "type": "idiom"}).encode(), "unknown ambiguity type"),
])
def test_a_bad_prompt_file_is_an_error_box_and_keeps_the_prompt(app, data: bytes, says: str) -> None:
    goto(app, "prompt_builder")
    before = app.session_state["prompt"]
    app.file_uploader(key="pb_upload").set_value(("bad.json", data, "application/json")).run()
    app.button(key="pb_import").click().run()
    assert_ok(app)
    errors = texts(app, "error")
    assert any(e.startswith("Nothing was imported") and says in e for e in errors), errors
    assert app.session_state["prompt"] == before
    assert app.code[0].value == before.render()
