"""The API client against a hostile or broken endpoint (issue #44 part 4; #45's API rows): a real
HTTP server on loopback (:mod:`hostile_endpoint`) that trickles one byte a second, sends 50 MB or an
endless stream, asks to wait an hour, answers invalid or wrong-shaped JSON, puts terminal controls
or the API key into its error text, or ignores ``n``.  Every test is bounded to seconds."""

from __future__ import annotations

import json
import time
import tracemalloc
import warnings
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from hostile_endpoint import MODEL, completion, endless_chunks, send_bytes, send_json, serve, trickle

from amp.cli import main
from amp.parser.backends import api_probe as probe
from amp.parser.backends import api_replies as replies
from amp.parser.backends.api import ApiBackend
from amp.parser.backends.api_protocol import ApiSettings
from amp.parser.core.errors import (
    ApiWarning,
    BackendError,
    BudgetSpent,
    DeadlinePassed,
    InvalidReply,
    ReplyTooLarge,
)
from amp.parser.parser import Parser

PROMPT = "Human: each bird\nComputer: forall x . bird(x)\n\nHuman: a bird\nComputer:"
KEY = "sk-hostile-KEY-7c1e42"
LF = " exists x . bird(x)"


@pytest.fixture(autouse=True)
def _nothing_learnt() -> None:
    """Every test meets its endpoint as new (a loopback port may be used again by a later test)."""
    probe.forget()


def _parser(base: str, **settings: Any) -> Parser:
    """A parser of the endpoint, loaded (the openai client imported, the model list read: a timed
    test times only what it asks for)."""
    api = ApiSettings(**{"base_url": base, "model": MODEL, "mode": "completions", "logprobs": False,
                         "retries": 0, "timeout_s": 10, **settings})
    parser = Parser(backend=ApiBackend(api, key=KEY), cache=False)
    parser.backend.load()
    return parser


def _parse(base: str, beams: int = 1, **settings: Any) -> Any:
    return _parser(base, **settings).parse(PROMPT, beams=beams, max_new_tokens=8)


def _ok(handler: BaseHTTPRequestHandler, number: int) -> None:
    send_json(handler, 200, completion(LF))


# -- time: one deadline per request, one budget per command -------------------------------------------


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_a_server_answering_one_byte_a_second_is_cut_at_the_requests_deadline(headers_too: bool) -> None:
    """--api-timeout 2 --api-retries 1 against 1 byte/s: two requests of 2 s each (not a read
    timeout per byte), one error naming the endpoint, the deadline and the requests made."""
    body = json.dumps(completion(LF)).encode()
    with serve(lambda h, n: trickle(h, body, every_s=0.2, headers_too=headers_too)) as endpoint:
        parser = _parser(endpoint.base, timeout_s=2, retries=1, adaptive=False)
        start = time.monotonic()
        with pytest.raises(DeadlinePassed) as caught:
            parser.parse(PROMPT, beams=1, max_new_tokens=8)
        took = time.monotonic() - start
    message = str(caught.value)
    assert 4.0 <= took < 7.0, took  # 2 × 2 s and a 0.5 s backoff
    assert endpoint.posts == ["/v1/completions"] * 2
    assert f"the model endpoint at {endpoint.base} did not finish a request (/completions) within 2 s" in message
    assert "2 requests: 1 retry" in message and caught.value.kind == "timeout"


def test_adaptive_a_retry_after_a_timeout_gets_twice_as_long() -> None:
    """The same server, adaptive (the default): the retry waits 4 s — the server is likely still
    busy with the request given up on — and the error says the timeout was lengthened."""
    body = json.dumps(completion(LF)).encode()
    with serve(lambda h, n: trickle(h, body, every_s=0.2)) as endpoint:
        parser = _parser(endpoint.base, timeout_s=2, retries=1)
        start = time.monotonic()
        with pytest.raises(DeadlinePassed) as caught:
            parser.parse(PROMPT, beams=1, max_new_tokens=8)
        took = time.monotonic() - start
    assert 6.0 <= took < 9.0, took  # 2 s, a 0.5 s backoff, 4 s
    assert endpoint.posts == ["/v1/completions"] * 2
    assert ("did not finish a request (/completions) within 4 s (--api-timeout 2 s, lengthened to the "
            "endpoint's pace, for connecting and every read together; 2 requests: 1 retry)") in str(caught.value)


