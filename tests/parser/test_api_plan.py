"""The API path fitted to its server (issue #46 point 2): what it asks for (log-probs only where the
forced scoring needs them), the progress it tells while its requests run, the timeout and the
requests in flight that follow the measured replies, a chat template leaking into the choices,
and a cancel between replies.  Against a real HTTP server on loopback (:mod:`hostile_endpoint`)
that is slow, serial, or echoes prompt log-probs; every test bounded to seconds."""

from __future__ import annotations

import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from hostile_endpoint import MODEL, chat, completion, echoed, send_json, serve

from amp.parser.backends import api_probe as probe
from amp.parser.backends.api import ApiBackend
from amp.parser.backends.api_progress import RequestProgress, request_progress_scope
from amp.parser.backends.api_protocol import ApiSettings
from amp.parser.core.errors import ApiWarning, DeadlinePassed, SearchCancelled
from amp.parser.parser import Parser
from amp.parser.search.cancel import cancel_scope

PROMPT = "Human: each bird\nComputer: forall x . bird(x)\n\nHuman: a bird\nComputer:"
LF = " exists x . bird(x)"


@pytest.fixture(autouse=True)
def _nothing_learnt() -> None:
    probe.forget()


def _parser(base: str, **settings: Any) -> Parser:
    api = ApiSettings(**{"base_url": base, "model": MODEL, "mode": "completions", "logprobs": False,
                         "retries": 0, "timeout_s": 10, **settings})
    parser = Parser(backend=ApiBackend(api), cache=False)
    parser.backend.load()
    return parser


def _prompts(k: int) -> list[str]:
    return [PROMPT.replace("a bird", f"a bird {i}") for i in range(k)]


# -- log-probs: asked for by the forced scoring only ------------------------------------------------------


def _echoing(box: dict[str, Any]) -> Any:
    """Echoes prompt log-probs when asked to echo, a plain choice otherwise (``box["endpoint"]``:
    the running endpoint, for the request's body)."""
    def script(h: BaseHTTPRequestHandler, n: int) -> None:
        body = box["endpoint"].bodies[n - 1]
        send_json(h, 200, echoed(body["prompt"]) if body.get("echo") else completion(LF))

    return script


def test_generation_asks_no_logprobs_where_the_endpoint_echoes_and_steps_come_from_forced_scoring() -> None:
    """Log-probs on, an endpoint that echoes: the echo probe asks once, the generation asks for none,
    the beam's token confidences come from a forced scoring of its text (echo + log-probs), keyed by
    the beam's text; a second backend of the endpoint does not probe again."""
    box: dict[str, Any] = {}
    with serve(_echoing(box)) as endpoint:
        box["endpoint"] = endpoint
        parser = _parser(endpoint.base, logprobs=True)
        assert parser.backend.traits.echoes is True and parser.backend.generation_logprobs is False
        result = parser.parse(PROMPT, beams=1, max_new_tokens=8)
        generation = endpoint.bodies[1]
        assert "logprobs" not in generation and not generation.get("echo")
        assert result.beams[0].steps == ()
        steps = parser.beam_steps(PROMPT, result.beams[0])
        assert "".join(s.token for s in steps) == LF + "\n"
        forced = endpoint.bodies[2]
        assert forced["echo"] is True and forced["logprobs"] >= 1 and forced["prompt"] == f"{PROMPT}{LF}\n"
        _parser(endpoint.base, logprobs=True)
        assert [b.get("echo", False) for b in endpoint.bodies] == [True, False, True]  # no second probe


def test_generation_asks_for_logprobs_where_the_endpoint_cannot_echo() -> None:
    """A chat-only endpoint (the echo is refused): the choices' own log-probs are the only token
    confidences, so a generation asks for them."""
    def script(h: BaseHTTPRequestHandler, n: int) -> None:
        if n == 1:
            send_json(h, 400, {"error": {"message": "echo is not supported"}})
        else:
            send_json(h, 200, chat(LF))

    with serve(script) as endpoint:
        parser = _parser(endpoint.base, logprobs=True, mode="chat")
        assert parser.backend.traits.echoes is False and parser.backend.generation_logprobs is True
        parser.parse(PROMPT, beams=1, max_new_tokens=8)
    assert endpoint.bodies[1]["logprobs"] is True and endpoint.posts[1] == "/v1/chat/completions"


# -- progress: requests done, retries, time left; told in the caller's thread ----------------------------


def test_progress_is_told_in_the_callers_thread_with_requests_retries_and_time_left() -> None:
    def script(h: BaseHTTPRequestHandler, n: int) -> None:
        if n == 1:
            send_json(h, 503, {"error": {"message": "busy"}})
            return
        time.sleep(0.4)
        send_json(h, 200, completion(LF))

    seen: list[tuple[RequestProgress, int]] = []
    with serve(script) as endpoint:
        parser = _parser(endpoint.base, retries=1)
        with request_progress_scope(lambda p: seen.append((p, threading.get_ident()))):
            results = parser.parse_many(_prompts(4), beams=1, max_new_tokens=8)
    assert len(results) == 4 and len(endpoint.posts) == 5  # 4 requests, 1 retry
    assert {ident for _p, ident in seen} == {threading.get_ident()}
    last = seen[-1][0]
    assert (last.done, last.total, last.retries, last.in_flight) == (4, 4, 1, 0)
    assert last.elapsed_s >= 4 * 0.4 / 4 and last.left_s == 0.0
    assert [p.done for p, _i in seen] == sorted(p.done for p, _i in seen)
    assert any(p.left_s is not None and p.left_s > 0 for p, _i in seen if 0 < p.done < 4)


