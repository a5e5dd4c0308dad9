"""Issue #28 point 3: "Load this model" checks the name (a misspelt ``defualt`` is refused with "did
you mean 'default'?", offline mode named as the reason); a model that fails to load is an error
box on the page, with its reason and the way back, never inside a collapsed box."""

from __future__ import annotations

from pathlib import Path

from app_helpers import assert_ok, goto, texts


def _load(at, spec: str) -> None:  # type: ignore[no-untyped-def]
    at.radio(key="model_choice").set_value("other").run()
    at.text_input(key="model_typed").input(spec)
    at.get("form_submit_button")[0].click().run()
    assert_ok(at)


def test_load_refuses_a_misspelt_name_and_offers_the_close_one(at, app_env: Path, tmp_path: Path,
                                                              monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    _load(at, "defualt")  # the app tests run with HF_HUB_OFFLINE=1
    (shown,) = [e for e in texts(at.sidebar, "error") if "failed to load" in e]
    assert "did you mean 'default'?" in shown and "offline mode is on (HF_HUB_OFFLINE=1)" in shown
    assert not [s for s in texts(at.sidebar, "info") if s.startswith("Ready")]
    assert at.session_state["model_suggestions"] == {"defualt": ("default",)}
    # the page that needs it: the reason on the page (not in a status box) and the way back
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    top = [node.value for node in at.main.children.values() if node.type == "error"]
    assert any("could not be loaded" in e and "did you mean" in e for e in top), top
    assert [b for b in at.button if b.label == "Use the default model instead"]
    # the suggestion is one click (it only switches: nothing loads until a page needs it)
    (use,) = [b for b in at.sidebar.button if b.label == "Use 'default'"]
    use.click().run()
    assert_ok(at)
    assert at.session_state["model_spec"] == "default"


def test_load_accepts_a_local_folder(at, app_env: Path) -> None:  # type: ignore[no-untyped-def]
    _load(at, str(app_env))
    assert not [e for e in texts(at.sidebar, "error")]
    assert at.session_state["model_spec"] == str(app_env)


def test_a_model_that_fails_to_load_mid_parse_is_an_error_box_on_the_page(at, app_env: Path,
                                                                        tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Its name checks out (a model folder), its weights do not: the reason and the way back are on
    the page, not inside the collapsed status box."""
    import shutil

    broken = tmp_path / "tiny-broken-weights"
    shutil.copytree(app_env, broken)
    (broken / "model.safetensors").write_bytes(b"these are not weights")
    _load(at, str(broken))
    assert not texts(at.sidebar, "error")  # the name is fine
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    top = [node for node in at.main.children.values() if node.type == "error"]
    assert len(top) == 1 and "could not be loaded" in top[0].value and "as a causal language model" in top[0].value
    (status,) = [node for node in at.main.children.values() if node.type == "status"]
    assert status.label == "The model could not be loaded" and status.state == "error"
    assert not [c for c in status.children.values() if c.type == "error"]
    assert [b for b in at.button if b.label == "Use the default model instead"]
