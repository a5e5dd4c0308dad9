"""The frame: navigation, the sidebar's model picker and cache, and a model that fails to load."""

from __future__ import annotations

import pytest
from app_helpers import APP, TIMEOUT, assert_ok, goto, texts

PAGES = ["templates", "prompt_builder", "parse_inspect", "ratio_sweep", "zero_shot", "about"]
TITLES = ["Templates & examples", "Prompt builder", "Parse & inspect", "Ratio sweep (few-shot)", "Zero-shot",
          "About AmP Explorer"]


def test_opens_on_templates_with_the_env_model(at, app_env) -> None:
    assert at.title[0].value == "Templates & examples"
    radio = at.radio(key="model_choice")
    assert radio.value == "default"
    assert str(app_env) in radio.options[0]  # the AMP_MODEL hook is the default choice
    assert at.session_state["model_spec"] == str(app_env)
    assert any("cached results" in c for c in texts(at.sidebar, "caption"))


def test_every_page_renders_without_exception(at) -> None:
    for page, title in zip(PAGES, TITLES, strict=True):
        goto(at, page)
        assert at.title[0].value == title


def test_nonexistent_model_path_is_an_error_and_the_app_stays_usable(at, app_env, tmp_path) -> None:
    missing = str(tmp_path / "no-such-model")
    at.radio(key="model_choice").set_value("other").run()
    at.text_input(key="model_typed").input(missing)
    at.get("form_submit_button")[0].click().run()
    assert_ok(at)
    assert at.session_state["model_spec"] == missing
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    errors = texts(at, "error")
    assert any("could not be loaded" in e and "does not exist" in e for e in errors), errors
    assert any("failed to load" in e for e in texts(at.sidebar, "error"))
    # the way back: one click returns to the default model, and parsing works again
    fallback = [b for b in at.button if b.label == "Use the default model instead"]
    assert fallback
    fallback[0].click().run()
    assert_ok(at)
    assert at.session_state["model_spec"] == str(app_env)
    assert at.radio(key="model_choice").value == "default"
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert not texts(at, "error")
    assert at.dataframe[0].value.shape[0] == 5


def test_load_this_model_checks_the_model_at_once_and_says_why_in_full(at, tmp_path) -> None:
    """Issue #11 point 6: "Load this model" accepted any id and said nothing until a page needed
    the model, then only "see the page".  Now the spec is checked on the click (its identity:
    nothing is loaded) and the sidebar shows the whole reason."""
    missing = str(tmp_path / "no-such-model")
    at.radio(key="model_choice").set_value("other").run()
    at.text_input(key="model_typed").input(missing)
    at.get("form_submit_button")[0].click().run()
    assert_ok(at)
    sidebar_errors = texts(at.sidebar, "error")
    assert any("does not exist" in e and "failed to load" in e for e in sidebar_errors), sidebar_errors

    at.text_input(key="model_typed").input("   ")
    at.get("form_submit_button")[0].click().run()
    assert_ok(at)
    assert at.session_state["model_spec"] == missing  # an empty box switches nothing
    assert any("Type a Hugging Face id" in e for e in texts(at.sidebar, "warning"))


def test_clear_cache_button(at) -> None:
    at.button(key="sidebar_clear_cache").click().run()
    assert_ok(at)
    assert any(c.startswith("**0** cached results") for c in texts(at.sidebar, "caption"))


def test_the_int8_precision_parses_on_the_int8_path_and_is_cached_apart(at) -> None:
    """Issue #16 point 3: the sidebar offers the int8 CPU path; its results are its own."""
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    exact = at.dataframe[0].value.copy()
    assert at.selectbox(key="precision_choice").value == ""
    at.selectbox(key="precision_choice").set_value("int8").run()
    assert at.session_state["model_dtype"] == "int8"
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert any("int8" in s for s in texts(at.sidebar, "success")), texts(at.sidebar, "success")
    quick = at.dataframe[0].value.copy()
    assert quick.shape == exact.shape
    assert not quick.equals(exact)  # the int8 probabilities are not float32's: computed, not read from its entry
    at.selectbox(key="precision_choice").set_value("").run()
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert at.dataframe[0].value.equals(exact)
    assert not any("int8" in s for s in texts(at.sidebar, "success"))


def test_an_int8_load_that_fails_offers_the_exact_precision(at, monkeypatch) -> None:
    """A model whose output layer int8 cannot take: an error box, and one click back to float32."""
    import amp.parser.models.loading as loading
    from amp.parser.core.errors import ModelLoadError

    def refuse(model):
        raise ModelLoadError("--dtype int8 needs a linear output layer; this model's is Conv1D: use --dtype float32")

    from amp.parser.models.registry import unload_models

    monkeypatch.setattr(loading, "quantize_output_layer", refuse)
    unload_models()  # an int8 model another test loaded would be reused, not reloaded
    at.button(key="sidebar_clear_cache").click().run()  # and its cached parse would need no model
    goto(at, "parse_inspect")
    at.selectbox(key="precision_choice").set_value("int8").run()
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert any("needs a linear output layer" in e for e in texts(at, "error")), texts(at, "error")
    back = [b for b in at.button if b.label == "Use the exact precision instead"]
    assert back
    back[0].click().run()
    assert at.session_state["model_dtype"] == ""
    assert at.selectbox(key="precision_choice").value == ""
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert not texts(at, "error")
    assert at.dataframe[0].value.shape[0] == 5


