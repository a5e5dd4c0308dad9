"""The API backend without a model: the paper's message split, the budget, the GBNF grammar, the
settings, the CLI options, and its errors against real loopback endpoints (a closed port; a small
real HTTP server that answers 503 before it answers)."""

from __future__ import annotations

import argparse
import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import llama_cpp
import pytest
from llama_server import free_port

from amp.cli.api_options import api_settings
from amp.cli.model_options import add_model_options
from amp.errors import AmpError, SettingError
from amp.logic.gbnf import gbnf_text
from amp.logic.grammar import lark_parser
from amp.parser.backends import api_protocol as proto
from amp.parser.backends import api_replies as replies
from amp.parser.backends.api import ApiBackend
from amp.parser.backends.api_protocol import ApiMode, ApiSettings
from amp.parser.core.errors import BackendError, EndpointUnreachable, InvalidReply
from amp.parser.parser import Parser
from amp.prompts import zero_shot_prompt

PROMPT = ("Let's translate what a human user says into what a computer might say.\n\n\n"
          "Human: a bird held a sweater\n"
          "Computer: exists x . exists y . exists a . bird(x) AND sweater(y) AND held(a) AND agent(a, x) "
          "AND patient(a, y)\n\n"
          "Human: each bird\nComputer: forall x . bird(x)\n\n"
          "Human: each bird held a sweater\nComputer:")


def test_chat_messages_follow_the_papers_split() -> None:
    """Preamble = first user message; Human lines user, Computer lines assistant; test line last."""
    assert proto.chat_messages(PROMPT) == [
        {"role": "user", "content": "Let's translate what a human user says into what a computer might say."},
        {"role": "user", "content": "a bird held a sweater"},
        {"role": "assistant", "content": "exists x . exists y . exists a . bird(x) AND sweater(y) AND held(a) "
                                         "AND agent(a, x) AND patient(a, y)"},
        {"role": "user", "content": "each bird"},
        {"role": "assistant", "content": "forall x . bird(x)"},
        {"role": "user", "content": "each bird held a sweater"},
    ]


