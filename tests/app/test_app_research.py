"""Research page: two hand-written run manifests shown side by side (no model run)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reporting"))  # test_research, also when run alone

from app_helpers import assert_ok, goto

from amp.evaluation import runs


def _runs(cache: Path) -> None:
    import test_research as tr  # the hand-made records of tests/reporting/test_research.py

    zero, few = tr.records()
    shutil.rmtree(cache / "runs", ignore_errors=True)  # only these two (app sweeps of other tests save runs too)
    runs.save_manifest("model-a", {"model": "a", "method": "beam", "beams": 5}, zero, few,
                           directory=cache / "runs")
    runs.save_manifest("model-b", {"model": "b", "method": "distinct", "beams": 5}, zero[:2], few[:2],
                           directory=cache / "runs")


def test_research_page_two_runs_side_by_side(at, app_cache_dir: Path) -> None:
    _runs(app_cache_dir)
    goto(at, "research")
    boxes = [b for b in at.selectbox if b.key.startswith("research_run_")]  # not the sidebar's Precision
    assert len(boxes) == 2 and set(boxes[0].options) == {"model-a", "model-b"}
    assert boxes[0].value != boxes[1].value
    assert len(at.dataframe) == 4
    assert len(at.get("plotly_chart")) == 10
    at.radio(key="research_mode_1").set_value("paper").run()
    assert_ok(at)
    # The hand-made records hold a nested-quantifier gold that the paper's (original) canonicaliser
    # cannot read: that run is refused with a message, the other side keeps its charts.
    assert any("cannot be summarised in paper mode" in str(e.value) for e in at.error)
    assert len(at.get("plotly_chart")) == 5


def test_compare_page_two_models_and_overlay(at, app_env: Path, app_cache_dir: Path) -> None:
    _runs(app_cache_dir)
    goto(at, "compare")
    at.text_input(key="cmp_spec_b").set_value(str(app_env)).run()
    at.button(key="cmp_run").click().run()
    assert_ok(at)
    assert len(at.metric) == 2
    finished = [s.label for s in at.status]  # each box names its model once done, not just "Done · …"
    assert [lbl.split(" · ")[0] for lbl in finished] == ["Model A done", "Model B done"], finished
    assert all(s.state == "complete" for s in at.status)
    heat = [c for c in at.get("plotly_chart")]
    assert len(heat) == 2
    at.multiselect(key="cmp_runs").set_value(["model-a", "model-b"]).run()
    assert_ok(at)
    assert len(at.get("plotly_chart")) == 3


def test_a_runs_settings_are_shown_as_plain_text(at, app_cache_dir: Path) -> None:
    """A manifest's settings hold what a user typed (a model path, an endpoint): never Markdown."""
    import test_research as tr

    zero, few = tr.records()
    shutil.rmtree(app_cache_dir / "runs", ignore_errors=True)
    runs.save_manifest("odd", {"model": "*loud* [here](http://example.org)", "beams": 5}, zero, few,
                       directory=app_cache_dir / "runs")
    goto(at, "research")
    captions = [c.value for c in at.caption if "loud" in c.value]
    assert captions, [c.value for c in at.caption]
    for text in captions:
        assert "*loud*" not in text and "[here](http" not in text, text  # escaped, not emphasis or a link
        assert r"\*loud\*" in text and r"\[here\]" in text, text
