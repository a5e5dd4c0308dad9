"""Issue #28 point 5: importing a prompt updates every Prompt builder widget it implies — mode,
type, LF format, ratio, k and the test sentence (the pool-sentence box among them) — and the
import is kept until a setting changes."""

from __future__ import annotations

from app_helpers import assert_ok, goto

from amp import prompts
from amp.data import generate as gen
from amp.teaching.prompt_file import prompt_json, prompt_text


def _import(at, name: str, data: bytes) -> None:  # type: ignore[no-untyped-def]
    at.file_uploader(key="pb_upload").set_value((name, data, "application/json")).run()
    at.button(key="pb_import").click().run()
    assert_ok(at)


def test_an_import_sets_every_widget_it_implies(at) -> None:  # type: ignore[no-untyped-def]
    goto(at, "prompt_builder")
    assert at.selectbox(key="pb_type").value == "pp" and at.radio(key="pb_fmt").value == "fol"
    test = gen.pairs("scope")[2].surface
    imported = prompts.mixed_prompt(test, 0.8, seed=4, k=5, fmt="lisp")
    _import(at, "scope.json", prompt_json(imported))
    assert at.session_state["prompt"] == imported
    assert at.segmented_control(key="pb_mode").value == "mixed"
    assert at.selectbox(key="pb_type").value == "scope"
    assert at.radio(key="pb_fmt").value == "lisp"
    assert at.slider(key="pb_ratio").value == 0.8 and at.number_input(key="pb_k").value == 5
    assert at.radio(key="pb_test_source").value == "from the pool"
    assert at.selectbox(key="pb_test_scope").value == test  # the pool-sentence box: the imported sentence
    assert at.code[0].value == imported.render()
    at.run()  # kept while the settings are unchanged
    assert at.session_state["prompt"] == imported
    at.number_input(key="pb_seed").set_value(1).run()  # a changed setting rebuilds from what the widgets show
    assert_ok(at)
    rebuilt = at.session_state["prompt"]
    assert rebuilt != imported and rebuilt.test_utterance == test and rebuilt.type == "scope"
    assert len(rebuilt.examples) == 5 and rebuilt.lf_format == "lisp" and rebuilt.lf0_fraction == 0.8


def test_an_import_with_a_sentence_outside_the_pool_fills_the_typed_box(at) -> None:  # type: ignore[no-untyped-def]
    goto(at, "prompt_builder")
    own = prompts.mixed_prompt("the man saw the boy with the telescope", 0.3, seed=0, k=4).with_test(
        "the gardener saw the baker with the telescope", None, None)
    _import(at, "own.txt", prompt_text(own).encode())
    assert at.radio(key="pb_test_source").value == "typed"
    assert at.text_input(key="pb_test_typed").value == "the gardener saw the baker with the telescope"
    assert at.session_state["prompt"].test_utterance == "the gardener saw the baker with the telescope"
    assert at.session_state["prompt"].examples == own.examples


def test_a_json_whose_text_was_edited_is_refused_with_the_way_out(at) -> None:  # type: ignore[no-untyped-def]
    """Issue #46 point 6: an edited ``"text"`` is not silently dropped for the fields — the import
    is refused in an error box that says where the two part and which wins; the prompt is kept."""
    import json
    import re

    goto(at, "prompt_builder")
    before = at.session_state["prompt"]
    edited = prompts.mixed_prompt("the man saw the boy with the telescope", 0.5, seed=2, k=3)
    payload = json.loads(prompt_json(edited))
    payload["text"] = payload["text"].replace("Human: ", "Human: yesterday ", 1)
    _import(at, "edited.json", json.dumps(payload).encode())
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # as shown: the Markdown escapes undone
    assert len(errors) == 1 and errors[0].startswith("Nothing was imported: the file 'edited.json': its \"text\"")
    assert "line " in errors[0] and "the fields win" in errors[0]
    assert at.session_state["prompt"] == before