def test_chat_messages_of_a_real_zero_shot_prompt_end_with_its_sentence() -> None:
    prompt = zero_shot_prompt("each bird held a sweater", seed=5).render()
    messages = proto.chat_messages(prompt)
    assert messages[-1] == {"role": "user", "content": "each bird held a sweater"}
    assert [m["role"] for m in messages[1:]] == ["user", "assistant"] * ((len(messages) - 2) // 2) + ["user"]


def test_budget_is_three_times_the_longest_example_within_bounds() -> None:
    # the longest example LF: 37 words and marks + the line break = 38 (Gemma's tokenizer: 38 tokens) → 114
    assert proto.token_budget(PROMPT) == 114
    assert proto.token_budget("Human: x\nComputer: forall x . bird(x)\n\nHuman: y\nComputer:") == proto.MIN_BUDGET
    assert proto.token_budget("no examples") == proto.MAX_BUDGET


def test_choice_text_is_the_first_line_without_a_repeated_prefix() -> None:
    assert proto.lf_text(" exists x . bird(x)\nHuman: more") == "exists x . bird(x)"
    assert proto.lf_text("\n\nComputer: forall x . bird(x)") == "forall x . bird(x)"
    beam = proto.choice_beam(0, " forall x . bird(x)", True, (), "fol")
    assert (beam.text, beam.finished, beam.parses) == ("forall x . bird(x)", True, True)
    assert math.isnan(beam.logprob) and beam.steps == ()
    assert proto.choice_beam(1, "I think it means", True, (), "fol").parses is False


@pytest.mark.parametrize("fmt", ["fol", "lisp"])
def test_gbnf_is_the_decoding_grammar_and_llama_cpp_reads_it(fmt: str) -> None:
    """Every lark rule appears, terminals as literals, no left recursion, and llama.cpp parses it."""
    text = gbnf_text(fmt)
    lines = text.splitlines()
    assert lines[0] == 'root ::= " " r-sent "\\n"'
    names = [line.split(" ::= ")[0] for line in lines]
    for name, line in zip(names, lines, strict=True):
        assert not line.split(" ::= ")[1].startswith(name + " "), f"left recursion in {line}"
    rules = {r.origin.name for r in lark_parser(fmt, "decoding").rules}
    assert {n for n in names if n != "root"} == {"r-" + r.replace("_", "-").strip("-") for r in rules if r != "start"}
    assert '"ovenmitts"' in text and '"Galileo"' in text
    llama_cpp.LlamaGrammar.from_string(text, verbose=False)  # raises on a grammar llama.cpp cannot read


def test_settings_are_checked_once_and_the_key_is_no_setting() -> None:
    s = ApiSettings(base_url="http://127.0.0.1:9/v1/", model="m", mode="completions")
    assert (s.base_url, s.mode, s.spec) == ("http://127.0.0.1:9/v1", ApiMode.COMPLETIONS, "openai:m")
    runtime = s.runtime("1.0")
    assert runtime.model == "openai:m@http://127.0.0.1:9/v1"
    assert runtime.versions["api_mode"] == "completions" and runtime.versions["grammar"] == "none"
    for bad in ({"base_url": "ftp://x"}, {"base_url": "http://user:secret@h/v1"}, {"model": " "},
                {"mode": "voice"}, {"concurrency": 0}, {"timeout_s": 0}, {"retries": 99}):
        with pytest.raises(SettingError):
            ApiSettings(**{"base_url": "http://h/v1", "model": "m", **bad})


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_model_options(p)
    return p.parse_args(list(argv))


def test_cli_options_build_the_api_settings() -> None:
    s = api_settings(_args("--model", "openai:gpt", "--api-base", "http://h:1/v1", "--api-mode", "completions",
                           "--api-logprobs", "off", "--api-grammar", "--api-concurrency", "2"))
    assert s == ApiSettings(base_url="http://h:1/v1", model="gpt", mode=ApiMode.COMPLETIONS, logprobs=False,
                            grammar=True, concurrency=2)
    assert api_settings(_args("--model", "default")) is None
    with pytest.raises(AmpError, match="needs --api-base"):
        api_settings(_args("--model", "openai:gpt"))
    with pytest.raises(AmpError, match="--dtype cannot be combined"):
        api_settings(_args("--model", "openai:gpt", "--api-base", "http://h/v1", "--dtype", "int8"))


def test_a_closed_port_is_one_unreachable_error_without_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_API_KEY", "sk-test-SECRET-0123456789")
    backend = ApiBackend(ApiSettings(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", retries=0,
                                     timeout_s=5))
    with pytest.raises(EndpointUnreachable, match="cannot reach the model endpoint") as caught:
        Parser(backend=backend, cache=False).parse(PROMPT, beams=1, max_new_tokens=4)
    assert "SECRET" not in str(caught.value)


class _Flaky(BaseHTTPRequestHandler):
    """Answers 503 twice, then like an OpenAI endpoint; 401 to a wrong key."""

    calls: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer()

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        self.calls.append(self.path)
        if self.headers.get("Authorization") != "Bearer right-key-123":
            self._send(401, {"error": {"message": "Incorrect API key provided: wrong-key-456"}})
        elif self.path.endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "me"}]})
        elif sum(p.endswith("/completions") for p in self.calls) <= 2:
            self._send(503, {"error": {"message": "busy"}})
        else:
            self._send(200, {"id": "c", "object": "text_completion", "created": 0, "model": "m",
                             "choices": [{"index": 0, "text": " forall x . bird(x)", "finish_reason": "stop",
                                          "logprobs": None}]})


@pytest.fixture
def flaky() -> Iterator[str]:
    _Flaky.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def test_5xx_is_retried_with_backoff_and_a_bad_key_is_named_without_it(flaky: str) -> None:
    settings = ApiSettings(base_url=flaky, model="m", mode="completions", logprobs=False, retries=3, timeout_s=10)
    result = Parser(backend=ApiBackend(settings, key="right-key-123"), cache=False).parse(
        PROMPT, beams=1, max_new_tokens=8)
    assert result.texts == ["forall x . bird(x)"]
    assert [p for p in _Flaky.calls if p.endswith("/completions")] == ["/v1/completions"] * 3  # 503, 503, 200
    with pytest.raises(BackendError, match="refused access") as caught:
        Parser(backend=ApiBackend(settings, key="wrong-key-456"), cache=False).parse(PROMPT, beams=1, max_new_tokens=8)
    assert caught.value.kind == "unauthorized" and "wrong-key-456" not in str(caught.value)


