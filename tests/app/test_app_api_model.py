"""A model behind an API in the app (issue #30): Compare's model B as ``openai:<name>`` says what is
missing (the base URL) or that the endpoint cannot be reached, in B's column; model A's result stays.
(The runs against a real endpoint are in ``tests/parser/test_api_llama_server.py``.)"""

from __future__ import annotations

import socket
from pathlib import Path

from app_helpers import assert_ok, goto, texts

from ui.shared.common import plain


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _compare_b(at, spec: str) -> list[str]:  # type: ignore[no-untyped-def]
    goto(at, "compare")
    at.text_input(key="cmp_spec_b").input(spec)
    at.button(key="cmp_run").click().run()
    assert_ok(at)
    assert [s.value for s in at.header][1] == f"Model B: {plain(spec)}"
    return [e for e in texts(at, "error") if e.startswith("**Model B gave no result.**")]


def test_an_api_model_b_without_a_base_url_says_where_to_set_it(at, app_env: Path) -> None:
    (shown,) = _compare_b(at, "openai:gemma")
    assert "set its base URL in the sidebar" in shown
    assert [m.label for m in at.metric] == ["P(LF0) where the readings part"]  # model A ran


def test_an_unreachable_api_model_b_is_one_message(at, app_env: Path) -> None:
    at.session_state["api_base"] = f"http://127.0.0.1:{_closed_port()}/v1"
    (shown,) = _compare_b(at, "openai:gemma")
    assert "cannot reach the model endpoint" in shown
    assert any(s.label.startswith("Model B: the model endpoint did not answer")
               for s in at.main.children.values() if s.type == "status")


def test_why_no_scores_is_the_backends_declared_reason(saved_tiny_model: Path) -> None:
    """The zero-shot page's note comes from the backend's capabilities: an API model with log-probs
    off says which setting to turn on; a model that scores has no note (no endpoint is asked)."""
    from amp.parser import Parser
    from amp.parser.backends.api import ApiBackend
    from amp.parser.backends.api_protocol import ApiSettings
    from ui.model.api import why_no_scores

    off = Parser(backend=ApiBackend(ApiSettings(base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m",
                                                mode="completions", logprobs=False)), cache=False)
    assert why_no_scores(off) == ("P(LF0) needs log-probs: log-probs are off for this API model "
                                  "(--api-logprobs on to ask for them).")
    assert why_no_scores(Parser(str(saved_tiny_model), engine="transformers", cache=False)) is None
    assert why_no_scores(None) is None