def test_the_commands_budget_ends_every_request_with_one_error() -> None:
    """--api-budget 2 with a per-request deadline of 60 s: the trickling request ends at 2 s with
    BudgetSpent (a sweep stops at it, like an unreachable endpoint), and no request starts after."""
    body = json.dumps(completion(LF)).encode()
    with serve(lambda h, n: trickle(h, body, every_s=0.2)) as endpoint:
        parser = _parser(endpoint.base, timeout_s=60, retries=3, budget_s=2)
        start = time.monotonic()
        with pytest.raises(BudgetSpent) as caught:
            parser.parse(PROMPT, beams=1, max_new_tokens=8)
        took = time.monotonic() - start
        assert 1.8 <= took < 4.0, took
        with pytest.raises(BudgetSpent, match=r"ran out \(--api-budget; no request made\)"):
            parser.parse(PROMPT + " ", beams=1, max_new_tokens=8)
        assert endpoint.posts == ["/v1/completions"]
    assert f"the time budget of 2 s for the model endpoint at {endpoint.base} ran out (--api-budget; 1 request, " \
           "no retry for this call); results finished so far are cached" == str(caught.value)
    assert caught.value.kind == "budget"


# -- bytes: a cap on every reply --------------------------------------------------------------------------


def test_a_50_mb_reply_is_refused_on_its_declared_length_before_its_body_is_read() -> None:
    big = json.dumps(completion("x" * 50_000_000)).encode()
    with serve(lambda h, n: send_bytes(h, 200, big)) as endpoint:
        tracemalloc.start()
        try:
            with pytest.raises(ReplyTooLarge, match="declares 50,000,1.. bytes, over the limit of 8,388,608"):
                _parse(endpoint.base, retries=2)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 4 * 2**20, peak  # the client read none of it (the server's copy is not traced here)
    assert endpoint.posts == ["/v1/completions"]  # a reply too large is not asked for again


def test_an_endless_chunked_stream_stops_at_the_cap() -> None:
    with serve(lambda h, n: endless_chunks(h, limit=8 * replies.MAX_REPLY_BYTES)) as endpoint:  # "endless": 64 MiB
        tracemalloc.start()
        try:
            start = time.monotonic()
            with pytest.raises(ReplyTooLarge) as caught:
                _parse(endpoint.base)
            took = time.monotonic() - start
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert f"the reply of the model endpoint at {endpoint.base} is over 8,388,608 bytes" in str(caught.value)
    assert took < 10 and peak < 3 * replies.MAX_REPLY_BYTES, (took, peak)


# -- retries: exactly as many as asked, Retry-After honoured up to a cap ------------------------------


def test_retry_after_of_an_hour_is_one_request_and_says_so() -> None:
    with serve(lambda h, n: send_json(h, 429, {"error": {"message": "slow down"}}, {"Retry-After": "3600"})) as endpoint:
        parser = _parser(endpoint.base, retries=2)
        start = time.monotonic()
        with pytest.raises(BackendError) as caught:
            parser.parse(PROMPT, beams=1, max_new_tokens=8)
        took = time.monotonic() - start
    message = str(caught.value)
    assert took < 3 and endpoint.posts == ["/v1/completions"]
    assert "is rate-limiting requests (429; 1 request, no retry): slow down" in message
    assert "it asked to wait 3600 s before a retry (Retry-After), over the 60 s this client waits" in message
    assert "2 retries" not in message


def test_a_short_retry_after_is_waited_for() -> None:
    def script(h: BaseHTTPRequestHandler, n: int) -> None:
        if n == 1:
            send_json(h, 429, {"error": {"message": "later"}}, {"Retry-After": "1.5"})
        else:
            _ok(h, n)

    with serve(script) as endpoint:
        parser = _parser(endpoint.base, retries=1)
        start = time.monotonic()
        result = parser.parse(PROMPT, beams=1, max_new_tokens=8)
        took = time.monotonic() - start
    assert result.texts == ["exists x . bird(x)"] and endpoint.posts == ["/v1/completions"] * 2
    assert 1.5 <= took < 4, took


def _two_503s(h: BaseHTTPRequestHandler, n: int) -> None:
    if n <= 2:
        send_json(h, 503, {"error": {"message": "busy"}})
    else:
        _ok(h, n)


def test_retries_1_and_two_503s_is_a_server_error_after_exactly_two_posts() -> None:
    with serve(_two_503s) as endpoint:
        with pytest.raises(BackendError) as caught:
            _parse(endpoint.base, retries=1)
    assert endpoint.posts == ["/v1/completions"] * 2
    assert caught.value.kind == "server" and caught.value.status == 503
    assert "refused the request (503; 2 requests: 1 retry): busy" in str(caught.value)


def test_retries_2_and_two_503s_is_a_success_after_exactly_three_posts() -> None:
    with serve(_two_503s) as endpoint:
        result = _parse(endpoint.base, retries=2)
    assert result.texts == ["exists x . bird(x)"]
    assert endpoint.posts == ["/v1/completions"] * 3


# -- the key never shown ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [404, 503])
def test_an_endpoints_error_text_holding_the_key_shows_stars(status: int) -> None:
    with serve(lambda h, n: send_json(h, status, {"error": {"message": f"bad request with key {KEY} here"}})) as ep:
        with pytest.raises(BackendError) as caught:
            _parse(ep.base)
    message = str(caught.value)
    assert caught.value.status == status
    assert "bad request with key *** here" in message and KEY not in message