def test_an_unlisted_model_is_named(flaky: str) -> None:
    settings = ApiSettings(base_url=flaky, model="nope", mode="completions", logprobs=False, retries=0)
    with pytest.raises(BackendError, match="has no model 'nope' \\(it lists: m\\)") as caught:
        ApiBackend(settings, key="right-key-123").load()
    assert caught.value.kind == "unknown-model"


def test_a_sweep_against_a_closed_port_stops_with_one_error() -> None:
    """The batched sweep path (reproduce's default) raises the endpoint's error once instead of
    failing every item alike."""
    from amp.evaluation import experiments as ex
    from amp.evaluation.sweep_run import run_items

    items = ex.plan_zeroshot(ex.ZeroShotConfig(types=("scope",), n=3))
    backend = ApiBackend(ApiSettings(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m", retries=0,
                                     timeout_s=5, logprobs=False))
    seen = []
    with pytest.raises(EndpointUnreachable):
        for record in run_items(Parser(backend=backend, cache=False), items, beams=2):
            seen.append(record)
    assert seen == []


def test_cli_errors_are_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """``amp parse`` without --api-base, and ``amp reproduce`` against a closed port: one error line each."""
    from amp.cli import main

    (tmp_path / "p.txt").write_text(PROMPT, encoding="utf-8")
    assert main(["parse", "--model", "openai:m", "--prompt-file", str(tmp_path / "p.txt")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --model openai:m needs --api-base URL")
    code = main(["reproduce", "--model", "openai:m", "--api-base", f"http://127.0.0.1:{free_port()}/v1",
                 "--api-retries", "0", "--types", "scope", "--n-zero", "2", "--n-few", "0",
                 "--out", str(tmp_path / "out")])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert code != 0 and len(lines) == 1 and "cannot reach the model endpoint" in lines[0]


def test_an_echoed_token_straddling_the_prompts_end_is_the_lfs_first_step() -> None:
    """#45: the echoed token from ``prompt_chars − 1`` into the LF (``": exists"``: the prompt's last
    character and the LF's first word) is the first step, the steps cover the whole framed LF, and
    the token generated after the LF is not one of them."""
    prompt = "Human: a girl\nComputer:"
    lf = "exists x . girl(x)"
    pieces = ["Human", ":", " a", " girl", "\n", "Computer", ": exists", " x", " .", " girl", "(x)", "\n", "Human"]
    offsets = [sum(len(p) for p in pieces[:i]) for i in range(len(pieces))]
    assert "".join(pieces[:-1]) == f"{prompt} {lf}\n" and offsets[6] == len(prompt) - 1
    values = [None, -0.5, -0.4, -0.3, -0.2, -0.1, -0.7, -0.6, -0.05, -0.9, -0.01, -0.2, -3.0]
    logprobs = replies.CompletionLogprobs(tokens=tuple(pieces), text_offset=tuple(offsets),
                                        token_logprobs=tuple(values), top_logprobs=(None,) * len(pieces))
    score = proto.forced_from_echo(lf, len(prompt), logprobs, top_n=3)
    assert score.tokens == (": exists", " x", " .", " girl", "(x)", "\n")
    assert score.sum_logprob == pytest.approx(-0.7 - 0.6 - 0.05 - 0.9 - 0.01 - 0.2)
    assert score.min_prob == pytest.approx(math.exp(-0.9))


def test_echo_logprobs_of_a_reply_are_checked_into_the_record() -> None:
    reply = {"choices": [{"text": "x", "logprobs": {"tokens": ["a", "b"], "text_offset": [0, 1],
                                                    "token_logprobs": [None, -1.5],
                                                    "top_logprobs": [None, {"b": -1.5, "c": -2.0}]}}]}
    assert replies.echo_logprobs(reply, "here") == replies.CompletionLogprobs(
        tokens=("a", "b"), text_offset=(0, 1), token_logprobs=(None, -1.5), top_logprobs=(None, {"b": -1.5, "c": -2.0}))
    assert replies.echo_logprobs({"choices": [{"text": "x"}]}, "here") is None
    with pytest.raises(InvalidReply, match=r"invalid reply from here: choices\[0\].logprobs.text_offset\[0\] is not a "
                                           "whole number but text"):
        replies.echo_logprobs({"choices": [{"logprobs": {"tokens": ["a"], "text_offset": ["0"]}}]}, "here")


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"Retry-After": "3"}, 3.0), ({"retry-after": "0.5"}, 0.5), ({"Retry-After-Ms": "1500"}, 1.5),
    ({"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"}, 30.0), ({"Retry-After": "soon"}, None), ({}, None),
    ({"Retry-After": "-4"}, 0.0), ({"Retry-After": "nan"}, None)])
