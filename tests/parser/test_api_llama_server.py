"""The API backend against a real OpenAI-compatible server: llama.cpp's (``llama-cpp-python[server]``)
on loopback with the embedded Gemma GGUF, started and stopped here.

Few tests, small budgets and the shortest zero-shot prompt (scope, ~75 tokens): the server on two
shared cores decodes a token in 0.1–2 s (with the grammar or log-probs, more).  The server needs an
API key, so every call here also proves the key travels; the reproduce test greps everything the
project wrote for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_server import LlamaServer, start

from amp.cli import main
from amp.evaluation import experiments as ex
from amp.evaluation.matching import MATCHES
from amp.evaluation.runs import run_method, runs_dir
from amp.evaluation.sweep_run import run_items
from amp.logic.reader import parse_lf
from amp.parser.backends.api import ApiBackend
from amp.parser.backends.api_protocol import ApiSettings
from amp.parser.core.errors import BackendError, EndpointUnreachable, LogprobsUnavailable
from amp.parser.parser import Parser
from amp.settings import cache_root

pytestmark = pytest.mark.slow

KEY = "sk-amp-test-KEY-5f3a9c"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    running = start(tmp_path_factory.mktemp("llama"), api_key=KEY)
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMP_API_KEY", KEY)


@pytest.fixture(scope="module")
def item() -> ex.SweepItem:
    """The first scope sentence: the shortest zero-shot prompt of the five types."""
    return ex.plan_zeroshot(ex.ZeroShotConfig(types=("scope",), n=1))[0]


def _parser(server: LlamaServer, **settings: object) -> Parser:
    api = ApiSettings(base_url=server.base, model=server.alias, timeout_s=600, retries=1, **settings)  # type: ignore[arg-type]
    return Parser(backend=ApiBackend(api), cache=True)


def test_a_wrong_key_is_refused_by_name_without_the_key(server: LlamaServer) -> None:
    settings = ApiSettings(base_url=server.base, model=server.alias, retries=0)
    with pytest.raises(BackendError, match="the API key was refused") as caught:
        ApiBackend(settings, key="sk-wrong-KEY-000").load()
    assert caught.value.kind == "unauthorized" and "sk-wrong" not in str(caught.value)


def test_completions_zero_shot_item_two_choices_without_logprobs(server: LlamaServer, item: ex.SweepItem) -> None:
    """n = 2 at temperature 0 from a server that ignores n: one request (it teaches the process that
    the server ignores n), its greedy choice stands for both, matched by the reader; no log-probs,
    so no P(LF0) and the steps say why."""
    parser = _parser(server, mode="completions", logprobs=False)
    assert parser.scores is False
    (record,) = run_method(parser, [item], beams=2, max_new_tokens=40)
    assert record.error is None and len(record.beams) == 2 and record.beams[0] == record.beams[1]
    assert record.match in MATCHES and record.p_lf0 is None
    assert parser.backend.traits.honours_n is False  # type: ignore[attr-defined]
    result = parser.cached_parse(item.prompt_text, beams=2, max_new_tokens=40)
    assert result is not None and result.beams[0].raw_text.startswith(" ")
    assert result.settings["api_choices"].startswith("1 asked, 1 repeated: the endpoint ignores n")
    with pytest.raises(LogprobsUnavailable, match="log-probs are off"):
        parser.beam_steps(item.prompt_text, result.beams[0])
    (again,) = run_method(parser, [item], beams=2, max_new_tokens=40)
    assert again.cached and again.beams == record.beams


def test_the_batched_sweep_path_with_the_prompts_budget(server: LlamaServer, item: ex.SweepItem) -> None:
    """reproduce's default path (run_items → run_batch, the budget from the prompt): one choice per
    item, the LF finished at its line break, no P(LF0) asked for without log-probs."""
    parser = _parser(server, mode="completions", logprobs=False)
    (record,) = run_items(parser, [item], beams=1)
    assert record.error is None and record.p_lf0 is None and len(record.beams) == 1
    result = parser.cached_parse(item.prompt_text, beams=1)
    assert result is not None and result.settings["max_tokens"] == 3 * 38  # scope's longest example LF: 38
    assert result.beams[0].finished  # it stopped at the line break, inside the budget


def test_chat_zero_shot_item_in_messages(server: LlamaServer, item: ex.SweepItem) -> None:
    """The chat protocol reaches the server's chat template and comes back as a choice."""
    parser = _parser(server, mode="chat", logprobs=False)
    (record,) = run_method(parser, [item], beams=1, max_new_tokens=16)
    assert record.error is None and len(record.beams) == 1 and record.match in MATCHES


