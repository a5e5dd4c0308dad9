"""Compare models (issue #32): model B with its own engine and precision; a model B that fails to load says why, in
plain sight, and model A's result stays; the beam tables put rank, match and score before the beam."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from app_helpers import assert_ok, goto, plotly_spec, texts

from ui.shared.common import fmt_prob, plain

BEAM_COLUMNS = ["rank", "match", "score", "beam"]


@pytest.fixture(scope="module")
def broken_model(app_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's folder with its weights file overwritten: its spec checks out, loading fails."""
    folder = tmp_path_factory.mktemp("broken") / "tiny-broken-weights"
    shutil.copytree(app_model_dir, folder)
    (folder / "model.safetensors").write_bytes(b"these are not weights")
    return folder


def _compare(at, spec_b: Path, precision_b: str):  # type: ignore[no-untyped-def]
    goto(at, "compare")
    assert at.text_input(key="cmp_spec_b").value == str(at.session_state["model_spec"])  # B starts as A
    assert at.selectbox(key="cmp_engine_b").value == "transformers"  # ... on the sidebar's engine
    assert at.selectbox(key="cmp_dtype_b").value == ""  # ... in the sidebar's precision
    at.text_input(key="cmp_spec_b").input(str(spec_b))
    at.selectbox(key="cmp_dtype_b").select(precision_b).run()
    at.button(key="cmp_run").click().run()
    assert_ok(at)
    return at


def _statuses(at) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {node.label: node for node in at.main.children.values() if node.type == "status"}


def _model_a_shown(at, model_a: Path) -> None:  # type: ignore[no-untyped-def]
    assert [s.value for s in at.header][0] == f"Model A: {plain(model_a)}"
    assert [m.label for m in at.metric] == ["P(LF0) where the readings part"]
    (table,) = at.dataframe
    assert list(table.value.columns) == BEAM_COLUMNS
    assert list(table.value["rank"]) == list(range(1, len(table.value) + 1)) and len(table.value) >= 1
    assert set(table.value["match"]) <= {"lf0", "lf1", "both", "neither", "unparseable"}


def test_a_model_b_that_fails_to_load_says_why_and_model_a_stays(at, app_env: Path, broken_model: Path) -> None:
    _compare(at, broken_model, "int8")
    _model_a_shown(at, app_env)
    assert [s.value for s in at.header][1] == f"Model B: {plain(broken_model)}"
    reason = f"could not load model folder {broken_model.as_posix()!r} as a causal language model on cpu in int8"
    shown = [e for e in texts(at, "error") if e.startswith("**Model B gave no result.**")]
    assert len(shown) == 1 and plain(reason) in shown[0]  # in B's column, outside any status box
    status = _statuses(at)["Model B: the model could not be loaded"]
    assert status.state == "error" and status.proto.expanded  # the failed box is open, its reason visible
    assert any(plain(reason) in e for e in (c.value for c in status.children.values() if c.type == "error"))
    assert _statuses(at)["Model A done · cpu · float32"].state == "complete"
    # the failure is model B's, in its precision: the sidebar's model is fine
    assert list(at.session_state["model_errors"]) == [(str(broken_model), "transformers", "int8")]
    assert not [e for e in texts(at, "error") if e.startswith("This model failed to load")]
    assert not [b for b in at.button if b.key and b.key.startswith(("fallback_", "exact_", "retry_"))]
    # a heatmap row for model A only; both stay on the page at the next rerun
    assert [plotly_spec(at, i)["data"][0]["y"] for i in range(2)] == [["A"], ["A"]]
    at.run()
    assert_ok(at)
    _model_a_shown(at, app_env)
    assert len([e for e in texts(at, "error") if e.startswith("**Model B gave no result.**")]) == 1


def test_a_model_b_that_does_not_exist_is_a_message_and_model_a_runs(at, app_env: Path, tmp_path: Path) -> None:
    _compare(at, tmp_path / "no-such-model", "")
    _model_a_shown(at, app_env)
    missing = tmp_path / "no-such-model"
    (shown,) = [e for e in texts(at, "error") if e.startswith("**Model B gave no result.**")]
    assert shown.startswith("**Model B gave no result.** " + plain(f"model path {str(missing)!r} does not exist;"))
    assert [s.value for s in at.header][1] == f"Model B: {plain(missing)}"
    assert not [label for label in _statuses(at) if label.startswith("Model B")]  # it never ran
    assert list(at.session_state.get("model_errors", {})) == []


def test_model_b_runs_in_its_own_precision(at, app_env: Path) -> None:
    """The same folder as model A, in int8 against A's float32: two parsers, two results."""
    from ui.model import parsers
    from ui.model.choice import ModelChoice

    _compare(at, app_env, "int8")
    assert [s.value for s in at.header][:2] == [f"Model A: {plain(app_env)}", f"Model B: {plain(app_env)}"]
    assert {"cpu · float32", "cpu · int8"} <= set(texts(at, "caption"))
    assert set(_statuses(at)) == {"Model A done · cpu · float32", "Model B done · cpu · int8"}
    assert (parsers._load(ModelChoice(str(app_env), "transformers", "int8"))
            is not parsers._load(ModelChoice(str(app_env), "transformers", "")))
    assert [m.label for m in at.metric] == ["P(LF0) where the readings part"] * 2
    # the verdicts' measure (issue #40 point 2), not the paper's min-token P(LF0)
    pairs = [run.result[1] for run in at.session_state["cmp_result"][1].values()]
    assert [m.value for m in at.metric] == [fmt_prob(pair.p_lf0_parted) for pair in pairs]
    tables = at.dataframe
    assert [list(t.value.columns) for t in tables] == [BEAM_COLUMNS, BEAM_COLUMNS]
    for table in tables:  # the verdict columns are narrow and first: never scrolled out of view
        config = json.loads(table.proto.columns)
        assert [config[c].get("width") for c in BEAM_COLUMNS] == ["small", 100, "small", "large"]
        assert config["score"]["type_config"]["format"] == "%.2f"
    assert [plotly_spec(at, i)["data"][0]["y"] for i in range(2)] == [["A", "B"], ["A", "B"]]