def test_retry_after_is_read_as_seconds_or_a_date(headers: dict[str, str], seconds: float | None) -> None:
    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert replies.retry_after_s(headers, now=now) == seconds


def test_backoff_and_the_count_of_requests_in_words() -> None:
    assert [replies.backoff_s(r) for r in (1, 2, 3, 4, 5, 6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert [replies.requests_made(n) for n in (0, 1, 2, 3)] == ["no request", "1 request, no retry",
                                                              "2 requests: 1 retry", "3 requests: 2 retries"]


@pytest.mark.parametrize(("text", "kept"), [
    ("a\x1b[2Jb", "ab"), ("a\x1b]0;my title\x07b", "ab"), ("a\x1b]2;t\x1b\\b", "ab"), ("a\x9b31mb", "ab"),
    ("line\nnext\ttab", "line\nnext\ttab"), ("a\rb\x00c\x7fd\x85e", "a bcde"), ("plain é ∀", "plain é ∀")])
def test_terminal_controls_are_stripped_and_line_breaks_kept(text: str, kept: str) -> None:
    assert replies.strip_controls(text) == kept
    assert "\n" not in replies.endpoint_text(text) and "\x1b" not in replies.endpoint_text(text)


def test_an_error_replys_own_text() -> None:
    assert replies.error_message(b'{"error": {"message": "bad\\u001b[2J model"}}') == "bad model"
    assert replies.error_message(b'{"error": "text"}') == "text"
    assert replies.error_message(b'{"detail": "no such route"}') == "no such route"
    assert replies.error_message(b"<html>\n Bad gateway </html>") == "<html> Bad gateway </html>"
    assert replies.endpoint_text("x" * 600) == "x" * 499 + "…"


def test_the_budget_is_a_setting_checked_once() -> None:
    assert ApiSettings(base_url="http://h/v1", model="m", budget_s=30).budget_s == 30
    for bad in (0, -1, float("nan"), proto.MAX_BUDGET_S + 1):
        with pytest.raises(SettingError, match="the API time budget must be above 0"):
            ApiSettings(base_url="http://h/v1", model="m", budget_s=bad)


def test_the_budget_and_timeout_options_use_the_librarys_checks(capsys: pytest.CaptureFixture[str]) -> None:
    s = api_settings(_args("--model", "openai:gpt", "--api-base", "http://h/v1", "--api-budget", "30",
                           "--api-timeout", "5"))
    assert s is not None and (s.budget_s, s.timeout_s) == (30.0, 5.0)
    plain = api_settings(_args("--model", "openai:gpt", "--api-base", "http://h/v1"))
    assert plain is not None and plain.budget_s is None and plain.timeout_s == proto.DEFAULT_TIMEOUT_S
    for option, value, said in (("--api-budget", "0", "the API time budget must be above 0"),
                                ("--api-timeout", "nan", "the API timeout must be above 0"),
                                ("--api-budget", "soon", "the API time budget is a number of seconds")):
        with pytest.raises(SystemExit) as stopped:
            _args("--model", "openai:gpt", option, value)
        assert stopped.value.code == 2 and said in capsys.readouterr().err