def test_outside_a_progress_scope_nothing_is_told_and_the_scope_ends() -> None:
    seen: list[RequestProgress] = []
    with serve(lambda h, n: send_json(h, 200, completion(LF))) as endpoint:
        parser = _parser(endpoint.base)
        with request_progress_scope(seen.append):
            parser.parse(PROMPT, beams=1, max_new_tokens=8)
        told = len(seen)
        parser.parse(PROMPT + " ", beams=1, max_new_tokens=8)
    assert told >= 1 and len(seen) == told


# -- the pace: timeout and requests in flight follow the measured replies ------------------------------------


def _serial(reply_s: float) -> tuple[Any, list[int]]:
    """A server that answers one request at a time (as llama.cpp's on a CPU), ``reply_s`` each;
    and the most requests it held at once (waiting included)."""
    lock, count = threading.Lock(), threading.Lock()
    held = [0]
    most = [0]

    def script(h: BaseHTTPRequestHandler, n: int) -> None:
        with count:
            held[0] += 1
            most[0] = max(most[0], held[0])
        with lock:
            time.sleep(reply_s)
            with count:  # no longer held once its reply goes out (the client may send the next at once)
                held[0] -= 1
            send_json(h, 200, completion(LF))

    return script, most


def test_a_serial_server_times_out_queued_requests_at_a_fixed_pace() -> None:
    """The failure of issue #46: four in flight at a serial server, a timeout under four replies."""
    script, _most = _serial(0.4)
    with serve(script) as endpoint:
        parser = _parser(endpoint.base, concurrency=4, timeout_s=1.0, adaptive=False)
        with pytest.raises(DeadlinePassed, match=r"within 1 s \(--api-timeout"):
            parser.parse_many(_prompts(8), beams=1, max_new_tokens=8)


def test_the_adaptive_pace_fits_a_serial_server() -> None:
    """The same server and settings, adaptive: the first request goes alone, the timeout grows to
    4 × the p90 of the replies, requests in flight stay few, and all eight finish."""
    script, most = _serial(0.4)
    with serve(script) as endpoint:
        parser = _parser(endpoint.base, concurrency=4, timeout_s=1.0)
        results = parser.parse_many(_prompts(8), beams=1, max_new_tokens=8)
        pace = parser.backend.pace
    assert len(results) == 8 and len(endpoint.posts) == 8  # no request timed out, none retried
    assert pace.timeout_s("generate") > 1.0
    assert pace.timeout_s("generate") == pytest.approx(4 * pace.reply_p90("generate"))  # type: ignore[operator]
    assert most[0] <= 3


# -- the chat template ---------------------------------------------------------------------------------


def test_chat_template_markers_in_a_choice_are_named_once_with_what_to_do() -> None:
    with serve(lambda h, n: send_json(h, 200, chat("<s>[INST] forall x . bird(x) [/INST]"))) as endpoint:
        parser = _parser(endpoint.base, mode="chat")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = parser.parse(PROMPT, beams=1, max_new_tokens=8)
            parser.parse(PROMPT + " ", beams=1, max_new_tokens=8)
    note = result.settings["api_template"]
    assert note.startswith(f"chat-template markers (<s> [INST] [/INST]) leaked into the choices of the model endpoint "
                           f"at {endpoint.base}")
    assert "--chat_format" in note and "--jinja" in note
    assert [str(w.message) for w in caught if issubclass(w.category, ApiWarning)] == [note]


def test_a_clean_choice_has_no_template_note() -> None:
    with serve(lambda h, n: send_json(h, 200, chat(LF))) as endpoint:
        result = _parser(endpoint.base, mode="chat").parse(PROMPT, beams=1, max_new_tokens=8)
    assert "api_template" not in result.settings


# -- cancel between replies --------------------------------------------------------------------------------


def test_a_cancel_check_stops_the_requests_between_replies() -> None:
    script, _most = _serial(0.3)
    with serve(script) as endpoint:
        parser = _parser(endpoint.base, concurrency=1)
        calls = [0]

        def check() -> bool:
            calls[0] += 1
            return calls[0] >= 2

        start = time.monotonic()
        with cancel_scope(check), pytest.raises(SearchCancelled, match="were cancelled"):
            parser.parse_many(_prompts(20), beams=1, max_new_tokens=8)
        took = time.monotonic() - start
    assert took < 3.0 and len(endpoint.posts) < 20


# -- the CLI: amp parse prints the requests' progress on stderr --------------------------------------------


def test_amp_parse_against_a_slow_endpoint_prints_progress_then_its_answer(
        tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from amp.cli import main
    from amp.cli import progress as cli_progress

    monkeypatch.setattr(cli_progress, "QUIET_S", 0.5)
    (tmp_path / "p.txt").write_text(PROMPT, encoding="utf-8")

    def slow(h: BaseHTTPRequestHandler, n: int) -> None:
        time.sleep(1.6)
        send_json(h, 200, completion(LF))

    with serve(slow) as endpoint:
        code = main(["parse", "--model", f"openai:{MODEL}", "--api-base", endpoint.base, "--prompt-file",
                     str(tmp_path / "p.txt"), "--api-mode", "completions", "--api-logprobs", "off", "--no-cache",
                     "--beams", "1"])
    printed = capsys.readouterr()
    assert code == 0 and "exists x . bird(x)" in printed.out
    lines = printed.err.splitlines()
    assert lines and all(line.startswith(f"openai:{MODEL}: ") for line in lines), printed.err
    assert "0 of 1 request done · 1 in flight" in lines[0] and "timeout 2 min" in lines[0]
    assert lines[-1].startswith(f"openai:{MODEL}: 1 of 1 request done")