# -- malformed and wrong-shaped replies: one line, "invalid reply" -------------------------------------

WRONG = [
    pytest.param(b"{not json", "not JSON", id="invalid-json"),
    pytest.param(b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply", id="deep-json"),
    pytest.param(b'{"error": "text"}', "choices is not a list but null", id="error-as-string"),
    pytest.param(b'{"choices": "x"}', "choices is not a list but text", id="choices-not-a-list"),
    pytest.param(b'{"choices": []}', "no choices", id="no-choices"),
    pytest.param(b'{"choices": ["x"]}', "choices[0] is not a JSON object but text", id="choice-a-string"),
    pytest.param(b'{"choices": [{"text": 5}]}', "choices[0].text is not text but a number", id="text-a-number"),
    pytest.param(b'{"choices": [{"text": "x", "logprobs": {"tokens": "abc"}}]}',
                 "choices[0].logprobs.tokens is not a list but text", id="logprobs-tokens-text"),
    pytest.param(b'[1, 2]', "the reply is not a JSON object but a list", id="a-list"),
]


@pytest.mark.parametrize(("body", "what"), WRONG)
def test_a_malformed_or_wrong_shaped_reply_is_one_invalid_reply_error(body: bytes, what: str) -> None:
    with serve(lambda h, n: send_bytes(h, 200, body)) as endpoint:
        with pytest.raises(InvalidReply) as caught:
            _parse(endpoint.base, retries=2)
    assert str(caught.value).startswith(f"invalid reply from the model endpoint at {endpoint.base} (/completions): "
                                        + what)
    assert endpoint.posts == ["/v1/completions"]  # not asked again


def test_chat_replies_of_the_wrong_shape_are_invalid_replies() -> None:
    for body, what in ((b'{"choices": [{"message": "hi"}]}', "choices[0].message is not a JSON object but text"),
                       (b'{"choices": [{"message": {"content": "x"}, "logprobs": {"content": [{"token": 1}]}}]}',
                        "choices[0].logprobs.content[0].token is not text but a number")):
        with serve(lambda h, n, body=body: send_bytes(h, 200, body)) as endpoint:
            with pytest.raises(InvalidReply, match="invalid reply from the model endpoint at .* "
                                                   r"\(/chat/completions\): " + what.replace("[", r"\[")):
                _parse(endpoint.base, mode="chat", logprobs=True)


def test_a_wrong_shaped_model_list_is_an_invalid_reply() -> None:
    with serve(_ok, models=b'{"data": "m"}') as endpoint:
        with pytest.raises(InvalidReply) as caught:
            ApiBackend(ApiSettings(base_url=endpoint.base, model=MODEL, logprobs=False), key=KEY).load()
    assert str(caught.value) == (f"invalid reply from the model endpoint at {endpoint.base} (/models): "
                                 "data is not a list but text")


def test_the_cli_says_invalid_reply_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.txt").write_text(PROMPT, encoding="utf-8")
    with serve(lambda h, n: send_bytes(h, 200, b'{"choices": [')) as endpoint:
        code = main(["parse", "--model", f"openai:{MODEL}", "--api-base", endpoint.base, "--prompt-file",
                     str(tmp_path / "p.txt"), "--api-mode", "completions", "--api-logprobs", "off", "--no-cache"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1
    assert err[0].startswith(f"error: invalid reply from the model endpoint at {endpoint.base} (/completions): "
                             "not JSON")
    assert "unexpected" not in err[0]


# -- terminal controls never reach the terminal -------------------------------------------------------

ESCAPES = "\x1b[2J\x1b]0;pwned title\x07\x1b[31mred\x9b1m\x00\x07"


def test_controls_in_an_endpoints_error_text_are_stripped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.txt").write_text(PROMPT, encoding="utf-8")
    with serve(lambda h, n: send_json(h, 400, {"error": {"message": f"bad{ESCAPES} input"}})) as endpoint:
        with pytest.raises(BackendError) as caught:
            _parse(endpoint.base)
        code = main(["parse", "--model", f"openai:{MODEL}", "--api-base", endpoint.base, "--prompt-file",
                     str(tmp_path / "p.txt"), "--api-mode", "completions", "--api-logprobs", "off", "--no-cache"])
    assert str(caught.value).endswith("refused the request (400; 1 request, no retry): badred input")
    err = capsys.readouterr().err
    assert code != 0 and "badred input" in err
    assert not any(c in err for c in "\x1b\x07\x9b\x00")


def test_controls_in_a_models_text_are_not_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Text output: the controls are gone; JSON output: the same text, every control escaped."""
    (tmp_path / "p.txt").write_text(PROMPT, encoding="utf-8")
    argv = ["parse", "--model", f"openai:{MODEL}", "--prompt-file", str(tmp_path / "p.txt"), "--api-mode",
            "completions", "--api-logprobs", "off", "--no-cache"]
    with serve(lambda h, n: send_json(h, 200, completion(f" exists x .{ESCAPES} bird(x)"))) as endpoint:
        code = main([*argv, "--api-base", endpoint.base])
        out = capsys.readouterr().out
        assert code == 0 and "exists x .red bird(x)" in out
        assert not any(c in out for c in "\x1b\x07\x9b\x00")
        code = main([*argv, "--api-base", endpoint.base, "--json"])
        out = capsys.readouterr().out
    assert code == 0 and not any(c in out for c in "\x1b\x07\x9b\x00")
    assert json.loads(out)["result"]["beams"][0]["text"] == f"exists x .{ESCAPES} bird(x)"


# -- n honoured or capped -------------------------------------------------------------------------------


def test_an_endpoint_ignoring_n_is_asked_once_per_prompt_and_it_is_remembered() -> None:
    """n = 32 from a server that returns one choice: one request, its greedy choice stands for the
    32 (temperature 0) and the settings say so, one warning; the next backend of the same endpoint
    (a new command in the process) asks with n = 1 from the start, and warns no more."""
    with serve(_ok) as endpoint:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = _parse(endpoint.base, beams=32)
            again = _parser(endpoint.base).parse(PROMPT + " ", beams=5, max_new_tokens=8)
    assert endpoint.posts == ["/v1/completions"] * 2  # 1 + 1, not 32 + 5
    assert [b["n"] for b in endpoint.bodies] == [32, 1]
    assert len(result.beams) == 32 and set(result.texts) == {"exists x . bird(x)"}
    assert [b.rank for b in result.beams] == list(range(32))
    assert result.settings["api_choices"].startswith("1 asked, 31 repeated: the endpoint ignores n")
    assert len(again.beams) == 5 and again.settings["api_choices"].startswith("1 asked, 4 repeated")
    assert [str(w.message) for w in caught if issubclass(w.category, ApiWarning)] == [
        f"the model endpoint at {endpoint.base} ignores n: each prompt is asked once, and its greedy choice "
        "(temperature 0) stands for the 32 choices"]


def test_the_papers_n_of_5_in_one_request_and_extra_choices_are_dropped() -> None:
    with serve(_ok) as endpoint:
        result = _parse(endpoint.base, beams=5)
    assert len(result.beams) == 5 and endpoint.posts == ["/v1/completions"]
    with serve(lambda h, n: send_json(h, 200, completion(*[LF] * 50))) as endpoint:
        result = _parse(endpoint.base, beams=2)
    assert len(result.beams) == 2 and endpoint.posts == ["/v1/completions"] and "api_choices" not in result.settings


def test_a_prompt_files_own_readings_without_log_probs_give_the_parse_and_say_why_not_scored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``amp parse --api-logprobs off`` on a JSON prompt that carries gold LFs: the parse, its readings,
    and in place of a verdict one line saying why they were not scored — not an error, since the
    readings were not asked for (with ``--lf`` given by name the same is an error)."""
    from amp.prompts import mixed_prompt
    from amp.teaching.prompt_file import prompt_json

    prompt = mixed_prompt("the man saw the boy with the telescope", 0.5, seed=0, k=2)
    file = tmp_path / "p.json"
    file.write_bytes(prompt_json(prompt))
    argv = ["parse", "--model", f"openai:{MODEL}", "--prompt-file", str(file), "--api-mode", "completions",
            "--api-logprobs", "off", "--no-cache", "--beams", "1"]
    with serve(lambda h, n: send_json(h, 200, completion(" exists x . bird(x)"))) as endpoint:
        code = main([*argv, "--api-base", endpoint.base, "--json"])
        out = capsys.readouterr()
        assert code == 0, out.err
        parsed = json.loads(out.out)
        assert parsed["readings"] == {"lf0": prompt.gold_lf0, "lf1": prompt.gold_lf1, "source": "prompt_file"}
        assert parsed["readings_note"].startswith("not scored: scoring an LF needs log-probs")
        assert "verdict" not in parsed and parsed["result"]["beams"]
        assert main([*argv, "--api-base", endpoint.base]) == 0
        text = capsys.readouterr().out
        assert "readings: LF0 and LF1 from the prompt file's gold_lf0/gold_lf1" in text
        assert "verdict: not scored: scoring an LF needs log-probs" in text
        code = main([*argv, "--api-base", endpoint.base, "--lf", prompt.gold_lf0, "--lf", prompt.gold_lf1])
        err = capsys.readouterr().err
    assert code != 0 and "error: scoring an LF needs log-probs" in err