@pytest.mark.slow
def test_the_default_model_on_a_cpu_starts_on_llama_cpp_and_parses(monkeypatch, app_env,
                                                                   default_model_converted) -> None:
    """Issue #29 rule 3 in the app: with no engine chosen, the embedded GGUF on a CPU machine
    starts on the llama.cpp engine; a parse runs on it; the exact path is one choice away.
    (The exact path's weights are converted beforehand, by the fixture: the conversion is not
    what this test times out on.)"""
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("AMP_ENGINE", raising=False)
    monkeypatch.delenv("AMP_MODEL", raising=False)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    assert at.selectbox(key="engine_choice").value == "llama.cpp"
    assert not [s for s in at.selectbox if s.key == "precision_choice"]  # the GGUF's own precision: no choice
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert not texts(at, "error")
    assert any("llama.cpp" in s for s in texts(at.sidebar, "success")), texts(at.sidebar, "success")
    assert at.dataframe[0].value.shape[0] == 5
    # attribution needs gradients: the page says so and offers the exact path (transformers), one click away
    assert not [b for b in at.button if b.key == "pi_attribution_run"]
    assert any("llama.cpp engine does not give" in i for i in texts(at, "info"))
    at.button(key="pi_attr_exact").click().run()
    assert_ok(at)
    assert at.session_state["model_dtype"] == "" and at.session_state["model_engine"] == "transformers"
    assert at.selectbox(key="engine_choice").value == "transformers"
    assert at.selectbox(key="precision_choice").value == ""
    # the llama.cpp parse is not shown as the exact path's: parse again, and attribution is there
    assert any("press **Parse** to update" in c for c in texts(at, "caption"))
    assert not [b for b in at.button if b.key == "pi_attribution_run"]
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert [b for b in at.button if b.key == "pi_attribution_run"]


def test_the_engine_follows_the_model_until_the_user_picks_one(monkeypatch, app_env, app_model_dir) -> None:
    """The llama.cpp engine runs GGUF models only.  Starting on it for the embedded model, a switch
    to a transformers folder (the tiny GPT-2) moves the engine to transformers in the exact precision
    (no load error box; llama.cpp is not offered for that model); back on the default model it is
    llama.cpp again.  An engine and precision the user picked stay, unless the engine is llama.cpp
    and the new model is not a GGUF: then it moves and the sidebar says why."""
    from streamlit.testing.v1 import AppTest

    from amp.parser.backends.llama import llama_cpp_installed
    from ui.shared.common import plain

    if not llama_cpp_installed():
        pytest.skip("llama-cpp-python is not installed")
    monkeypatch.delenv("AMP_ENGINE", raising=False)
    monkeypatch.delenv("AMP_MODEL", raising=False)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    engine = lambda: at.selectbox(key="engine_choice").value  # noqa: E731
    precision = lambda: at.selectbox(key="precision_choice").value  # noqa: E731
    assert engine() == "llama.cpp"

    def load(spec: str) -> None:
        at.radio(key="model_choice").set_value("other").run()
        at.text_input(key="model_typed").set_value(spec)
        at.button[[b.label for b in at.button].index("Load this model")].click().run()
        assert_ok(at)

    load(str(app_model_dir))  # a transformers folder: the rule's engine there is transformers, exact
    assert engine() == "transformers" and precision() == "" and at.session_state["model_dtype"] == ""
    assert at.selectbox(key="engine_choice").options == ["transformers"]  # llama.cpp runs GGUF models only
    assert not texts(at.sidebar, "error"), texts(at.sidebar, "error")
    at.radio(key="model_choice").set_value("default").run()
    assert engine() == "llama.cpp"  # never picked: it follows the model

    at.selectbox(key="engine_choice").set_value("transformers").run()  # picked: transformers runs any local model
    at.selectbox(key="precision_choice").set_value("int8").run()
    load(str(app_model_dir))
    assert (engine(), precision()) == ("transformers", "int8")
    at.radio(key="model_choice").set_value("default").run()
    assert (engine(), precision()) == ("transformers", "int8")

    at.selectbox(key="engine_choice").set_value("llama.cpp").run()  # picked, but GGUF only
    load(str(app_model_dir))
    assert (engine(), precision()) == ("transformers", "")
    notes = texts(at.sidebar, "caption")
    assert any(plain("llama.cpp runs GGUF models only") in n for n in notes), notes
    goto(at, "parse_inspect")
    assert not texts(at, "error")