def test_grammar_constrains_the_choice(server: LlamaServer, item: ex.SweepItem) -> None:
    """With the GBNF grammar the choice is a decoding-grammar prefix: it starts with a quantifier
    after the grammar's space, and where it finished it is an LF the reader reads."""
    parser = _parser(server, mode="completions", logprobs=False, grammar=True)
    result = parser.parse(item.prompt_text, beams=1, max_new_tokens=24)
    beam = result.beams[0]
    assert result.constrained and beam.raw_text.split(" ")[1] in ("exists", "forall")
    if beam.finished:
        assert beam.parses and parse_lf(beam.text)


#: A one-turn prompt for the log-prob test: the server's log-prob code sorts Gemma's
#: 262k-token vocabulary in Python for every token it reports (prompt tokens too, when echoing),
#: 0.3–2 s a token on the shared cores, so the full zero-shot prompt would take minutes per LF.
SHORT = "Human: a girl\nComputer:"
#: The chat test needs one example turn: with the one-turn prompt the model's chat reply is empty.
SHORT_CHAT = "Human: each girl\nComputer: forall x . girl(x)\n\nHuman: a girl\nComputer:"
SHORT_LF0, SHORT_LF1 = "exists x . girl(x)", "forall x . girl(x)"


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_logprobs_give_token_confidences_and_p_lf0(server: LlamaServer, mode: str) -> None:
    """Log-probs on, a server that echoes: the generation asks for none (they made it 3× slower,
    issue #46); the beam's token probabilities come from a forced scoring of its text (chat and
    completions), and P(LF0) from the echoed prompt log-probs of both readings (their tokens
    rebuild each LF)."""
    parser = _parser(server, mode=mode, logprobs=True)
    assert parser.scores is True and parser.backend.generation_logprobs is False  # type: ignore[attr-defined]
    prompt = SHORT_CHAT if mode == "chat" else SHORT
    beam = parser.parse(prompt, beams=1, max_new_tokens=4).beams[0]
    assert beam.steps == ()
    if mode == "chat" and not beam.text:  # this GGUF has no chat template: the server's llama-2 fallback may leave it blank
        with pytest.raises(LogprobsUnavailable, match="the choice is empty"):
            parser.beam_steps(prompt, beam)
        return
    steps = parser.beam_steps(prompt, beam)
    assert steps and all(0.0 < s.prob <= 1.0 for s in steps)
    assert "".join(s.token for s in steps) == f" {beam.text}\n"
    if mode == "chat":
        return  # P(LF0) is scored on the plain prompt, as in completions mode: once is enough
    pair = parser.score_pair(SHORT, SHORT_LF0, SHORT_LF1)
    assert 0.0 <= pair.p_lf0 <= 1.0 and 0.0 <= pair.p_lf0_total <= 1.0
    for score, lf in ((pair.lf0, SHORT_LF0), (pair.lf1, SHORT_LF1)):
        assert "".join(score.tokens) == f" {lf}\n"
        assert 0.0 < score.min_prob <= 1.0 and score.min_prob == min(s.prob for s in score.steps)
    assert pair.p_lf0 == pytest.approx(pair.lf0.min_prob / (pair.lf0.min_prob + pair.lf1.min_prob))


def test_reproduce_writes_table2_and_fig2_rows_and_no_key_anywhere(
        server: LlamaServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``amp reproduce --model openai:<name> --api-base …`` writes Table 2 and Fig. 2 rows for the
    model, says P(LF0) needs log-probs, and the key is in no file it wrote nor in its output."""
    out = tmp_path / "report"
    code = main(["reproduce", "--model", f"openai:{server.alias}", "--api-base", server.base, "--types", "scope",
                 "--n-zero", "2", "--n-few", "0", "--beams", "1", "--max-new-tokens", "12",
                 "--api-mode", "completions", "--api-logprobs", "off", "--out", str(out), "--name", "api-run"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    table2 = (out / "table2_zm.csv").read_text().splitlines()
    assert table2[0] == "type,n,ZM_5,ZM_5_low,ZM_5_high" and table2[1].startswith("scope,2,")  # with its interval
    fig2 = (out / "fig2_zeroshot_accuracy.csv").read_text().splitlines()
    assert fig2[1].startswith("scope,")
    report = (out / "report.md").read_text()
    assert "P(LF0), Fig. 3 and FIM need log-probs: log-probs are off" in report
    manifest = json.loads((runs_dir() / "api-run.json").read_text())
    assert manifest["settings"]["model"] == f"openai:{server.alias}" and len(manifest["zero_shot"]) == 2
    written = [p for folder in (cache_root(), out, server.log.parent) for p in folder.rglob("*") if p.is_file()]
    assert written and not [str(p) for p in written if KEY.encode() in p.read_bytes()]
    assert KEY not in printed.out + printed.err


def test_amp_parse_prints_the_endpoints_choices(server: LlamaServer, item: ex.SweepItem, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.txt").write_text(item.prompt_text, encoding="utf-8")
    code = main(["parse", "--model", f"openai:{server.alias}", "--api-base", server.base, "--prompt-file",
                 str(tmp_path / "p.txt"), "--beams", "1", "--max-new-tokens", "8", "--api-mode", "completions",
                 "--api-logprobs", "off", "--json"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    out = json.loads(printed.out)
    assert out["model"] == f"openai:{server.alias}" and out["device"] == "api"
    assert out["identity"] == f"openai:{server.alias}@{server.base}" and len(out["result"]["beams"]) == 1
    assert KEY not in printed.out + printed.err


def test_server_killed_mid_sweep_is_one_error_and_finished_items_stay_cached(
        tmp_path: Path, item: ex.SweepItem) -> None:
    """The server dies after the first item: the sweep ends with one EndpointUnreachable, the first
    item's result is in the cache."""
    doomed = start(tmp_path, api_key=KEY)
    try:
        items = ex.plan_zeroshot(ex.ZeroShotConfig(types=("scope",), n=3))
        parser = Parser(backend=ApiBackend(ApiSettings(base_url=doomed.base, model=doomed.alias, mode="completions",
                                                       logprobs=False, retries=1, timeout_s=600)), cache=True)
        seen = []

        def kill_after_first(done: int, total: int, record: object) -> None:
            seen.append(record)
            doomed.stop()

        with pytest.raises(EndpointUnreachable, match="cannot reach the model endpoint") as caught:
            list(run_method(parser, items, beams=1, max_new_tokens=6, on_progress=kill_after_first))
        assert len(seen) == 1 and KEY not in str(caught.value)
        assert parser.cached_parse(items[0].prompt_text, beams=1, max_new_tokens=6) is not None
        assert parser.cached_parse(items[1].prompt_text, beams=1, max_new_tokens=6) is None
    finally:
        doomed.stop()


def test_amp_parse_with_the_defaults_prints_progress_and_finishes_in_bounded_time(
        server: LlamaServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #46's "done when": ``amp parse`` with the defaults (chat, log-probs on, 5 beams) against
    llama.cpp's server, which ignores n: one echo probe and one generation — not five — the
    requests' progress on stderr, the five beams the one greedy choice, within a bound."""
    import time

    from amp.cli import progress as cli_progress

    monkeypatch.setattr(cli_progress, "QUIET_S", 0.0)
    (tmp_path / "p.txt").write_text(SHORT_CHAT, encoding="utf-8")
    start = time.monotonic()
    code = main(["parse", "--model", f"openai:{server.alias}", "--api-base", server.base, "--prompt-file",
                 str(tmp_path / "p.txt"), "--no-cache", "--json"])
    took = time.monotonic() - start
    printed = capsys.readouterr()
    assert code == 0, printed.err
    beams = json.loads(printed.out)["result"]["beams"]
    assert len(beams) == 5 and len({b["text"] for b in beams}) == 1
    progress = [line for line in printed.err.splitlines() if line.startswith(f"openai:{server.alias}: ")]
    assert progress and "1 of 1 request done" in progress[-1]
    assert took < 300, took  # 2 shared cores; a quiet laptop takes seconds
